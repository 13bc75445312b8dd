/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A register-level model of the STM32N657's XSPI2 with the MX66UW1G45G octal NOR behind it, and of the
 * M55's D-cache over its window (dcache_model.h), for the host tests of the N6 flash driver (flash_n6.c):
 * it implements the driver's access layer (stm32_io.h, MOTA_STM32_IO_MODEL). Its bits and commands are
 * written here from RM0486's register map and ST's MX66UW1G45G component, not taken from the driver.
 *
 * XSPI2 (registers at MOTA_STM32N6_XSPI2_REGS, window at MOTA_STM32N6_XSPI2_WINDOW):
 * - CR (EN, ABORT, FTHRES, APMS, FMODE), DCR1 (MTYP, DEVSIZE, CSHT), DCR2 (PRESCALER: a write starts a
 *   calibration, BUSY for a few SR reads), DCR3, DCR4, SR (TEF, TCF, FTF, SMF, BUSY, FLEVEL), FCR, DLR, AR,
 *   DR, PSMKR, PSMAR, PIR, CCR, TCR, IR; a write of DLR, AR, CCR, TCR, IR, PSMKR, PSMAR, PIR, DCR1..4 or of
 *   FMODE while BUSY is refused, as the part does, and counted;
 * - indirect write (FMODE 00): a command without data starts at the write of IR (no address) or AR, one
 *   with data at its first word written to DR; the 64-byte FIFO drains 16 bytes towards the NOR at each SR
 *   read, FTF says FTHRES + 1 bytes are free, TCF that DLR + 1 bytes went; a word written into a full
 *   FIFO is lost (counted);
 * - indirect read (01): starts at AR (an address phase) or IR; the answer is in the FIFO at once (TCF);
 * - automatic polling (10): starts the same way; every SR read is one status read of the NOR, SMF when
 *   (status & PSMKR) == PSMAR, the polling stops there with APMS;
 * - memory-mapped (11): the window reads the NOR with CCR, TCR and IR as they are: an octal DTR read
 *   (0xEE11, 4 address bytes in DTR, data in DTR with DQS, the dummy cycles the NOR's CR2 asks), the NOR in
 *   octal DTR and idle, DCR1 in the Macronix byte order; a window read (read, map) otherwise is counted
 *   and returns garbage. Once read, the window keeps XSPI2 BUSY (its prefetch) until ABORT;
 * - ABORT: whatever runs stops (a page program cut mid-transfer is not executed), the FIFO is emptied,
 *   BUSY and ABORT clear after an SR read, TCF is set;
 * - an address at or past 2^(DEVSIZE + 1): TEF, nothing sent.
 * The MX66UW1G45G (the part's [first, first + size) modelled, the rest out of reach):
 * - each command's phases checked against its mode, SPI or octal DTR (instruction lines, DTR and size,
 *   the inverse byte, the 4-byte address phase, dummy cycles: 0 in SPI, 5 for a register read and the
 *   CR2's count for the array's read in octal DTR, DQS on its reads, an even count of DTR data): a
 *   command in the other mode is garbage to it, ignored and counted (but reset-enable and reset, which a
 *   driver sends in every form on purpose), a wrong phase likewise;
 * - reset-enable then reset: SPI mode, WEL clear, 20 dummy cycles, an operation in progress torn as by a
 *   power cut; the next reset_recovery commands are ignored (their reads return 0xFF);
 * - status (WIP for a number of status reads after a program, an erase or a register write, or forever
 *   when stuck; WEL set by write enable, cleared when a program, an erase or a register write ends; BP;
 *   SRWD, which with WP# held low locks the status), security (P_FAIL, E_FAIL for the last program or
 *   erase; WPSEL), configuration register 2 (0: SPI or DOPI; 0x300: dummy cycles), the JEDEC ID;
 * - 4 KiB sector erase (to 0xFF) and page program (1 -> 0 only, wrapping inside its 256-byte page), both
 *   ignored without WEL (counted), failing with P_FAIL or E_FAIL when injected or when BP is set (any BP:
 *   the model protects the whole array); any other command but a status read while WIP: ignored, counted;
 * - a power cut at the Nth write to XSPI2's registers (the SCB's cache maintenance is not counted: the
 *   NOR is then as at XSPI2's write before): that write lands, and a program or an erase in
 *   progress (WIP) is torn: a sector partly erased (each byte 0xFF, its old value or random), a page with
 *   only some of its bits cleared; nothing after it happens until n6_model_power_on, which resets XSPI2
 *   and puts the NOR back in SPI mode, and empties the D-cache.
 * The D-cache (when on): every line the CPU reads from the window is held until SCB DCIMVAC drops it
 * (dcache_model.h); a window read after cache maintenance with no barrier between is counted.
 */
#ifndef MOTA_TEST_STM32N6_FLASH_MODEL_H
#define MOTA_TEST_STM32N6_FLASH_MODEL_H

#include "dcache_model.h"
#include "mota/stm32n6_nor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define N6_MODEL_NOR_SIZE (128u * 1024 * 1024)
#define N6_MODEL_SECTOR 4096u
#define N6_MODEL_PAGE 256u
#define N6_MODEL_ID 0x3B80C2u /* C2 80 3B, first byte lowest */
#define N6_MODEL_FIFO 64u

/* the NOR's register bits */
#define N6_SR_WIP 0x01u
#define N6_SR_WEL 0x02u
#define N6_SR_BP 0x3Cu
#define N6_SR_SRWD 0x80u
#define N6_SCUR_P_FAIL 0x20u
#define N6_SCUR_E_FAIL 0x40u
#define N6_SCUR_WPSEL 0x80u

enum n6_nor_mode { N6_SPI, N6_DOPI };

struct n6_model {
    /* the NOR: bytes [first, first + size) of its 128 MiB */
    uint32_t first, size;
    uint8_t *mem;
    enum n6_nor_mode mode;
    uint8_t sr, scur, dc; /* status, security, CR2's dummy cycles (0: 20) */
    uint32_t id;
    bool wp_low;                                 /* WP# held low: SRWD locks the status register */
    bool stuck;                                  /* an operation once started never ends: WIP stays */
    uint8_t inject;                              /* P_FAIL or E_FAIL: the next program or erase fails so */
    bool wren_deaf;                              /* write enable does not latch WEL */
    uint32_t worn;                               /* 1 + the address of a byte whose bit 0 stays 1, flagging nothing */
    uint32_t prog_polls, erase_polls, reg_polls; /* status reads that see WIP after each */
    uint32_t reset_recovery;                     /* commands ignored after a reset */
    uint32_t wip, recovering;
    bool rsten;
    int pend; /* the operation WIP is for: 0 none, 1 a program, 2 an erase */
    uint32_t pend_at;
    uint8_t pend_old[N6_MODEL_SECTOR], pend_new[N6_MODEL_SECTOR];
    /* XSPI2 */
    uint32_t cr, dcr1, dcr2, dcr3, dcr4, flags, dlr, ar, ccr, tcr, ir, psmkr, psmar, pir;
    uint32_t xbusy; /* SR reads left with BUSY: a calibration, an abort */
    bool xfer;      /* a command's data phase runs */
    bool x_ok;      /* the NOR takes that command */
    uint8_t xop;
    uint32_t xat, xn, xdone;
    uint8_t xbuf[N6_MODEL_PAGE];
    uint8_t fifo[N6_MODEL_FIFO];
    unsigned fifo_n;
    bool polling, poll_ok, mm_busy;
    /* the M55's D-cache over the modelled window */
    struct dcache_model dcache;
    bool barrier_due;
    /* a power cut at XSPI2's write number cut_at (0: none) */
    uint64_t writes, cut_at;
    bool off;
    void (*on_cut)(void *ctx);
    void *on_cut_ctx;
    uint32_t seed;
    /* violations: what a correct driver never does */
    unsigned wrong_mode;     /* a command in the mode the NOR is not in (resets aside) */
    unsigned bad_phases;     /* a command whose phases are not the NOR's for it, or an unknown one */
    unsigned no_wel;         /* a program, erase or register write without WEL */
    unsigned while_wip;      /* a command but a status read while the NOR works */
    unsigned while_busy;     /* an XSPI2 register written while BUSY */
    unsigned overruns;       /* a word written into a full FIFO, or past DLR */
    unsigned window_outside; /* the window read outside a valid memory-mapped mode */
    unsigned unbarriered;    /* a window read after cache maintenance with no barrier */
    unsigned disabled;       /* a command while XSPI2 is disabled */
    unsigned stray;          /* an access outside the registers, the window's model and the SCB */
    /* what it saw */
    unsigned programs, erases, wrens, resets, status_reads, aborts, foreign_resets, tefs;
    uint32_t last_erase, last_prog, last_prog_len;
};

/* A NOR erased over [first, first + size) (whole sectors), in SPI mode, XSPI2 at reset; the D-cache on
 * or off; the model the access layer uses. */
void n6_model_init(struct n6_model *m, uint32_t first, uint32_t size, bool dcache);
void n6_model_free(struct n6_model *m);
/* Power back on after a cut (an operation still running torn): XSPI2 at reset, the NOR in SPI mode,
 * idle, its volatile bits clear (WEL, P_FAIL, E_FAIL, the dummy cycles), the D-cache empty, the array as
 * the cut left it. */
void n6_model_power_on(struct n6_model *m);
/* What the boot ROM leaves: XSPI2 enabled in memory-mapped mode, its window read (BUSY), and the NOR in
 * octal DTR (octal) or SPI. */
void n6_model_left_by_boot_rom(struct n6_model *m, bool octal);
/* the NOR's [addr, addr + len) programmed to v (old contents) */
void n6_model_fill(struct n6_model *m, uint32_t addr, size_t len, uint8_t v);
/* the CPU reads the NOR's [addr, addr + len) through the window (a mapped read): through the D-cache */
void n6_model_fetch(struct n6_model *m, uint32_t addr, size_t len);
/* every violation counted so far */
unsigned n6_model_violations(const struct n6_model *m);

/* The STM32N6570-DK's flash as its board gives it to the driver: the NOR's 16 MiB from 0x70100000
 * (mota/stm32n6570_dk_layout.h), the host profile's times (4 KiB: 25 ms / 400 ms; a page: 0.15 / 0.75 ms),
 * the D-cache on, ST's BSP's final prescaler (0), on a clock that moves 10 us at every look. */
extern const struct mota_stm32n6_nor_cfg n6_model_dk;

#endif
