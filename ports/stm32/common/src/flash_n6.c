/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32N6570-DK's flash driver: the MX66UW1G45G octal NOR behind XSPI2 (mota/stm32n6_nor.h). XSPI2 is
 * driven at register level (RM0486 "Extended-SPI interface"); the NOR's commands, phases and sequences
 * were read from ST's MX66UW1G45G component and DK BSP, nothing of them is copied. Every access goes
 * through stm32_io.h, so that the host tests run this source against a model of XSPI2 and the NOR.
 */
#include "mota/err.h"
#include "mota/stm32n6_nor.h"
#include "stm32_io.h"

#include <stdbool.h>
#include <string.h>

/* XSPI2's registers (offsets from cfg->regs) */
#define CR 0x000u
#define DCR1 0x008u
#define DCR2 0x00Cu
#define DCR3 0x010u
#define DCR4 0x014u
#define SR 0x020u
#define FCR 0x024u
#define DLR 0x040u
#define AR 0x048u
#define DR 0x050u
#define PSMKR 0x080u
#define PSMAR 0x088u
#define PIR 0x090u
#define CCR 0x100u
#define TCR 0x108u
#define IR 0x110u

#define CR_EN (1u << 0)
#define CR_ABORT (1u << 1)
#define CR_FTHRES(n) (((n)-1u) << 8) /* FTF at n bytes free (write) or held (read) */
#define CR_APMS (1u << 22)           /* automatic polling stops at the match */
#define CR_FMODE_POS 28u
#define FMODE_WRITE 0u /* indirect write */
#define FMODE_READ 1u  /* indirect read */
#define FMODE_POLL 2u  /* automatic status polling */
#define FMODE_MMAP 3u  /* memory-mapped */
#define CR_FMODE (3u << CR_FMODE_POS)

#define DCR1_CSHT(cycles) (((cycles)-1u) << 8)
#define DCR1_DEVSIZE(log2) (((log2)-1u) << 16) /* the device holds 2^(DEVSIZE + 1) bytes */
#define DCR1_MTYP_MACRONIX (1u << 24)          /* octal DTR data in the Macronix byte order */

#define SR_TEF (1u << 0)
#define SR_TCF (1u << 1)
#define SR_FTF (1u << 2)
#define SR_SMF (1u << 3)
#define SR_TOF (1u << 4)
#define SR_BUSY (1u << 5)
#define FCR_ALL (SR_TEF | SR_TCF | SR_SMF | SR_TOF)

/* CCR: each phase's lines (1: single, 4: eight), DTR and size */
#define CCR_IMODE(l) ((uint32_t)(l) << 0)
#define CCR_IDTR (1u << 3)
#define CCR_ISIZE_16 (1u << 4)
#define CCR_ADMODE(l) ((uint32_t)(l) << 8)
#define CCR_ADDTR (1u << 11)
#define CCR_ADSIZE_32 (3u << 12)
#define CCR_DMODE(l) ((uint32_t)(l) << 24)
#define CCR_DDTR (1u << 27)
#define CCR_DQSE (1u << 29)
#define LINES_1 1u
#define LINES_8 4u

#define TCR_DHQC (1u << 28) /* data output held a quarter cycle in DTR, as ST's BSP sets it */

/* the NOR's commands: SPI's one byte; octal DTR's the byte then its inverse */
#define OCT(op) ((uint32_t)(op) << 8 | (~(uint32_t)(op)&0xFFu))
#define CMD_WREN 0x06u
#define CMD_RDSR 0x05u
#define CMD_WRSR 0x01u
#define CMD_RDSCUR 0x2Bu
#define CMD_RDCR2 0x71u
#define CMD_WRCR2 0x72u
#define CMD_RDID 0x9Fu
#define CMD_RSTEN 0x66u
#define CMD_RST 0x99u
#define CMD_SE4K 0x21u /* 4 KiB sector erase, 4-byte address */
#define CMD_PP4B 0x12u /* page program, 4-byte address */
#define CMD_8DTRD 0xEEu

#define NOR_SR_WIP (1u << 0)
#define NOR_SR_WEL (1u << 1)
#define NOR_SR_BP (0xFu << 2)
#define NOR_SCUR_P_FAIL (1u << 5)
#define NOR_SCUR_E_FAIL (1u << 6)
#define NOR_SCUR_WPSEL (1u << 7)
#define NOR_CR2_MODE 0x00000000u /* its byte: SPI 0, DOPI 2 */
#define NOR_CR2_DOPI 0x02u
#define NOR_CR2_DC 0x00000300u /* its byte: the dummy cycles of a read */
#define NOR_CR2_DC_20 0x00u
#define NOR_ID 0x3B80C2u /* Macronix (C2), MX66UW (80), 1 Gbit (3B): the bytes in the order they come */

#define NOR_LOG2_SIZE 27u /* 128 MiB */
#define NOR_SIZE (1u << NOR_LOG2_SIZE)
#define SECTOR 4096u
#define PAGE 256u
#define PROG 16u             /* the program unit the agent is given */
#define READ_DUMMY 20u       /* the octal DTR read's dummy cycles: CR2 DC 0, set at init */
#define REG_DUMMY_DTR 5u     /* a register read's in octal DTR (ST's component: DUMMY_CYCLES_REG_OCTAL_DTR) */
#define POLL_INTERVAL 16u    /* clock cycles between automatic status reads */
#define XSPI_MAX_US 1000u    /* XSPI2's own work: a transfer of a page, an abort, a calibration */
#define WRREG_MAX_US 40000u  /* a status or configuration register write (ST's component: 40 ms) */
#define RESET_MAX_US 100000u /* a reset's recovery, during an erase (ST's component: 100 ms) */
#define CHUNK 64u            /* bytes compared at a time (stack) */
#define DCACHE_LINE 32u
#define SCB_DCIMVAC 0xE000EF5Cu

enum proto { SPI, OCTAL_STR, OCTAL_DTR };

/* One command as XSPI2 sends it: the instruction, an address phase (4 bytes) or none, dummy cycles, and
 * a data phase of n bytes (in from the NOR, or out to it) or none. */
struct cmd {
    enum proto p;
    uint8_t op;
    bool addr;
    uint32_t at;
    uint8_t dummy;
    uint8_t *in;
    const uint8_t *out;
    size_t n;
};

static uint32_t rd(const struct mota_stm32n6_nor_cfg *c, uint32_t reg)
{
    return mota_stm32_io_read32(c->regs + reg);
}

static void wr(const struct mota_stm32n6_nor_cfg *c, uint32_t reg, uint32_t v)
{
    mota_stm32_io_write32(c->regs + reg, v);
}

/* SR & mask == want within limit_us; MOTA_ERR_TIMEOUT otherwise */
static int wait_sr(const struct mota_stm32n6_nor_cfg *c, uint32_t mask, uint32_t want, uint32_t limit_us)
{
    uint64_t end = c->now_us(c->clock_ctx) + limit_us;
    while ((rd(c, SR) & mask) != want) {
        if (c->now_us(c->clock_ctx) > end)
            return MOTA_ERR_TIMEOUT;
    }
    return MOTA_OK;
}

/* the functional mode, automatic polling's stop at the match off (wait_ready sets it with its mode) */
static void set_fmode(const struct mota_stm32n6_nor_cfg *c, uint32_t fmode)
{
    wr(c, CR, (rd(c, CR) & ~(CR_FMODE | CR_APMS)) | fmode << CR_FMODE_POS);
}

/* XSPI2 out of whatever it does (memory-mapped mode keeps it BUSY: its prefetch), idle in indirect write
 * mode with no flag set. */
static int stop(const struct mota_stm32n6_nor_cfg *c)
{
    wr(c, CR, rd(c, CR) | CR_ABORT);
    uint64_t end = c->now_us(c->clock_ctx) + XSPI_MAX_US;
    while ((rd(c, SR) & SR_BUSY) || (rd(c, CR) & CR_ABORT)) {
        if (c->now_us(c->clock_ctx) > end)
            return MOTA_ERR_TIMEOUT;
    }
    wr(c, FCR, FCR_ALL);
    set_fmode(c, FMODE_WRITE);
    return MOTA_OK;
}

static uint32_t ccr_of(const struct cmd *k)
{
    uint32_t ccr;
    if (k->p == SPI) {
        ccr = CCR_IMODE(LINES_1);
        if (k->addr)
            ccr |= CCR_ADMODE(LINES_1) | CCR_ADSIZE_32;
        if (k->n != 0)
            ccr |= CCR_DMODE(LINES_1);
        return ccr;
    }
    uint32_t dtr = k->p == OCTAL_DTR;
    ccr = CCR_IMODE(LINES_8) | CCR_ISIZE_16 | (dtr ? CCR_IDTR : 0u);
    if (k->addr)
        ccr |= CCR_ADMODE(LINES_8) | CCR_ADSIZE_32 | (dtr ? CCR_ADDTR : 0u);
    if (k->n != 0)
        ccr |= CCR_DMODE(LINES_8);
    if (dtr)
        ccr |= CCR_DDTR; /* with no data phase too: DHQC (TCR) holds only with DDTR set, as ST's HAL does */
    if (dtr && k->in != NULL)
        ccr |= CCR_DQSE; /* the NOR's data strobe samples what it sends in DTR */
    return ccr;
}

/* The command's phases in CCR, TCR, IR and DLR: XSPI2 idle, FMODE already chosen. */
static void setup(const struct mota_stm32n6_nor_cfg *c, const struct cmd *k)
{
    if (k->n != 0)
        wr(c, DLR, (uint32_t)k->n - 1u);
    wr(c, CCR, ccr_of(k));
    wr(c, TCR, k->dummy | (k->p == OCTAL_DTR ? TCR_DHQC : 0u));
    wr(c, IR, k->p == SPI ? k->op : OCT(k->op));
}

/* The transfer's end: TCF, no TEF (an address past the device), flags cleared, XSPI2 idle. */
static int finish(const struct mota_stm32n6_nor_cfg *c)
{
    int ret = wait_sr(c, SR_TCF, SR_TCF, XSPI_MAX_US);
    uint32_t sr = rd(c, SR);
    wr(c, FCR, FCR_ALL);
    if (ret == MOTA_OK && (sr & SR_TEF))
        ret = MOTA_ERR_FLASH_IO;
    if (ret == MOTA_OK)
        ret = wait_sr(c, SR_BUSY, 0, XSPI_MAX_US);
    return ret;
}

/* One command in indirect mode: it starts at the write of AR (an address), else of IR; with data out, at
 * the first write into the FIFO, each written once FTF says there is room for it: whole words, then the
 * last 1 to 3 bytes a byte at a time (a word would put bytes past DLR into the FIFO). */
static int send(const struct mota_stm32n6_nor_cfg *c, const struct cmd *k)
{
    int ret = MOTA_ERR_TIMEOUT;
    set_fmode(c, FMODE_WRITE);
    setup(c, k);
    if (k->addr)
        wr(c, AR, k->at);
    for (size_t i = 0; k->out != NULL && i < k->n; i += 4) {
        if ((ret = wait_sr(c, SR_FTF, SR_FTF, XSPI_MAX_US)) != MOTA_OK) {
            (void)stop(c);
            return ret;
        }
        const uint8_t *s = k->out + i;
        if (k->n - i >= 4u)
            wr(c, DR, (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24);
        else
            for (size_t b = 0; b < k->n - i; b++)
                mota_stm32_io_write8(c->regs + DR, s[b]);
    }
    if ((ret = finish(c)) != MOTA_OK) {
        (void)stop(c);
        return ret;
    }
    return MOTA_OK;
}

/* One command reading n (<= 4) bytes: the FIFO read a byte at a time once the transfer is complete. */
static int receive(const struct mota_stm32n6_nor_cfg *c, struct cmd *k)
{
    int ret = MOTA_ERR_TIMEOUT;
    set_fmode(c, FMODE_READ);
    setup(c, k);
    if (k->addr)
        wr(c, AR, k->at);
    if ((ret = wait_sr(c, SR_TCF, SR_TCF, XSPI_MAX_US)) != MOTA_OK) {
        (void)stop(c);
        return ret;
    }
    for (size_t i = 0; i < k->n; i++)
        k->in[i] = mota_stm32_io_read8(c->regs + DR);
    if ((ret = finish(c)) != MOTA_OK)
        (void)stop(c);
    return ret;
}

static int simple(const struct mota_stm32n6_nor_cfg *c, enum proto p, uint8_t op)
{
    const struct cmd k = {.p = p, .op = op};
    return send(c, &k);
}

/* A register of the NOR in octal DTR: its byte comes twice (DTR moves two bytes a clock). */
static int read_reg(const struct mota_stm32n6_nor_cfg *c, uint8_t op, uint32_t at, uint8_t *v)
{
    uint8_t b[2] = {0, 0};
    struct cmd k = {.p = OCTAL_DTR, .op = op, .addr = true, .at = at, .dummy = REG_DUMMY_DTR, .in = b, .n = 2};
    int ret = receive(c, &k);
    *v = b[0];
    return ret;
}

static int read_reg_spi(const struct mota_stm32n6_nor_cfg *c, uint8_t op, uint8_t *v)
{
    struct cmd k = {.p = SPI, .op = op, .in = v, .n = 1};
    return receive(c, &k);
}

/* WIP clear within limit_us, by XSPI2's automatic polling of the status register (stops at the match);
 * a NOR still busy then is left to itself and the polling aborted. */
static int wait_ready(const struct mota_stm32n6_nor_cfg *c, uint32_t limit_us)
{
    uint8_t sr[2];
    const struct cmd k = {
        .p = OCTAL_DTR, .op = CMD_RDSR, .addr = true, .at = 0, .dummy = REG_DUMMY_DTR, .in = sr, .n = 2};
    wr(c, PSMKR, NOR_SR_WIP);
    wr(c, PSMAR, 0);
    wr(c, PIR, POLL_INTERVAL);
    wr(c, CR, (rd(c, CR) & ~CR_FMODE) | CR_APMS | FMODE_POLL << CR_FMODE_POS);
    setup(c, &k);
    wr(c, AR, k.at);
    int ret = wait_sr(c, SR_SMF, SR_SMF, limit_us);
    if (ret != MOTA_OK) {
        (void)stop(c);
        return ret;
    }
    wr(c, FCR, FCR_ALL);
    if ((ret = wait_sr(c, SR_BUSY, 0, XSPI_MAX_US)) != MOTA_OK)
        (void)stop(c);
    return ret;
}

/* A write enable the NOR latched (WEL): without it a program or an erase is ignored, silently. */
static int write_enable(const struct mota_stm32n6_nor_cfg *c)
{
    uint8_t sr = 0;
    int ret = simple(c, OCTAL_DTR, CMD_WREN);
    if (ret == MOTA_OK)
        ret = read_reg(c, CMD_RDSR, 0, &sr);
    if (ret == MOTA_OK && (sr & (NOR_SR_WEL | NOR_SR_WIP)) != NOR_SR_WEL)
        ret = MOTA_ERR_FLASH_IO;
    return ret;
}

/* The program or erase just started has ended within limit_us without its fail bit. */
static int done(const struct mota_stm32n6_nor_cfg *c, uint32_t limit_us, uint8_t fail)
{
    uint8_t scur = 0;
    int ret = wait_ready(c, limit_us);
    if (ret == MOTA_OK)
        ret = read_reg(c, CMD_RDSCUR, 0, &scur);
    if (ret == MOTA_OK && (scur & fail))
        ret = MOTA_ERR_FLASH_IO;
    return ret;
}

/* XSPI2 back in memory-mapped mode with the octal DTR read: the window shows the NOR again. */
static int map_window(const struct mota_stm32n6_nor_cfg *c)
{
    int ret = wait_sr(c, SR_BUSY, 0, XSPI_MAX_US);
    if (ret != MOTA_OK)
        return ret;
    set_fmode(c, FMODE_WRITE);
    wr(c, CCR,
       CCR_IMODE(LINES_8) | CCR_IDTR | CCR_ISIZE_16 | CCR_ADMODE(LINES_8) | CCR_ADDTR | CCR_ADSIZE_32 |
           CCR_DMODE(LINES_8) | CCR_DDTR | CCR_DQSE);
    wr(c, TCR, READ_DUMMY | TCR_DHQC);
    wr(c, IR, OCT(CMD_8DTRD));
    set_fmode(c, FMODE_MMAP);
    return MOTA_OK;
}

/* The D-cache's lines over [at, at + len) dropped: the NOR changed under them. */
static void invalidate(const struct mota_stm32n6_nor_cfg *c, uint32_t at, size_t len)
{
    if (!c->dcache || len == 0)
        return;
    for (uint32_t a = at & ~(DCACHE_LINE - 1u); a < at + len; a += DCACHE_LINE)
        mota_stm32_io_write32(SCB_DCIMVAC, a);
    mota_stm32_io_barrier();
}

/* [off, off + len) inside the range */
static bool inside(const struct mota_stm32n6_nor_cfg *c, uint32_t off, size_t len)
{
    return off <= c->size && len <= c->size - off;
}

static int n6_read(void *ctx, uint32_t off, void *buf, size_t len)
{
    const struct mota_stm32n6_nor_cfg *c = ctx;
    if (!inside(c, off, len))
        return MOTA_ERR_FLASH_BOUNDS;
    if (len != 0)
        mota_stm32_io_copy(buf, c->base + off, len);
    return MOTA_OK;
}

static const uint8_t *n6_map(void *ctx, uint32_t off, size_t len)
{
    const struct mota_stm32n6_nor_cfg *c = ctx;
    return inside(c, off, len) ? mota_stm32_io_mem(c->base + off) : NULL;
}

/* [off, off + len) reads erased (want NULL) or as want, through the window */
static bool reads_as(const struct mota_stm32n6_nor_cfg *c, uint32_t off, const uint8_t *want, size_t len)
{
    uint8_t now[CHUNK];
    for (size_t i = 0; i < len; i += CHUNK) {
        size_t n = len - i < CHUNK ? len - i : CHUNK;
        mota_stm32_io_copy(now, c->base + off + (uint32_t)i, n);
        for (size_t k = 0; k < n; k++)
            if (now[k] != (want != NULL ? want[i + k] : 0xFFu))
                return false;
    }
    return true;
}

/* The pieces of [off, off + len), each inside one page, programmed in indirect mode. */
static int program(const struct mota_stm32n6_nor_cfg *c, uint32_t off, const uint8_t *src, size_t len)
{
    int ret = stop(c);
    uint32_t at = c->base - c->window + off;
    for (size_t i = 0; i < len && ret == MOTA_OK;) {
        size_t n = PAGE - (at + i) % PAGE;
        if (n > len - i)
            n = len - i;
        const struct cmd k = {
            .p = OCTAL_DTR, .op = CMD_PP4B, .addr = true, .at = at + (uint32_t)i, .out = src + i, .n = n};
        if ((ret = write_enable(c)) == MOTA_OK && (ret = send(c, &k)) == MOTA_OK)
            ret = done(c, 2u * c->prog_max_us, NOR_SCUR_P_FAIL);
        i += n;
    }
    int back = map_window(c);
    return ret == MOTA_OK ? back : ret;
}

static int n6_prog(void *ctx, uint32_t off, const void *buf, size_t len)
{
    const struct mota_stm32n6_nor_cfg *c = ctx;
    int ret = MOTA_ERR_FLASH_IO;
    if (off % PROG != 0 || len % PROG != 0)
        return MOTA_ERR_FLASH_ALIGN;
    if (!inside(c, off, len))
        return MOTA_ERR_FLASH_BOUNDS;
    if (len == 0)
        return MOTA_OK;
    if (!reads_as(c, off, NULL, len))
        return MOTA_ERR_FLASH_NOT_ERASED;
    ret = program(c, off, buf, len);
    /* the erased check cached the lines: dropped before the read back, whatever happened */
    invalidate(c, c->base + off, len);
    if (ret == MOTA_OK && !reads_as(c, off, buf, len))
        ret = MOTA_ERR_FLASH_IO;
    return ret;
}

static int n6_erase(void *ctx, uint32_t off)
{
    const struct mota_stm32n6_nor_cfg *c = ctx;
    if (off >= c->size)
        return MOTA_ERR_FLASH_BOUNDS;
    if (off % SECTOR != 0)
        return MOTA_ERR_FLASH_ALIGN;
    const struct cmd k = {.p = OCTAL_DTR, .op = CMD_SE4K, .addr = true, .at = c->base - c->window + off};
    int ret = stop(c);
    if (ret == MOTA_OK && (ret = write_enable(c)) == MOTA_OK && (ret = send(c, &k)) == MOTA_OK)
        ret = done(c, 2u * c->erase_max_us, NOR_SCUR_E_FAIL);
    int back = map_window(c);
    invalidate(c, c->base + off, SECTOR);
    return ret == MOTA_OK ? back : ret;
}

/* Steps 1 and 2 of init (mota/stm32n6_nor.h): XSPI2 stopped, configured for the NOR, enabled. */
static int configure(const struct mota_stm32n6_nor_cfg *c)
{
    int ret = MOTA_ERR_TIMEOUT;
    if ((rd(c, CR) & CR_EN) && (ret = stop(c)) != MOTA_OK)
        return ret;
    wr(c, CR, 0);
    wr(c, DCR1, DCR1_MTYP_MACRONIX | DCR1_DEVSIZE(NOR_LOG2_SIZE) | DCR1_CSHT(2u));
    wr(c, DCR3, 0);
    wr(c, DCR4, 0);
    wr(c, DCR2, c->prescaler);
    if ((ret = wait_sr(c, SR_BUSY, 0, XSPI_MAX_US)) != MOTA_OK) /* the calibration a new prescaler starts */
        return ret;
    wr(c, FCR, FCR_ALL);
    wr(c, CR, CR_FTHRES(4u) | CR_EN);
    return MOTA_OK;
}

/* Steps 3 and 4: the NOR reset from any mode, back in SPI, and its ID once it answers. */
static int reset_nor(const struct mota_stm32n6_nor_cfg *c)
{
    const enum proto forms[] = {SPI, OCTAL_STR, OCTAL_DTR};
    int ret = MOTA_ERR_FLASH_IO;
    for (unsigned i = 0; i < 3; i++)
        if ((ret = simple(c, forms[i], CMD_RSTEN)) != MOTA_OK || (ret = simple(c, forms[i], CMD_RST)) != MOTA_OK)
            return ret;
    uint64_t end = c->now_us(c->clock_ctx) + 2u * RESET_MAX_US;
    for (;;) {
        uint8_t id[3] = {0, 0, 0};
        struct cmd k = {.p = SPI, .op = CMD_RDID, .in = id, .n = 3};
        if ((ret = receive(c, &k)) != MOTA_OK)
            return ret;
        if (((uint32_t)id[0] | (uint32_t)id[1] << 8 | (uint32_t)id[2] << 16) == NOR_ID)
            return MOTA_OK;
        if (c->now_us(c->clock_ctx) > end)
            return MOTA_ERR_FLASH_IO;
    }
}

/* SPI's WIP clear within limit_us (before the switch to octal DTR: no automatic polling in SPI here) */
static int wait_ready_spi(const struct mota_stm32n6_nor_cfg *c, uint32_t limit_us)
{
    uint64_t end = c->now_us(c->clock_ctx) + limit_us;
    for (;;) {
        uint8_t sr = NOR_SR_WIP;
        int ret = read_reg_spi(c, CMD_RDSR, &sr);
        if (ret != MOTA_OK || !(sr & NOR_SR_WIP))
            return ret;
        if (c->now_us(c->clock_ctx) > end)
            return MOTA_ERR_TIMEOUT;
    }
}

/* Step 5: no block protection left, in SPI. */
static int unprotect(const struct mota_stm32n6_nor_cfg *c)
{
    uint8_t sr = 0, scur = 0;
    int ret = read_reg_spi(c, CMD_RDSCUR, &scur);
    if (ret != MOTA_OK)
        return ret;
    if (scur & NOR_SCUR_WPSEL)
        return MOTA_ERR_FLASH_IO; /* individual block protection: not handled */
    if ((ret = read_reg_spi(c, CMD_RDSR, &sr)) != MOTA_OK || !(sr & NOR_SR_BP))
        return ret;
    uint8_t clear = (uint8_t)(sr & ~(NOR_SR_BP | NOR_SR_WEL | NOR_SR_WIP));
    const struct cmd k = {.p = SPI, .op = CMD_WRSR, .out = &clear, .n = 1};
    if ((ret = simple(c, SPI, CMD_WREN)) != MOTA_OK || (ret = send(c, &k)) != MOTA_OK ||
        (ret = wait_ready_spi(c, 2u * WRREG_MAX_US)) != MOTA_OK || (ret = read_reg_spi(c, CMD_RDSR, &sr)) != MOTA_OK)
        return ret;
    return (sr & NOR_SR_BP) ? MOTA_ERR_FLASH_IO : MOTA_OK; /* SRWD with WP# low: the status stays */
}

/* us microseconds of the configured clock: a wait with nothing to poll */
static void pause(const struct mota_stm32n6_nor_cfg *c, uint32_t us)
{
    uint64_t end = c->now_us(c->clock_ctx) + us;
    while (c->now_us(c->clock_ctx) < end)
        ;
}

/* Step 6: the NOR in octal DTR with 20 dummy cycles for reads. Its status cannot be polled across the
 * switch (it answers SPI until the write completes, octal DTR after): the write's longest time is waited
 * for first, as ST's board support does, before the status is polled in octal DTR. */
static int to_octal_dtr(const struct mota_stm32n6_nor_cfg *c)
{
    uint8_t dc = NOR_CR2_DC_20, dopi = NOR_CR2_DOPI, mode = 0;
    const struct cmd set_dc = {.p = SPI, .op = CMD_WRCR2, .addr = true, .at = NOR_CR2_DC, .out = &dc, .n = 1};
    const struct cmd set_dopi = {.p = SPI, .op = CMD_WRCR2, .addr = true, .at = NOR_CR2_MODE, .out = &dopi, .n = 1};
    int ret = MOTA_ERR_FLASH_IO;
    if ((ret = simple(c, SPI, CMD_WREN)) != MOTA_OK || (ret = send(c, &set_dc)) != MOTA_OK ||
        (ret = wait_ready_spi(c, 2u * WRREG_MAX_US)) != MOTA_OK || (ret = simple(c, SPI, CMD_WREN)) != MOTA_OK ||
        (ret = send(c, &set_dopi)) != MOTA_OK ||
        (pause(c, WRREG_MAX_US), ret = wait_ready(c, 2u * WRREG_MAX_US)) != MOTA_OK ||
        (ret = read_reg(c, CMD_RDCR2, NOR_CR2_MODE, &mode)) != MOTA_OK)
        return ret;
    return mode == NOR_CR2_DOPI ? MOTA_OK : MOTA_ERR_FLASH_IO;
}

int mota_stm32n6_nor_init(struct mota_flash *f, const struct mota_stm32n6_nor_cfg *cfg)
{
    int ret = MOTA_ERR_ARG;
    if (f == NULL || cfg == NULL || cfg->now_us == NULL || cfg->regs == 0 || cfg->prescaler > 255u || cfg->size == 0 ||
        cfg->size % SECTOR != 0 || cfg->base < cfg->window || (cfg->base - cfg->window) % SECTOR != 0 ||
        cfg->base - cfg->window >= NOR_SIZE || cfg->size > NOR_SIZE - (cfg->base - cfg->window))
        return ret;
    if ((ret = configure(cfg)) != MOTA_OK || (ret = reset_nor(cfg)) != MOTA_OK || (ret = unprotect(cfg)) != MOTA_OK ||
        (ret = to_octal_dtr(cfg)) != MOTA_OK || (ret = map_window(cfg)) != MOTA_OK)
        return ret;
    memset(f, 0, sizeof(*f));
    f->read = n6_read;
    f->prog = n6_prog;
    f->erase = n6_erase;
    f->map = n6_map;
    f->xip_base = cfg->base;
    f->size = cfg->size;
    f->prog_size = PROG;
    f->erased_value = 0xFFu;
    f->flags = 0; /* a NOR: bits from 1 to 0, no ECC, a unit programmable again */
    f->n_regions = 1;
    f->regions[0] = (struct mota_flash_region){cfg->size / SECTOR, SECTOR, cfg->erase_typ_us, cfg->erase_max_us};
    f->prog_block = PAGE;
    f->prog_typ_us = cfg->prog_typ_us;
    f->prog_max_us = cfg->prog_max_us;
    f->ctx = (void *)(uintptr_t)cfg;
    return MOTA_OK;
}
