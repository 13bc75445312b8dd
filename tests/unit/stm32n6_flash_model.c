/* SPDX-License-Identifier: Apache-2.0 */
/* The model of XSPI2, the MX66UW1G45G and the M55's D-cache (stm32n6_flash_model.h): the access layer
 * the N6 driver is compiled against in the host tests. */
#include "stm32n6_flash_model.h"
#include "stm32_io.h" /* the access layer this model implements (MOTA_STM32_IO_MODEL) */

#include <stdlib.h>
#include <string.h>

/* XSPI2's registers and bits (RM0486; stm32n657xx.h), written here and not taken from the driver */
#define R_CR 0x000u
#define R_DCR1 0x008u
#define R_DCR2 0x00Cu
#define R_DCR3 0x010u
#define R_DCR4 0x014u
#define R_SR 0x020u
#define R_FCR 0x024u
#define R_DLR 0x040u
#define R_AR 0x048u
#define R_DR 0x050u
#define R_PSMKR 0x080u
#define R_PSMAR 0x088u
#define R_PIR 0x090u
#define R_CCR 0x100u
#define R_TCR 0x108u
#define R_IR 0x110u
#define REGS_SIZE 0x400u

#define CR_EN (1u << 0)
#define CR_ABORT (1u << 1)
#define CR_FTHRES(cr) ((((cr) >> 8) & 0x3Fu) + 1u)
#define CR_APMS (1u << 22)
#define CR_PMM (1u << 23)
#define FMODE(cr) (((cr) >> 28) & 3u)
#define F_WRITE 0u
#define F_READ 1u
#define F_POLL 2u
#define F_MMAP 3u
#define DCR1_DEVSIZE(d) (((d) >> 16) & 0x1Fu)
#define DCR1_MTYP(d) (((d) >> 24) & 7u)
#define MTYP_MACRONIX 1u

#define SR_TEF (1u << 0)
#define SR_TCF (1u << 1)
#define SR_FTF (1u << 2)
#define SR_SMF (1u << 3)
#define SR_TOF (1u << 4)
#define SR_BUSY (1u << 5)

#define IMODE(c) ((c)&7u)
#define IDTR(c) (((c) >> 3) & 1u)
#define ISIZE(c) (((c) >> 4) & 3u)
#define ADMODE(c) (((c) >> 8) & 7u)
#define ADDTR(c) (((c) >> 11) & 1u)
#define ADSIZE(c) (((c) >> 12) & 3u)
#define ABMODE(c) (((c) >> 16) & 7u)
#define DMODE(c) (((c) >> 24) & 7u)
#define DDTR(c) (((c) >> 27) & 1u)
#define DQSE(c) (((c) >> 29) & 1u)
#define DCYC(t) ((t)&0x1Fu)

#define SCB_LO 0xE000E000u
#define SCB_HI 0xE000F000u

/* the NOR's commands (ST's MX66UW1G45G component) */
#define OP_WREN 0x06u
#define OP_RDSR 0x05u
#define OP_WRSR 0x01u
#define OP_RDSCUR 0x2Bu
#define OP_RDCR2 0x71u
#define OP_WRCR2 0x72u
#define OP_RDID 0x9Fu
#define OP_RSTEN 0x66u
#define OP_RST 0x99u
#define OP_SE4K 0x21u
#define OP_PP4B 0x12u
#define OP_8DTRD 0xEEu
#define REG_DUMMY_DTR 5u

#define SECTOR N6_MODEL_SECTOR
#define PAGE N6_MODEL_PAGE
#define WINDOW MOTA_STM32N6_XSPI2_WINDOW

static struct n6_model *cur;

/* what a command is to the NOR: an address phase, data in (1) or out (2) or none (0) */
struct spec {
    uint8_t op;
    bool addr_spi, addr_dtr;
    int data;
};

static const struct spec specs[] = {
    {OP_WREN, false, false, 0}, {OP_RDSR, false, true, 1}, {OP_WRSR, false, true, 2},  {OP_RDSCUR, false, true, 1},
    {OP_RDCR2, true, true, 1},  {OP_WRCR2, true, true, 2}, {OP_RDID, false, false, 1}, {OP_RSTEN, false, false, 0},
    {OP_RST, false, false, 0},  {OP_SE4K, true, true, 0},  {OP_PP4B, true, true, 2},   {OP_8DTRD, true, true, 1},
};

static uint8_t dummies(const struct n6_model *m)
{
    return (uint8_t)(20u - 2u * (m->dc & 7u)); /* CR2 0x300: 20, 18, ... 6 */
}

void n6_model_init(struct n6_model *m, uint32_t first, uint32_t size, bool dcache)
{
    memset(m, 0, sizeof(*m));
    m->first = first;
    m->size = size;
    m->mem = malloc(size);
    memset(m->mem, 0xFF, size);
    m->id = N6_MODEL_ID;
    m->prog_polls = 3;
    m->erase_polls = 6;
    m->reg_polls = 2;
    m->seed = 0x2545F491u;
    dcache_model_init(&m->dcache, WINDOW + first, size, m->mem);
    m->dcache.enabled = dcache;
    n6_model_power_on(m);
    cur = m;
}

void n6_model_free(struct n6_model *m)
{
    dcache_model_free(&m->dcache);
    free(m->mem);
    m->mem = NULL;
    if (cur == m)
        cur = NULL;
}

static void tear(struct n6_model *m);

void n6_model_power_on(struct n6_model *m)
{
    tear(m); /* an operation still running when the power went */
    m->mode = N6_SPI;
    m->sr &= N6_SR_BP | N6_SR_SRWD | 0x40u; /* the non-volatile bits */
    m->scur &= N6_SCUR_WPSEL;
    m->dc = 0;
    m->wip = m->recovering = 0;
    m->rsten = false;
    m->pend = 0;
    m->cr = m->dcr1 = m->dcr2 = m->dcr3 = m->dcr4 = m->flags = 0;
    m->dlr = m->ar = m->ccr = m->tcr = m->ir = m->psmkr = m->psmar = m->pir = 0;
    m->xbusy = 0;
    m->xfer = m->polling = m->mm_busy = false;
    m->fifo_n = 0;
    m->barrier_due = false;
    dcache_model_reset(&m->dcache);
    m->off = false;
    m->cut_at = 0;
}

void n6_model_left_by_boot_rom(struct n6_model *m, bool octal)
{
    m->mode = octal ? N6_DOPI : N6_SPI;
    m->dcr1 = MTYP_MACRONIX << 24 | 26u << 16 | 1u << 8;
    m->dcr2 = 3;
    m->ccr = octal ? 0x2C003C1Cu : 0x01003101u; /* an octal DTR read, or SPI's 4-byte read */
    m->tcr = octal ? 20u : 0u;
    m->ir = octal ? 0xEE11u : 0x13u;
    m->cr = CR_EN | F_MMAP << 28;
    m->mm_busy = true;
}

/* the model's bytes of the NOR's [addr, addr + len): NULL outside them */
static uint8_t *nor(struct n6_model *m, uint32_t addr, size_t len)
{
    if (addr < m->first || addr - m->first > m->size || len > m->size - (addr - m->first)) {
        m->stray++;
        return NULL;
    }
    return m->mem + (addr - m->first);
}

static void changed(struct n6_model *m, uint32_t addr, size_t len)
{
    dcache_model_changed(&m->dcache, WINDOW + addr, len);
}

void n6_model_fill(struct n6_model *m, uint32_t addr, size_t len, uint8_t v)
{
    uint8_t *p = nor(m, addr, len);
    if (p != NULL) {
        memset(p, v, len);
        changed(m, addr, len);
    }
}

void n6_model_fetch(struct n6_model *m, uint32_t addr, size_t len)
{
    if (nor(m, addr, len) != NULL)
        dcache_model_load(&m->dcache, WINDOW + addr, NULL, len);
}

unsigned n6_model_violations(const struct n6_model *m)
{
    return m->wrong_mode + m->bad_phases + m->no_wel + m->while_wip + m->while_busy + m->overruns + m->window_outside +
           m->unbarriered + m->disabled + m->stray;
}

static uint8_t noise(struct n6_model *m)
{
    m->seed = m->seed * 1103515245u + 12345u;
    return (uint8_t)(m->seed >> 16);
}

static bool nor_busy(const struct n6_model *m)
{
    return m->wip > 0;
}

/* The operation in progress cut short (power, reset): a sector partly erased, a page partly programmed. */
static void tear(struct n6_model *m)
{
    uint32_t len = m->pend == 2 ? SECTOR : PAGE;
    uint8_t *p = m->pend != 0 && nor_busy(m) ? nor(m, m->pend_at, len) : NULL;
    if (p == NULL) {
        m->pend = 0;
        return;
    }
    for (uint32_t i = 0; i < len; i++) {
        if (m->pend == 2) {
            uint8_t r = noise(m);
            p[i] = r % 3u == 0 ? 0xFFu : r % 3u == 1 ? m->pend_old[i] : noise(m);
        } else {
            p[i] = (uint8_t)(m->pend_old[i] & (m->pend_new[i] | noise(m)));
        }
    }
    changed(m, m->pend_at, len);
    m->pend = 0;
    m->wip = 0;
}

/* A status read of the NOR: WIP while it works; its operation ends after the last. */
static uint8_t status(struct n6_model *m)
{
    uint8_t v = (uint8_t)(m->sr | (nor_busy(m) ? N6_SR_WIP : 0u));
    m->status_reads++;
    if (!m->stuck && m->wip > 0 && --m->wip == 0) {
        m->sr &= (uint8_t)~N6_SR_WEL;
        m->pend = 0;
    }
    return v;
}

static void start_op(struct n6_model *m, int kind, uint32_t at, uint32_t polls)
{
    m->pend = kind;
    m->pend_at = at;
    m->wip = polls;
}

static void program(struct n6_model *m, uint32_t at, const uint8_t *d, uint32_t n)
{
    uint32_t page = at & ~(PAGE - 1u);
    uint8_t *p = nor(m, page, PAGE);
    if (p == NULL)
        return;
    memcpy(m->pend_old, p, PAGE);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = (at + i) % PAGE; /* a NOR wraps inside its page */
        p[k] &= d[i];
        if (m->worn == page + k + 1u)
            p[k] |= 1u;
    }
    memcpy(m->pend_new, p, PAGE);
    changed(m, page, PAGE);
    m->programs++;
    m->last_prog = at;
    m->last_prog_len = n;
    start_op(m, 1, page, m->prog_polls);
}

static void erase(struct n6_model *m, uint32_t at)
{
    uint32_t sector = at & ~(SECTOR - 1u);
    uint8_t *p = nor(m, sector, SECTOR);
    if (p == NULL)
        return;
    memcpy(m->pend_old, p, SECTOR);
    memset(p, 0xFF, SECTOR);
    changed(m, sector, SECTOR);
    m->erases++;
    m->last_erase = sector;
    start_op(m, 2, sector, m->erase_polls);
}

/* A program or erase the NOR takes (WEL), or fails (BP, injected): its fail bit, WEL spent. */
static bool may_write(struct n6_model *m, uint8_t fail)
{
    if (!(m->sr & N6_SR_WEL)) {
        m->no_wel++;
        return false;
    }
    m->scur &= (uint8_t)~fail;
    if ((m->sr & N6_SR_BP) || (m->inject & fail)) {
        m->inject &= (uint8_t)~fail;
        m->scur |= fail;
        m->sr &= (uint8_t)~N6_SR_WEL;
        return false;
    }
    return true;
}

/* A register write the NOR takes: WEL, and WIP for a while. */
static bool reg_write(struct n6_model *m)
{
    if (!(m->sr & N6_SR_WEL)) {
        m->no_wel++;
        return false;
    }
    start_op(m, 0, 0, m->reg_polls);
    return true;
}

/* The NOR's answer to a read command (n bytes, in the order they come). */
static void answer(struct n6_model *m, uint8_t op, uint32_t at, uint8_t *out, uint32_t n)
{
    uint8_t v = 0;
    memset(out, 0xFF, n);
    switch (op) {
    case OP_RDSR: v = status(m); break;
    case OP_RDSCUR: v = m->scur; break;
    case OP_RDCR2: v = at == 0 ? (m->mode == N6_DOPI ? 2u : 0u) : at == 0x300u ? m->dc : 0u; break;
    case OP_RDID:
        for (uint32_t i = 0; i < n && i < 3; i++)
            out[i] = (uint8_t)(m->id >> (8u * i));
        return;
    case OP_8DTRD: {
        const uint8_t *p = nor(m, at, n);
        if (p != NULL)
            memcpy(out, p, n);
        return;
    }
    default: return;
    }
    memset(out, v, n); /* in DTR the register's byte comes twice */
}

/* The NOR takes a command whose phases were right: what it does at its end (CS high). */
static void execute(struct n6_model *m, uint8_t op, uint32_t at, const uint8_t *d, uint32_t n)
{
    bool rsten = m->rsten;
    m->rsten = false;
    if (nor_busy(m) && op != OP_RDSR && op != OP_RDSCUR && op != OP_RSTEN && op != OP_RST) {
        m->while_wip++;
        return;
    }
    switch (op) {
    case OP_RSTEN: m->rsten = true; break;
    case OP_RST:
        if (!rsten)
            break;
        tear(m); /* a reset stops an operation as a power cut does */
        m->mode = N6_SPI;
        m->sr &= (uint8_t) ~(N6_SR_WEL | N6_SR_WIP);
        m->dc = 0;
        m->wip = 0;
        m->recovering = m->reset_recovery;
        m->resets++;
        break;
    case OP_WREN:
        if (!m->wren_deaf)
            m->sr |= N6_SR_WEL;
        m->wrens++;
        break;
    case OP_WRSR:
        if (!reg_write(m))
            break;
        if (!((m->sr & N6_SR_SRWD) && m->wp_low))
            m->sr = (uint8_t)((m->sr & (N6_SR_WEL | N6_SR_WIP)) | (d[0] & (N6_SR_BP | N6_SR_SRWD | 0x40u)));
        break;
    case OP_WRCR2:
        if (!reg_write(m))
            break;
        if (at == 0)
            m->mode = (d[0] & 3u) == 2u ? N6_DOPI : N6_SPI; /* STR OPI is not modelled */
        else if (at == 0x300u)
            m->dc = d[0] & 7u;
        break;
    case OP_SE4K:
        if (may_write(m, N6_SCUR_E_FAIL))
            erase(m, at);
        break;
    case OP_PP4B:
        if (may_write(m, N6_SCUR_P_FAIL))
            program(m, at, d, n);
        break;
    default: break;
    }
}

/* The command in CCR, TCR, IR, DLR and AR as the NOR sees it: its op, or -1 (garbage, or wrong phases:
 * counted). read: XSPI2 reads data (indirect read, polling). */
static int decode(struct n6_model *m, bool read)
{
    uint32_t c = m->ccr, op;
    bool dtr = false, octal = false;
    if (IMODE(c) == 1 && !IDTR(c) && ISIZE(c) == 0 && m->ir <= 0xFFu) {
        op = m->ir;
    } else if (IMODE(c) == 4 && ISIZE(c) == 1 && ((m->ir >> 8) ^ m->ir) % 256u == 0xFFu && m->ir <= 0xFFFFu) {
        op = m->ir >> 8;
        octal = true;
        dtr = IDTR(c);
    } else {
        m->bad_phases++;
        return -1;
    }
    if (m->recovering > 0) {
        m->recovering--;
        return -1;
    }
    if ((m->mode == N6_DOPI) != (octal && dtr) || (octal && !dtr)) {
        if (op == OP_RSTEN || op == OP_RST) {
            m->foreign_resets++;
        } else {
            m->wrong_mode++;
        }
        m->rsten = false;
        return -1;
    }
    const struct spec *s = NULL;
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
        if (specs[i].op == op)
            s = &specs[i];
    unsigned lines = dtr ? 4u : 1u, n = DMODE(c) != 0 ? m->dlr + 1u : 0u;
    bool ok = s != NULL && ABMODE(c) == 0 && !(dtr && op == OP_RDID) && !(!dtr && op == OP_8DTRD);
    if (ok) {
        bool addr = dtr ? s->addr_dtr : s->addr_spi;
        ok = addr ? ADMODE(c) == lines && ADDTR(c) == dtr && ADSIZE(c) == 3 : ADMODE(c) == 0;
        ok = ok && (s->data == 0 ? DMODE(c) == 0 : DMODE(c) == lines && n != 0 && (s->data == 1) == read);
        ok = ok && (s->data != 0 || !read) && (DMODE(c) == 0 || !dtr || (DDTR(c) && n % 2u == 0));
        unsigned dummy = s->data != 1 || !dtr ? 0u : op == OP_8DTRD ? dummies(m) : REG_DUMMY_DTR;
        ok = ok && DCYC(m->tcr) == dummy && (s->data != 1 || !dtr || DQSE(c));
        ok = ok && !(op == OP_PP4B && (n > PAGE || (dtr && m->ar % 2u != 0)));
    }
    if (!ok) {
        m->bad_phases++;
        return -1;
    }
    return (int)op;
}

static bool enabled(struct n6_model *m)
{
    if (!(m->cr & CR_EN)) {
        m->disabled++;
        return false;
    }
    return true;
}

/* XSPI2 sends the command now: its address checked against DEVSIZE, then the NOR answers or takes it. */
static void issue(struct n6_model *m)
{
    uint32_t fmode = FMODE(m->cr);
    if (!enabled(m))
        return;
    if (ADMODE(m->ccr) != 0 && (uint64_t)m->ar >> (DCR1_DEVSIZE(m->dcr1) + 1u) != 0) {
        m->flags |= SR_TEF;
        m->tefs++;
        return;
    }
    int op = decode(m, fmode != F_WRITE);
    m->xop = (uint8_t)(op < 0 ? 0 : op);
    m->x_ok = op >= 0;
    m->xat = m->ar;
    m->xn = DMODE(m->ccr) != 0 ? m->dlr + 1u : 0u;
    m->xdone = 0;
    if (fmode == F_POLL) {
        m->polling = true;
        m->poll_ok = m->x_ok && m->xop == OP_RDSR;
        return;
    }
    if (fmode == F_READ) {
        uint32_t n = m->xn > N6_MODEL_FIFO ? N6_MODEL_FIFO : m->xn;
        memset(m->fifo, 0xFF, n);
        if (m->x_ok)
            answer(m, m->xop, m->xat, m->fifo, n);
        m->fifo_n = n;
        m->flags |= SR_TCF;
        return;
    }
    if (m->xn == 0) { /* no data: done at once */
        if (m->x_ok)
            execute(m, m->xop, m->xat, NULL, 0);
        m->flags |= SR_TCF;
        return;
    }
    m->xfer = true; /* its data comes through the FIFO */
    m->fifo_n = 0;
}

/* The FIFO's bytes sent on the wires: the command ends when all DLR + 1 have gone. */
static void drain(struct n6_model *m)
{
    unsigned n = m->fifo_n < 16u ? m->fifo_n : 16u;
    for (unsigned i = 0; i < n && m->xdone < m->xn; i++)
        if (m->xdone < sizeof(m->xbuf))
            m->xbuf[m->xdone++] = m->fifo[i];
        else
            m->xdone++;
    memmove(m->fifo, m->fifo + n, m->fifo_n - n);
    m->fifo_n -= n;
    if (m->xdone >= m->xn) {
        m->xfer = false;
        m->flags |= SR_TCF;
        if (m->x_ok)
            execute(m, m->xop, m->xat, m->xbuf, m->xn);
    }
}

static bool busy(const struct n6_model *m)
{
    return m->xbusy > 0 || m->xfer || m->polling || m->mm_busy || (FMODE(m->cr) == F_READ && m->fifo_n > 0);
}

static uint32_t read_sr(struct n6_model *m)
{
    if (m->xbusy > 0 && --m->xbusy == 0 && (m->cr & CR_ABORT)) {
        m->cr &= ~CR_ABORT;
        m->flags |= SR_TCF;
    }
    if (m->xfer)
        drain(m);
    if (m->polling) {
        uint8_t st[2] = {0xFF, 0xFF};
        if (m->poll_ok)
            answer(m, OP_RDSR, 0, st, 2);
        uint32_t v = (uint32_t)st[0] | (uint32_t)st[1] << 8;
        if ((v & m->psmkr) == (m->psmar & m->psmkr)) {
            m->flags |= SR_SMF;
            if (m->cr & CR_APMS)
                m->polling = false;
        }
    }
    uint32_t sr = m->flags | m->fifo_n << 8;
    uint32_t fmode = FMODE(m->cr);
    if (fmode == F_WRITE && DMODE(m->ccr) != 0 && N6_MODEL_FIFO - m->fifo_n >= CR_FTHRES(m->cr))
        sr |= SR_FTF;
    if (fmode == F_READ && m->fifo_n > 0 && (m->fifo_n >= CR_FTHRES(m->cr) || (m->flags & SR_TCF)))
        sr |= SR_FTF;
    return busy(m) ? sr | SR_BUSY : sr;
}

static void abort_all(struct n6_model *m)
{
    m->xfer = false; /* a page program cut mid-transfer: not executed */
    m->polling = false;
    m->mm_busy = false;
    m->fifo_n = 0;
    m->xbusy = 1;
    m->aborts++;
}

/* n bytes of v into DR: 4 (a word) or 1 (a byte) */
static void write_dr(struct n6_model *m, uint32_t v, unsigned n)
{
    if (FMODE(m->cr) != F_WRITE || busy(m) != m->xfer) {
        m->stray++;
        return;
    }
    if (!m->xfer) {
        if (DMODE(m->ccr) == 0) {
            m->stray++;
            return;
        }
        issue(m);
        if (!m->xfer)
            return;
    }
    if (N6_MODEL_FIFO - m->fifo_n < n || m->xdone + m->fifo_n + n > m->xn) {
        m->overruns++; /* a full FIFO, or bytes past DLR */
        return;
    }
    for (unsigned i = 0; i < n; i++)
        m->fifo[m->fifo_n++] = (uint8_t)(v >> (8u * i));
}

static void write_reg(struct n6_model *m, uint32_t reg, uint32_t v)
{
    bool b = busy(m);
    switch (reg) {
    case R_CR:
        if (v & CR_ABORT) {
            m->cr = v;
            abort_all(m);
            return;
        }
        if (b && FMODE(v) != FMODE(m->cr)) {
            m->while_busy++;
            return;
        }
        m->cr = v;
        return;
    case R_FCR: m->flags &= ~(v & (SR_TEF | SR_TCF | SR_SMF | SR_TOF)); return;
    case R_DR: write_dr(m, v, 4); return;
    default: break;
    }
    if (b) {
        m->while_busy++; /* refused: the part takes them only when idle */
        return;
    }
    switch (reg) {
    case R_DCR1: m->dcr1 = v; break;
    case R_DCR2:
        m->dcr2 = v;
        m->xbusy = 2; /* the calibration a new prescaler starts */
        break;
    case R_DCR3: m->dcr3 = v; break;
    case R_DCR4: m->dcr4 = v; break;
    case R_DLR: m->dlr = v; break;
    case R_CCR: m->ccr = v; break;
    case R_TCR: m->tcr = v; break;
    case R_PSMKR: m->psmkr = v; break;
    case R_PSMAR: m->psmar = v; break;
    case R_PIR: m->pir = v; break;
    case R_IR:
        m->ir = v;
        if (FMODE(m->cr) != F_MMAP && ADMODE(m->ccr) == 0 && (FMODE(m->cr) != F_WRITE || DMODE(m->ccr) == 0))
            issue(m);
        break;
    case R_AR:
        m->ar = v;
        if (FMODE(m->cr) != F_MMAP && ADMODE(m->ccr) != 0 && (FMODE(m->cr) != F_WRITE || DMODE(m->ccr) == 0))
            issue(m);
        break;
    default: m->stray++; break;
    }
}

static uint32_t read_reg(struct n6_model *m, uint32_t reg)
{
    switch (reg) {
    case R_CR: return m->cr;
    case R_DCR1: return m->dcr1;
    case R_DCR2: return m->dcr2;
    case R_DCR3: return m->dcr3;
    case R_DCR4: return m->dcr4;
    case R_SR: return read_sr(m);
    case R_DLR: return m->dlr;
    case R_AR: return m->ar;
    case R_CCR: return m->ccr;
    case R_TCR: return m->tcr;
    case R_IR: return m->ir;
    case R_PSMKR: return m->psmkr;
    case R_PSMAR: return m->psmar;
    case R_PIR: return m->pir;
    case R_DR: {
        uint32_t v = 0, n = m->fifo_n < 4u ? m->fifo_n : 4u;
        if (FMODE(m->cr) != F_READ || n < 4u) { /* a word of fewer bytes: what the part gives is not said */
            m->stray++;
            return 0;
        }
        for (uint32_t i = 0; i < n; i++)
            v |= (uint32_t)m->fifo[i] << (8u * i);
        memmove(m->fifo, m->fifo + n, m->fifo_n - n);
        m->fifo_n -= n;
        return v;
    }
    default: return 0;
    }
}

/* The window read at addr: a valid memory-mapped mode (stm32n6_flash_model.h), or counted. */
static bool window_ok(struct n6_model *m, uint32_t addr, size_t len)
{
    uint32_t c = m->ccr, at = addr - WINDOW;
    if (m->barrier_due)
        m->unbarriered++;
    bool ok = (m->cr & CR_EN) && FMODE(m->cr) == F_MMAP && !(m->cr & CR_ABORT) && m->mode == N6_DOPI && !nor_busy(m) &&
              DCR1_MTYP(m->dcr1) == MTYP_MACRONIX && m->ir == 0xEE11u && IMODE(c) == 4 && IDTR(c) && ISIZE(c) == 1 &&
              ADMODE(c) == 4 && ADDTR(c) && ADSIZE(c) == 3 && ABMODE(c) == 0 && DMODE(c) == 4 && DDTR(c) && DQSE(c) &&
              DCYC(m->tcr) == dummies(m) && (uint64_t)at + len <= (uint64_t)1 << (DCR1_DEVSIZE(m->dcr1) + 1u);
    if (!ok) {
        m->window_outside++;
        return false;
    }
    m->mm_busy = true; /* its prefetch holds XSPI2 until an abort */
    return true;
}

static bool in(uint32_t addr, uint32_t base, uint32_t size)
{
    return addr >= base && addr - base < size;
}

uint32_t mota_stm32_io_read32(uint32_t addr)
{
    struct n6_model *m = cur;
    if (m->off)
        return 0; /* no power: nothing answers */
    if (!in(addr, MOTA_STM32N6_XSPI2_REGS, REGS_SIZE)) {
        m->stray++;
        return 0;
    }
    return read_reg(m, addr - MOTA_STM32N6_XSPI2_REGS);
}

void mota_stm32_io_write32(uint32_t addr, uint32_t v)
{
    struct n6_model *m = cur;
    if (m->off)
        return;
    if (addr >= SCB_LO && addr < SCB_HI) {
        /* the CPU's own cache maintenance: not a cut point (the NOR is as at XSPI2's write before) */
        if (dcache_model_scb_write(&m->dcache, addr, v))
            m->barrier_due = true;
        else
            m->stray++;
        return;
    }
    m->writes++;
    if (in(addr, MOTA_STM32N6_XSPI2_REGS, REGS_SIZE))
        write_reg(m, addr - MOTA_STM32N6_XSPI2_REGS, v);
    else
        m->stray++;
    if (m->cut_at != 0 && m->writes == m->cut_at) {
        m->off = true;
        tear(m); /* what the NOR was doing stops half-way */
        if (m->on_cut != NULL)
            m->on_cut(m->on_cut_ctx);
    }
}

/* DR a byte at a time (any other register's byte is not how the driver reaches it: counted) */
uint8_t mota_stm32_io_read8(uint32_t addr)
{
    struct n6_model *m = cur;
    if (m->off)
        return 0;
    if (addr != MOTA_STM32N6_XSPI2_REGS + R_DR || FMODE(m->cr) != F_READ || m->fifo_n == 0) {
        m->stray++;
        return 0;
    }
    uint8_t v = m->fifo[0];
    memmove(m->fifo, m->fifo + 1, m->fifo_n - 1u);
    m->fifo_n--;
    return v;
}

void mota_stm32_io_write8(uint32_t addr, uint8_t v)
{
    struct n6_model *m = cur;
    if (m->off)
        return;
    m->writes++;
    if (addr == MOTA_STM32N6_XSPI2_REGS + R_DR)
        write_dr(m, v, 1);
    else
        m->stray++;
    if (m->cut_at != 0 && m->writes == m->cut_at) {
        m->off = true;
        tear(m);
        if (m->on_cut != NULL)
            m->on_cut(m->on_cut_ctx);
    }
}

const uint8_t *mota_stm32_io_mem(uint32_t addr)
{
    struct n6_model *m = cur;
    if (nor(m, addr - WINDOW, 0) == NULL)
        return NULL;
    (void)window_ok(m, addr, 0);
    return dcache_model_view(&m->dcache, addr);
}

void mota_stm32_io_copy(void *dst, uint32_t addr, size_t len)
{
    struct n6_model *m = cur;
    if (m->off || nor(m, addr - WINDOW, len) == NULL) {
        memset(dst, 0, len); /* no power, or outside the model: nothing answers */
        return;
    }
    if (!window_ok(m, addr, len)) {
        for (size_t i = 0; i < len; i++)
            ((uint8_t *)dst)[i] = noise(m);
        return;
    }
    dcache_model_load(&m->dcache, addr, dst, len);
}

uint32_t mota_stm32_io_irq_off(void)
{
    return 0;
}

void mota_stm32_io_irq_restore(uint32_t primask)
{
    (void)primask;
}

void mota_stm32_io_barrier(void)
{
    cur->barrier_due = false;
}

static uint64_t clock_us;

static uint64_t model_now(void *ctx)
{
    (void)ctx;
    return clock_us += 10;
}

const struct mota_stm32n6_nor_cfg n6_model_dk = {
    .regs = MOTA_STM32N6_XSPI2_REGS,
    .window = MOTA_STM32N6_XSPI2_WINDOW,
    .base = 0x70100000u,
    .size = 16u * 1024 * 1024,
    .prescaler = 0,
    .dcache = true,
    .erase_typ_us = 25000,
    .erase_max_us = 400000,
    .prog_typ_us = 150,
    .prog_max_us = 750,
    .now_us = model_now,
};
