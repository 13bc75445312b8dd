/* SPDX-License-Identifier: Apache-2.0 */
/* NOR flash simulator with power-cut and torn-operation injection. */
#define _GNU_SOURCE
#include "mota/posix_flash.h"

#include "mota/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERASED 0xFFu

static bool geometry_ok(uint32_t size, uint32_t sector, uint32_t prog)
{
    return size > 0 && sector > 0 && prog > 0 && size % sector == 0 && sector % prog == 0 && prog <= 256;
}

int mota_posix_flash_init(struct mota_posix_flash *f, uint32_t size, uint32_t sector_size, uint32_t prog_size)
{
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    if (!geometry_ok(size, sector_size, prog_size))
        return MOTA_ERR_ARG;
    f->mem = malloc(size);
    if (f->mem == NULL)
        return MOTA_ERR_NOSPC;
    memset(f->mem, ERASED, size);
    f->owns_mem = true;
    f->size = size;
    f->sector_size = sector_size;
    f->prog_size = prog_size;
    return MOTA_OK;
}

int mota_posix_flash_open(struct mota_posix_flash *f, const char *path, uint32_t size, uint32_t sector_size,
                          uint32_t prog_size)
{
    struct stat st;
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    if (!geometry_ok(size, sector_size, prog_size))
        return MOTA_ERR_ARG;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || fstat(fd, &st) != 0)
        goto io;
    if (st.st_size == 0) {
        /* a new flash is erased */
        uint8_t buf[4096];
        memset(buf, ERASED, sizeof(buf));
        for (uint32_t off = 0; off < size; off += sizeof(buf))
            if (pwrite(fd, buf, size - off < sizeof(buf) ? size - off : sizeof(buf), off) < 0)
                goto io;
    } else if ((uint64_t)st.st_size != size) {
        close(fd);
        return MOTA_ERR_ARG;
    }
    /* shared mapping: every program reaches the file, so a killed process
     * (a real power cut of the simulator) loses at most the operation in flight */
    f->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (f->mem == MAP_FAILED)
        goto io;
    f->fd = fd;
    f->size = size;
    f->sector_size = sector_size;
    f->prog_size = prog_size;
    return MOTA_OK;
io:
    if (fd >= 0)
        close(fd);
    f->mem = NULL;
    return MOTA_ERR_IO;
}

void mota_posix_flash_close(struct mota_posix_flash *f)
{
    if (f->fd >= 0) {
        msync(f->mem, f->size, MS_SYNC);
        munmap(f->mem, f->size);
        close(f->fd);
    } else if (f->owns_mem) {
        free(f->mem);
    }
    memset(f, 0, sizeof(*f));
    f->fd = -1;
}

/* The power goes: like a real cut, control never comes back to the code that was running. */
static _Noreturn void power_cut(struct mota_posix_flash *f)
{
    f->dead = true;
    if (f->on_cut != NULL)
        f->on_cut(f->on_cut_ctx); /* unwinds to the harness: does not return */
    if (f->fd >= 0)
        msync(f->mem, f->size, MS_SYNC);
    _exit(MOTA_POSIX_POWER_CUT_EXIT); /* nobody to catch it: the process ends, as the device would */
}

/* Counts the operation; true if the power goes at it (*torn_now: halfway through). */
static bool cut_now(struct mota_posix_flash *f, bool *torn_now)
{
    *torn_now = false;
    if (f->dead)
        power_cut(f);
    f->ops++;
    if (f->cut_before_op != 0 && f->ops >= f->cut_before_op) {
        *torn_now = f->torn;
        return true;
    }
    return false;
}

static int sim_read(void *ctx, uint32_t off, void *buf, size_t len)
{
    struct mota_posix_flash *f = ctx;
    if (f->dead)
        power_cut(f);
    if (off > f->size || len > f->size - off)
        return MOTA_ERR_FLASH_BOUNDS;
    memcpy(buf, f->mem + off, len);
    f->reads++;
    f->bytes_read += len;
    return MOTA_OK;
}

static int sim_prog(void *ctx, uint32_t off, const void *buf, size_t len)
{
    struct mota_posix_flash *f = ctx;
    bool torn;
    if (off > f->size || len > f->size - off)
        return MOTA_ERR_FLASH_BOUNDS;
    if (off % f->prog_size != 0 || len % f->prog_size != 0)
        return MOTA_ERR_FLASH_ALIGN;
    for (size_t i = 0; i < len; i++)
        if (f->mem[off + i] != ERASED)
            return MOTA_ERR_FLASH_NOT_ERASED;
    if (cut_now(f, &torn)) {
        f->cut_kind = 'p';
        f->cut_off = off;
        f->cut_len = (uint32_t)len;
        if (torn) { /* half the prog units made it */
            size_t units = len / f->prog_size, done = (units + 1) / 2;
            memcpy(f->mem + off, buf, done * f->prog_size);
            if (done * f->prog_size == len && len >= 1) /* a one-unit program: half of its bytes */
                memset(f->mem + off + len / 2, ERASED, len - len / 2);
        }
        power_cut(f);
    }
    memcpy(f->mem + off, buf, len);
    f->progs++;
    f->bytes_programmed += len;
    return MOTA_OK;
}

static int sim_erase(void *ctx, uint32_t off)
{
    struct mota_posix_flash *f = ctx;
    bool torn;
    if (off >= f->size)
        return MOTA_ERR_FLASH_BOUNDS;
    if (off % f->sector_size != 0)
        return MOTA_ERR_FLASH_ALIGN;
    if (cut_now(f, &torn)) {
        f->cut_kind = 'e';
        f->cut_off = off;
        f->cut_len = f->sector_size;
        if (torn) /* the first half erased, the rest as it was */
            memset(f->mem + off, ERASED, f->sector_size / 2);
        power_cut(f);
    }
    memset(f->mem + off, ERASED, f->sector_size);
    f->erases++;
    return MOTA_OK;
}

static const uint8_t *sim_map(void *ctx, uint32_t off, size_t len)
{
    struct mota_posix_flash *f = ctx;
    if (off > f->size || len > f->size - off)
        return NULL;
    return f->mem + off;
}

void mota_posix_flash_hal(struct mota_posix_flash *f, struct mota_flash *hal, uint32_t xip_base)
{
    memset(hal, 0, sizeof(*hal));
    hal->read = sim_read;
    hal->prog = sim_prog;
    hal->erase = sim_erase;
    hal->map = sim_map;
    hal->xip_base = xip_base;
    hal->size = f->size;
    hal->sector_size = f->sector_size;
    hal->prog_size = f->prog_size;
    hal->erased_value = ERASED;
    hal->ctx = f;
}

void mota_posix_flash_cut(struct mota_posix_flash *f, uint64_t op, bool torn)
{
    f->cut_before_op = op ? f->ops + op : 0;
    f->torn = torn;
}

void mota_posix_flash_on_cut(struct mota_posix_flash *f, void (*on_cut)(void *ctx), void *ctx)
{
    f->on_cut = on_cut;
    f->on_cut_ctx = ctx;
}

void mota_posix_flash_power_on(struct mota_posix_flash *f)
{
    f->dead = false;
    f->cut_before_op = 0;
    f->cut_kind = 0;
}

void mota_posix_flash_reset_counters(struct mota_posix_flash *f)
{
    f->reads = f->progs = f->erases = f->bytes_programmed = f->bytes_read = 0;
}
