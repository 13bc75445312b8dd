/* SPDX-License-Identifier: Apache-2.0 */
/* Flash simulator: the part's geometry, program rules, ECC and timings, with power-cut and torn-operation
 * injection (see mota/posix_flash.h). */
#define _GNU_SOURCE
#include "mota/posix_flash.h"

#include "mota/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ERASED 0xFFu

enum unit_state { UNIT_ERASED = 0, UNIT_PROGRAMMED = 1, UNIT_TORN = 2 };

struct mota_posix_flash_part mota_posix_flash_uniform(uint32_t size, uint32_t sector_size, uint32_t prog_size)
{
    struct mota_posix_flash_part p = {.prog_size = prog_size, .n_regions = 1, .prog_block = prog_size};
    p.regions[0] =
        (struct mota_flash_region){.count = sector_size ? size / sector_size : 0, .sector_size = sector_size};
    if (sector_size == 0 || size % sector_size != 0)
        p.n_regions = 0; /* refused by geometry_ok */
    return p;
}

/* The regions' sum, or 0 if the part cannot be simulated. */
static uint32_t part_size(const struct mota_posix_flash_part *p)
{
    uint64_t total = 0;
    if (p->prog_size == 0 || p->prog_size > 256 || p->n_regions == 0 || p->n_regions > MOTA_FLASH_MAX_REGIONS)
        return 0;
    for (unsigned i = 0; i < p->n_regions; i++) {
        const struct mota_flash_region *r = &p->regions[i];
        if (r->count == 0 || r->sector_size == 0 || r->sector_size % p->prog_size != 0)
            return 0;
        total += (uint64_t)r->count * r->sector_size;
    }
    return total <= 0xFFFFFFFFu ? (uint32_t)total : 0;
}

static bool ecc(const struct mota_posix_flash *f)
{
    return f->units != NULL;
}

static int setup(struct mota_posix_flash *f, const struct mota_posix_flash_part *part)
{
    memset(f, 0, sizeof(*f));
    f->fd = f->units_fd = -1;
    f->size = part != NULL ? part_size(part) : 0;
    if (f->size == 0)
        return MOTA_ERR_ARG;
    f->part = *part;
    f->prog_size = part->prog_size;
    return MOTA_OK;
}

static uint32_t n_units(const struct mota_posix_flash *f)
{
    return f->size / f->prog_size;
}

int mota_posix_flash_init(struct mota_posix_flash *f, const struct mota_posix_flash_part *part)
{
    int ret = setup(f, part);
    if (ret != MOTA_OK)
        return ret;
    f->mem = malloc(f->size);
    if (f->mem == NULL)
        return MOTA_ERR_NOSPC;
    memset(f->mem, ERASED, f->size);
    f->owns_mem = true;
    if ((part->flags & MOTA_FLASH_PROGRAM_ONCE) && (f->units = calloc(1, n_units(f))) == NULL) {
        free(f->mem);
        f->mem = NULL;
        return MOTA_ERR_NOSPC;
    }
    return MOTA_OK;
}

/* A shared mapping of path, len bytes, created filled with `fill` when new (*created). -1 on failure. */
static int map_file(const char *path, uint32_t len, uint8_t fill, uint8_t **out, bool *created)
{
    struct stat st;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || fstat(fd, &st) != 0)
        goto fail;
    *created = st.st_size == 0;
    if (st.st_size == 0) {
        uint8_t buf[4096];
        memset(buf, fill, sizeof(buf));
        for (uint32_t off = 0; off < len; off += sizeof(buf))
            if (pwrite(fd, buf, len - off < sizeof(buf) ? len - off : sizeof(buf), off) < 0)
                goto fail;
    } else if ((uint64_t)st.st_size != len) {
        goto fail;
    }
    /* shared mapping: every program reaches the file, so a killed process
     * (a real power cut of the simulator) loses at most the operation in flight */
    *out = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (*out == MAP_FAILED)
        goto fail;
    return fd;
fail:
    if (fd >= 0)
        close(fd);
    *out = NULL;
    return -1;
}

/* The units' state beside the flash file; a missing one (or another part's) is read off the contents:
 * a unit holding anything but erased bytes was programmed. */
static int open_units(struct mota_posix_flash *f, const char *path, bool new_flash)
{
    char upath[4096];
    struct stat st;
    bool created = false;
    if (snprintf(upath, sizeof(upath), "%s.units", path) >= (int)sizeof(upath))
        goto fail;
    /* a new flash's units are all erased, whatever a stale file beside it says */
    bool fresh = new_flash || stat(upath, &st) != 0 || (uint64_t)st.st_size != n_units(f);
    if (fresh)
        unlink(upath);
    if ((f->units_fd = map_file(upath, n_units(f), UNIT_ERASED, &f->units, &created)) < 0)
        goto fail;
    for (uint32_t u = 0; fresh && u < n_units(f); u++)
        for (uint32_t i = 0; i < f->prog_size; i++)
            if (f->mem[u * f->prog_size + i] != ERASED) {
                f->units[u] = UNIT_PROGRAMMED;
                break;
            }
    return MOTA_OK;
fail:
    mota_posix_flash_close(f);
    return MOTA_ERR_IO;
}

int mota_posix_flash_open(struct mota_posix_flash *f, const char *path, const struct mota_posix_flash_part *part)
{
    int ret = setup(f, part);
    if (ret != MOTA_OK)
        return ret;
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size != 0 && (uint64_t)st.st_size != f->size)
        return MOTA_ERR_ARG; /* another geometry */
    bool created = false;
    if ((f->fd = map_file(path, f->size, ERASED, &f->mem, &created)) < 0)
        return MOTA_ERR_IO;
    if (part->flags & MOTA_FLASH_PROGRAM_ONCE)
        return open_units(f, path, created);
    return MOTA_OK;
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
    if (f->units_fd >= 0) {
        msync(f->units, n_units(f), MS_SYNC);
        munmap(f->units, n_units(f));
        close(f->units_fd);
    } else {
        free(f->units);
    }
    memset(f, 0, sizeof(*f));
    f->fd = f->units_fd = -1;
}

/* The power goes: like a real cut, control never comes back to the code that was running. */
static _Noreturn void power_cut(struct mota_posix_flash *f)
{
    f->dead = true;
    __atomic_store_n(&f->busy, 0, __ATOMIC_RELEASE);
    if (f->on_cut != NULL)
        f->on_cut(f->on_cut_ctx); /* unwinds to the harness: does not return */
    if (f->fd >= 0)
        msync(f->mem, f->size, MS_SYNC);
    if (f->units_fd >= 0)
        msync(f->units, n_units(f), MS_SYNC);
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

/* The region holding off: its index, or -1. */
static int region_of(const struct mota_posix_flash_part *p, uint32_t off, uint32_t *sector_start)
{
    uint32_t at = 0;
    for (unsigned i = 0; i < p->n_regions; i++) {
        uint64_t len = (uint64_t)p->regions[i].count * p->regions[i].sector_size;
        if (off - at < len) {
            *sector_start = at + (off - at) / p->regions[i].sector_size * p->regions[i].sector_size;
            return (int)i;
        }
        at += (uint32_t)len;
    }
    return -1;
}

uint32_t mota_posix_flash_erase_us(const struct mota_posix_flash_part *p, uint32_t off, enum mota_posix_flash_timing t)
{
    uint32_t start = 0;
    int r = region_of(p, off, &start);
    if (r < 0 || t == MOTA_POSIX_TIMING_NONE)
        return 0;
    return t == MOTA_POSIX_TIMING_MAX ? p->regions[r].erase_max_us : p->regions[r].erase_typ_us;
}

uint64_t mota_posix_flash_prog_us(const struct mota_posix_flash_part *p, uint64_t len, enum mota_posix_flash_timing t)
{
    if (t == MOTA_POSIX_TIMING_NONE || p->prog_block == 0)
        return 0;
    uint64_t ops = (len + p->prog_block - 1) / p->prog_block;
    return ops * (t == MOTA_POSIX_TIMING_MAX ? p->prog_max_us : p->prog_typ_us);
}

/* The operation takes the part's time: the caller (the agent, the CPU) waits, as on the part. */
static void take_time(struct mota_posix_flash *f, uint64_t us)
{
    if (us == 0)
        return;
    __atomic_store_n(&f->busy, 1, __ATOMIC_RELEASE);
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    __atomic_store_n(&f->busy, 0, __ATOMIC_RELEASE);
    f->busy_us += us;
}

static int sim_read(void *ctx, uint32_t off, void *buf, size_t len)
{
    struct mota_posix_flash *f = ctx;
    if (f->dead)
        power_cut(f);
    if (off > f->size || len > f->size - off)
        return MOTA_ERR_FLASH_BOUNDS;
    if (ecc(f) && len > 0)
        for (uint32_t u = off / f->prog_size; u <= (off + len - 1) / f->prog_size; u++)
            if (f->units[u] == UNIT_TORN)
                return MOTA_ERR_FLASH_ECC; /* the part's double error, caught by the port */
    memcpy(buf, f->mem + off, len);
    f->reads++;
    f->bytes_read += len;
    return MOTA_OK;
}

/* What the part refuses before a program starts: the units not erased. */
static int prog_check(const struct mota_posix_flash *f, uint32_t off, const void *buf, size_t len)
{
    if (off > f->size || len > f->size - off)
        return MOTA_ERR_FLASH_BOUNDS;
    if (off % f->prog_size != 0 || len % f->prog_size != 0)
        return MOTA_ERR_FLASH_ALIGN;
    if (ecc(f))
        for (size_t u = off / f->prog_size; u < (off + len) / f->prog_size; u++)
            if (f->units[u] != UNIT_ERASED)
                return MOTA_ERR_FLASH_PROGRAMMED; /* once per erase, even with erased bytes */
    (void)buf;
    for (size_t i = 0; i < len; i++)
        if (f->mem[off + i] != ERASED)
            return MOTA_ERR_FLASH_NOT_ERASED;
    return MOTA_OK;
}

static void mark_units(struct mota_posix_flash *f, uint32_t off, size_t len, uint8_t state)
{
    if (ecc(f))
        memset(f->units + off / f->prog_size, state, len / f->prog_size);
}

/* Half the prog units made it; on ECC flash the last of them is torn (its ECC bits never written). */
static void torn_prog(struct mota_posix_flash *f, uint32_t off, const void *buf, size_t len)
{
    size_t units = len / f->prog_size, done = (units + 1) / 2;
    memcpy(f->mem + off, buf, done * f->prog_size);
    mark_units(f, off, done * f->prog_size, UNIT_PROGRAMMED);
    if (ecc(f))
        f->units[off / f->prog_size + done - 1] = UNIT_TORN;
    else if (done * f->prog_size == len && len >= 1) /* a one-unit program: half of its bytes */
        memset(f->mem + off + len / 2, ERASED, len - len / 2);
}

static int sim_prog(void *ctx, uint32_t off, const void *buf, size_t len)
{
    struct mota_posix_flash *f = ctx;
    bool torn;
    int ret = prog_check(f, off, buf, len);
    if (ret != MOTA_OK)
        return ret;
    if (cut_now(f, &torn)) {
        f->cut_kind = 'p';
        f->cut_off = off;
        f->cut_len = (uint32_t)len;
        if (torn)
            torn_prog(f, off, buf, len);
        power_cut(f);
    }
    take_time(f, mota_posix_flash_prog_us(&f->part, len, f->timing));
    memcpy(f->mem + off, buf, len);
    mark_units(f, off, len, UNIT_PROGRAMMED);
    f->progs++;
    f->bytes_programmed += len;
    return MOTA_OK;
}

static int sim_erase(void *ctx, uint32_t off)
{
    struct mota_posix_flash *f = ctx;
    bool torn;
    uint32_t start = 0;
    int r = off < f->size ? region_of(&f->part, off, &start) : -1;
    if (r < 0)
        return MOTA_ERR_FLASH_BOUNDS;
    if (start != off)
        return MOTA_ERR_FLASH_ALIGN;
    uint32_t sector = f->part.regions[r].sector_size;
    if (cut_now(f, &torn)) {
        f->cut_kind = 'e';
        f->cut_off = off;
        f->cut_len = sector;
        if (torn) { /* the first half erased, the rest as it was; on ECC flash none of it readable */
            memset(f->mem + off, ERASED, sector / 2);
            mark_units(f, off, sector, UNIT_TORN);
        }
        power_cut(f);
    }
    take_time(f, mota_posix_flash_erase_us(&f->part, off, f->timing));
    memset(f->mem + off, ERASED, sector);
    mark_units(f, off, sector, UNIT_ERASED);
    f->erases++;
    return MOTA_OK;
}

static const uint8_t *sim_map(void *ctx, uint32_t off, size_t len)
{
    struct mota_posix_flash *f = ctx;
    if (off > f->size || len > f->size - off)
        return NULL;
    if (ecc(f) && len > 0) /* a torn unit would fault the CPU that reads it: the range is refused */
        for (uint32_t u = off / f->prog_size; u <= (off + len - 1) / f->prog_size; u++)
            if (f->units[u] == UNIT_TORN)
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
    hal->prog_size = f->prog_size;
    hal->erased_value = ERASED;
    hal->flags = f->part.flags;
    hal->n_regions = f->part.n_regions;
    memcpy(hal->regions, f->part.regions, sizeof(hal->regions));
    hal->prog_block = f->part.prog_block;
    hal->prog_typ_us = f->part.prog_typ_us;
    hal->prog_max_us = f->part.prog_max_us;
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
