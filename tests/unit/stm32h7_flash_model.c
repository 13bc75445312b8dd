/* SPDX-License-Identifier: Apache-2.0 */
/* The STM32H747 flash interface's register model (stm32h7_flash_model.h): the access layer the H7 driver
 * is compiled against in the host tests. */
#include "stm32h7_flash_model.h"
#include "mota/stm32_flash.h" /* mota_stm32h7_flash_bus_fault: what the family's BusFault handler calls */
#include "stm32_io.h"         /* the access layer this model implements (MOTA_STM32_IO_MODEL) */

#include <stdlib.h>
#include <string.h>

/* the registers and their bits, written here from the reference manual and the device header, not taken
 * from the driver: a wrong bit in the driver must not be mirrored by its checker */
#define KEYR 0x04u
#define CR 0x0Cu
#define SR 0x10u
#define CCR 0x14u
#define ECC_FAR 0x60u
#define BANK_REGS 0x100u
#define REGS_SIZE 0x200u
#define KEY1 0x45670123u
#define KEY2 0xCDEF89ABu

#define SR_BSY (1u << 0)
#define SR_WBNE (1u << 1)
#define SR_QW (1u << 2)
#define SR_EOP (1u << 16)
#define SR_WRPERR (1u << 17)
#define SR_PGSERR (1u << 18)
#define SR_STRBERR (1u << 19)
#define SR_INCERR (1u << 21)
#define SR_OPERR (1u << 22)
#define SR_RDPERR (1u << 23)
#define SR_RDSERR (1u << 24)
#define SR_SNECCERR (1u << 25)
#define SR_DBECCERR (1u << 26)
#define SR_CRCEND (1u << 27)
#define SR_CRCRDERR (1u << 28)
#define SR_PROG_ERRORS (SR_WRPERR | SR_PGSERR | SR_STRBERR | SR_INCERR | SR_OPERR)
#define SR_CLEARABLE                                                                                                   \
    (SR_EOP | SR_PROG_ERRORS | SR_RDPERR | SR_RDSERR | SR_SNECCERR | SR_DBECCERR | SR_CRCEND | SR_CRCRDERR)
#define CR_LOCK (1u << 0)
#define CR_PG (1u << 1)
#define CR_SER (1u << 2)
#define CR_BER (1u << 3)
#define CR_PSIZE(cr) (((cr) >> 4) & 3u)
#define CR_PSIZE_X64 (3u << 4)
#define CR_START (1u << 7)
#define CR_SNB(cr) (((cr) >> 8) & 7u)
#define CR_RESERVED (0xFu << 11 | 1u << 20 | 7u << 29) /* kept at their reset value, 0 */

#define WORD H7_MODEL_WORD
#define N_WORDS (H7_MODEL_SIZE / WORD)
#define BANK H7_MODEL_BANK
#define BANK_SECTORS (H7_MODEL_SECTORS / 2u)
#define FULL 0xFFu /* the write buffer's eight words */

static struct h7_model *cur;

void h7_model_init(struct h7_model *m, uint32_t regs, bool dcache)
{
    memset(m, 0, sizeof(*m));
    m->regs = regs;
    m->mem = malloc(H7_MODEL_SIZE);
    m->word = calloc(N_WORDS, 1);
    memset(m->mem, 0xFF, H7_MODEL_SIZE);
    dcache_model_init(&m->dc, H7_MODEL_BASE, H7_MODEL_SIZE, m->mem);
    m->dc.enabled = dcache;
    m->prog_reads = 3;
    m->erase_reads = 5;
    m->seed = 0x2545F491u;
    m->last_sector = -1;
    h7_model_power_on(m);
    cur = m;
}

void h7_model_free(struct h7_model *m)
{
    dcache_model_free(&m->dc);
    free(m->mem);
    free(m->word);
    m->mem = m->word = NULL;
    if (cur == m)
        cur = NULL;
}

void h7_model_power_on(struct h7_model *m)
{
    for (unsigned b = 0; b < 2; b++) {
        struct h7_bank *k = &m->bank[b];
        k->sr = k->ecc_far = 0;
        k->cr = CR_LOCK | CR_PSIZE_X64; /* the reset value */
        k->key_state = 0;
        k->key_locked_out = false;
        k->busy = 0;
        k->queued = false;
        k->wmask = 0;
    }
    dcache_model_reset(&m->dc);
    m->unsynced = false;
    m->pg_unordered = false;
    m->off = false;
    m->cut_at = 0;
}

/* the array changed under flash word w: the CPU sees it unless the D-cache holds its line */
static void changed(struct h7_model *m, uint32_t w)
{
    dcache_model_changed(&m->dc, H7_MODEL_BASE + w * WORD, WORD);
}

void h7_model_fill(struct h7_model *m, uint32_t off, size_t len, uint8_t v)
{
    memset(m->mem + off, v, len);
    for (uint32_t w = off / WORD; w < (off + len) / WORD; w++) {
        m->word[w] = H7_WORD_PROGRAMMED;
        changed(m, w);
    }
}

void h7_model_tear(struct h7_model *m, uint32_t off)
{
    uint32_t w = off / WORD;
    m->word[w] = H7_WORD_TORN;
    m->dc.held[w * WORD / DCACHE_MODEL_LINE] = 0; /* read from the array from now on */
    changed(m, w);
}

unsigned h7_model_stale(const struct h7_model *m)
{
    return dcache_model_stale(&m->dc);
}

unsigned h7_model_violations(const struct h7_model *m)
{
    unsigned unlocked = 0;
    for (unsigned b = 0; b < 2; b++)
        unlocked += !m->off && !(m->bank[b].cr & CR_LOCK); /* every operation locks again */
    return m->bus_errors + m->writes_when_busy + m->reprogrammed + m->partial_words + m->sr_writes + m->reserved_bits +
           m->faults + m->stray + m->error_flags + m->unordered + unlocked + (m->unsynced ? 1u : 0u) +
           h7_model_stale(m);
}

static uint8_t noise(struct h7_model *m)
{
    m->seed = m->seed * 1103515245u + 12345u;
    return (uint8_t)(m->seed >> 16);
}

/* The CPU loads flash word w from the array (a cache miss), at the address load: its ECC check. A double
 * error flags DBECCERR and takes the bus fault, whose handler asks the driver first; a single one is
 * corrected and flags SNECCERR. ECC_FAR takes the word only while neither flag is set: it keeps the
 * first error's. */
static void ecc_check(struct h7_model *m, uint32_t w, uint32_t load)
{
    uint32_t at = w * WORD;
    struct h7_bank *k = &m->bank[at / BANK];
    if (m->word[w] == H7_WORD_TORN) {
        if (!(k->sr & (SR_SNECCERR | SR_DBECCERR)))
            k->ecc_far = (at % BANK) / WORD;
        k->sr |= SR_DBECCERR;
        m->bus_faults++;
        if (!mota_stm32h7_flash_bus_fault(m->bfar_invalid ? 0u : H7_MODEL_BASE + load))
            m->faults++;
    } else if (m->single == at + 1u) {
        if (!(k->sr & (SR_SNECCERR | SR_DBECCERR)))
            k->ecc_far = (at % BANK) / WORD;
        k->sr |= SR_SNECCERR;
    }
}

/* [off, off + len) loaded by the CPU, through the D-cache: a line it holds is read from it (no ECC check),
 * any other from the array, and held if the cache is on and the word read right */
static void cpu_read(struct h7_model *m, void *dst, uint32_t off, size_t len)
{
    for (uint32_t w = off / WORD; len != 0 && w <= (off + len - 1u) / WORD; w++) {
        uint32_t load = w * WORD > off ? w * WORD : off;
        if (m->dc.enabled && m->dc.held[w * WORD / DCACHE_MODEL_LINE])
            continue;
        ecc_check(m, w, load);
        if (m->word[w] != H7_WORD_TORN)
            dcache_model_load(&m->dc, H7_MODEL_BASE + w * WORD, NULL, WORD);
    }
    if (dst != NULL)
        memcpy(dst, m->dc.view + off, len);
}

void h7_model_fetch(struct h7_model *m, uint32_t off, size_t len)
{
    cpu_read(m, NULL, off, len);
}

/* A write reaching the part: false once the power is gone (the write that cuts it is torn by the caller). */
static bool powered(struct h7_model *m, bool *cut)
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

static void flag(struct h7_model *m, struct h7_bank *k, uint32_t f)
{
    k->sr |= f;
    m->error_flags++;
}

static bool busy(const struct h7_model *m, const struct h7_bank *k)
{
    return k->busy > 0 || m->stuck;
}

/* The sector erased, or torn by a cut: its bits only partly back at 1, every flash word failing its ECC. */
static void erase_sector(struct h7_model *m, uint32_t sector, bool torn)
{
    uint32_t per = H7_MODEL_SECTOR / WORD;
    for (uint32_t w = sector * per; w < (sector + 1u) * per; w++) {
        for (uint32_t i = w * WORD; i < (w + 1u) * WORD; i++)
            m->mem[i] = torn ? (uint8_t)(m->mem[i] | noise(m)) : 0xFFu;
        m->word[w] = torn ? H7_WORD_TORN : H7_WORD_ERASED;
        changed(m, w);
    }
}

/* START in bank b: a sector erase (SER, SNB) or the bank's (BER) */
static void erase(struct h7_model *m, unsigned b, bool torn)
{
    struct h7_bank *k = &m->bank[b];
    uint32_t cr = k->cr, first, n;
    bool ser = cr & CR_SER, ber = cr & CR_BER;
    if ((k->sr & SR_PROG_ERRORS) || (cr & CR_PG) || ser == ber) {
        flag(m, k, SR_PGSERR);
        return;
    }
    if (m->inject) {
        flag(m, k, m->inject);
        m->inject = 0;
        return;
    }
    first = b * BANK_SECTORS + (ser ? CR_SNB(cr) : 0u);
    n = ser ? 1u : BANK_SECTORS;
    for (uint32_t s = first; s < first + n; s++)
        if (m->wrp[s]) {
            flag(m, k, SR_WRPERR);
            return;
        }
    for (uint32_t s = first; s < first + n; s++)
        erase_sector(m, s, torn);
    m->last_sector = (int)first;
    k->last_psize = CR_PSIZE(cr);
    k->erases++;
    m->erases++;
    k->busy = m->erase_reads;
    k->queued = true;
    k->sr |= SR_EOP;
}

/* The write buffer's eighth word: its flash word programmed, once per erase (a second garbles its ECC
 * bits); torn by a cut, only part of its bits programmed; worn, two bits left at 1 under the ECC bits of
 * the data. */
static void program(struct h7_model *m, unsigned b, bool torn)
{
    struct h7_bank *k = &m->bank[b];
    uint32_t w = k->wword / WORD;
    uint8_t *p = m->mem + k->wword;
    k->wmask = 0;
    if (m->inject) {
        flag(m, k, m->inject);
        m->inject = 0;
        return;
    }
    k->busy = m->prog_reads;
    k->queued = true;
    k->sr |= SR_EOP;
    k->last_psize = CR_PSIZE(k->cr);
    if (m->word[w] != H7_WORD_ERASED) {
        m->reprogrammed++;
        for (unsigned i = 0; i < WORD; i++)
            p[i] &= (uint8_t)(k->wbuf[i / 4u] >> (8u * (i % 4u)));
        m->word[w] = H7_WORD_TORN;
        changed(m, w);
        return;
    }
    for (unsigned i = 0; i < WORD; i++) {
        p[i] = (uint8_t)(k->wbuf[i / 4u] >> (8u * (i % 4u)));
        if (torn)
            p[i] |= noise(m);
    }
    if (m->worn == k->wword + 1u)
        p[0] |= 0x03u;
    m->word[w] = torn || m->worn == k->wword + 1u ? H7_WORD_TORN : H7_WORD_PROGRAMMED;
    changed(m, w);
    k->programs++;
    m->programs++;
}

static void write_mem(struct h7_model *m, uint32_t off, uint32_t v, bool torn)
{
    unsigned b = off / BANK;
    struct h7_bank *k = &m->bank[b];
    uint32_t word = off & ~(WORD - 1u);
    uint8_t slot = (uint8_t)(1u << ((off % WORD) / 4u));
    m->array_writes++;
    if (busy(m, k))
        m->writes_when_busy++;
    if (m->pg_unordered)
        m->unordered++;
    if ((k->cr & (CR_LOCK | CR_SER | CR_BER)) || !(k->cr & CR_PG) || (k->sr & SR_PROG_ERRORS) || off % 4u != 0) {
        flag(m, k, SR_PGSERR);
        k->wmask = 0;
        return;
    }
    if (m->wrp[off / H7_MODEL_SECTOR]) {
        flag(m, k, SR_WRPERR);
        k->wmask = 0;
        return;
    }
    if (k->wmask != 0 && word != k->wword) {
        flag(m, k, SR_INCERR); /* another flash word's while the buffer holds part of one */
        k->wmask = 0;
        return;
    }
    if (k->wmask & slot) {
        flag(m, k, SR_STRBERR); /* a word of the buffer written twice */
        k->wmask = 0;
        return;
    }
    k->wword = word;
    k->wbuf[(off % WORD) / 4u] = v;
    k->wmask |= slot;
    if (k->wmask == FULL)
        program(m, b, torn);
}

static void write_key(struct h7_model *m, struct h7_bank *k, uint32_t v)
{
    if (!(k->cr & CR_LOCK) || k->key_locked_out) {
        m->bus_errors++;
    } else if (k->key_state == 0 && v == KEY1) {
        k->key_state = 1;
    } else if (k->key_state == 1 && v == KEY2) {
        k->key_state = 0;
        k->cr &= ~CR_LOCK;
        k->unlocks++;
    } else {
        m->bus_errors++;
        k->key_locked_out = true; /* until the next reset */
    }
}

static void write_reg(struct h7_model *m, uint32_t reg, uint32_t v, bool torn)
{
    unsigned b = reg >= BANK_REGS ? 1u : 0u;
    struct h7_bank *k = &m->bank[b];
    reg -= b * BANK_REGS;
    if (busy(m, k) && reg != CCR)
        m->writes_when_busy++;
    switch (reg) {
    case KEYR: write_key(m, k, v); break;
    case CR:
        if (k->cr & CR_LOCK)
            break; /* locked: nothing changes */
        if (v & CR_RESERVED)
            m->reserved_bits++;
        if (k->wmask != 0 && !(v & CR_PG)) {
            m->partial_words++; /* the words written are dropped */
            k->wmask = 0;
        }
        k->cr = v & ~CR_START;
        if (v & CR_PG)
            m->pg_unordered = true;
        if (v & CR_START)
            erase(m, b, torn);
        break;
    case SR: m->sr_writes++; break;
    case CCR: k->sr &= ~(v & SR_CLEARABLE); break;
    default: m->stray++; break;
    }
}

static bool in(uint32_t addr, uint32_t base, uint32_t size)
{
    return addr >= base && addr - base < size;
}

/* SR: an operation started is queued (QW) before the bank is busy with it (BSY): its first read sees QW
 * alone, the others both */
static uint32_t read_sr(struct h7_model *m, struct h7_bank *k)
{
    uint32_t sr = k->sr | (k->wmask != 0 ? SR_WBNE : 0u);
    if (m->stuck)
        return sr | SR_BSY | SR_QW;
    if (k->busy > 0) {
        bool queued = k->queued;
        k->queued = false;
        k->busy--;
        return sr | SR_QW | (queued ? 0u : SR_BSY);
    }
    return sr;
}

uint32_t mota_stm32_io_read32(uint32_t addr)
{
    struct h7_model *m = cur;
    uint32_t v = 0;
    if (m->off)
        return 0; /* no power: nothing answers */
    if (in(addr, H7_MODEL_BASE, H7_MODEL_SIZE)) {
        cpu_read(m, &v, addr - H7_MODEL_BASE, 4); /* little-endian host */
        return v;
    }
    if (!in(addr, m->regs, REGS_SIZE)) {
        m->stray++;
        return 0;
    }
    uint32_t reg = addr - m->regs;
    struct h7_bank *k = &m->bank[reg >= BANK_REGS ? 1 : 0];
    switch (reg % BANK_REGS) {
    case SR: return read_sr(m, k);
    case CR: return k->cr;
    case ECC_FAR: return k->ecc_far;
    default: return 0;
    }
}

void mota_stm32_io_write32(uint32_t addr, uint32_t v)
{
    struct h7_model *m = cur;
    bool cut;
    if (m->off)
        return;
    if (!in(addr, H7_MODEL_BASE, H7_MODEL_SIZE) && !in(addr, m->regs, REGS_SIZE)) {
        /* SCB: not the flash's, not counted as a write (a cut there is one after the flash's last write) */
        if (dcache_model_scb_write(&m->dc, addr, v))
            m->unsynced = true;
        else
            m->stray++;
        return;
    }
    (void)powered(m, &cut);
    if (in(addr, H7_MODEL_BASE, H7_MODEL_SIZE))
        write_mem(m, addr - H7_MODEL_BASE, v, cut);
    else
        write_reg(m, addr - m->regs, v, cut);
    if (cut && m->on_cut != NULL)
        m->on_cut(m->on_cut_ctx);
}

const uint8_t *mota_stm32_io_mem(uint32_t addr)
{
    return dcache_model_view(&cur->dc, addr);
}

void mota_stm32_io_copy(void *dst, uint32_t addr, size_t len)
{
    struct h7_model *m = cur;
    if (m->off) {
        memset(dst, 0, len); /* no power: nothing answers */
        return;
    }
    if (m->interrupt_load != 0) { /* a handler's load, taken while the driver copies */
        uint32_t at = m->interrupt_load - 1u;
        m->interrupt_load = 0;
        cpu_read(m, NULL, at, 4);
    }
    cpu_read(m, dst, addr - H7_MODEL_BASE, len);
}

uint32_t mota_stm32_io_irq_off(void)
{
    return 0; /* the H7's driver masks nothing: its write buffer waits (flash_h7.c) */
}

void mota_stm32_io_irq_restore(uint32_t primask)
{
    (void)primask;
}

void mota_stm32_io_barrier(void)
{
    cur->barriers++;
    cur->unsynced = false;
    cur->pg_unordered = false;
}

static uint64_t clock_us;

static uint64_t model_now(void *ctx)
{
    (void)ctx;
    return clock_us += 10;
}

const struct mota_stm32h7_flash_cfg h7_model_disco = {
    .base = MOTA_STM32H7_FLASH_BASE,
    .size = 2u * 1024u * 1024u,
    .regs = MOTA_STM32H7_FLASH_REGS,
    .dcache = true,
    .erase_typ_us = 1100000,
    .erase_max_us = 4000000,
    .prog_typ_us = 130,
    .prog_max_us = 130,
    .now_us = model_now,
};
