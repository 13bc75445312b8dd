/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32 parts' embedded flash as the port contract's struct mota_flash,
 * a driver for each series: the F4's (flash_f4.c), the U5's (flash_u5.c) and the H7's (flash_h7.c).
 *
 * The STM32F4 (RM0368 for the F401, RM0090 for the F405: "Embedded Flash
 * memory interface"): one bank of mixed sectors (16, 64, 128 KiB), programmed
 * a word at a time (PSIZE x32: a 2.7 to 3.6 V supply), bits from 1 to 0 only,
 * no ECC; while it programs or erases, no code runs from it (the CPU stalls
 * on its next fetch: MOTA_FLASH_STALLS_CPU).
 *
 * Every F4 program and erase is durable when the call returns: BSY clear, no
 * error flag, the programmed words read back; the interface is locked again
 * after each, and the ART's caches are flushed after an erase (a stale line
 * would show the old bytes through map).
 */
#ifndef MOTA_STM32_FLASH_H
#define MOTA_STM32_FLASH_H

#include "mota/port.h"

#include <stdbool.h>
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

/*
 * The STM32U5 (RM0456 "Embedded flash memory"; the U585: 2 MiB in two banks of 128 pages of 8 KiB at
 * 0x08000000, bank 2 from 0x08100000, SWAP_BANK clear as shipped): programmed a quad-word (16 bytes) at
 * a time with 9 ECC bits, once per erase (MOTA_FLASH_PROGRAM_ONCE: even a quad-word of 0xFF takes its
 * ECC bits); a quad-word or page torn by a power cut fails its ECC check, a double error (ECCR.ECCD)
 * that raises an NMI. With TrustZone disabled (TZEN=0) the non-secure registers (NSKEYR, NSSR, NSCR)
 * drive the whole array. Dual bank: code runs from one bank while the other programs or erases; a
 * range in the bank the firmware runs from stalls it, and the board then adds MOTA_FLASH_STALLS_CPU.
 *
 * Every program and erase is durable when the call returns (BSY and WDW clear, no error flag, the
 * programmed quad-words read back through the ECC check), the interface is locked again after each,
 * and the ICACHE, which holds the flash's lines for data reads as well as code, is invalidated after
 * each when enabled (a stale line would show the old bytes through read and map, and to code run in place).
 * read reports a torn quad-word as MOTA_ERR_FLASH_ECC: the NMI its double error raises is the
 * driver's while a read runs (mota_stm32u5_flash_nmi). One operation at a time: the driver is not
 * reentrant (the NMI hook's state is static).
 */
#define MOTA_STM32U5_FLASH_BASE 0x08000000u  /* the array's CPU address */
#define MOTA_STM32U5_FLASH_REGS 0x40022000u  /* the flash interface's registers (non-secure alias) */
#define MOTA_STM32U5_ICACHE_REGS 0x40030400u /* the instruction cache's registers (non-secure alias) */

/* The part's flash the agent is given, by the board (docs/device-profiles.md "Flash"). */
struct mota_stm32u5_flash_cfg {
    uint32_t base; /* CPU address of the driver's offset 0: the array's start + a page's, e.g. 0x08100000 for bank 2 */
    uint32_t size; /* bytes, whole 8 KiB pages, inside the part's 2 MiB (the range may span both banks) */
    uint32_t regs; /* MOTA_STM32U5_FLASH_REGS */
    uint32_t icache; /* MOTA_STM32U5_ICACHE_REGS: invalidated after each operation if enabled; 0: none */
    uint32_t erase_typ_us, erase_max_us; /* one page */
    uint32_t prog_typ_us, prog_max_us;   /* one quad-word */
    /* a microsecond clock: every wait for the interface is bounded by twice the part's longest time */
    uint64_t (*now_us)(void *ctx);
    void *clock_ctx;
};

/* f: the flash the agent is given, [base, base + size); cfg must outlive it (it is f's ctx).
 * MOTA_OK, or MOTA_ERR_ARG for a range that is not whole pages of the part, or no clock. */
int mota_stm32u5_flash_init(struct mota_flash *f, const struct mota_stm32u5_flash_cfg *cfg);

/* The family's NMI handler calls it first. true: an ECC double error in the range a driver read is
 * copying, now recorded (that read returns MOTA_ERR_FLASH_ECC) and ECCR.ECCD cleared: the NMI returns.
 * false: not the driver's (no read runs, or the error lies elsewhere): the family handles it as a fault. */
bool mota_stm32u5_flash_nmi(void);

/*
 * The STM32H747 (RM0399 "Embedded flash memory"; the H747XI: 2 MiB in two banks of 8 sectors of 128 KiB
 * at 0x08000000, bank 2 from 0x08100000, SWAP_BANK clear as shipped), each bank driven through its own
 * registers (KEYR1, CR1, SR1, CCR1, ECC_FA1R; bank 2's at +0x100): programmed a 256-bit flash word (32
 * bytes) at a time with 10 ECC bits, once per erase (MOTA_FLASH_PROGRAM_ONCE); a word or a sector torn by
 * a power cut fails its ECC check, a double error (the bank's SR.DBECCERR, its word in ECC_FAxR) that
 * the CPU takes as a bus fault. Dual bank: the firmware runs from one bank while the other programs or
 * erases; a range in the bank the firmware runs from stalls it.
 *
 * Every program and erase is durable when the call returns (QW, BSY and WBNE clear, no error flag, the
 * programmed words read back through the ECC check), the interface is locked again after each, and when
 * the Cortex-M7's D-cache caches the flash, the lines of the range changed are invalidated by address
 * (SCB DCIMVAC) after each, and the I-cache whole (a stale line would show the old bytes through read and
 * map, and to code run in place). read reports a torn flash word as MOTA_ERR_FLASH_ECC: the bus fault its
 * double error raises is the driver's while a read runs (mota_stm32h7_flash_bus_fault). One operation at
 * a time: the driver is not reentrant (the hook's state is static).
 */
#define MOTA_STM32H7_FLASH_BASE 0x08000000u /* the array's CPU address */
#define MOTA_STM32H7_FLASH_REGS 0x52002000u /* the flash interface's registers */

/* The part's flash the agent is given, by the board (docs/device-profiles.md "Flash"). */
struct mota_stm32h7_flash_cfg {
    uint32_t base; /* CPU address of the driver's offset 0: MOTA_STM32H7_FLASH_BASE + a sector's */
    uint32_t size; /* bytes, whole 128 KiB sectors inside the part's 2 MiB (the range may span both banks) */
    uint32_t regs; /* MOTA_STM32H7_FLASH_REGS */
    bool dcache;   /* the Cortex-M7's D-cache is on and caches the flash: its lines invalidated after each change */
    uint32_t erase_typ_us, erase_max_us; /* one sector */
    uint32_t prog_typ_us, prog_max_us;   /* one flash word */
    /* a microsecond clock: every wait for the interface is bounded by twice the part's longest time */
    uint64_t (*now_us)(void *ctx);
    void *clock_ctx;
};

/* f: the flash the agent is given, [base, base + size); cfg must outlive it (it is f's ctx).
 * MOTA_OK, or MOTA_ERR_ARG for a range that is not whole sectors of the part, or no clock. */
int mota_stm32h7_flash_init(struct mota_flash *f, const struct mota_stm32h7_flash_cfg *cfg);

/* The family's BusFault handler calls it first, with BFAR (0 when BFAR is not valid). true: a double ECC
 * error (the bank's SR.DBECCERR, ECC_FAxR) in the range a driver read is copying, now recorded (that
 * read returns MOTA_ERR_FLASH_ECC) and the flag cleared through CCR: the handler skips the faulting load
 * and returns. false: not the driver's (no read runs, or the error lies elsewhere): a fault of the
 * firmware. */
bool mota_stm32h7_flash_bus_fault(uint32_t addr);

#endif /* MOTA_STM32_FLASH_H */
