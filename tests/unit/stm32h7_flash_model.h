/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A register-level model of the STM32H747's flash interface (RM0399 "Embedded flash memory") and of the
 * Cortex-M7's D-cache over its array (dcache_model.h), for the host tests of the H7 flash driver: it
 * implements the driver's access layer (stm32_io.h, MOTA_STM32_IO_MODEL) over the H747's 2 MiB at
 * 0x08000000 (two banks of 8 sectors of 128 KiB, flash words of 32 bytes), each bank's KEYR, CR, SR,
 * CCR and ECC_FAR (bank 2's 0x100 further), and SCB's cache maintenance registers, and does what the
 * part does:
 * - KEYRx: KEY1 then KEY2 clears the bank's CR.LOCK; any other write there, or a key to an unlocked bank,
 *   is a bus error, and a wrong key locks the bank until the next reset; a locked CR takes nothing;
 * - CRx: PG, SER with SNB, BER, PSIZE, START (the erase starts), LOCK; a reserved bit written is counted;
 * - SRx: QW for a number of reads after a flash word's program or an erase starts, BSY too after the first
 *   (the operation queued before the bank is busy with it), WBNE while the
 *   write buffer holds 1 to 7 of a flash word's 8 words, EOP, and the errors: PGSERR (an array write
 *   without PG, with SER or BER, or while an error flag is set; START without SER or BER, or with PG),
 *   INCERR (a word of another flash word while the buffer holds part of one), STRBERR (a word of the
 *   buffer written twice), WRPERR (a write-protected sector); OPERR only when injected; SR is read only
 *   (a write to it is counted: flags are cleared by writing one to CCRx);
 * - the array: a flash word takes its program when its eighth word reaches the buffer; a second program
 *   before its erase garbles its ECC bits (the RM forbids it; the part flags nothing: the worst case), a
 *   torn flash word (a program cut short, or injected) and every word of a sector whose erase was cut
 *   short fail their ECC check: a read of them by the CPU (mota_stm32_io_copy, h7_model_fetch) sets the
 *   bank's SR.DBECCERR and ECC_FAR (which keeps the first error's word while SNECCERR or DBECCERR is
 *   set) and takes the bus fault, which calls
 *   mota_stm32h7_flash_bus_fault with BFAR as the family's handler does (declined: a fault); a word with
 *   an injected single error sets SNECCERR and ECC_FAR and reads right. Reads through map
 *   (mota_stm32_io_mem) are not checked: the host cannot see them;
 * - the D-cache (the M7's over the whole array, when enabled): every line the CPU loads is held until
 *   invalidated by address (DCIMVAC, DCCIMVAC), and what the CPU sees (map, reads) is the held line even
 *   when the array changed under it; a torn word's line is never filled. SCB writes are not counted as
 *   writes (a power cut there is one after the flash's last write);
 * - a power cut at the Nth write (flash register or array): a flash word whose eighth word it is torn, one
 *   with fewer words lost (still erased), a sector whose START it is torn, and nothing after it happens
 *   until h7_model_power_on.
 * What a correct driver never does is counted as a violation (below).
 */
#ifndef MOTA_TEST_STM32H7_FLASH_MODEL_H
#define MOTA_TEST_STM32H7_FLASH_MODEL_H

#include "dcache_model.h"
#include "mota/stm32_flash.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H7_MODEL_BASE 0x08000000u
#define H7_MODEL_SIZE (2u * 1024 * 1024)
#define H7_MODEL_BANK (1024u * 1024)
#define H7_MODEL_SECTOR (128u * 1024)
#define H7_MODEL_SECTORS (H7_MODEL_SIZE / H7_MODEL_SECTOR)
#define H7_MODEL_WORD 32u

enum h7_word_state { H7_WORD_ERASED, H7_WORD_PROGRAMMED, H7_WORD_TORN };

/* one bank's registers and write buffer */
struct h7_bank {
    uint32_t sr, cr, ecc_far;
    int key_state; /* 1: KEY1 written */
    bool key_locked_out;
    uint32_t busy;       /* SR reads left with QW (and BSY after the first) */
    bool queued;         /* the next SR read is the operation's first: QW alone */
    uint32_t wbuf[8];    /* the write buffer: its words, */
    uint32_t wword;      /* the offset of the flash word they are for, */
    uint8_t wmask;       /* and which of them were written (WBNE while some) */
    unsigned programs;   /* flash words programmed in the bank */
    unsigned erases;     /* sector or bank erases */
    unsigned unlocks;    /* key sequences that unlocked it */
    unsigned last_psize; /* CR.PSIZE of its last operation */
};

struct h7_model {
    /* the part (offsets below: from H7_MODEL_BASE) */
    uint32_t regs;                 /* its registers' address */
    uint8_t *mem;                  /* the array as programmed */
    uint8_t *word;                 /* each flash word's enum h7_word_state */
    struct dcache_model dc;        /* the M7's D-cache over the array (dc.enabled: the board's) */
    uint8_t wrp[H7_MODEL_SECTORS]; /* write-protected sectors (bank * 8 + number) */
    uint32_t prog_reads;           /* SR reads that see QW after a flash word's program starts */
    uint32_t erase_reads;          /* ... after an erase starts */
    bool stuck;                    /* BSY never clears (a part that hangs) */
    uint32_t worn;     /* 1 + the offset of a flash word whose program does not take (a double ECC error) (0: none) */
    uint32_t single;   /* 1 + the offset of a flash word with a single error the ECC corrects */
    uint32_t inject;   /* SR error flags the next program or erase raises instead of happening */
    bool bfar_invalid; /* the bus faults' BFAR is not valid: the hook is given 0 */
    uint32_t interrupt_load; /* 1 + the offset an interrupt handler loads during the next driver copy (0: none) */
    struct h7_bank bank[2];
    uint32_t seed; /* what a torn unit holds */
    /* a power cut at write number cut_at (0: none) */
    uint64_t writes, cut_at;
    bool off;
    /* violations: what a correct driver never does */
    unsigned bus_errors;       /* a wrong key sequence, a key written to an unlocked bank */
    unsigned writes_when_busy; /* a flash register or the array written while BSY */
    unsigned reprogrammed;     /* a flash word programmed again after its erase */
    unsigned partial_words;    /* PG cleared while the write buffer held part of a flash word (dropped) */
    unsigned sr_writes;        /* SR written (read only: flags are cleared through CCR) */
    unsigned reserved_bits;    /* a CR write setting a reserved bit (11 to 14, 20, 29 to 31) */
    unsigned faults;           /* a bus fault the driver's hook declined: a fault of the firmware */
    unsigned stray;            /* an access outside the array, the registers and SCB's cache maintenance */
    bool unsynced;             /* cache maintenance written and no barrier since */
    bool pg_unordered;         /* PG set in a CR (Device memory) and no barrier since: the array's stores
                                * (Normal memory) may reach the part before it (ST's HAL: ISB, DSB) */
    unsigned unordered;        /* an array write while PG's CR write may not have landed */
    /* what it saw */
    unsigned erases, programs, error_flags, bus_faults, barriers, array_writes;
    /* called once the write that cuts the power has landed (NULL: none): a test unwinds from there */
    void (*on_cut)(void *ctx);
    void *on_cut_ctx;
    int last_sector; /* the last sector erased, bank * 8 + number (-1: none) */
};

/* A part, erased, with the flash interface's registers at regs, its D-cache enabled or not; the model
 * the access layer uses. */
void h7_model_init(struct h7_model *m, uint32_t regs, bool dcache);
void h7_model_free(struct h7_model *m);
/* Power back on after a cut: registers at their reset values (LOCK set, PSIZE x64, no flag), the D-cache
 * empty (enabled as the board's start-up leaves it), the array as the cut left it. */
void h7_model_power_on(struct h7_model *m);
/* [off, off + len) programmed with v (the sector's old contents; whole flash words) */
void h7_model_fill(struct h7_model *m, uint32_t off, size_t len, uint8_t v);
/* the flash word holding off torn (an injected ECC error; out of the D-cache, so that the CPU reads it
 * from the array): its reads are ECC double errors until its sector is erased */
void h7_model_tear(struct h7_model *m, uint32_t off);
/* The CPU reads [off, off + len) through map or runs it in place: through the D-cache and the ECC check,
 * outside any driver read. */
void h7_model_fetch(struct h7_model *m, uint32_t off, size_t len);
/* lines the D-cache holds whose bytes the array no longer has */
unsigned h7_model_stale(const struct h7_model *m);
/* what a correct driver never does, all counted (the interface unlocked, cache maintenance without a
 * barrier, a stale line: at rest) */
unsigned h7_model_violations(const struct h7_model *m);

/* The STM32H747I-DISCO's flash as its board gives it to the driver: the whole array
 * (mota/stm32h747i_disco_layout.h), the D-cache on, the profile's times (H7_BANK2: a sector 1.1 s typical,
 * 4 s at most; a flash word 130 us), on a clock that moves 10 us at every look: a bounded wait ends. */
extern const struct mota_stm32h7_flash_cfg h7_model_disco;

#endif
