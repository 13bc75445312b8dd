/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The emulated flash of a board on QEMU (mota/arm_qemu.h). QEMU models no
 * writable flash on these machines, so the flash lives in a file on the
 * host (the launcher's flash=) and the CPU sees it through a window: RAM
 * of the machine (an MPS board's DDR or PSRAM), loaded from the file at
 * boot, or the machine's own flash array (an STM32's), which QEMU models as
 * ROM and which only a debugger's write changes: semihosting's SYS_READ
 * into it is one, so after each operation the window is read back from the
 * file. Models execute in place from it. Every program and erase is on the
 * file before the call returns, so killing QEMU is a real power cut: an
 * operation is on the file completely or not at all (or half, torn).
 *
 * Fault injection from the launcher (cut=N, torn): at program/erase number
 * N (from 1) the board announces a power cut and stops; with torn, half of
 * that operation reaches the file first. The launcher kills QEMU.
 */
#include "qemu_int.h"

#include "mota/arm.h"
#include "mota/err.h"

#include <string.h>

static const struct mota_qemu_flash_cfg *cfg;
static int32_t fd = -1;
static uint64_t ops;

static uint8_t *window(uint32_t off)
{
    return (uint8_t *)(uintptr_t)(cfg->window + off);
}

/* The operation takes the part's time: the CPU waits with interrupts on, as a driver polling the part's
 * status would, and the UART's interrupt keeps receiving. */
static void take_time(uint32_t typ_us, uint32_t max_us)
{
    uint32_t us = mota_qemu_args.flash_timing == 2 ? max_us : mota_qemu_args.flash_timing == 1 ? typ_us : 0;
    uint64_t until = mota_arm_now_us(NULL) + us;
    while (us > 0 && mota_arm_now_us(NULL) < until)
        __asm__ volatile("wfi"); /* the 1 ms SysTick wakes it */
}

/* [off, off + len) on the file and in the window: src's bytes, or erased bytes for NULL */
static int put(uint32_t off, const uint8_t *src, uint32_t len)
{
    if (!cfg->rom) { /* RAM: the window, then the file from it */
        if (src != NULL)
            memcpy(window(off), src, len);
        else
            memset(window(off), 0xFF, len);
        if (sh_seek(fd, off) != 0 || sh_write(fd, window(off), len) != 0)
            return MOTA_ERR_FLASH_IO;
        return MOTA_OK;
    }
    static uint8_t ones[256]; /* ROM: the file, then the window read back from it */
    memset(ones, 0xFF, sizeof(ones));
    if (sh_seek(fd, off) != 0)
        return MOTA_ERR_FLASH_IO;
    for (uint32_t done = 0; done < len;) {
        uint32_t n = src != NULL ? len : (len - done < sizeof(ones) ? len - done : (uint32_t)sizeof(ones));
        if (sh_write(fd, src != NULL ? src : ones, n) != 0)
            return MOTA_ERR_FLASH_IO;
        done += n;
    }
    if (sh_seek(fd, off) != 0 || sh_read(fd, window(off), len) != 0)
        return MOTA_ERR_FLASH_IO;
    return MOTA_OK;
}

/* [off, off + len) inside one range the agent owns */
static bool owned(uint32_t off, size_t len)
{
    for (unsigned i = 0; i < cfg->n_owned; i++)
        if (off >= cfg->owned[i].off && off - cfg->owned[i].off <= cfg->owned[i].len &&
            len <= cfg->owned[i].len - (off - cfg->owned[i].off))
            return true;
    return false;
}

/* Fault injection: the operation about to happen is number `ops`; src is the data of a program, NULL
 * for an erase. */
static void maybe_cut(uint32_t off, uint32_t len, const uint8_t *src)
{
    if (mota_qemu_args.cut_at_op == 0 || ++ops != mota_qemu_args.cut_at_op)
        return;
    if (mota_qemu_args.torn) {
        uint32_t half = (len / 2u + cfg->prog_size - 1u) / cfg->prog_size * cfg->prog_size;
        (void)put(off, src, half);
        /* with ECC the unit being written when the power went fails its check; a torn erase, the sector */
        if (src != NULL)
            (void)qemu_ecc_torn(off + half - cfg->prog_size, false);
        else
            (void)qemu_ecc_torn(off, true);
    }
    mota_board_log_hex(MOTA_BOARD_TAG "power cut at flash operation ", (uint32_t)ops);
    __asm__ volatile("cpsid i");
    for (;;)
        __asm__ volatile("wfi");
}

static int fl_read(void *ctx, uint32_t off, void *buf, size_t len)
{
    (void)ctx;
    if (off > cfg->size || len > cfg->size - off)
        return MOTA_ERR_FLASH_BOUNDS;
    if (!qemu_ecc_readable(off, (uint32_t)len)) {
        mota_board_log_hex(MOTA_BOARD_TAG "ECC: read error at 0x", off);
        return MOTA_ERR_FLASH_ECC; /* what a U5 port's read reports for its ECC NMI */
    }
    memcpy(buf, window(off), len);
    return MOTA_OK;
}

static int fl_prog(void *ctx, uint32_t off, const void *buf, size_t len)
{
    (void)ctx;
    const uint8_t *src = buf;
    if (!owned(off, len))
        return MOTA_ERR_FLASH_BOUNDS;
    if (off % cfg->prog_size != 0 || len % cfg->prog_size != 0)
        return MOTA_ERR_FLASH_ALIGN;
    int ret = qemu_ecc_can_program(off, src, (uint32_t)len);
    if (ret != MOTA_OK)
        return ret;
    for (size_t i = 0; i < len; i++)
        if (window(off)[i] != 0xFF)
            return MOTA_ERR_FLASH_NOT_ERASED;
    maybe_cut(off, (uint32_t)len, src);
    ret = put(off, src, (uint32_t)len);
    if (ret == MOTA_OK)
        ret = qemu_ecc_programmed(off, (uint32_t)len);
    uint32_t blocks = (uint32_t)((len + cfg->prog_block - 1u) / cfg->prog_block);
    take_time(blocks * cfg->prog_typ_us, blocks * cfg->prog_max_us);
    return ret;
}

static int fl_erase(void *ctx, uint32_t off)
{
    (void)ctx;
    struct mota_flash f = {.size = cfg->size, .n_regions = cfg->n_regions};
    memcpy(f.regions, cfg->regions, sizeof(f.regions));
    uint32_t start = 0, size = 0;
    int ret = mota_flash_sector(&f, off, &start, &size);
    if (ret != MOTA_OK)
        return ret;
    if (start != off)
        return MOTA_ERR_FLASH_ALIGN;
    if (!owned(off, size))
        return MOTA_ERR_FLASH_BOUNDS;
    const struct mota_flash_region *r = &cfg->regions[0];
    for (unsigned i = 0; i < cfg->n_regions; i++)
        if (cfg->regions[i].sector_size == size)
            r = &cfg->regions[i];
    maybe_cut(off, size, NULL);
    ret = put(off, NULL, size);
    if (ret == MOTA_OK)
        ret = qemu_ecc_erased(off);
    take_time(r->erase_typ_us, r->erase_max_us);
    return ret;
}

static const uint8_t *fl_map(void *ctx, uint32_t off, size_t len)
{
    (void)ctx;
    if (off > cfg->size || len > cfg->size - off)
        return NULL;
    /* a range holding a torn unit is refused: on the part, reading it would raise the ECC fault */
    return qemu_ecc_readable(off, (uint32_t)len) ? window(off) : NULL;
}

int mota_qemu_flash_init(struct mota_flash *f, const struct mota_qemu_flash_cfg *c)
{
    cfg = c;
    if (mota_qemu_args.flash == NULL || c->prog_size == 0 || c->prog_block == 0 || c->n_regions == 0 ||
        c->n_regions > MOTA_FLASH_MAX_REGIONS || (mota_qemu_args.flash_ecc && c->n_regions != 1))
        return MOTA_ERR_FLASH_IO;
    fd = sh_open(mota_qemu_args.flash, mota_qemu_args.flash_len, SH_MODE_RPLUSB);
    if (fd < 0 || sh_flen(fd) != (int32_t)c->size)
        return MOTA_ERR_FLASH_IO;
    /* the window from the file: what the agent owns (on ROM, the rest is the firmware's own image) */
    for (unsigned i = 0; i < c->n_owned; i++)
        if (sh_seek(fd, c->owned[i].off) != 0 || sh_read(fd, window(c->owned[i].off), c->owned[i].len) != 0)
            return MOTA_ERR_FLASH_IO;
    if (qemu_ecc_init(window(0), c->prog_size, c->regions[0].sector_size) != MOTA_OK)
        return MOTA_ERR_FLASH_IO;
    *f = (struct mota_flash){.read = fl_read,
                             .prog = fl_prog,
                             .erase = fl_erase,
                             .map = fl_map,
                             .xip_base = c->window,
                             .size = c->size,
                             .prog_size = c->prog_size,
                             .erased_value = 0xFF,
                             .flags = (uint8_t)(c->flags | (qemu_ecc_on() ? MOTA_FLASH_PROGRAM_ONCE : 0)),
                             .n_regions = c->n_regions,
                             .prog_block = c->prog_block,
                             .prog_typ_us = c->prog_typ_us,
                             .prog_max_us = c->prog_max_us};
    memcpy(f->regions, c->regions, sizeof(f->regions));
    return MOTA_OK;
}
