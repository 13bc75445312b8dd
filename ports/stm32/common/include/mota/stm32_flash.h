/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32F4's embedded flash (RM0368 for the F401, RM0090 for the F405:
 * "Embedded Flash memory interface") as the port contract's struct
 * mota_flash: one bank of mixed sectors (16, 64, 128 KiB), programmed a
 * word at a time (PSIZE x32: a 2.7 to 3.6 V supply), bits from 1 to 0 only,
 * no ECC; while it programs or erases, no code runs from it (the CPU stalls
 * on its next fetch: MOTA_FLASH_STALLS_CPU).
 *
 * Every program and erase is durable when the call returns: BSY clear, no
 * error flag, the programmed words read back; the interface is locked again
 * after each, and the ART's caches are flushed after an erase (a stale line
 * would show the old bytes through map).
 */
#ifndef MOTA_STM32_FLASH_H
#define MOTA_STM32_FLASH_H

#include "mota/port.h"

#include <stdint.h>

#define MOTA_STM32F4_FLASH_BASE 0x08000000u /* the array's CPU address */
#define MOTA_STM32F4_FLASH_REGS 0x40023C00u /* the flash interface's registers */

/* The part's flash, given by the board (its sectors and their times: docs/device-profiles.md "Flash"). */
struct mota_stm32f4_flash_cfg {
    uint32_t base, regs; /* MOTA_STM32F4_FLASH_BASE, _REGS */
    uint8_t n_regions;
    struct mota_flash_region regions[MOTA_FLASH_MAX_REGIONS]; /* from sector 0 */
    uint32_t prog_typ_us, prog_max_us;                        /* one word */
    /* a microsecond clock: every wait for the interface is bounded by twice the part's longest time */
    uint64_t (*now_us)(void *ctx);
    void *clock_ctx;
};

/* f: the flash the agent is given, over the part's whole array; cfg must outlive it (it is f's ctx).
 * MOTA_OK, or MOTA_ERR_ARG for a configuration the driver cannot serve. */
int mota_stm32f4_flash_init(struct mota_flash *f, const struct mota_stm32f4_flash_cfg *cfg);

#endif /* MOTA_STM32_FLASH_H */
