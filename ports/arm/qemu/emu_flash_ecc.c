/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ECC on the emulated flash (the launcher's --flash-ecc): the board's 16-byte program units behave as an
 * STM32U5's quad-words do. A unit takes one program per erase, even of all-0xFF bytes, and a unit a power
 * cut tore (a program, or its whole sector's erase) fails its ECC check: read says MOTA_ERR_FLASH_ECC and
 * map refuses the range, where a real part would raise its ECC NMI or bus fault (docs/porting.md "The
 * flash"). A unit holding anything but 0xFF is programmed, as the contents show; what the contents cannot
 * show is kept in a small table: units programmed with all-0xFF bytes, torn units and torn sectors. The
 * table lives in a file beside the flash (FLASH.ecc, written through like the flash) so that it survives
 * QEMU being killed. It holds 256 entries (1 KiB of RAM, an emulation cost only): a program that would
 * overflow it is refused (MOTA_ERR_FLASH_IO) before anything is written.
 */
#include "qemu_int.h"

#include "mota/err.h"

#include <string.h>

#define ENTRIES 256u /* FLASH.ecc: 1 KiB, as the launcher creates it (cmd_board.c ecc_file) */
#define KIND_SHIFT 24u
#define UNIT_MASK 0x00FFFFFFu

enum kind { FREE = 0, ONES = 1, TORN = 2, TORN_SECTOR = 3 };

static uint32_t table[ENTRIES]; /* kind << 24 | unit index (its offset / the unit size) */
static unsigned n_torn;         /* TORN and TORN_SECTOR entries: reads check the table only when there are */
static unsigned n_used;         /* entries of any kind: programs check the table only when there are */
static int32_t efd = -1;
static char path[300];
static const uint8_t *window;
static uint32_t unit, sector; /* the emulated flash's program unit and (uniform) sector */

static enum kind kind_of(uint32_t e)
{
    return (enum kind)(e >> KIND_SHIFT);
}

bool qemu_ecc_on(void)
{
    return efd >= 0;
}

int qemu_ecc_init(const uint8_t *w, uint32_t unit_size, uint32_t sector_size)
{
    window = w;
    unit = unit_size;
    sector = sector_size;
    if (!mota_qemu_args.flash_ecc)
        return MOTA_OK;
    if (mota_qemu_args.flash_len + sizeof(".ecc") > sizeof(path))
        return MOTA_ERR_FLASH_IO;
    memcpy(path, mota_qemu_args.flash, mota_qemu_args.flash_len);
    memcpy(path + mota_qemu_args.flash_len, ".ecc", sizeof(".ecc"));
    efd = sh_open(path, mota_qemu_args.flash_len + 4u, SH_MODE_RPLUSB);
    if (efd < 0 || sh_flen(efd) != (int32_t)sizeof(table) || sh_seek(efd, 0) != 0 ||
        sh_read(efd, table, sizeof(table)) != 0)
        return MOTA_ERR_FLASH_IO; /* the launcher creates it */
    for (unsigned i = 0; i < ENTRIES; i++) {
        n_torn += kind_of(table[i]) >= TORN;
        n_used += table[i] != FREE;
    }
    return MOTA_OK;
}

static int put(unsigned i, uint32_t e)
{
    n_torn += (kind_of(e) >= TORN) - (kind_of(table[i]) >= TORN);
    n_used += (e != FREE) - (table[i] != FREE);
    table[i] = e;
    if (sh_seek(efd, i * 4u) != 0 || sh_write(efd, &table[i], 4) != 0)
        return MOTA_ERR_FLASH_IO;
    return MOTA_OK;
}

static int add(enum kind k, uint32_t off)
{
    for (unsigned i = 0; i < ENTRIES; i++)
        if (table[i] == FREE)
            return put(i, (uint32_t)k << KIND_SHIFT | (off / unit));
    return MOTA_ERR_FLASH_IO; /* more exceptions than the emulation keeps */
}

/* Whether the unit at off is in the table as k (a torn sector: any unit of it). */
static bool listed(enum kind k, uint32_t off)
{
    uint32_t u = off / unit, su = off / sector * (sector / unit);
    for (unsigned i = 0; n_used > 0 && i < ENTRIES; i++) {
        uint32_t e = table[i];
        if (kind_of(e) == k && (e & UNIT_MASK) == (k == TORN_SECTOR ? su : u))
            return true;
    }
    return false;
}

static bool torn(uint32_t off)
{
    return n_torn > 0 && (listed(TORN, off) || listed(TORN_SECTOR, off));
}

bool qemu_ecc_readable(uint32_t off, uint32_t len)
{
    if (efd < 0 || n_torn == 0 || len == 0)
        return true;
    /* by the table, not by the units: a mapped slot is megabytes */
    for (unsigned i = 0; i < ENTRIES; i++) {
        enum kind k = kind_of(table[i]);
        uint32_t at = (table[i] & UNIT_MASK) * unit;
        uint32_t span = k == TORN_SECTOR ? sector : unit;
        if (k >= TORN && at < off + len && off < at + span)
            return false;
    }
    return true;
}

static bool all_ones(const uint8_t *p)
{
    for (uint32_t i = 0; i < unit; i++)
        if (p[i] != 0xFFu)
            return false;
    return true;
}

int qemu_ecc_can_program(uint32_t off, const uint8_t *src, uint32_t len)
{
    unsigned ones = 0;
    for (uint32_t u = off; efd >= 0 && u < off + len; u += unit) {
        if (!all_ones(window + u) || torn(u) || listed(ONES, u))
            return MOTA_ERR_FLASH_PROGRAMMED; /* once per erase */
        ones += all_ones(src + (u - off));
    }
    /* the table must have room for the units it alone will know are programmed, before any is */
    return ones > ENTRIES - n_used ? MOTA_ERR_FLASH_IO : MOTA_OK;
}

int qemu_ecc_programmed(uint32_t off, uint32_t len)
{
    int ret = MOTA_OK;
    for (uint32_t u = off; efd >= 0 && u < off + len && ret == MOTA_OK; u += unit)
        if (all_ones(window + u)) /* programmed, yet it reads erased: only the table knows */
            ret = add(ONES, u);
    return ret;
}

int qemu_ecc_torn(uint32_t off, bool whole_sector)
{
    if (efd < 0)
        return MOTA_OK;
    mota_board_log_hex(whole_sector ? MOTA_BOARD_TAG "ECC: sector torn at 0x" : MOTA_BOARD_TAG "ECC: unit torn at 0x",
                       off);
    return add(whole_sector ? TORN_SECTOR : TORN, off);
}

int qemu_ecc_erased(uint32_t off)
{
    uint32_t first = off / unit, last = first + sector / unit;
    for (unsigned i = 0; efd >= 0 && n_used > 0 && i < ENTRIES; i++) {
        uint32_t u = table[i] & UNIT_MASK;
        if (table[i] != FREE && u >= first && u < last) {
            int ret = put(i, FREE);
            if (ret != MOTA_OK)
                return ret;
        }
    }
    return MOTA_OK;
}
