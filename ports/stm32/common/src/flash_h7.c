/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32H7 flash driver (the H747): program 256-bit flash words and erase sectors through each bank's
 * registers, read through the ECC check, keep the Cortex-M7's caches coherent with what changed (RM0399
 * "Embedded flash memory"; ST's HAL flash driver in ../shared/stm32/stm32h7/reference was read for the
 * sequences, nothing of it is copied). Every access goes through stm32_io.h, so that the host tests run
 * this source against a register model of the part.
 */
#include "mota/err.h"
#include "mota/stm32_flash.h"
#include "flash_if.h"
#include "stm32_io.h"

#include <stdbool.h>
#include <string.h>

/* a bank's registers (offsets from cfg->regs; bank 2's are BANK_REGS further) */
#define KEYR 0x04u
#define CR 0x0Cu
#define SR 0x10u
#define CCR 0x14u
#define ECC_FAR 0x60u
#define BANK_REGS 0x100u

#define SR_BSY (1u << 0)
#define SR_WBNE (1u << 1)
#define SR_QW (1u << 2)
#define SR_EOP (1u << 16)
#define SR_WRPERR (1u << 17)
#define SR_PGSERR (1u << 18)
#define SR_STRBERR (1u << 19)
#define SR_INCERR (1u << 21)
#define SR_OPERR (1u << 22)
#define SR_SNECCERR (1u << 25)
#define SR_DBECCERR (1u << 26)
/* a program's or an erase's errors; the read errors (RDPERR, RDSERR, the ECC flags) are a read's, taken
 * by the ECC check: a fetch of the firmware's own code during an operation is not the operation's failure */
#define SR_ERRORS (SR_WRPERR | SR_PGSERR | SR_STRBERR | SR_INCERR | SR_OPERR)
#define SR_ECC (SR_SNECCERR | SR_DBECCERR) /* cleared by CCR's bits of the same positions */

#define CR_LOCK (1u << 0)
#define CR_PG (1u << 1)
#define CR_SER (1u << 2)
#define CR_PSIZE_X32 (2u << 4) /* 2.7 to 3.6 V, as ST's sequence for the supply the board has */
#define CR_START (1u << 7)
#define CR_SNB_POS 8u

#define ECC_FA_ADDR 0x7FFFu /* the failing flash word in its bank */

/* SCB's cache maintenance (ARMv7-M) */
#define SCB_ICIALLU 0xE000EF50u
#define SCB_DCIMVAC 0xE000EF5Cu
#define DLINE 32u /* the M7's D-cache line */

#define WORD 32u                /* the program unit: a flash word and its ECC bits */
#define SECTOR (128u * 1024)    /* the erase unit */
#define BANK (1024u * 1024)     /* a bank's bytes */
#define PART (2u * 1024 * 1024) /* the H747's array */

/* The read in progress, for the bus fault handler: its bank's registers and array, its CPU addresses
 * (to == 0: none), and whether a double error in it was taken. */
static volatile struct {
    uint32_t regs, bank, from, to;
    bool failed;
} reading;

/* the registers of the bank holding the CPU address at */
static uint32_t bank_regs(const struct mota_stm32h7_flash_cfg *c, uint32_t at)
{
    return c->regs + (at - MOTA_STM32H7_FLASH_BASE >= BANK ? BANK_REGS : 0u);
}

/* the interface as every STM32 has it (flash_if.h), with one bank's registers: busy while an operation
 * runs (BSY), a flash word waits in the queue (QW) or the write buffer holds part of one (WBNE); the
 * flags cleared through CCR */
static struct stm32_flash_if fif(const struct mota_stm32h7_flash_cfg *c, uint32_t regs)
{
    return (struct stm32_flash_if){.keyr = regs + KEYR,
                                   .sr = regs + SR,
                                   .cr = regs + CR,
                                   .ccr = regs + CCR,
                                   .busy = SR_BSY | SR_QW | SR_WBNE,
                                   .errors = SR_ERRORS,
                                   .eop = SR_EOP,
                                   .lock = CR_LOCK,
                                   .now_us = c->now_us,
                                   .clock_ctx = c->clock_ctx};
}

/* The D-cache knows nothing of a program or an erase: the lines over [at, at + len) are dropped by address
 * (an invalidation of all sets would drop the dirty lines of RAM too), and the I-cache whole for code run
 * in place; then the barrier, so that no load after it is served from a line dropped. */
static void invalidate_caches(const struct mota_stm32h7_flash_cfg *c, uint32_t at, size_t len)
{
    if (c->dcache)
        for (uint32_t a = at & ~(DLINE - 1u); a < at + (uint32_t)len; a += DLINE)
            mota_stm32_io_write32(SCB_DCIMVAC, a);
    mota_stm32_io_write32(SCB_ICIALLU, 0);
    mota_stm32_io_barrier(); /* the maintenance done before the next load */
}

/* [off, off + len) inside the range */
static bool inside(const struct mota_stm32h7_flash_cfg *c, uint32_t off, size_t len)
{
    return off <= c->size && len <= c->size - off;
}

/* A double error of the reading bank, in the read's range: taken (cleared), true. Where the faulting load
 * is known (located: BFAR inside the range) that is enough; else ECC_FAxR names the word, but it keeps the
 * first error's (a single one elsewhere, by a fetch, freezes it until its flag is cleared). */
static bool take_double_error(bool located)
{
    uint32_t regs = reading.regs;
    if (!(mota_stm32_io_read32(regs + SR) & SR_DBECCERR))
        return false;
    uint32_t at = reading.bank + (mota_stm32_io_read32(regs + ECC_FAR) & ECC_FA_ADDR) * WORD;
    if (!located && (at < reading.from || at >= reading.to))
        return false;
    mota_stm32_io_write32(regs + CCR, SR_ECC); /* both flags: ECC_FAxR records the next error again */
    return true;
}

/* len bytes from the CPU address at, inside one bank, through the ECC check: MOTA_ERR_FLASH_ECC if a double
 * error was seen, by the bus fault (mota_stm32h7_flash_bus_fault) or in SR. A single error was corrected:
 * the bytes are right. */
static int checked_copy_bank(const struct mota_stm32h7_flash_cfg *c, void *dst, uint32_t at, size_t len)
{
    uint32_t regs = bank_regs(c, at);
    mota_stm32_io_write32(regs + CCR, SR_ECC); /* an earlier error is not this read's */
    reading.regs = regs;
    reading.bank = at - MOTA_STM32H7_FLASH_BASE >= BANK ? MOTA_STM32H7_FLASH_BASE + BANK : MOTA_STM32H7_FLASH_BASE;
    reading.failed = false;
    reading.from = at & ~(WORD - 1u); /* ECC_FAxR names the flash word */
    reading.to = at + (uint32_t)len;  /* set last: the mark of a read in progress */
    mota_stm32_io_copy(dst, at, len);
    bool failed = take_double_error(false) || reading.failed; /* SR: an error the bus fault did not take */
    reading.to = 0;
    return failed ? MOTA_ERR_FLASH_ECC : MOTA_OK;
}

/* ... and a range across the banks' boundary, a bank at a time */
static int checked_copy(const void *ctx, void *dst, uint32_t at, size_t len)
{
    const struct mota_stm32h7_flash_cfg *c = ctx;
    int ret = MOTA_OK;
    uint8_t *d = dst;
    while (len > 0 && ret == MOTA_OK) {
        uint32_t in_bank = BANK - (at - MOTA_STM32H7_FLASH_BASE) % BANK;
        size_t n = len < in_bank ? len : in_bank;
        ret = checked_copy_bank(c, d, at, n);
        d += n;
        at += (uint32_t)n;
        len -= n;
    }
    return ret;
}

bool mota_stm32h7_flash_bus_fault(uint32_t addr)
{
    if (reading.to == 0)
        return false;
    if (addr != 0 && (addr < reading.from || addr >= reading.to))
        return false; /* a load elsewhere: BFAR names it */
    if (!take_double_error(addr != 0))
        return false;
    reading.failed = true;
    return true;
}

static int h7_read(void *ctx, uint32_t off, void *buf, size_t len)
{
    const struct mota_stm32h7_flash_cfg *c = ctx;
    if (!inside(c, off, len))
        return MOTA_ERR_FLASH_BOUNDS;
    return len == 0 ? MOTA_OK : checked_copy(c, buf, c->base + off, len);
}

static const uint8_t *h7_map(void *ctx, uint32_t off, size_t len)
{
    const struct mota_stm32h7_flash_cfg *c = ctx;
    return inside(c, off, len) ? mota_stm32_io_mem(c->base + off) : NULL;
}

/* One flash word, PG set in its bank: its eight words in a row into the write buffer, which the part
 * programs once the eighth arrives (QW), then the program's end and flags. Interrupts stay on: the
 * buffer waits for its eighth word however long a handler runs, and no handler writes the array. */
static int program_word(const struct mota_stm32h7_flash_cfg *c, const struct stm32_flash_if *fi, uint32_t at,
                        const uint8_t *src)
{
    for (unsigned k = 0; k < WORD / 4u; k++) {
        const uint8_t *s = src + 4u * k;
        mota_stm32_io_write32(at + 4u * k,
                              (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24);
    }
    mota_stm32_io_barrier(); /* the eighth word reaches the buffer before SR is looked at */
    return stm32_flash_done(fi, c->prog_max_us);
}

/* [at, at + len) inside one bank, erased: programmed through that bank's registers */
static int program_bank(const struct mota_stm32h7_flash_cfg *c, uint32_t at, const uint8_t *src, size_t len)
{
    const struct stm32_flash_if fi = fif(c, bank_regs(c, at));
    int ret = stm32_flash_begin(&fi, c->prog_max_us);
    if (ret == MOTA_OK) {
        mota_stm32_io_write32(fi.cr, CR_PG | CR_PSIZE_X32);
        mota_stm32_io_barrier(); /* PG set (a Device write) before the array's stores (Normal memory) */
        for (size_t i = 0; i < len && ret == MOTA_OK; i += WORD)
            ret = program_word(c, &fi, at + (uint32_t)i, src + i);
    }
    stm32_flash_end(&fi);
    return ret;
}

static int h7_prog(void *ctx, uint32_t off, const void *buf, size_t len)
{
    const struct mota_stm32h7_flash_cfg *c = ctx;
    const uint8_t *src = buf;
    int ret = MOTA_ERR_FLASH_IO;
    if (off % WORD != 0 || len % WORD != 0)
        return MOTA_ERR_FLASH_ALIGN;
    if (!inside(c, off, len))
        return MOTA_ERR_FLASH_BOUNDS;
    if (len == 0)
        return MOTA_OK;
    if ((ret = stm32_flash_compare(checked_copy, c, c->base + off, NULL, len)) != MOTA_OK)
        return ret;
    uint32_t at = c->base + off;
    for (size_t i = 0; i < len && ret == MOTA_OK;) {
        uint32_t in_bank = BANK - (at + (uint32_t)i - MOTA_STM32H7_FLASH_BASE) % BANK;
        size_t n = len - i < in_bank ? len - i : in_bank;
        ret = program_bank(c, at + (uint32_t)i, src + i, n);
        i += n;
    }
    /* the check above cached the erased lines: dropped before the read back, whatever happened */
    invalidate_caches(c, at, len);
    return ret == MOTA_OK ? stm32_flash_compare(checked_copy, c, c->base + off, src, len) : ret;
}

static int h7_erase(void *ctx, uint32_t off)
{
    const struct mota_stm32h7_flash_cfg *c = ctx;
    if (off >= c->size)
        return MOTA_ERR_FLASH_BOUNDS;
    if (off % SECTOR != 0)
        return MOTA_ERR_FLASH_ALIGN;
    /* the sector's bank and number in it, from its place in the array */
    uint32_t at = c->base + off;
    uint32_t snb = (at - MOTA_STM32H7_FLASH_BASE) % BANK / SECTOR;
    uint32_t cr = CR_SER | CR_PSIZE_X32 | snb << CR_SNB_POS;
    const struct stm32_flash_if fi = fif(c, bank_regs(c, at));
    int ret = stm32_flash_begin(&fi, c->erase_max_us);
    if (ret == MOTA_OK) {
        mota_stm32_io_write32(fi.cr, cr);
        mota_stm32_io_write32(fi.cr, cr | CR_START);
        ret = stm32_flash_done(&fi, c->erase_max_us);
    }
    stm32_flash_end(&fi);
    invalidate_caches(c, at, SECTOR);
    return ret;
}

int mota_stm32h7_flash_init(struct mota_flash *f, const struct mota_stm32h7_flash_cfg *cfg)
{
    int ret = MOTA_ERR_ARG;
    if (f == NULL || cfg == NULL || cfg->now_us == NULL || cfg->size == 0 || cfg->size % SECTOR != 0 ||
        cfg->base < MOTA_STM32H7_FLASH_BASE || (cfg->base - MOTA_STM32H7_FLASH_BASE) % SECTOR != 0 ||
        cfg->base - MOTA_STM32H7_FLASH_BASE >= PART || cfg->size > PART - (cfg->base - MOTA_STM32H7_FLASH_BASE))
        return ret;
    memset(f, 0, sizeof(*f));
    f->read = h7_read;
    f->prog = h7_prog;
    f->erase = h7_erase;
    f->map = h7_map;
    f->xip_base = cfg->base;
    f->size = cfg->size;
    f->prog_size = WORD;
    f->erased_value = 0xFFu;
    f->flags = MOTA_FLASH_PROGRAM_ONCE;
    f->n_regions = 1;
    f->regions[0] = (struct mota_flash_region){cfg->size / SECTOR, SECTOR, cfg->erase_typ_us, cfg->erase_max_us};
    f->prog_block = WORD;
    f->prog_typ_us = cfg->prog_typ_us;
    f->prog_max_us = cfg->prog_max_us;
    f->ctx = (void *)(uintptr_t)cfg;
    return MOTA_OK;
}
