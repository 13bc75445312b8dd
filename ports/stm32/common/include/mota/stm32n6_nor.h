/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32N6570-DK's flash as the port contract's struct mota_flash: the Macronix MX66UW1G45G octal NOR
 * (128 MiB, 4 KiB sectors, 256-byte pages) behind the STM32N657's XSPI2 (RM0486 "Extended-SPI interface";
 * ST's XSPI HAL, MX66UW1G45G component and DK BSP in ../shared/stm32/stm32n6 were read for the command
 * codes, phases and sequences, nothing of them is copied). The driver is flash_n6.c; every access goes
 * through stm32_io.h, so that the host tests run it against a model of XSPI2 and the NOR.
 *
 * At rest XSPI2 is in memory-mapped mode with the NOR in octal DTR (DOPI): read copies through the window
 * (0x70000000 + the NOR's address) and map returns window pointers. A program or an erase leaves that
 * mode (ABORT, BUSY awaited), talks to the NOR in indirect mode, and comes back to it before it returns,
 * whatever happened; nothing may read the window meanwhile, no code in place, no interrupt handler (the
 * DK's firmware runs from RAM, and the agent runs no model in place during a flash operation).
 *
 * The NOR as the agent sees it: a plain NOR (flags 0: bits go from 1 to 0, no ECC, no program-once rule),
 * erased value 0xFF, 4 KiB sectors (one region), prog_size 16 (the host profile's; the journal's records
 * are 64), prog_block 256 (a page). prog checks the range reads erased first (MOTA_ERR_FLASH_NOT_ERASED:
 * the contract's "every byte programmed must be erased", not merely "only clears bits"), programs it a
 * page piece at a time (never across a 256-byte page: the NOR would wrap inside the page), each piece
 * with a write enable checked in the status register (WEL), waits for the NOR (WIP, by XSPI2's automatic
 * polling) bounded by twice prog_max_us, checks the security register's P_FAIL, and reads the range back
 * through the window; erase likewise with the 4 KiB sector erase, twice erase_max_us and E_FAIL. When
 * the M55's D-cache caches the window (cfg->dcache), the lines of the changed range are invalidated by
 * address (SCB DCIMVAC) after every program and erase, before the read back: the erased-check left them
 * holding the old bytes. Every wait is bounded (MOTA_ERR_TIMEOUT): a NOR stuck busy is aborted and the
 * operation fails. P_FAIL or E_FAIL, a write enable that does not latch, a read back that differs:
 * MOTA_ERR_FLASH_IO. One operation at a time: the driver is not reentrant.
 */
#ifndef MOTA_STM32N6_NOR_H
#define MOTA_STM32N6_NOR_H

#include "mota/port.h"

#include <stdbool.h>
#include <stdint.h>

#define MOTA_STM32N6_XSPI2_REGS 0x5802A000u   /* XSPI2's registers, the secure alias (the FSBL runs secure) */
#define MOTA_STM32N6_XSPI2_WINDOW 0x70000000u /* its memory-mapped window: the NOR's address 0 */

/* The NOR the agent is given, by the board (docs/device-profiles.md "Flash": the MX66UW1G45G's times). */
struct mota_stm32n6_nor_cfg {
    uint32_t regs;      /* MOTA_STM32N6_XSPI2_REGS */
    uint32_t window;    /* MOTA_STM32N6_XSPI2_WINDOW */
    uint32_t base;      /* CPU address of the driver's offset 0 inside the window, on a 4 KiB sector */
    uint32_t size;      /* bytes, whole 4 KiB sectors, inside the NOR's 128 MiB */
    uint32_t prescaler; /* DCR2.PRESCALER: XSPI2's kernel clock / (prescaler + 1) on the wires (0..255); init's
                         * SPI commands run at it too: 50 MHz or less there (ST's board support starts at 50) */
    bool dcache;        /* the M55's D-cache caches the window: invalidated by address after each change */
    uint32_t erase_typ_us, erase_max_us; /* one 4 KiB sector */
    uint32_t prog_typ_us, prog_max_us;   /* one 256-byte page */
    /* a microsecond clock: every wait is bounded by it */
    uint64_t (*now_us)(void *ctx);
    void *clock_ctx;
};

/*
 * f: the flash the agent is given, [base, base + size); cfg must outlive it (it is f's ctx). The board has
 * turned on XSPI2's clocks, its pins and the VDDIO3 supply; init then, in order:
 *  1. stops whatever XSPI2 was doing (the boot ROM leaves it memory-mapped: ABORT, BUSY awaited) and
 *     disables it;
 *  2. configures it: DCR1 memory type Macronix (the octal DTR byte order), device size 128 MiB (DEVSIZE
 *     26), chip-select high time 2 cycles, clock mode 0; DCR2 the prescaler (and awaits the calibration
 *     it starts: BUSY); DCR3, DCR4 0 (no boundary, no refresh); CR: FIFO threshold 4 bytes, one memory
 *     on IO[7:0] and nCS1 (DMM, MSEL, CSSEL 0); enables it;
 *  3. resets the NOR in each form it may be listening in, reset-enable then reset: SPI (0x66, 0x99),
 *     octal STR and octal DTR (0x6699, 0x9966), after which it is in SPI mode;
 *  4. reads its JEDEC ID in SPI (0x9F) until it answers, up to twice the 100 ms a reset during an erase
 *     takes: anything but an MX66UW1G45G (C2 80 3B) is MOTA_ERR_FLASH_IO;
 *  5. in SPI, its protection: a NOR in the individual block protection mode (the security register's
 *     WPSEL, one-time programmable) is refused (MOTA_ERR_FLASH_IO); block protection bits (BP) set in
 *     the status register are cleared with a write enable and a write status register (the driver does
 *     not decode which blocks they cover: any is cleared), and if they stay set (SRWD with WP# held low)
 *     init fails with MOTA_ERR_FLASH_IO, for programs and erases would;
 *  6. switches it to octal DTR: write enable, configuration register 2 at 0x300 = 20 dummy cycles, write
 *     enable, configuration register 2 at 0 = DOPI; waits the register write's 40 ms, then WIP in octal
 *     DTR; reads configuration register 2 back (DOPI, or MOTA_ERR_FLASH_IO);
 *  7. puts XSPI2 in memory-mapped mode with the octal DTR read (0xEE11, 4 address bytes, 20 dummy cycles,
 *     DQS).
 * MOTA_OK; MOTA_ERR_ARG for a configuration the driver cannot serve (a range outside the NOR or not on
 * sectors, no clock, a prescaler over 255); MOTA_ERR_FLASH_IO or MOTA_ERR_TIMEOUT (XSPI2 or the NOR
 * did not answer in time) as above, f then untouched.
 */
int mota_stm32n6_nor_init(struct mota_flash *f, const struct mota_stm32n6_nor_cfg *cfg);

#endif /* MOTA_STM32N6_NOR_H */
