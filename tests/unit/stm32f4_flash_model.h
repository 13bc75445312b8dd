/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A register-level model of the STM32F4's flash interface (RM0368 and RM0090
 * "Embedded Flash memory interface"), for the host tests of the F4 flash
 * driver: it implements the driver's access layer (stm32_io.h,
 * MOTA_STM32_IO_MODEL) over an array of the part's size and the registers
 * ACR, KEYR, SR, CR, and does what the part does:
 * - KEYR: KEY1 then KEY2 clears CR.LOCK; any other write there is a bus error
 *   and locks the interface until the next reset; a locked CR takes only LOCK;
 * - CR: PG, SER with SNB, PSIZE, STRT (the erase starts), LOCK; EOPIE;
 * - SR: BSY for a number of reads after a program or an erase starts, EOP (with
 *   EOPIE), OPERR, WRPERR (a write-protected sector), PGAERR (an unaligned
 *   write), PGPERR (a write of another width than PSIZE), PGSERR (a write to
 *   the array without PG, STRT without SER or with PG, a new operation while an
 *   error flag is still set); write one to clear;
 * - the array: a program changes bits from 1 to 0 only (old & new); an erase
 *   sets the sector to 0xFF; a sector's number beyond the part is OPERR; a
 *   worn word may keep a bit at 1 without any flag (only a read back sees it);
 * - ACR: the data cache holds stale lines after an erase until DCRST is set
 *   while DCEN is clear;
 * - a power cut at the Nth write (register or array): a program then leaves
 *   its word half programmed, an erase its sector half erased, and nothing
 *   after it happens until f4_model_power_on.
 * What a correct driver never does is counted as a violation (below).
 */
#ifndef MOTA_TEST_STM32F4_FLASH_MODEL_H
#define MOTA_TEST_STM32F4_FLASH_MODEL_H

#include "mota/port.h"
#include "mota/stm32_flash.h"

#include <stdbool.h>
#include <stdint.h>

struct f4_model {
    /* the part */
    uint32_t base, regs, size;
    unsigned n_regions;
    struct mota_flash_region regions[MOTA_FLASH_MAX_REGIONS];
    uint8_t *mem;
    uint32_t wrp;         /* write-protected sectors (bit n: sector n; OPTCR's nWRP cleared) */
    uint32_t prog_reads;  /* SR reads that see BSY after a word is written */
    uint32_t erase_reads; /* ... after an erase starts */
    bool stuck;           /* BSY never clears (a part that hangs) */
    uint32_t worn;        /* 1 + the array offset of a worn word whose bit 0 stays 1, flagging nothing (0: none) */
    /* its registers */
    uint32_t acr, sr, cr;
    int key_state; /* 1: KEY1 written */
    bool key_locked_out;
    uint32_t busy; /* SR reads left with BSY */
    bool dcache_stale;
    /* a power cut at write number cut_at (0: none) */
    uint64_t writes, cut_at;
    bool off;
    /* called once the cutting write has landed (NULL: none): a harness's longjmps, as the code stops there */
    void (*on_cut)(void *ctx);
    void *on_cut_ctx;
    /* violations: what a correct driver never does */
    unsigned bus_errors;       /* a wrong key sequence, a key written to an unlocked interface */
    unsigned writes_when_busy; /* a register or the array written while BSY */
    unsigned reprogrammed;     /* a word programmed again after its erase */
    unsigned dcrst_enabled;    /* DCRST set while DCEN is set (the reference manual forbids it) */
    /* what it saw */
    unsigned unlocks, erases, programs, error_flags;
};

/* A part of these sectors at base, its registers at regs, erased; the model the access layer uses. */
void f4_model_init(struct f4_model *m, uint32_t base, uint32_t regs, const struct mota_flash_region *regions,
                   unsigned n_regions);
void f4_model_free(struct f4_model *m);
/* Power back on after a cut: registers at their reset values (LOCK set, no flag), the array as the cut
 * left it. */
void f4_model_power_on(struct f4_model *m);
/* the sector holding the array offset off (its number, start and size); false outside */
bool f4_model_sector(const struct f4_model *m, uint32_t off, uint32_t *n, uint32_t *start, uint32_t *size);

/* The NUCLEO-F401RE's flash as its board gives it to the driver (sectors 4 x 16, 64, 3 x 128 KiB with their
 * times, docs/device-profiles.md "Flash"), on a clock that moves 10 us at every look: a bounded wait ends. */
extern const struct mota_stm32f4_flash_cfg f4_model_f401re;

#endif
