/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32U5 flash driver: program quad-words and erase pages through the flash interface's
 * non-secure registers, read through the ECC check (RM0456 "Embedded flash memory"; ST's HAL flash
 * driver in ../shared/stm32/stm32u5/reference was read for the sequences, nothing of it is copied).
 * Every access goes through stm32_io.h, so that the host tests run this source against a register
 * model of the part.
 */
#include "mota/err.h"
#include "mota/stm32_flash.h"
#include "flash_if.h"
#include "stm32_io.h"

#include <stdbool.h>
#include <string.h>

/* the flash interface's registers (offsets from cfg->regs) */
#define NSKEYR 0x08u
#define NSSR 0x20u
#define NSCR 0x28u
#define ECCR 0x30u

#define NSSR_EOP (1u << 0)
#define NSSR_OPERR (1u << 1)
#define NSSR_PROGERR (1u << 3)
#define NSSR_WRPERR (1u << 4)
#define NSSR_PGAERR (1u << 5)
#define NSSR_SIZERR (1u << 6)
#define NSSR_PGSERR (1u << 7)
#define NSSR_OPTWERR (1u << 13)
#define NSSR_BSY (1u << 16)
#define NSSR_WDW (1u << 17)
#define NSSR_ERRORS (NSSR_OPERR | NSSR_PROGERR | NSSR_WRPERR | NSSR_PGAERR | NSSR_SIZERR | NSSR_PGSERR | NSSR_OPTWERR)

#define NSCR_PG (1u << 0)
#define NSCR_PER (1u << 1)
#define NSCR_PNB_POS 3u
#define NSCR_BKER (1u << 11)
#define NSCR_STRT (1u << 16)
#define NSCR_LOCK (1u << 31)

#define ECCR_ADDR_ECC 0xFFFFFu
#define ECCR_BK_ECC (1u << 21)
#define ECCR_SYSF_ECC (1u << 22)
#define ECCR_ECCIE (1u << 24)
#define ECCR_ECCC (1u << 30)
#define ECCR_ECCD (1u << 31)

/* the ICACHE's registers (offsets from cfg->icache) */
#define ICACHE_CR 0x00u
#define ICACHE_SR 0x04u
#define ICACHE_FCR 0x0Cu
#define ICACHE_CR_EN (1u << 0)
#define ICACHE_CR_CACHEINV (1u << 1)
#define ICACHE_SR_BUSYF (1u << 0)
#define ICACHE_FCR_CBSYENDF (1u << 1)
#define ICACHE_MAX_US 100u /* an invalidation takes a few cycles */

#define QW 16u                  /* the program unit: a quad-word and its ECC bits */
#define PAGE 8192u              /* the erase unit */
#define BANK_PAGES 128u         /* pages in a bank */
#define PART (2u * 1024 * 1024) /* the U585's array */

/* The read in progress, for the NMI handler: its CPU addresses (to == 0: none), and whether a double
 * error in it was taken. */
static volatile struct {
    uint32_t regs, from, to;
    bool failed;
} reading;

static uint32_t rd(const struct mota_stm32u5_flash_cfg *c, uint32_t reg)
{
    return mota_stm32_io_read32(c->regs + reg);
}

static void wr(const struct mota_stm32u5_flash_cfg *c, uint32_t reg, uint32_t v)
{
    mota_stm32_io_write32(c->regs + reg, v);
}

/* the interface as every STM32 has it (flash_if.h), with the U5's non-secure registers: busy while an
 * operation runs (BSY) or a quad-word waits for its last words (WDW) */
static struct stm32_flash_if fif(const struct mota_stm32u5_flash_cfg *c)
{
    return (struct stm32_flash_if){.keyr = c->regs + NSKEYR,
                                   .sr = c->regs + NSSR,
                                   .cr = c->regs + NSCR,
                                   .busy = NSSR_BSY | NSSR_WDW,
                                   .errors = NSSR_ERRORS,
                                   .eop = NSSR_EOP,
                                   .lock = NSCR_LOCK,
                                   .now_us = c->now_us,
                                   .clock_ctx = c->clock_ctx};
}

/* The ICACHE holds flash lines for data reads too, and knows nothing of a program or an erase: an
 * enabled one is invalidated after each, or read, map and code run in place could see the old bytes. */
static int invalidate_icache(const struct mota_stm32u5_flash_cfg *c)
{
    if (c->icache == 0)
        return MOTA_OK;
    uint32_t cr = mota_stm32_io_read32(c->icache + ICACHE_CR);
    if (!(cr & ICACHE_CR_EN))
        return MOTA_OK; /* bypassed: it holds no line the CPU reads */
    mota_stm32_io_write32(c->icache + ICACHE_FCR, ICACHE_FCR_CBSYENDF);
    mota_stm32_io_write32(c->icache + ICACHE_CR, cr | ICACHE_CR_CACHEINV);
    uint64_t end = c->now_us(c->clock_ctx) + ICACHE_MAX_US;
    while (mota_stm32_io_read32(c->icache + ICACHE_SR) & ICACHE_SR_BUSYF) {
        if (c->now_us(c->clock_ctx) > end)
            return MOTA_ERR_TIMEOUT;
    }
    return MOTA_OK;
}

/* [off, off + len) inside the range */
static bool inside(const struct mota_stm32u5_flash_cfg *c, uint32_t off, size_t len)
{
    return off <= c->size && len <= c->size - off;
}

/* len bytes from the CPU address at, through the ECC check: MOTA_ERR_FLASH_ECC if a double error was seen,
 * by the NMI (mota_stm32u5_flash_nmi) or in ECCR. A single error was corrected: the bytes are right. */
static int checked_copy(const void *ctx, void *dst, uint32_t at, size_t len)
{
    const struct mota_stm32u5_flash_cfg *c = ctx;
    uint32_t eccie = rd(c, ECCR) & ECCR_ECCIE;
    wr(c, ECCR, eccie | ECCR_ECCC | ECCR_ECCD); /* an earlier error is not this read's */
    reading.regs = c->regs;
    reading.failed = false;
    reading.from = at & ~(QW - 1u);  /* ECCR names the quad-word */
    reading.to = at + (uint32_t)len; /* set last: the mark of a read in progress */
    mota_stm32_io_copy(dst, at, len);
    uint32_t eccr = rd(c, ECCR);
    bool failed = reading.failed;
    reading.to = 0;
    if (eccr & ECCR_ECCD) { /* an error the NMI did not take */
        wr(c, ECCR, (eccr & ECCR_ECCIE) | ECCR_ECCD);
        failed = true;
    }
    return failed ? MOTA_ERR_FLASH_ECC : MOTA_OK;
}

bool mota_stm32u5_flash_nmi(void)
{
    if (reading.to == 0)
        return false;
    uint32_t eccr = mota_stm32_io_read32(reading.regs + ECCR);
    if (!(eccr & ECCR_ECCD) || (eccr & ECCR_SYSF_ECC))
        return false;
    uint32_t at = MOTA_STM32U5_FLASH_BASE + ((eccr & ECCR_BK_ECC) ? PART / 2u : 0u) + (eccr & ECCR_ADDR_ECC);
    if (at < reading.from || at >= reading.to)
        return false;
    mota_stm32_io_write32(reading.regs + ECCR, (eccr & ECCR_ECCIE) | ECCR_ECCD);
    reading.failed = true;
    return true;
}

static int u5_read(void *ctx, uint32_t off, void *buf, size_t len)
{
    const struct mota_stm32u5_flash_cfg *c = ctx;
    if (!inside(c, off, len))
        return MOTA_ERR_FLASH_BOUNDS;
    return len == 0 ? MOTA_OK : checked_copy(c, buf, c->base + off, len);
}

static const uint8_t *u5_map(void *ctx, uint32_t off, size_t len)
{
    const struct mota_stm32u5_flash_cfg *c = ctx;
    return inside(c, off, len) ? mota_stm32_io_mem(c->base + off) : NULL;
}

/* One quad-word, PG set: its four words in order, interrupts masked between them (the part programs
 * once the fourth arrives, and holds the others meanwhile: WDW), then the program's end and flags. */
static int program_qw(const struct mota_stm32u5_flash_cfg *c, const struct stm32_flash_if *fi, uint32_t at,
                      const uint8_t *src)
{
    uint32_t w[QW / 4u];
    for (unsigned k = 0; k < QW / 4u; k++) {
        const uint8_t *s = src + 4u * k;
        w[k] = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
    }
    uint32_t primask = mota_stm32_io_irq_off();
    for (unsigned k = 0; k < QW / 4u; k++)
        mota_stm32_io_write32(at + 4u * k, w[k]);
    mota_stm32_io_irq_restore(primask);
    return stm32_flash_done(fi, c->prog_max_us);
}

static int u5_prog(void *ctx, uint32_t off, const void *buf, size_t len)
{
    const struct mota_stm32u5_flash_cfg *c = ctx;
    const uint8_t *src = buf;
    int ret = MOTA_ERR_FLASH_IO;
    if (off % QW != 0 || len % QW != 0)
        return MOTA_ERR_FLASH_ALIGN;
    if (!inside(c, off, len))
        return MOTA_ERR_FLASH_BOUNDS;
    if (len == 0)
        return MOTA_OK;
    if ((ret = stm32_flash_compare(checked_copy, c, c->base + off, NULL, len)) != MOTA_OK)
        return ret;
    const struct stm32_flash_if fi = fif(c);
    if ((ret = stm32_flash_begin(&fi, c->prog_max_us)) == MOTA_OK) {
        wr(c, NSCR, NSCR_PG);
        for (size_t i = 0; i < len && ret == MOTA_OK; i += QW)
            ret = program_qw(c, &fi, c->base + off + (uint32_t)i, src + i);
    }
    stm32_flash_end(&fi);
    /* the check above cached the erased lines: invalidated before the read back, whatever happened */
    int inv = invalidate_icache(c);
    if (ret == MOTA_OK)
        ret = inv;
    return ret == MOTA_OK ? stm32_flash_compare(checked_copy, c, c->base + off, src, len) : ret;
}

static int u5_erase(void *ctx, uint32_t off)
{
    const struct mota_stm32u5_flash_cfg *c = ctx;
    if (off >= c->size)
        return MOTA_ERR_FLASH_BOUNDS;
    if (off % PAGE != 0)
        return MOTA_ERR_FLASH_ALIGN;
    /* the page's bank and number in it, from its place in the array */
    uint32_t page = (c->base - MOTA_STM32U5_FLASH_BASE + off) / PAGE;
    uint32_t cr = NSCR_PER | (page % BANK_PAGES) << NSCR_PNB_POS | (page >= BANK_PAGES ? NSCR_BKER : 0u);
    const struct stm32_flash_if fi = fif(c);
    int ret = stm32_flash_begin(&fi, c->erase_max_us);
    if (ret == MOTA_OK) {
        wr(c, NSCR, cr);
        wr(c, NSCR, cr | NSCR_STRT);
        ret = stm32_flash_done(&fi, c->erase_max_us);
    }
    stm32_flash_end(&fi);
    int inv = invalidate_icache(c);
    return ret == MOTA_OK ? inv : ret;
}

int mota_stm32u5_flash_init(struct mota_flash *f, const struct mota_stm32u5_flash_cfg *cfg)
{
    int ret = MOTA_ERR_ARG;
    if (f == NULL || cfg == NULL || cfg->now_us == NULL || cfg->size == 0 || cfg->size % PAGE != 0 ||
        cfg->base < MOTA_STM32U5_FLASH_BASE || (cfg->base - MOTA_STM32U5_FLASH_BASE) % PAGE != 0 ||
        cfg->base - MOTA_STM32U5_FLASH_BASE >= PART || cfg->size > PART - (cfg->base - MOTA_STM32U5_FLASH_BASE))
        return ret;
    memset(f, 0, sizeof(*f));
    f->read = u5_read;
    f->prog = u5_prog;
    f->erase = u5_erase;
    f->map = u5_map;
    f->xip_base = cfg->base;
    f->size = cfg->size;
    f->prog_size = QW;
    f->erased_value = 0xFFu;
    f->flags = MOTA_FLASH_PROGRAM_ONCE;
    f->n_regions = 1;
    f->regions[0] = (struct mota_flash_region){cfg->size / PAGE, PAGE, cfg->erase_typ_us, cfg->erase_max_us};
    f->prog_block = QW;
    f->prog_typ_us = cfg->prog_typ_us;
    f->prog_max_us = cfg->prog_max_us;
    f->ctx = (void *)(uintptr_t)cfg;
    return MOTA_OK;
}
