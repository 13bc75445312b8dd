/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Board port: Arm MPS2/MPS3 FPGA boards as QEMU 7.2 models them, with an
 * Armv8-M core (Cortex-M33 on mps2-an505, Cortex-M55 on mps3-an547) or an
 * Armv7-M one (Cortex-M4 on mps2-an386, Cortex-M7 on mps2-an500), the
 * CMSDK UART and watchdog, and flash on a host file through semihosting.
 * The shared layer (ports/mps/common/) is everything these boards have in common;
 * each board folder (ports/mps/<board>/) gives its addresses, IRQ
 * numbers and clock (board_config.h), its memory layout (linker script) and
 * its build-time sizes (board.cmake). docs/porting.md tells how to add one.
 *
 * The emulated NOR flash is the layer's, not the board's: a 16 MiB RAM
 * window of the board (MOTA_MPS_FLASH_BASE in board_config.h) stands in for
 * a memory-mapped part, with this layout:
 *   0x000000  the agent's journal (2 sectors)
 *   0x002000  A/B slot pairs, one per provisioned model, equal sizes (on Armv7-M
 *            from the first boundary of their size, a power of two: board.c)
 *   0xFFF000  the provisioning record (last sector), written by the factory
 * These numbers are shared with the host's launcher (`mota sim --target
 * an547|an505|an386|an500`, `mota provision`), which creates and provisions the flash file.
 */
#ifndef MOTA_BOARD_H
#define MOTA_BOARD_H

#include "mota/agent.h"
#include "mota/device.h"
#include "mota/port.h"

#include <stdbool.h>
#include <stdint.h>

#define MOTA_BOARD_FLASH_SIZE (16u * 1024u * 1024u)
#define MOTA_BOARD_SECTOR 4096u
#define MOTA_BOARD_PROG 16u
#define MOTA_BOARD_JOURNAL 0u
#define MOTA_BOARD_SLOTS (2u * MOTA_BOARD_SECTOR)
#define MOTA_BOARD_PROVISION (MOTA_BOARD_FLASH_SIZE - MOTA_BOARD_SECTOR)

/* Why the board (re)started, and the fault that caused it, if one did. */
struct mota_board_boot {
    enum mota_reset_cause cause;
    uint32_t fault_pc, fault_addr, fault_cfsr;
};

/* The last model call stopped by the guard (a fault or its time budget). */
struct mota_board_model_fault {
    int reason; /* MOTA_ERR_SELFTEST_FAULT or MOTA_ERR_SELFTEST_TIMEOUT */
    uint32_t
        kind; /* exception number (3 HardFault, 4 MemManage, 5 BusFault, 6 UsageFault, 7 SecureFault), 1 SVC, 2 time */
    uint32_t pc, addr; /* where, and the faulting address when the CPU knows it */
    uint32_t cfsr;
};

/* Everything the port provides to the agent. */
struct mota_board {
    struct mota_flash flash;
    struct mota_transport uart;
    struct mota_system sys;
    struct mota_loader_mem mem;
    struct mota_port port; /* the above, and the inference under guard: what the agent is given */
    struct mota_board_boot boot;
    int provision_status; /* MOTA_OK, MOTA_ERR_NOT_PROVISIONED or MOTA_ERR_PROVISION */
    bool hang_on_trial;   /* fault injection: the application hangs while a model is on trial */
    bool measure_stack;   /* the application reports its stack high-water mark per phase */
    char name[32];
    const struct mota_agent_config *cfg;
    uint32_t model_faults; /* model calls stopped by the guard since boot */
    uint32_t guard_ticks;  /* the last guarded call, in processor clock ticks */
    bool guard_reported;
    struct mota_board_model_fault last_fault;
};

/*
 * Bring the board up: clock, UART0 (RX interrupt into a ring), the flash
 * (reloaded from its host file), the watchdog, and read the provisioning
 * record and the hardware profile into cfg, and point cfg at the board's
 * port (flash, system, UART, exec RAM, guarded inference). The caller's cfg
 * supplies the scratch buffer; the self-test buffer is the board's model I/O
 * area (4 KiB), lent to the agent.
 */
int mota_board_init(struct mota_board *b, struct mota_agent_config *cfg);

/* The device profile read from the hardware (CPUID, CPACR, MVFR0, security state). */
void mota_board_profile(struct mota_device_profile *p);

/* Start the watchdog (timeout in ms); the agent and the main loop kick it. */
void mota_board_watchdog_start(uint32_t timeout_ms);

/* Self-test and invoke inference: run a CPU model (mota build-model ABI) under guard. */
int mota_board_infer(void *ctx, const struct mota_installed *model, const uint8_t *in, size_t in_len, uint8_t *out,
                     size_t out_len, uint64_t *latency_us);
/* Where its last stopped call faulted, as text: the agent's infer_detail. */
size_t mota_board_infer_detail(void *ctx, char *out, size_t cap);

/* The agent's model_about callback: a legacy model's own report (name, compile date, tool, sizes). */
int mota_board_model_about(void *ctx, const struct mota_installed *model, struct mota_model_about *out);
/* The model's inputs and outputs (the port's model_io): a legacy model's report, a CPU model's size entries. */
int mota_board_model_io(void *ctx, const struct mota_installed *model, struct mota_model_io *out);

/* A line on the launcher's log (semihosting stderr): diagnostics, not the link.
 * Every line the firmware logs starts with MOTA_BOARD_TAG ("mota-an505: "),
 * which the launcher reads (ready, reset causes, power cuts). The board's
 * build defines MOTA_BOARD_NAME (ports/mps/common/mps.cmake). */
#ifdef MOTA_BOARD_NAME
#define MOTA_BOARD_TAG "mota-" MOTA_BOARD_NAME ": "
#endif
void mota_board_log(const char *s);
void mota_board_log_hex(const char *label, uint32_t v);

/* The stack painted at reset: bytes never touched since (high-water mark).
 * repaint paints again below the caller's frame: the next mark is per phase. */
uint32_t mota_board_stack_unused(void);
uint32_t mota_board_stack_size(void);
void mota_board_stack_repaint(void);

#endif /* MOTA_BOARD_H */
