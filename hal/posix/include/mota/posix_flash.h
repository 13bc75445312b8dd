/*
 * posix port: a NOR flash simulator, in memory or backed by a file.
 *
 * It enforces what real NOR does (program only erased bytes, aligned
 * programs, whole-sector erases), counts every operation, and injects
 * faults for power-loss testing:
 *   - cut_before_op = N: operation N (counting reads excluded, from 1) and
 *     every later one fail with MOTA_ERR_POWER_LOST without touching flash;
 *   - torn: operation N happens halfway (a program writes only the first
 *     half of its prog units, an erase erases only the first half of its
 *     sector and leaves the rest as it was) before the power is lost.
 * After a fault the simulator stays "dead" until mota_posix_flash_power_on().
 */
#ifndef MOTA_POSIX_FLASH_H
#define MOTA_POSIX_FLASH_H

#include "mota/hal.h"

#include <stdbool.h>
#include <stdint.h>

struct mota_posix_flash {
    uint8_t *mem;
    uint32_t size, sector_size, prog_size;
    int fd;                 /* -1 for a memory-only flash */
    bool owns_mem;
    /* counters since creation or the last mota_posix_flash_reset_counters() */
    uint64_t reads, progs, erases, bytes_programmed, bytes_read;
    /* fault injection */
    uint64_t ops;           /* program + erase operations so far */
    uint64_t cut_before_op; /* 0: never */
    bool torn;
    bool dead;
    /* the operation the power was cut at, for diagnostics */
    char cut_kind;          /* 'p' program, 'e' erase, 0 none */
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

/* Power restored: the flash works again, counters keep counting. */
void mota_posix_flash_power_on(struct mota_posix_flash *f);

void mota_posix_flash_reset_counters(struct mota_posix_flash *f);

#endif
