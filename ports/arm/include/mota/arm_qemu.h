/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a board running on QEMU shares, whatever its family (the MPS boards,
 * an STM32 port on QEMU's STM32F405 machine): the launcher's side of the board
 * (`mota sim --target`, host_tool/src/sim/cmd_board.c). Through Arm
 * semihosting it reads the launcher's arguments, writes the log (QEMU's
 * stderr, which the launcher reads for the board's last words), and keeps
 * the emulated flash in a file on the host. A real board has none of this
 * (ports/arm/arm.cmake: mota_arm_qemu_sources).
 */
#ifndef MOTA_ARM_QEMU_H
#define MOTA_ARM_QEMU_H

#include "mota/agent.h"
#include "mota/port.h"

#include <stdbool.h>
#include <stdint.h>

/* The launcher's arguments, the semihosting command line: "mota-BOARD flash=F reset=CAUSE [cut=N] [torn]
 * [hang-on-trial] [measure-stack] [fault=PC:ADDR:CFSR] [flash-timing=typ|max] [flash-ecc]" */
struct mota_qemu_args {
    const char *flash;
    uint32_t flash_len;
    enum mota_reset_cause cause; /* the last run's, as its last words said (mota_qemu_reset) */
    uint32_t fault_pc, fault_addr, fault_cfsr;
    uint64_t cut_at_op; /* a power cut at flash operation N (from 1) */
    int torn;           /* ... after half of it */
    int hang_on_trial;
    int measure_stack;
    int flash_timing; /* 0 none, 1 typ, 2 max: the emulated flash takes its part's time */
    int flash_ecc;    /* the emulated flash has ECC: units programmed once, torn ones unreadable */
};
extern struct mota_qemu_args mota_qemu_args;

int mota_qemu_args_parse(void);
/* "mota-BOARD: reset CAUSE pc=.. addr=.. cfsr=..": the last words the launcher reads as the next boot's
 * reset cause, then SYSRESETREQ (with -no-reboot, QEMU exits). */
void mota_qemu_reset(const char *cause, uint32_t pc, uint32_t addr, uint32_t cfsr) __attribute__((noreturn));

/*
 * The emulated flash: the part it stands for (its sectors, program unit and times), held in a file on the
 * host (the launcher's flash=) and seen by the CPU at `window`. Every program and erase reaches the file
 * before the call returns, so killing QEMU is a real power cut. The window is either RAM of the machine
 * (loaded from the file at boot) or, `rom`, the machine's flash array, which QEMU models as ROM: the guest
 * cannot write it, so it is rewritten from the file through semihosting (a debugger's write) after each
 * operation. Only the `owned` ranges are the agent's (loaded, programmed, erased): the rest holds the
 * firmware and is never touched (MOTA_ERR_FLASH_BOUNDS).
 * NOR rules are enforced (program erased bytes only, whole units, whole sectors); flash-timing=typ|max
 * makes each operation take its part's time in a WFI loop (interrupts on), cut=N/torn cut the power there,
 * and flash-ecc gives the units ECC (uniform sectors only).
 */
#define MOTA_QEMU_FLASH_OWNED 3
struct mota_qemu_flash_cfg {
    uint32_t window; /* CPU address of offset 0 */
    bool rom;
    uint32_t size;
    uint32_t prog_size, prog_block, prog_typ_us, prog_max_us;
    uint8_t flags; /* the part's enum mota_flash_flags (ECC is added by flash-ecc) */
    uint8_t n_regions;
    struct mota_flash_region regions[MOTA_FLASH_MAX_REGIONS];
    uint8_t n_owned;
    struct {
        uint32_t off, len;
    } owned[MOTA_QEMU_FLASH_OWNED];
};
/* cfg must outlive f. MOTA_OK, or MOTA_ERR_FLASH_IO when the file is missing or not of the part's size. */
int mota_qemu_flash_init(struct mota_flash *f, const struct mota_qemu_flash_cfg *cfg);

#endif /* MOTA_ARM_QEMU_H */
