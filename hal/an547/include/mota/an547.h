/*
 * Board port: Arm MPS3 AN547 (Cortex-M55, SSE-300) as QEMU 7.2 models it.
 * The worked example of docs/porting.md: everything board-specific lives
 * in hal/an547/, and the rest of mota does not change.
 *
 * Memory map used by the port (Secure state, SAU off):
 *   ITCM  0x00000000  512 KiB  firmware code
 *   DTCM  0x20000000  512 KiB  firmware data, stack
 *   SRAM  0x01000000    2 MiB  model exec RAM (RW segment; code in COPY mode)
 *   DDR   0x60000000   16 MiB  the emulated NOR flash (memory-mapped: XIP)
 *
 * Flash layout (4 KiB sectors, 16-byte program units):
 *   0x000000  the agent's journal (2 sectors)
 *   0x002000  A/B slot pairs, one per provisioned model, equal sizes
 *   0xFFF000  the provisioning record (last sector), written by the factory
 *
 * These numbers are shared with the host's launcher (`mota sim --target
 * an547`, `mota provision`), which creates and provisions the flash file.
 */
#ifndef MOTA_AN547_H
#define MOTA_AN547_H

#include "mota/agent.h"
#include "mota/device.h"
#include "mota/hal.h"

#include <stdbool.h>
#include <stdint.h>

#define MOTA_AN547_FLASH_BASE 0x60000000u
#define MOTA_AN547_FLASH_SIZE (16u * 1024u * 1024u)
#define MOTA_AN547_SECTOR 4096u
#define MOTA_AN547_PROG 16u
#define MOTA_AN547_JOURNAL 0u
#define MOTA_AN547_SLOTS (2u * MOTA_AN547_SECTOR)
#define MOTA_AN547_PROVISION (MOTA_AN547_FLASH_SIZE - MOTA_AN547_SECTOR)
#define MOTA_AN547_EXEC_BASE 0x01000000u
#define MOTA_AN547_EXEC_SIZE (2u * 1024u * 1024u)
#define MOTA_AN547_SYSCLK_HZ 32000000u
/* The SSE-300 S32K watchdog (CMSDK APB watchdog, Secure alias; on the
 * 32 kHz slow clock; its interrupt is the NMI). The other SSE-300 watchdog
 * at 0x48040000 is not modelled by QEMU 7.2. */
#define MOTA_AN547_WDOG_BASE 0x5802E000u
#define MOTA_AN547_WDOG_HZ 32000u

/* Why the board (re)started, and the fault that caused it, if one did. */
struct mota_an547_boot {
    enum mota_reset_cause cause;
    uint32_t fault_pc, fault_addr, fault_cfsr;
};

/* Everything the port provides to the agent. */
/* The last model call stopped by the guard (a fault or its time budget). */
struct mota_an547_model_fault {
    int reason;        /* MOTA_ERR_SELFTEST_FAULT or MOTA_ERR_SELFTEST_TIMEOUT */
    uint32_t kind;     /* exception number (3 HardFault, 4 MemManage, 5 BusFault, 6 UsageFault), 1 SVC, 2 time */
    uint32_t pc, addr; /* where, and the faulting address when the CPU knows it */
    uint32_t cfsr;
};

struct mota_an547 {
    struct mota_flash flash;
    struct mota_transport uart;
    struct mota_system sys;
    struct mota_loader_mem mem;
    struct mota_an547_boot boot;
    int provision_status; /* MOTA_OK, MOTA_ERR_NOT_PROVISIONED or MOTA_ERR_PROVISION */
    bool hang_on_trial;   /* fault injection: the application hangs while a model is on trial */
    bool measure_stack;   /* the application reports its stack high-water mark per phase */
    char name[32];
    const struct mota_agent_config *cfg;
    uint32_t model_faults;                    /* model calls stopped by the guard since boot */
    uint32_t guard_ticks;                     /* the last guarded call, in processor clock ticks */
    bool guard_reported;
    struct mota_an547_model_fault last_fault;
};

/*
 * Bring the board up: clock, UART0 (RX interrupt into a ring), the flash
 * (reloaded from its host file), the watchdog, and read the provisioning
 * record and the hardware profile into cfg. The caller's cfg supplies the
 * buffers (scratch, self-test) and the inference callback.
 */
int mota_an547_init(struct mota_an547 *b, struct mota_agent_config *cfg);

/* The device profile read from the hardware (CPUID, CPACR, MVFR0, security state). */
void mota_an547_profile(struct mota_device_profile *p);

/* Start the watchdog (timeout in ms); the agent and the main loop kick it. */
void mota_an547_watchdog_start(uint32_t timeout_ms);

/* Self-test and invoke inference: run a CPU model (mota build-model ABI). */
int mota_an547_infer(void *ctx, const struct mota_installed *model, const uint8_t *in, size_t in_len, uint8_t *out,
                     size_t out_len, uint64_t *latency_us);
/* Where its last stopped call faulted, as text: the agent's infer_detail. */
size_t mota_an547_infer_detail(void *ctx, char *out, size_t cap);

/* A line on the launcher's log (semihosting stderr): diagnostics, not the link. */
void mota_an547_log(const char *s);
void mota_an547_log_hex(const char *label, uint32_t v);

/* The stack painted at reset: bytes never touched since (high-water mark).
 * repaint paints again below the caller's frame: the next mark is per phase. */
uint32_t mota_an547_stack_unused(void);
uint32_t mota_an547_stack_size(void);
void mota_an547_stack_repaint(void);

#endif /* MOTA_AN547_H */
