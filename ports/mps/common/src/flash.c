/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The emulated NOR flash. QEMU has no writable flash on these boards, so a
 * 16 MiB RAM window of the board (DDR or PSRAM: MOTA_MPS_FLASH_BASE)
 * stands in for a memory-mapped NOR part: models
 * execute in place from it, and every program and erase is written through
 * to the flash file on the host (semihosting) before the call returns.
 * At boot the window is reloaded from that file (a QEMU reset would bring
 * back a stale image otherwise). Killing QEMU is then a real power cut: an
 * operation is on the file completely or not at all.
 *
 * NOR rules are enforced: program only erased bytes (MOTA_ERR_FLASH_NOT_ERASED),
 * 16-byte aligned programs, whole 4 KiB sector erases. The part it stands for
 * is an external octal NOR like the STM32N6570-DK's MX66UW1G45G (no ECC: a
 * unit may be programmed again from 1 to 0), whose times it reports; with
 * flash-timing=typ|max from the launcher each operation also takes that time,
 * in a WFI loop with interrupts on, so the UART's RX interrupt keeps filling
 * its ring while the flash "works" (docs/porting.md "The flash").
 *
 * Fault injection from the launcher (cut=N, torn): at program/erase number
 * N (from 1) the board announces a power cut and stops; with torn, half of
 * that operation reaches the file first. The launcher kills QEMU.
 */
#include "mps.h"

#include "mota/err.h"

#include <string.h>

#define WINDOW ((uint8_t *)(uintptr_t)MOTA_MPS_FLASH_BASE)

/* The NOR it emulates (MX66UW1G45G; ../shared/research/stm32-flash-facts.md): a 4 KiB sector erase
 * 25 ms typical (~) / 400 ms, a 256-byte page program 0.15 ms (~) / 0.75 ms (~) */
#define NOR_ERASE_TYP_US 25000u
#define NOR_ERASE_MAX_US 400000u
#define NOR_PAGE 256u
#define NOR_PROG_TYP_US 150u
#define NOR_PROG_MAX_US 750u

/* The operation takes the part's time: the CPU waits with interrupts on, as a driver polling the NOR's
 * status would, and the UART's interrupt keeps receiving. */
static void take_time(uint32_t typ_us, uint32_t max_us)
{
    uint32_t us = mps_args.flash_timing == 2 ? max_us : mps_args.flash_timing == 1 ? typ_us : 0;
    uint64_t until = mota_arm_now_us(NULL) + us;
    while (us > 0 && mota_arm_now_us(NULL) < until)
        __asm__ volatile("wfi"); /* the 1 ms SysTick wakes it */
}

static int32_t fd = -1;
static uint64_t ops;

static int write_through(uint32_t off, uint32_t len)
{
    if (sh_seek(fd, off) != 0 || sh_write(fd, WINDOW + off, len) != 0)
        return MOTA_ERR_FLASH_IO;
    return MOTA_OK;
}

/* Fault injection: the operation about to happen is number `ops`; src is
 * the data of a program, NULL for an erase. */
static void maybe_cut(uint32_t off, uint32_t len, const uint8_t *src)
{
    if (mps_args.cut_at_op == 0 || ++ops != mps_args.cut_at_op)
        return;
    if (mps_args.torn) {
        uint32_t half = (len / 2u + MOTA_MPS_PROG - 1u) / MOTA_MPS_PROG * MOTA_MPS_PROG;
        if (src != NULL)
            memcpy(WINDOW + off, src, half);
        else
            memset(WINDOW + off, 0xFF, half);
        (void)write_through(off, half);
        /* with ECC the unit being written when the power went fails its check; a torn erase, the sector */
        if (src != NULL)
            (void)mps_ecc_torn(off + half - MOTA_MPS_PROG, false);
        else
            (void)mps_ecc_torn(off, true);
    }
    mota_board_log_hex(MOTA_BOARD_TAG "power cut at flash operation ", (uint32_t)ops);
    __asm__ volatile("cpsid i");
    for (;;)
        __asm__ volatile("wfi");
}

static int fl_read(void *ctx, uint32_t off, void *buf, size_t len)
{
    (void)ctx;
    if (off > MOTA_MPS_FLASH_SIZE || len > MOTA_MPS_FLASH_SIZE - off)
        return MOTA_ERR_FLASH_BOUNDS;
    if (!mps_ecc_readable(off, (uint32_t)len)) {
        mota_board_log_hex(MOTA_BOARD_TAG "ECC: read error at 0x", off);
        return MOTA_ERR_FLASH_ECC; /* what a U5 port's read reports for its ECC NMI */
    }
    memcpy(buf, WINDOW + off, len);
    return MOTA_OK;
}

static int fl_prog(void *ctx, uint32_t off, const void *buf, size_t len)
{
    (void)ctx;
    const uint8_t *src = buf;
    if (off > MOTA_MPS_FLASH_SIZE || len > MOTA_MPS_FLASH_SIZE - off)
        return MOTA_ERR_FLASH_BOUNDS;
    if (off % MOTA_MPS_PROG != 0 || len % MOTA_MPS_PROG != 0)
        return MOTA_ERR_FLASH_ALIGN;
    int ret = mps_ecc_can_program(off, src, (uint32_t)len);
    if (ret != MOTA_OK)
        return ret;
    for (size_t i = 0; i < len; i++)
        if (WINDOW[off + i] != 0xFF)
            return MOTA_ERR_FLASH_NOT_ERASED;
    maybe_cut(off, (uint32_t)len, src);
    memcpy(WINDOW + off, src, len);
    ret = write_through(off, (uint32_t)len);
    if (ret == MOTA_OK)
        ret = mps_ecc_programmed(off, (uint32_t)len);
    uint32_t pages = (uint32_t)((len + NOR_PAGE - 1u) / NOR_PAGE);
    take_time(pages * NOR_PROG_TYP_US, pages * NOR_PROG_MAX_US);
    return ret;
}

static int fl_erase(void *ctx, uint32_t off)
{
    (void)ctx;
    if (off >= MOTA_MPS_FLASH_SIZE)
        return MOTA_ERR_FLASH_BOUNDS;
    if (off % MOTA_MPS_SECTOR != 0)
        return MOTA_ERR_FLASH_ALIGN;
    maybe_cut(off, MOTA_MPS_SECTOR, NULL);
    memset(WINDOW + off, 0xFF, MOTA_MPS_SECTOR);
    int ret = write_through(off, MOTA_MPS_SECTOR);
    if (ret == MOTA_OK)
        ret = mps_ecc_erased(off);
    take_time(NOR_ERASE_TYP_US, NOR_ERASE_MAX_US);
    return ret;
}

static const uint8_t *fl_map(void *ctx, uint32_t off, size_t len)
{
    (void)ctx;
    if (off > MOTA_MPS_FLASH_SIZE || len > MOTA_MPS_FLASH_SIZE - off)
        return NULL;
    /* a range holding a torn unit is refused: on the part, reading it would raise the ECC fault */
    return mps_ecc_readable(off, (uint32_t)len) ? WINDOW + off : NULL;
}

int mps_flash_init(struct mota_flash *f)
{
    if (mps_args.flash == NULL)
        return MOTA_ERR_FLASH_IO;
    fd = sh_open(mps_args.flash, mps_args.flash_len, SH_MODE_RPLUSB);
    if (fd < 0 || sh_flen(fd) != (int32_t)MOTA_MPS_FLASH_SIZE || sh_seek(fd, 0) != 0 ||
        sh_read(fd, WINDOW, MOTA_MPS_FLASH_SIZE) != 0 || mps_ecc_init() != MOTA_OK)
        return MOTA_ERR_FLASH_IO;
    *f = (struct mota_flash){
        .read = fl_read,
        .prog = fl_prog,
        .erase = fl_erase,
        .map = fl_map,
        .xip_base = MOTA_MPS_FLASH_BASE,
        .size = MOTA_MPS_FLASH_SIZE,
        .prog_size = MOTA_MPS_PROG,
        .erased_value = 0xFF,
        .flags = mps_ecc_on() ? MOTA_FLASH_PROGRAM_ONCE : 0,
        .n_regions = 1,
        .regions = {{MOTA_MPS_FLASH_SIZE / MOTA_MPS_SECTOR, MOTA_MPS_SECTOR, NOR_ERASE_TYP_US, NOR_ERASE_MAX_US}},
        .prog_block = NOR_PAGE,
        .prog_typ_us = NOR_PROG_TYP_US,
        .prog_max_us = NOR_PROG_MAX_US};
    return MOTA_OK;
}
