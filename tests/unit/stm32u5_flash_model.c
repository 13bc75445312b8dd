/* SPDX-License-Identifier: Apache-2.0 */
/* The STM32U5 flash interface's register model (stm32u5_flash_model.h): the access layer the U5 driver
 * is compiled against in the host tests. */
#include "stm32u5_flash_model.h"
#include "mota/stm32_flash.h" /* mota_stm32u5_flash_nmi: what the family's NMI handler calls */
#include "stm32_io.h"         /* the access layer this model implements (MOTA_STM32_IO_MODEL) */

#include <stdlib.h>
#include <string.h>

/* the registers and their bits, written here from the reference manual and not taken from the driver: a
 * wrong bit in the driver must not be mirrored by its checker */
#define NSKEYR 0x08u
#define NSSR 0x20u
#define NSCR 0x28u
#define ECCR 0x30u
#define REGS_SIZE 0x100u
#define KEY1 0x45670123u
#define KEY2 0xCDEF89ABu

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
#define NSCR_MER1 (1u << 2)
#define NSCR_PNB(cr) (((cr) >> 3) & 0x7Fu)
#define NSCR_BKER (1u << 11)
#define NSCR_MER2 (1u << 15)
#define NSCR_STRT (1u << 16)
#define NSCR_EOPIE (1u << 24)
#define NSCR_OPTLOCK (1u << 30)
#define NSCR_LOCK (1u << 31)
#define ECCR_BK_ECC (1u << 21)
#define ECCR_ECCIE (1u << 24)
#define ECCR_ECCC (1u << 30)
#define ECCR_ECCD (1u << 31)

#define IC_CR 0x00u
#define IC_SR 0x04u
#define IC_FCR 0x0Cu
#define IC_SIZE 0x30u
#define IC_CR_EN (1u << 0)
#define IC_CR_CACHEINV (1u << 1)
#define IC_CR_WAYSEL (1u << 2)
#define IC_SR_BUSYF (1u << 0)
#define IC_SR_BSYENDF (1u << 1)

#define QW U5_MODEL_QW
#define N_QW (U5_MODEL_SIZE / QW)
#define BANK (U5_MODEL_SIZE / 2u)
#define BANK_PAGES (U5_MODEL_PAGES / 2u)

static struct u5_model *cur;

void u5_model_init(struct u5_model *m, uint32_t regs, uint32_t icache)
{
    memset(m, 0, sizeof(*m));
    m->regs = regs;
    m->icache = icache;
    m->mem = malloc(U5_MODEL_SIZE);
    m->view = malloc(U5_MODEL_SIZE);
    m->qw = calloc(N_QW, 1);
    m->cached = calloc(N_QW, 1);
    memset(m->mem, 0xFF, U5_MODEL_SIZE);
    m->prog_reads = 2;
    m->erase_reads = 5;
    m->icache_reads = 2;
    m->seed = 0x2545F491u;
    m->last_page = -1;
    u5_model_power_on(m);
    cur = m;
}

void u5_model_free(struct u5_model *m)
{
    free(m->mem);
    free(m->view);
    free(m->qw);
    free(m->cached);
    m->mem = m->view = m->qw = m->cached = NULL;
    if (cur == m)
        cur = NULL;
}

static void cache_empty(struct u5_model *m)
{
    memset(m->cached, 0, N_QW);
    memcpy(m->view, m->mem, U5_MODEL_SIZE);
}

void u5_model_power_on(struct u5_model *m)
{
    m->nssr = 0;
    m->nscr = NSCR_LOCK | NSCR_OPTLOCK;
    m->eccr = 0;
    m->key_state = 0;
    m->key_locked_out = false;
    m->busy = m->icache_busy = 0;
    m->wcount = 0;
    m->irq_masked = false;
    m->icache_cr = m->icache != 0 ? IC_CR_WAYSEL | IC_CR_EN : 0;
    m->icache_sr = 0;
    cache_empty(m);
    m->off = false;
    m->cut_at = 0;
}

/* the array changed under quad-word q: the CPU sees it unless the ICACHE holds its line */
static void changed(struct u5_model *m, uint32_t q)
{
    if (!m->cached[q])
        memcpy(m->view + q * QW, m->mem + q * QW, QW);
}

void u5_model_fill(struct u5_model *m, uint32_t off, size_t len, uint8_t v)
{
    memset(m->mem + off, v, len);
    for (uint32_t q = off / QW; q < (off + len) / QW; q++) {
        m->qw[q] = U5_QW_PROGRAMMED;
        changed(m, q);
    }
}

void u5_model_tear(struct u5_model *m, uint32_t off)
{
    m->qw[off / QW] = U5_QW_TORN;
    m->cached[off / QW] = 0; /* read from the array from now on */
    changed(m, off / QW);
}

unsigned u5_model_stale(const struct u5_model *m)
{
    unsigned n = 0;
    for (uint32_t q = 0; q < N_QW; q++)
        n += m->cached[q] && memcmp(m->view + q * QW, m->mem + q * QW, QW) != 0;
    return n;
}

static uint8_t noise(struct u5_model *m)
{
    m->seed = m->seed * 1103515245u + 12345u;
    return (uint8_t)(m->seed >> 16);
}

/* The CPU reads quad-word q from the array (a cache miss): its ECC check. A double error latches its
 * address (unless one is latched) and raises the NMI, whose handler asks the driver first. */
static void ecc_check(struct u5_model *m, uint32_t q)
{
    uint32_t at = q * QW, addr = (at % BANK) | (at >= BANK ? ECCR_BK_ECC : 0u);
    if (m->qw[q] == U5_QW_TORN) {
        if (!(m->eccr & ECCR_ECCD))
            m->eccr = (m->eccr & (ECCR_ECCIE | ECCR_ECCC)) | ECCR_ECCD | addr;
        m->nmis++;
        if (!mota_stm32u5_flash_nmi())
            m->faults++;
    } else if (m->single == at + 1u && !(m->eccr & (ECCR_ECCC | ECCR_ECCD))) {
        m->eccr = (m->eccr & ECCR_ECCIE) | ECCR_ECCC | addr;
    }
}

/* [off, off + len) read by the CPU, through the ICACHE: a line it holds is read from it (no ECC check),
 * any other from the array, and held if the cache is on and the line read right */
static void cpu_read(struct u5_model *m, void *dst, uint32_t off, size_t len)
{
    bool on = m->icache != 0 && (m->icache_cr & IC_CR_EN);
    for (uint32_t q = off / QW; len != 0 && q <= (off + len - 1u) / QW; q++) {
        if (on && m->cached[q])
            continue;
        ecc_check(m, q);
        if (on && m->qw[q] != U5_QW_TORN)
            m->cached[q] = 1;
    }
    if (dst != NULL)
        memcpy(dst, m->view + off, len);
}

void u5_model_fetch(struct u5_model *m, uint32_t off, size_t len)
{
    cpu_read(m, NULL, off, len);
}

/* A write reaching the part: false once the power is gone (the write that cuts it is torn by the caller). */
static bool powered(struct u5_model *m, bool *cut)
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

static void flag(struct u5_model *m, uint32_t f)
{
    m->nssr |= f;
    m->error_flags++;
}

static void done(struct u5_model *m, uint32_t reads)
{
    m->busy = reads;
    if (m->nscr & NSCR_EOPIE)
        m->nssr |= NSSR_EOP;
}

/* The page erased, or torn by a cut: its bits only partly back at 1, every quad-word failing its ECC. */
static void erase_page(struct u5_model *m, uint32_t page, bool torn)
{
    for (uint32_t q = page * (U5_MODEL_PAGE / QW); q < (page + 1u) * (U5_MODEL_PAGE / QW); q++) {
        for (uint32_t i = q * QW; i < (q + 1u) * QW; i++)
            m->mem[i] = torn ? (uint8_t)(m->mem[i] | noise(m)) : 0xFFu;
        m->qw[q] = torn ? U5_QW_TORN : U5_QW_ERASED;
        changed(m, q);
    }
}

/* STRT: a page erase (PER, PNB, BKER) or a bank's mass erase (MER1, MER2) */
static void erase(struct u5_model *m, bool torn)
{
    uint32_t cr = m->nscr, first, n;
    bool per = cr & NSCR_PER, mer = cr & (NSCR_MER1 | NSCR_MER2);
    if ((m->nssr & NSSR_ERRORS) || (cr & NSCR_PG) || per == mer) {
        flag(m, NSSR_PGSERR);
        return;
    }
    if (m->inject) {
        flag(m, m->inject);
        m->inject = 0;
        return;
    }
    first = per ? NSCR_PNB(cr) + ((cr & NSCR_BKER) ? BANK_PAGES : 0u) : ((cr & NSCR_MER1) ? 0u : BANK_PAGES);
    n = per ? 1u : ((cr & NSCR_MER1) && (cr & NSCR_MER2) ? U5_MODEL_PAGES : BANK_PAGES);
    for (uint32_t p = first; p < first + n; p++)
        if (m->wrp[p]) {
            flag(m, NSSR_WRPERR);
            return;
        }
    for (uint32_t p = first; p < first + n; p++)
        erase_page(m, p, torn);
    m->last_page = (int)first;
    m->erases++;
    done(m, m->erase_reads);
}

static void write_reg(struct u5_model *m, uint32_t reg, uint32_t v, bool torn)
{
    if (m->busy > 0 || m->stuck)
        m->writes_when_busy++;
    switch (reg) {
    case NSKEYR:
        if (!(m->nscr & NSCR_LOCK) || m->key_locked_out) {
            m->bus_errors++;
        } else if (m->key_state == 0 && v == KEY1) {
            m->key_state = 1;
        } else if (m->key_state == 1 && v == KEY2) {
            m->key_state = 0;
            m->nscr &= ~NSCR_LOCK;
            m->unlocks++;
        } else {
            m->bus_errors++;
            m->key_locked_out = true; /* until the next reset */
        }
        break;
    case NSCR:
        if (m->nscr & NSCR_LOCK)
            break; /* locked: nothing changes */
        if (m->wcount != 0) {
            m->partial_quad_words++; /* the words written are dropped */
            m->wcount = 0;
        }
        m->nscr = (v & ~NSCR_STRT) | (m->nscr & NSCR_OPTLOCK); /* OPTLOCK: only its own keys clear it */
        if (v & NSCR_STRT)
            erase(m, torn);
        break;
    case NSSR: m->nssr &= ~(v & (NSSR_ERRORS | NSSR_EOP)); break;
    case ECCR: m->eccr = (m->eccr & ~(v & (ECCR_ECCC | ECCR_ECCD)) & ~ECCR_ECCIE) | (v & ECCR_ECCIE); break;
    default: break;
    }
}

/* A quad-word's fourth word: its program, once per erase (a second: PROGERR); torn by a cut, only part
 * of its bits programmed; worn, two bits left at 1 under the ECC bits of the data. */
static void program(struct u5_model *m, bool torn)
{
    uint32_t q = m->wqw / QW;
    uint8_t *p = m->mem + m->wqw;
    if (m->inject) {
        flag(m, m->inject);
        m->inject = 0;
        return;
    }
    if (m->qw[q] != U5_QW_ERASED) {
        m->reprogrammed++;
        flag(m, NSSR_PROGERR);
        return;
    }
    for (unsigned i = 0; i < QW; i++) {
        p[i] = (uint8_t)(m->wbuf[i / 4u] >> (8u * (i % 4u)));
        if (torn)
            p[i] |= noise(m);
    }
    if (m->worn == m->wqw + 1u)
        p[0] |= 0x03u;
    m->qw[q] = torn || m->worn == m->wqw + 1u ? U5_QW_TORN : U5_QW_PROGRAMMED;
    changed(m, q);
    m->programs++;
    done(m, m->prog_reads);
}

static void write_mem(struct u5_model *m, uint32_t off, uint32_t v, bool torn)
{
    if (m->busy > 0 || m->stuck)
        m->writes_when_busy++;
    if (!m->irq_masked)
        m->unmasked_writes++;
    if ((m->nscr & (NSCR_LOCK | NSCR_PER | NSCR_MER1 | NSCR_MER2)) || !(m->nscr & NSCR_PG) || (m->nssr & NSSR_ERRORS)) {
        flag(m, NSSR_PGSERR);
        m->wcount = 0;
        return;
    }
    if (m->wrp[off / U5_MODEL_PAGE]) {
        flag(m, NSSR_WRPERR);
        m->wcount = 0;
        return;
    }
    if (m->wcount == 0 ? off % QW != 0 : off != m->wqw + 4u * m->wcount) {
        flag(m, NSSR_PGAERR); /* not the quad-word's next word */
        m->wcount = 0;
        return;
    }
    if (m->wcount == 0)
        m->wqw = off;
    m->wbuf[m->wcount++] = v;
    if (m->wcount == 4u) {
        m->wcount = 0;
        program(m, torn);
    }
}

static void write_icache(struct u5_model *m, uint32_t reg, uint32_t v)
{
    switch (reg) {
    case IC_CR:
        if (v & IC_CR_CACHEINV) {
            cache_empty(m);
            m->invalidations++;
            m->icache_busy = m->icache_reads;
            m->icache_sr |= IC_SR_BSYENDF;
        }
        if (!(v & IC_CR_EN))
            cache_empty(m); /* bypassed from now on */
        m->icache_cr = v & ~IC_CR_CACHEINV;
        break;
    case IC_FCR: m->icache_sr &= ~(v & IC_SR_BSYENDF); break;
    default: break;
    }
}

static bool in(uint32_t addr, uint32_t base, uint32_t size)
{
    return base != 0 && addr >= base && addr - base < size;
}

static uint32_t read_nssr(struct u5_model *m)
{
    uint32_t sr = m->nssr | (m->wcount != 0 ? NSSR_WDW : 0u);
    if (m->stuck)
        return sr | NSSR_BSY;
    if (m->busy > 0) {
        m->busy--;
        return sr | NSSR_BSY;
    }
    return sr;
}

uint32_t mota_stm32_io_read32(uint32_t addr)
{
    struct u5_model *m = cur;
    uint32_t v = 0;
    if (m->off)
        return 0; /* no power: nothing answers */
    if (in(addr, U5_MODEL_BASE, U5_MODEL_SIZE)) {
        cpu_read(m, &v, addr - U5_MODEL_BASE, 4); /* little-endian host */
        return v;
    }
    if (in(addr, m->icache, IC_SIZE)) {
        if (addr - m->icache == IC_CR)
            return m->icache_cr;
        if (addr - m->icache != IC_SR)
            return 0;
        if (m->icache_busy > 0) {
            m->icache_busy--;
            return m->icache_sr | IC_SR_BUSYF;
        }
        return m->icache_sr;
    }
    if (!in(addr, m->regs, REGS_SIZE)) {
        m->stray++;
        return 0;
    }
    switch (addr - m->regs) {
    case NSSR: return read_nssr(m);
    case NSCR: return m->nscr;
    case ECCR: return m->eccr;
    default: return 0;
    }
}

void mota_stm32_io_write32(uint32_t addr, uint32_t v)
{
    struct u5_model *m = cur;
    bool cut;
    if (!powered(m, &cut))
        return;
    if (in(addr, U5_MODEL_BASE, U5_MODEL_SIZE))
        write_mem(m, addr - U5_MODEL_BASE, v, cut);
    else if (in(addr, m->icache, IC_SIZE))
        write_icache(m, addr - m->icache, v);
    else if (in(addr, m->regs, REGS_SIZE))
        write_reg(m, addr - m->regs, v, cut);
    else
        m->stray++;
    if (cut && m->on_cut != NULL)
        m->on_cut(m->on_cut_ctx);
}

const uint8_t *mota_stm32_io_mem(uint32_t addr)
{
    return cur->view + (addr - U5_MODEL_BASE);
}

void mota_stm32_io_copy(void *dst, uint32_t addr, size_t len)
{
    struct u5_model *m = cur;
    if (m->off) {
        memset(dst, 0, len); /* no power: nothing answers */
        return;
    }
    cpu_read(m, dst, addr - U5_MODEL_BASE, len);
}

uint32_t mota_stm32_io_irq_off(void)
{
    uint32_t was = cur->irq_masked ? 1u : 0u;
    cur->irq_masked = true;
    cur->irq_offs++;
    return was;
}

void mota_stm32_io_irq_restore(uint32_t primask)
{
    cur->irq_masked = primask != 0;
}

static uint64_t clock_us;

static uint64_t model_now(void *ctx)
{
    (void)ctx;
    return clock_us += 10;
}

const struct mota_stm32u5_flash_cfg u5_model_bank2 = {
    .base = MOTA_STM32U5_FLASH_BASE + 1024u * 1024u,
    .size = 1024u * 1024u,
    .regs = MOTA_STM32U5_FLASH_REGS,
    .icache = MOTA_STM32U5_ICACHE_REGS,
    .erase_typ_us = 1500,
    .erase_max_us = 5000,
    .now_us = model_now,
};
