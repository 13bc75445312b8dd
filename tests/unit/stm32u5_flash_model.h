/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A register-level model of the STM32U5's flash interface and its ICACHE (RM0456 "Embedded flash
 * memory", "Instruction cache"), for the host tests of the U5 flash driver: it implements the driver's
 * access layer (stm32_io.h, MOTA_STM32_IO_MODEL) over the U585's 2 MiB at 0x08000000 (two banks of 128
 * pages of 8 KiB, quad-words of 16 bytes) and the registers NSKEYR, NSSR, NSCR, ECCR, ICACHE_CR, _SR,
 * _FCR, and does what the part does (TrustZone disabled: the non-secure registers drive it all):
 * - NSKEYR: KEY1 then KEY2 clears NSCR.LOCK; any other write there, or a key to an unlocked interface,
 *   is a bus error, and a wrong key locks the interface until the next reset; a locked NSCR takes nothing;
 * - NSCR: PG, PER with PNB and BKER, MER1, MER2, STRT (the erase starts), EOPIE, LOCK;
 * - NSSR: BSY for a number of reads after a program or an erase starts, WDW while a quad-word has 1 to 3
 *   of its words, EOP (with EOPIE), and the errors: PGAERR (a word not next in its quad-word, or a
 *   quad-word not started on its 16-byte boundary), PGSERR (an array write without PG or with PER or
 *   MER, STRT without PER or MER, PG and PER together, an operation while an error flag is set),
 *   PROGERR (a quad-word programmed again before its erase), WRPERR (a write-protected page); OPERR,
 *   SIZERR and OPTWERR only when injected (the access layer writes 32-bit words only, and the driver
 *   writes no option byte); write one to clear;
 * - the array: a quad-word takes its program when its fourth word arrives, once per erase; a torn
 *   quad-word (a program cut short, or injected) and every quad-word of a page whose erase was cut short
 *   fail their ECC check: a read of them by the CPU (mota_stm32_io_copy, u5_model_fetch) sets ECCR.ECCD
 *   with ADDR_ECC and BK_ECC and takes the NMI, which calls mota_stm32u5_flash_nmi as the family's
 *   handler does (declined: a fault). Reads through map (mota_stm32_io_mem) are not checked: the host
 *   cannot see them, and on the part they would be the firmware's fault;
 * - ECCR: ECCC and ECCD write one to clear, ECCIE kept;
 * - the ICACHE (when given): every flash line (16 bytes) the CPU reads while EN is set is held until
 *   CACHEINV (an unlimited cache: the worst case), and what the CPU sees (map, reads) is the held line
 *   even when the array changed under it; CACHEINV empties it, with BUSYF for a few SR reads; EN off
 *   bypasses (and here empties) it;
 * - a power cut at the Nth write (register or array): a quad-word whose fourth word it is torn, one
 *   with fewer words lost (still erased), a page whose STRT it is torn, and nothing after it happens
 *   until u5_model_power_on.
 * What a correct driver never does is counted as a violation (below).
 */
#ifndef MOTA_TEST_STM32U5_FLASH_MODEL_H
#define MOTA_TEST_STM32U5_FLASH_MODEL_H

#include "mota/stm32_flash.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define U5_MODEL_BASE 0x08000000u
#define U5_MODEL_SIZE (2u * 1024 * 1024)
#define U5_MODEL_PAGE 8192u
#define U5_MODEL_PAGES (U5_MODEL_SIZE / U5_MODEL_PAGE)
#define U5_MODEL_QW 16u

enum u5_qw_state { U5_QW_ERASED, U5_QW_PROGRAMMED, U5_QW_TORN };

struct u5_model {
    /* the part (offsets below: from U5_MODEL_BASE) */
    uint32_t regs, icache;       /* its registers' addresses (icache 0: none) */
    uint8_t *mem;                /* the array as programmed */
    uint8_t *view;               /* what the CPU reads: the array, or the ICACHE's line where it holds one */
    uint8_t *qw;                 /* each quad-word's enum u5_qw_state */
    uint8_t *cached;             /* each quad-word's line held by the ICACHE */
    uint8_t wrp[U5_MODEL_PAGES]; /* write-protected pages (bank * 128 + number; the WRP areas) */
    uint32_t prog_reads;         /* NSSR reads that see BSY after a quad-word's program starts */
    uint32_t erase_reads;        /* ... after an erase starts */
    uint32_t icache_reads;       /* ICACHE_SR reads that see BUSYF after CACHEINV */
    bool stuck;                  /* BSY never clears (a part that hangs) */
    uint32_t worn;               /* 1 + the offset of a quad-word whose program does not take (two bits stay 1: a double
                      * ECC error), flagging nothing (0: none) */
    uint32_t single;             /* 1 + the offset of a quad-word with a single error the ECC corrects (ECCC) */
    uint32_t inject;             /* NSSR error flags the next program or erase raises instead of happening */
    /* its registers */
    uint32_t nssr, nscr, eccr, icache_cr, icache_sr;
    int key_state; /* 1: KEY1 written */
    bool key_locked_out;
    uint32_t busy, icache_busy; /* SR reads left with BSY, BUSYF */
    uint32_t wbuf[4], wqw;      /* the quad-word being written: its words and its offset */
    unsigned wcount;            /* its words so far (WDW while 1 to 3) */
    bool irq_masked;
    uint32_t seed; /* what a torn unit holds */
    /* a power cut at write number cut_at (0: none) */
    uint64_t writes, cut_at;
    bool off;
    /* violations: what a correct driver never does */
    unsigned bus_errors;         /* a wrong key sequence, a key written to an unlocked interface */
    unsigned writes_when_busy;   /* a flash register or the array written while BSY */
    unsigned reprogrammed;       /* a quad-word programmed again after its erase (PROGERR) */
    unsigned unmasked_writes;    /* a word of a quad-word written with interrupts enabled */
    unsigned partial_quad_words; /* NSCR written while a quad-word had only some of its words (WDW) */
    unsigned faults;             /* an ECC NMI the driver's hook declined: a fault of the firmware */
    unsigned stray;              /* an access outside the array and the registers given */
    /* what it saw */
    unsigned unlocks, erases, programs, error_flags, nmis, invalidations, irq_offs;
    /* called once the write that cuts the power has landed (NULL: none): a test unwinds from there */
    void (*on_cut)(void *ctx);
    void *on_cut_ctx;
    int last_page; /* the last page erased, bank * 128 + number (-1: none) */
};

/* A part, erased, with the flash interface's registers at regs and the ICACHE's at icache (0: none);
 * the model the access layer uses. */
void u5_model_init(struct u5_model *m, uint32_t regs, uint32_t icache);
void u5_model_free(struct u5_model *m);
/* Power back on after a cut: registers at their reset values (LOCK set, no flag), the ICACHE empty and
 * enabled (as the board's start-up leaves it), the array as the cut left it. */
void u5_model_power_on(struct u5_model *m);
/* [off, off + len) programmed with v (the page's old contents; whole quad-words) */
void u5_model_fill(struct u5_model *m, uint32_t off, size_t len, uint8_t v);
/* the quad-word holding off torn (an injected ECC error; out of the ICACHE, so that the CPU reads it from
 * the array): its reads are ECC double errors until its page is erased */
void u5_model_tear(struct u5_model *m, uint32_t off);
/* The CPU reads [off, off + len) through map or runs it in place: through the ICACHE and the ECC check,
 * outside any driver read. */
void u5_model_fetch(struct u5_model *m, uint32_t off, size_t len);
/* lines the ICACHE holds whose bytes the array no longer has */
unsigned u5_model_stale(const struct u5_model *m);

/* The B-U585I-IOT02A's flash as its board gives it to the driver: bank 2 (mota/b_u585i_iot02a_layout.h),
 * the profile's erase times (a quad-word's are not in the sources), on a clock that moves 10 us at every
 * look: a bounded wait ends. */
extern const struct mota_stm32u5_flash_cfg u5_model_bank2;

#endif
