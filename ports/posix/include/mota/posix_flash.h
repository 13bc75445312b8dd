/* SPDX-License-Identifier: Apache-2.0 */
/*
 * posix port: a flash simulator, in memory or backed by a file, that behaves like the part it is
 * told it is (struct mota_posix_flash_part: a profile's flash, docs/device-profiles.md).
 *
 * It enforces what the part does: programs of whole units over erased bytes only, whole-sector
 * erases on sectors of the part's sizes; on ECC flash (MOTA_FLASH_PROGRAM_ONCE) one program per
 * unit and erase, even of erased bytes (MOTA_ERR_FLASH_PROGRAMMED), and a unit torn by a power cut
 * reads as MOTA_ERR_FLASH_ECC until its sector is erased (map refuses a range holding one). With a
 * timing (typ, max) each erase and program takes the part's time; `busy` is set meanwhile, for a
 * receiver that loses bytes while a single-bank part stalls the CPU. It counts every operation,
 * and injects power cuts:
 *   - cut_before_op = N: the power goes at operation N (program or erase,
 *     counting from 1), before it touches the flash;
 *   - torn: operation N happens halfway (a program writes only the first
 *     half of its prog units, the last of them torn on ECC flash; an erase erases only the first half
 *     of its sector and leaves the rest as it was, all of it unreadable on ECC flash) before the power
 *     goes.
 * A power cut is not an error the agent could handle: as on a device, the
 * code that was running never gets control back. The flash calls the
 * harness's on_cut (which unwinds, e.g. longjmp to where the harness
 * "powers the device on" again, as littlefs's and MCUboot's simulators do),
 * or, without one, ends the process with MOTA_POSIX_POWER_CUT_EXIT. It stays
 * without power (any access cuts again) until mota_posix_flash_power_on().
 * A file-backed ECC flash keeps its units' state beside it (PATH.units), so that a restarted
 * simulator sees what a power cut tore.
 */
#ifndef MOTA_POSIX_FLASH_H
#define MOTA_POSIX_FLASH_H

#include "mota/port.h"

#include <stdbool.h>
#include <stdint.h>

#define MOTA_POSIX_POWER_CUT_EXIT 4 /* the exit status of a process whose power was cut (mota sim: exit 4) */

/* The part: the fields of struct mota_flash that describe it (size is the regions' sum). */
struct mota_posix_flash_part {
    uint32_t prog_size;
    uint8_t flags; /* enum mota_flash_flags */
    uint8_t n_regions;
    struct mota_flash_region regions[MOTA_FLASH_MAX_REGIONS];
    uint32_t prog_block, prog_typ_us, prog_max_us;
};

/* How long operations take: not at all (tests), the part's typical or its maximum times. */
enum mota_posix_flash_timing { MOTA_POSIX_TIMING_NONE = 0, MOTA_POSIX_TIMING_TYP, MOTA_POSIX_TIMING_MAX };

struct mota_posix_flash {
    uint8_t *mem;
    uint32_t size, prog_size;
    struct mota_posix_flash_part part;
    uint8_t *units;   /* ECC flash: each program unit's state (erased, programmed, torn); else NULL */
    int fd, units_fd; /* -1 for a memory-only flash */
    bool owns_mem;
    enum mota_posix_flash_timing timing;
    int busy;         /* an erase or program is taking its time (set and read with __atomic builtins) */
    uint64_t busy_us; /* time spent so */
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

/* A part of one sector size, NOR, no timings: size/sector/prog. */
struct mota_posix_flash_part mota_posix_flash_uniform(uint32_t size, uint32_t sector_size, uint32_t prog_size);

/* In memory, erased. */
int mota_posix_flash_init(struct mota_posix_flash *f, const struct mota_posix_flash_part *part);

/* Backed by a file (created erased if absent, or opened if its size matches). */
int mota_posix_flash_open(struct mota_posix_flash *f, const char *path, const struct mota_posix_flash_part *part);

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

/* The time an erase of the sector at off, or a program of len bytes, takes with timing t (us). */
uint32_t mota_posix_flash_erase_us(const struct mota_posix_flash_part *p, uint32_t off, enum mota_posix_flash_timing t);
uint64_t mota_posix_flash_prog_us(const struct mota_posix_flash_part *p, uint64_t len, enum mota_posix_flash_timing t);

#endif
