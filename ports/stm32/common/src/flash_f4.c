/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32F4 flash driver: program and erase through the flash interface's
 * registers (RM0368 section 3, RM0090 section 3; ST's HAL flash driver in
 * ../shared/stm32/stm32f4/reference was read for the sequences, nothing of
 * it is copied). Every access goes through stm32_io.h, so that the host tests
 * run this source against a register model of the part.
 */
#include "mota/err.h"
#include "mota/stm32_flash.h"
#include "flash_if.h"
#include "stm32_io.h"

#include <stdbool.h>
#include <string.h>

/* the interface's registers (offsets from cfg->regs) */
#define ACR 0x00u
#define KEYR 0x04u
#define SR 0x0Cu
#define CR 0x10u

#define ACR_ICEN (1u << 9)
#define ACR_DCEN (1u << 10)
#define ACR_ICRST (1u << 11)
#define ACR_DCRST (1u << 12)

#define SR_EOP (1u << 0)
#define SR_OPERR (1u << 1)
#define SR_WRPERR (1u << 4)
#define SR_PGAERR (1u << 5)
#define SR_PGPERR (1u << 6)
#define SR_PGSERR (1u << 7)
#define SR_RDERR (1u << 8)
#define SR_BSY (1u << 16)
#define SR_ERRORS (SR_OPERR | SR_WRPERR | SR_PGAERR | SR_PGPERR | SR_PGSERR | SR_RDERR)

#define CR_PG (1u << 0)
#define CR_SER (1u << 1)
#define CR_SNB_POS 3u
#define CR_PSIZE_X32 (2u << 8)
#define CR_STRT (1u << 16)
#define CR_LOCK (1u << 31)

#define WORD 4u

static uint32_t rd(const struct mota_stm32f4_flash_cfg *c, uint32_t reg)
{
    return mota_stm32_io_read32(c->regs + reg);
}

static void wr(const struct mota_stm32f4_flash_cfg *c, uint32_t reg, uint32_t v)
{
    mota_stm32_io_write32(c->regs + reg, v);
}

/* the interface as every STM32 has it (flash_if.h), with the F4's registers */
static struct stm32_flash_if fif(const struct mota_stm32f4_flash_cfg *c)
{
    return (struct stm32_flash_if){.keyr = c->regs + KEYR,
                                   .sr = c->regs + SR,
                                   .cr = c->regs + CR,
                                   .busy = SR_BSY,
                                   .errors = SR_ERRORS,
                                   .eop = SR_EOP,
                                   .lock = CR_LOCK,
                                   .now_us = c->now_us,
                                   .clock_ctx = c->clock_ctx};
}

/* [off, off + len) inside the array */
static bool inside(const struct mota_stm32f4_flash_cfg *c, uint32_t off, size_t len)
{
    uint32_t size = 0;
    for (unsigned i = 0; i < c->n_regions; i++)
        size += c->regions[i].count * c->regions[i].sector_size;
    return off <= size && len <= size - off;
}

static int f4_read(void *ctx, uint32_t off, void *buf, size_t len)
{
    const struct mota_stm32f4_flash_cfg *c = ctx;
    if (!inside(c, off, len))
        return MOTA_ERR_FLASH_BOUNDS;
    if (len != 0)
        memcpy(buf, mota_stm32_io_mem(c->base + off), len);
    return MOTA_OK;
}

static const uint8_t *f4_map(void *ctx, uint32_t off, size_t len)
{
    const struct mota_stm32f4_flash_cfg *c = ctx;
    return inside(c, off, len) ? mota_stm32_io_mem(c->base + off) : NULL;
}

static int f4_prog(void *ctx, uint32_t off, const void *buf, size_t len)
{
    const struct mota_stm32f4_flash_cfg *c = ctx;
    const uint8_t *src = buf;
    uint8_t now[WORD];
    int ret = MOTA_ERR_FLASH_IO;
    if (off % WORD != 0 || len % WORD != 0)
        return MOTA_ERR_FLASH_ALIGN;
    if (!inside(c, off, len))
        return MOTA_ERR_FLASH_BOUNDS;
    const uint8_t *at = mota_stm32_io_mem(c->base + off);
    for (size_t i = 0; i < len; i++) /* the contract: bits go from 1 to 0 on erased bytes only */
        if (at[i] != 0xFFu)
            return MOTA_ERR_FLASH_NOT_ERASED;
    const struct stm32_flash_if fi = fif(c);
    if ((ret = stm32_flash_begin(&fi, c->prog_max_us)) != MOTA_OK) {
        stm32_flash_end(&fi);
        return ret;
    }
    wr(c, CR, CR_PSIZE_X32 | CR_PG);
    for (size_t i = 0; i < len && ret == MOTA_OK; i += WORD) {
        uint32_t w =
            (uint32_t)src[i] | (uint32_t)src[i + 1] << 8 | (uint32_t)src[i + 2] << 16 | (uint32_t)src[i + 3] << 24;
        mota_stm32_io_write32(c->base + off + (uint32_t)i, w);
        /* durable: the word as written, read back through the bus */
        if ((ret = stm32_flash_done(&fi, c->prog_max_us)) == MOTA_OK) {
            memcpy(now, mota_stm32_io_mem(c->base + off + (uint32_t)i), WORD);
            if (memcmp(now, src + i, WORD) != 0)
                ret = MOTA_ERR_FLASH_IO;
        }
    }
    stm32_flash_end(&fi);
    return ret;
}

/* The sector holding off, its number and its longest erase; MOTA_ERR_FLASH_ALIGN if off is not its start. */
static int sector_of(const struct mota_stm32f4_flash_cfg *c, uint32_t off, uint32_t *snb, uint32_t *max_us)
{
    uint32_t at = 0, n = 0;
    for (unsigned i = 0; i < c->n_regions; i++) {
        const struct mota_flash_region *r = &c->regions[i];
        for (uint32_t k = 0; k < r->count; k++, n++, at += r->sector_size) {
            if (off == at) {
                *snb = n;
                *max_us = r->erase_max_us;
                return MOTA_OK;
            }
            if (off < at + r->sector_size)
                return MOTA_ERR_FLASH_ALIGN;
        }
    }
    return MOTA_ERR_FLASH_BOUNDS;
}

static int f4_erase(void *ctx, uint32_t off)
{
    const struct mota_stm32f4_flash_cfg *c = ctx;
    uint32_t snb = 0, max_us = 0;
    int ret = sector_of(c, off, &snb, &max_us);
    if (ret != MOTA_OK)
        return ret;
    const struct stm32_flash_if fi = fif(c);
    if ((ret = stm32_flash_begin(&fi, max_us)) != MOTA_OK) {
        stm32_flash_end(&fi);
        return ret;
    }
    wr(c, CR, CR_PSIZE_X32 | CR_SER | snb << CR_SNB_POS);
    wr(c, CR, CR_PSIZE_X32 | CR_SER | snb << CR_SNB_POS | CR_STRT);
    ret = stm32_flash_done(&fi, max_us);
    stm32_flash_end(&fi);
    /* the ART's caches may hold the sector's old lines: reset them (each off while it is reset) */
    uint32_t acr = rd(c, ACR);
    wr(c, ACR, acr & ~(ACR_ICEN | ACR_DCEN));
    wr(c, ACR, (acr & ~(ACR_ICEN | ACR_DCEN)) | ACR_ICRST | ACR_DCRST);
    wr(c, ACR, acr & ~(ACR_ICEN | ACR_DCEN | ACR_ICRST | ACR_DCRST));
    wr(c, ACR, acr & ~(ACR_ICRST | ACR_DCRST));
    return ret;
}

int mota_stm32f4_flash_init(struct mota_flash *f, const struct mota_stm32f4_flash_cfg *cfg)
{
    int ret = MOTA_ERR_ARG;
    uint32_t size = 0;
    if (f == NULL || cfg == NULL || cfg->now_us == NULL || cfg->n_regions == 0 ||
        cfg->n_regions > MOTA_FLASH_MAX_REGIONS)
        return ret;
    for (unsigned i = 0; i < cfg->n_regions; i++) {
        if (cfg->regions[i].sector_size == 0 || cfg->regions[i].sector_size % WORD != 0)
            return ret;
        size += cfg->regions[i].count * cfg->regions[i].sector_size;
    }
    memset(f, 0, sizeof(*f));
    f->read = f4_read;
    f->prog = f4_prog;
    f->erase = f4_erase;
    f->map = f4_map;
    f->xip_base = cfg->base;
    f->size = size;
    f->prog_size = WORD;
    f->erased_value = 0xFFu;
    f->flags = MOTA_FLASH_STALLS_CPU;
    f->n_regions = cfg->n_regions;
    memcpy(f->regions, cfg->regions, sizeof(f->regions));
    f->prog_block = WORD;
    f->prog_typ_us = cfg->prog_typ_us;
    f->prog_max_us = cfg->prog_max_us;
    f->ctx = (void *)(uintptr_t)cfg;
    return MOTA_OK;
}
