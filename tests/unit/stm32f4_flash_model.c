/* SPDX-License-Identifier: Apache-2.0 */
/* The STM32F4 flash interface's register model (stm32f4_flash_model.h): the access layer the F4 driver
 * is compiled against in the host tests. */
#include "stm32f4_flash_model.h"
#include "stm32_io.h" /* the access layer this model implements (MOTA_STM32_IO_MODEL) */

#include <stdlib.h>
#include <string.h>

/* the registers and their bits, written here from the reference manual and not taken from the driver: a wrong
 * bit in the driver must not be mirrored by its checker */
#define ACR 0x00u
#define KEYR 0x04u
#define SR 0x0Cu
#define CR 0x10u
#define KEY1 0x45670123u
#define KEY2 0xCDEF89ABu

#define ACR_DCEN (1u << 10)
#define ACR_DCRST (1u << 12)
#define SR_EOP (1u << 0)
#define SR_OPERR (1u << 1)
#define SR_WRPERR (1u << 4)
#define SR_PGAERR (1u << 5)
#define SR_PGPERR (1u << 6)
#define SR_PGSERR (1u << 7)
#define SR_BSY (1u << 16)
#define SR_ERRORS (SR_OPERR | SR_WRPERR | SR_PGAERR | SR_PGPERR | SR_PGSERR)
#define CR_PG (1u << 0)
#define CR_SER (1u << 1)
#define CR_MER (1u << 2)
#define CR_SNB(cr) (((cr) >> 3) & 0x1Fu)
#define CR_PSIZE(cr) (((cr) >> 8) & 3u)
#define CR_STRT (1u << 16)
#define CR_EOPIE (1u << 24)
#define CR_LOCK (1u << 31)

static struct f4_model *cur;

void f4_model_init(struct f4_model *m, uint32_t base, uint32_t regs, const struct mota_flash_region *regions,
                   unsigned n_regions)
{
    memset(m, 0, sizeof(*m));
    m->base = base;
    m->regs = regs;
    m->n_regions = n_regions;
    memcpy(m->regions, regions, n_regions * sizeof(*regions));
    for (unsigned i = 0; i < n_regions; i++)
        m->size += regions[i].count * regions[i].sector_size;
    m->mem = malloc(m->size);
    memset(m->mem, 0xFF, m->size);
    m->prog_reads = 2;
    m->erase_reads = 5;
    f4_model_power_on(m);
    cur = m;
}

void f4_model_free(struct f4_model *m)
{
    free(m->mem);
    m->mem = NULL;
    if (cur == m)
        cur = NULL;
}

void f4_model_power_on(struct f4_model *m)
{
    m->acr = ACR_DCEN | (1u << 9) | (1u << 8); /* the caches and prefetch as a start-up file leaves them */
    m->sr = 0;
    m->cr = CR_LOCK;
    m->key_state = 0;
    m->key_locked_out = false;
    m->busy = 0;
    m->dcache_stale = false; /* the caches' lines do not outlive the power */
    m->off = false;
    m->cut_at = 0;
}

bool f4_model_sector(const struct f4_model *m, uint32_t off, uint32_t *n, uint32_t *start, uint32_t *size)
{
    uint32_t at = 0, k = 0;
    for (unsigned i = 0; i < m->n_regions; i++)
        for (uint32_t j = 0; j < m->regions[i].count; j++, k++, at += m->regions[i].sector_size)
            if (off >= at && off < at + m->regions[i].sector_size) {
                *n = k;
                *start = at;
                *size = m->regions[i].sector_size;
                return true;
            }
    return false;
}

static unsigned n_sectors(const struct f4_model *m)
{
    unsigned n = 0;
    for (unsigned i = 0; i < m->n_regions; i++)
        n += m->regions[i].count;
    return n;
}

/* A write reaching the part: false once the power is gone (the write that cuts it is torn by the caller). */
static bool powered(struct f4_model *m, bool *cut)
{
    *cut = false;
    if (m->off)
        return false;
    m->writes++;
    if (m->cut_at != 0 && m->writes == m->cut_at) {
        m->off = true;
        *cut = true;
    }
    return true;
}

static void done(struct f4_model *m, uint32_t reads)
{
    m->busy = reads;
    if (m->cr & CR_EOPIE)
        m->sr |= SR_EOP;
}

static void flag(struct f4_model *m, uint32_t f)
{
    m->sr |= f;
    m->error_flags++;
}

static void erase(struct f4_model *m, bool torn)
{
    uint32_t snb = CR_SNB(m->cr), at = 0, k = 0;
    if ((m->sr & SR_ERRORS) || (m->cr & (CR_PG | CR_MER)) || !(m->cr & CR_SER)) {
        flag(m, SR_PGSERR);
        return;
    }
    if (snb >= n_sectors(m)) {
        flag(m, SR_OPERR);
        return;
    }
    if (m->wrp & (1u << snb)) {
        flag(m, SR_WRPERR);
        return;
    }
    for (unsigned i = 0; i < m->n_regions; i++)
        for (uint32_t j = 0; j < m->regions[i].count; j++, k++, at += m->regions[i].sector_size)
            if (k == snb)
                memset(m->mem + at, 0xFF, torn ? m->regions[i].sector_size / 2 : m->regions[i].sector_size);
    m->erases++;
    if (m->acr & ACR_DCEN)
        m->dcache_stale = true; /* its lines of the sector still hold the old bytes */
    done(m, m->erase_reads);
}

static void write_reg(struct f4_model *m, uint32_t reg, uint32_t v, bool torn)
{
    if (m->busy > 0 || m->stuck)
        m->writes_when_busy++;
    switch (reg) {
    case KEYR:
        if (!(m->cr & CR_LOCK) || m->key_locked_out) {
            m->bus_errors++;
        } else if (m->key_state == 0 && v == KEY1) {
            m->key_state = 1;
        } else if (m->key_state == 1 && v == KEY2) {
            m->key_state = 0;
            m->cr &= ~CR_LOCK;
            m->unlocks++;
        } else {
            m->bus_errors++;
            m->key_locked_out = true; /* until the next reset */
        }
        break;
    case CR:
        if (m->cr & CR_LOCK)
            break; /* locked: nothing changes (LOCK is already set) */
        m->cr = v & ~CR_STRT;
        if (v & CR_STRT)
            erase(m, torn);
        break;
    case SR: m->sr &= ~(v & (SR_ERRORS | SR_EOP)); break;
    case ACR:
        if ((v & ACR_DCRST) && (v & ACR_DCEN))
            m->dcrst_enabled++;
        else if (v & ACR_DCRST)
            m->dcache_stale = false;
        m->acr = v;
        break;
    default: break;
    }
}

static void write_mem(struct f4_model *m, uint32_t addr, uint32_t v, bool torn)
{
    uint32_t off = addr - m->base, n, start, size;
    if (m->busy > 0 || m->stuck)
        m->writes_when_busy++;
    if ((m->cr & CR_LOCK) || !(m->cr & CR_PG) || (m->cr & (CR_SER | CR_MER)) || (m->sr & SR_ERRORS)) {
        flag(m, SR_PGSERR);
        return;
    }
    if (CR_PSIZE(m->cr) != 2u) { /* a 32-bit write: x32 */
        flag(m, SR_PGPERR);
        return;
    }
    if (off % 4u != 0) {
        flag(m, SR_PGAERR);
        return;
    }
    if (f4_model_sector(m, off, &n, &start, &size) && (m->wrp & (1u << n))) {
        flag(m, SR_WRPERR);
        return;
    }
    uint8_t *p = m->mem + off;
    uint32_t old = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    if (old != 0xFFFFFFFFu)
        m->reprogrammed++;
    uint32_t now = old & (torn ? (v | 0xFFFF0000u) : v); /* torn: the low half programmed only */
    if (m->worn == off + 1u)
        now |= 1u;
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(now >> (8 * i));
    m->programs++;
    done(m, m->prog_reads);
}

uint32_t mota_stm32_io_read32(uint32_t addr)
{
    struct f4_model *m = cur;
    if (m->off)
        return 0; /* no power: nothing answers */
    if (addr >= m->base && addr - m->base < m->size) {
        const uint8_t *p = m->mem + (addr - m->base);
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    }
    switch (addr - m->regs) {
    case ACR: return m->acr;
    case SR:
        if (m->stuck)
            return m->sr | SR_BSY;
        if (m->busy > 0) {
            m->busy--;
            return m->sr | SR_BSY;
        }
        return m->sr;
    case CR: return m->cr;
    default: return 0;
    }
}

void mota_stm32_io_write32(uint32_t addr, uint32_t v)
{
    struct f4_model *m = cur;
    bool cut;
    if (!powered(m, &cut))
        return;
    if (addr >= m->base && addr - m->base < m->size)
        write_mem(m, addr, v, cut);
    else
        write_reg(m, addr - m->regs, v, cut);
    if (cut && m->on_cut != NULL)
        m->on_cut(m->on_cut_ctx);
}

const uint8_t *mota_stm32_io_mem(uint32_t addr)
{
    return cur->mem + (addr - cur->base);
}

static uint64_t clock_us;

static uint64_t model_now(void *ctx)
{
    (void)ctx;
    return clock_us += 10;
}

const struct mota_stm32f4_flash_cfg f4_model_f401re = {
    .base = MOTA_STM32F4_FLASH_BASE,
    .regs = MOTA_STM32F4_FLASH_REGS,
    .n_regions = 3,
    .regions = {{4, 16u * 1024u, 250000, 500000},
                {1, 64u * 1024u, 550000, 1100000},
                {3, 128u * 1024u, 1000000, 4000000}},
    .prog_typ_us = 16,
    .prog_max_us = 100,
    .now_us = model_now,
};
