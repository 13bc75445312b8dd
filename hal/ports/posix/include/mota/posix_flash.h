/* SPDX-License-Identifier: Apache-2.0 */
/*
 * posix port: a NOR flash simulator, in memory or backed by a file.
 *
 * It enforces what real NOR does (program only erased bytes, aligned
 * programs, whole-sector erases), counts every operation, and injects
 * power cuts:
 *   - cut_before_op = N: the power goes at operation N (program or erase,
 *     counting from 1), before it touches the flash;
 *   - torn: operation N happens halfway (a program writes only the first
 *     half of its prog units, an erase erases only the first half of its
 *     sector and leaves the rest as it was) before the power goes.
 * A power cut is not an error the agent could handle: as on a device, the
 * code that was running never gets control back. The flash calls the
 * harness's on_cut (which unwinds, e.g. longjmp to where the harness
 * "powers the device on" again, as littlefs's and MCUboot's simulators do),
 * or, without one, ends the process with MOTA_POSIX_POWER_CUT_EXIT. It stays
 * without power (any access cuts again) until mota_posix_flash_power_on().
 */
#ifndef MOTA_POSIX_FLASH_H
#define MOTA_POSIX_FLASH_H

#include "mota/port.h"

#include <stdbool.h>
#include <stdint.h>

#define MOTA_POSIX_POWER_CUT_EXIT 4 /* the exit status of a process whose power was cut (mota sim: exit 4) */

struct mota_posix_flash {
    uint8_t *mem;
    uint32_t size, sector_size, prog_size;
    int fd; /* -1 for a memory-only flash */
    bool owns_mem;
    /* counters since creation or the last mota_posix_flash_reset_counters() */
    uint64_t reads, progs, erases, bytes_programmed, bytes_read;
    /* fault injection */
    uint64_t ops;           /* program + erase operations so far */
    uint64_t cut_before_op; /* 0: never */
    bool torn;
    bool dead;                 /* the power is off */
    void (*on_cut)(void *ctx); /* must not return */
    void *on_cut_ctx;
    /* the operation the power was cut at, for diagnostics */
    char cut_kind; /* 'p' program, 'e' erase, 0 none */
    uint32_t cut_off, cut_len;
};

/* In memory: size/sector/prog geometry, erased. */
int mota_posix_flash_init(struct mota_posix_flash *f, uint32_t size, uint32_t sector_size, uint32_t prog_size);

/* Backed by a file (created erased if absent, or opened if its size matches). */
int mota_posix_flash_open(struct mota_posix_flash *f, const char *path, uint32_t size, uint32_t sector_size,
                          uint32_t prog_size);

void mota_posix_flash_close(struct mota_posix_flash *f);

/* The struct mota_flash the agent uses (map gives XIP access at xip_base). */
void mota_posix_flash_hal(struct mota_posix_flash *f, struct mota_flash *hal, uint32_t xip_base);

/* Arm a power cut before program/erase operation number `op` (counting from
 * the next one as 1), optionally torn; 0 disarms. */
void mota_posix_flash_cut(struct mota_posix_flash *f, uint64_t op, bool torn);

/* Who catches a power cut: on_cut(ctx) must not return (longjmp out, or exit). NULL: the process exits. */
void mota_posix_flash_on_cut(struct mota_posix_flash *f, void (*on_cut)(void *ctx), void *ctx);

/* Power restored: the flash works again, counters keep counting. */
void mota_posix_flash_power_on(struct mota_posix_flash *f);

void mota_posix_flash_reset_counters(struct mota_posix_flash *f);

#endif
