/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Arm layer: what every Cortex-M port shares, whatever its family (the
 * MPS boards on QEMU, an STM32): models run under an MPU guard (guard.c, the
 * MPU of the core's architecture: v8m/mpu.c or v7m/mpu.c), the exception
 * and fault entry, the SysTick microsecond clock, the device profile read
 * from the core, cache maintenance, the stack's high-water mark, and the
 * port's inference callbacks built on the guard (infer.c). It names no
 * board and no family. ports/arm/arm.cmake gives a family its sources.
 *
 * What a family gives it (docs/porting.md "A new family"):
 * - a header "mota_arm_config.h" on the include path, defining
 *     MOTA_ARM_SYSCLK_HZ    SysTick's processor clock (whole MHz, a millisecond within 24 bits)
 *     MOTA_ARM_CRC_BASE     the part's STM32 CRC unit granted to legacy models, 0u: none (the
 *                           guard emulates a licence check's accesses, mota/trap.h)
 *     MOTA_ARM_GUARD_STACK  a model's stack under guard (a power of two, 1 KiB or more)
 *     MOTA_ARM_GUARD_IO     a model's I/O area, and the agent's self-test buffer (a power of two)
 *   and optionally MOTA_ARM_TICK_HOOK, a function SysTick's handler calls each millisecond (a watchdog
 *   standing in where the machine has none), and MOTA_ARM_BUS_FAULT_HOOK, bool f(uint32_t *frame, uint32_t
 *   cfsr) called first on a fault of the firmware with a bus fault status: true when the family took it
 *   (an H7's flash driver reading a torn ECC word), and the fault returns to the stacked frame as f left it
 * - two functions, called from exception handlers:
 *     mota_arm_port_reset     the last words before a reset, then the reset (never returns)
 *     mota_arm_port_watchdog_left_ms   time to the watchdog's first expiry
 * - a vector table (with the family's interrupts) naming the handlers below, a reset handler calling
 *   mota_arm_fpu_enable first and mota_arm_core_init before main(), and a linker script placing
 *   the sections and symbols listed at the end of this header.
 */
#ifndef MOTA_ARM_H
#define MOTA_ARM_H

#include "mota/agent.h"
#include "mota/port.h"
#include "mota/provision.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The core's architecture: Armv8-M Mainline (M33, M55: its MPU, PSPLIM, TT, the Security Extension) or
 * Armv7-M (M4, M7: the PMSAv7 MPU, none of the others). */
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define MOTA_ARM_V8M 1
#elif defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_7M__)
#define MOTA_ARM_V8M 0
#else
#error "the Arm layer runs on Armv7-M or Armv8-M Mainline"
#endif
/* What the guard grants a model must be one MPU region: 32-byte granules on Armv8-M; on PMSAv7 a power of
 * two aligned to its size (the model's I/O area and stack are placed so) */
#define MOTA_ARM_REGION_ALIGN(size) (MOTA_ARM_V8M ? 32u : (size))

/* ---- provided by the family ---- */

/* The last words before a reset (the cause, "fault" or "software", and where), then the reset: the next
 * boot's reset cause says it. Called from fault handlers: must not return. */
void mota_arm_port_reset(const char *cause, uint32_t pc, uint32_t addr, uint32_t cfsr) __attribute__((noreturn));
/* Milliseconds to the watchdog's first expiry, from its own counter (UINT32_MAX: not running): a model
 * still running near it is stopped with a verdict, not left to reset the board. */
uint32_t mota_arm_port_watchdog_left_ms(void);

/* ---- the core ---- */

/* CP10 and CP11 on (the models' FPU, and newlib's vector memcpy on an M55): the reset handler's first act. */
void mota_arm_fpu_enable(void);
/* After the data and bss are set up: the guard's RAM cleared, the stack painted below the caller's frame
 * (the high-water mark), MemManage, BusFault, UsageFault (and SecureFault on Armv8-M) enabled. */
void mota_arm_core_init(void);
/* The device profile read from the core: CPU part (CPUID), FPU present and enabled (MVFR0, CPACR), the
 * float ABI of this build, and whether this code runs Secure (the Security Extension, TT). The family
 * adds what the core cannot tell (model families, install modes, NPU, name). */
void mota_arm_profile(struct mota_device_profile *p);
/* Cache maintenance after code or data a bus master other than the D-side reads was written (the
 * loader's clean_dcache, invalidate_icache in struct mota_loader_mem): by address, when the core's
 * caches are on (CCR.DC, CCR.IC); barriers in every case. */
void mota_arm_clean_dcache(void *ctx, uint32_t addr, uint32_t len);
void mota_arm_invalidate_icache(void *ctx, uint32_t addr, uint32_t len);

/* The stack painted at reset: bytes never touched since; repaint paints again below the caller's frame. */
uint32_t mota_arm_stack_unused(void);
uint32_t mota_arm_stack_size(void);
void mota_arm_stack_repaint(void);

/* ---- the SysTick clock: a 1 ms tick, microseconds between ticks from its counter ---- */
void mota_arm_clock_init(void);
uint64_t mota_arm_now_us(void *ctx); /* struct mota_system's now_us */
uint64_t mota_arm_ticks(void);       /* processor clock ticks since boot (under -icount shift=0: instructions) */

/* ---- guarded model calls (guard.c) ---- */
struct mota_arm_guard_call {
    uint32_t fn, r9, a0, a1, a2;  /* entry (Thumb bit kept), RW base, arguments */
    uint32_t code_base, code_end; /* its flash slot: code and params, read-only */
    uint32_t ram_base, ram_end;   /* its exec RAM: RW data, activations */
    bool ram_exec;                /* COPY mode: its code runs from that RAM */
    uint32_t io_base, io_end;     /* input then output */
    uint64_t budget_us;           /* stopped past this */
};
enum { MOTA_ARM_FAULT_SVC = 1, MOTA_ARM_FAULT_TIMEOUT = 2 }; /* else the exception number (3 HardFault .. 7) */
struct mota_arm_guard_fault {
    uint32_t kind, pc, addr, cfsr;
};
/* Run one call of a model unprivileged under the MPU: MOTA_OK with its r0 in *ret, or
 * MOTA_ERR_SELFTEST_FAULT / _TIMEOUT with where (fault), or MOTA_ERR_SELFTEST_RUN if what it owns cannot
 * be granted on this MPU. */
int mota_arm_guard_call(const struct mota_arm_guard_call *c, uint32_t *ret, struct mota_arm_guard_fault *fault);
/* accesses the guard emulated for the last call (FP_CTRL, the STM32 CRC unit: mota/trap.h) */
uint32_t mota_arm_guard_emulated(void);
/* ST's CRC-unit callbacks for legacy models (struct mota_loader_mem crc_acquire, crc_release): code a
 * guarded model may call */
uint32_t mota_arm_guard_crc_acquire(void);
void mota_arm_guard_crc_release(uint32_t base);
/* The MPU for one guarded call (v8m/mpu.c or v7m/mpu.c): the model's slot, exec RAM, I/O area, its stack
 * [stack, stack + stack_size) and the exit stub, nothing else; privileged code keeps the default map.
 * False, with nothing granted, if a region cannot be one of this MPU's. */
bool mota_arm_mpu_grant(const struct mota_arm_guard_call *c, uint32_t stack, uint32_t stack_size);
void mota_arm_mpu_off(void);
/* the faulting address, when CFSR says the CPU recorded one */
uint32_t mota_arm_fault_address(uint32_t cfsr);

/* ---- the port's inference under guard (infer.c): struct mota_port's infer, infer_detail, model_about
 * and model_io, for CPU models of mota build-model's ABI and X-CUBE-AI legacy models ---- */
/* The last model call stopped by the guard (a fault or its time budget). */
struct mota_arm_model_fault {
    int reason;        /* MOTA_ERR_SELFTEST_FAULT or MOTA_ERR_SELFTEST_TIMEOUT */
    uint32_t kind;     /* exception number (3 HardFault .. 7 SecureFault), 1 SVC, 2 time */
    uint32_t pc, addr; /* where, and the faulting address when the CPU knows it */
    uint32_t cfsr;
};
/* ST's Neural-ART runtime (LL_ATON and its relocatable-network layer, from ST's STM32Cube.AI packages),
 * where an application links it: an NPU model's inference is the runtime's, not a call under the guard.
 * Such an application defines mota_npu_runtime (the STM32N6570-DK port's page says how); a firmware that
 * does not says so in its device profile (no LL_ATON: an NPU container is refused before anything is
 * erased, MOTA_ERR_COMPAT_NPU), and an NPU model that reaches inference anyway (installed by a firmware
 * that had it) is refused with MOTA_ERR_SELFTEST_NO_NPU. */
struct mota_arm_npu {
    uint8_t major, minor, micro; /* the LL_ATON version it is: the compatibility check's */
    /* One inference of the installed model m (its image in its slot, its RAM where the loader put it):
     * in_len bytes at in (cleaned from the data cache: the NPU reads memory, not the cache) to out_len bytes
     * at out (cleaned too: no dirty line of it is evicted over the NPU's output; the runtime invalidates
     * them before it returns). MOTA_OK; MOTA_ERR_SELFTEST_API
     * if the runtime refused the model; MOTA_ERR_SELFTEST_TIMEOUT past budget_us. */
    int (*run)(const struct mota_installed *m, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
               uint64_t budget_us);
};
extern const struct mota_arm_npu mota_npu_runtime __attribute__((weak)); /* the application's, if any */

struct mota_arm_infer {
    const struct mota_agent_config *cfg;  /* the models' slots and exec RAM */
    const struct mota_arm_npu *npu;       /* NULL: no NPU runtime linked */
    uint32_t flash_base;                  /* the CPU address of the agent's flash (its slots) */
    uint32_t (*watchdog_period_ms)(void); /* the watchdog's period (0: not running): a whole inference ends
                                           * short of its first expiry; NULL: no watchdog */
    uint32_t model_faults;                /* model calls stopped by the guard since boot */
    uint32_t guard_ticks;                 /* the last guarded call, in processor clock ticks */
    bool guard_reported;
    struct mota_arm_model_fault last_fault;
};
/* Fill port's infer, infer_detail, model_about, model_io and infer_ctx, and mem's CRC callbacks, for
 * inference under guard; the agent's self-test buffer is the guard's I/O area (mota_arm_guard_io). */
void mota_arm_infer_init(struct mota_arm_infer *x, struct mota_port *port, struct mota_loader_mem *mem);
uint8_t *mota_arm_guard_io(void);
int mota_arm_infer_run(void *ctx, const struct mota_installed *model, const uint8_t *in, size_t in_len, uint8_t *out,
                       size_t out_len, uint64_t *latency_us);
size_t mota_arm_infer_detail(void *ctx, char *out, size_t cap);
int mota_arm_model_about(void *ctx, const struct mota_installed *model, struct mota_model_about *out);
int mota_arm_model_io(void *ctx, const struct mota_installed *model, struct mota_model_io *out);

/* ---- a UART's receive ring (rx.c): the RX interrupt moves bytes in, the transport's read takes them ---- */
struct mota_arm_rx {
    uint8_t *buf;
    uint32_t size;                         /* a power of two, more than the link's whole window */
    volatile uint32_t head, tail;          /* head: written by the interrupt; tail: by the reader */
    volatile uint32_t overruns;            /* bytes lost: the ring full, or the UART's own overrun */
    void (*drain)(struct mota_arm_rx *rx); /* the UART's received bytes into the ring (its interrupt's work) */
};
/* One received byte into the ring (from drain), or counted lost when it is full: the link's CRC and
 * go-back-N recover. */
static inline void mota_arm_rx_put(struct mota_arm_rx *rx, uint8_t b)
{
    uint32_t h = rx->head;
    if (h - rx->tail < rx->size) {
        rx->buf[h & (rx->size - 1u)] = b;
        rx->head = h + 1u;
    } else {
        rx->overruns++;
    }
}
/* struct mota_transport's read over the ring: what it holds, up to len, waiting (WFI) up to timeout_ms for
 * the first byte; drain runs with interrupts masked first, so nothing waits in the UART unseen. */
int mota_arm_rx_read(struct mota_arm_rx *rx, uint8_t *buf, size_t len, uint32_t timeout_ms);

/* ---- a board (port.c): what every board's mota_board_init shares ---- */
/* Everything a board gives the agent; the family fills flash, uart, sys and the exec RAM, then calls these. */
struct mota_arm_board {
    struct mota_flash flash;
    struct mota_transport uart;
    struct mota_system sys;
    uint32_t exec_base, exec_size; /* the models' exec RAM: all the loader may write */
    struct mota_loader_mem mem;
    struct mota_port port; /* the above, and the inference under guard: what the agent is given */
    struct mota_arm_infer infer;
    struct mota_provision prov;
    char name[48];                  /* the record's, or "mota-BOARD (not provisioned)" */
    const struct mota_arm_npu *npu; /* set before mota_arm_board_port: the NPU runtime (NULL: none) */
};
/* cfg's port (b's drivers, the loader's memory with the Arm layer's cache maintenance, inference under
 * guard), its self-test buffer (the guard's I/O area) and its device profile (the core's, CPU models of
 * both families, named MOTA_BOARD_NAME; NPU models with b->npu's LL_ATON version where it is set). */
void mota_arm_board_port(struct mota_arm_board *b, struct mota_agent_config *cfg, uint32_t (*watchdog_period_ms)(void));
/* The provisioning record at rec (len bytes, NULL: unreadable) decoded and applied to cfg: identity, keys,
 * the models' names, st's status and the device's name; the number of models it names (at least 1), which
 * cfg->n_models is set to. An unprovisioned board gets no key: every upload is refused. */
unsigned mota_arm_board_provision(struct mota_arm_board *b, struct mota_agent_config *cfg, struct mota_board_status *st,
                                  const uint8_t *rec, size_t len);

/* ---- exception handlers, for the family's vector table ---- */
/* The table's first 16 entries, the core's: the initial stack, the family's reset, NMI and other handler,
 * and the Arm layer's fault, SVC and SysTick entries. A family's table follows with its interrupts. */
#define MOTA_ARM_CORE_VECTORS(stack_top, reset, nmi, other)                                                            \
    [0] = (uintptr_t)(stack_top), [1] = (uintptr_t)(reset), [2] = (uintptr_t)(nmi),                                    \
    [3] = (uintptr_t)mota_arm_fault_entry,      /* HardFault */                                                        \
        [4] = (uintptr_t)mota_arm_fault_entry,  /* MemManage */                                                        \
        [5] = (uintptr_t)mota_arm_fault_entry,  /* BusFault */                                                         \
        [6] = (uintptr_t)mota_arm_fault_entry,  /* UsageFault */                                                       \
        [7] = (uintptr_t)mota_arm_fault_entry,  /* SecureFault */                                                      \
        [11] = (uintptr_t)mota_arm_svc_handler, /* guarded model calls */                                              \
        [12] = (uintptr_t)(other),              /* DebugMonitor */                                                     \
        [14] = (uintptr_t)(other),              /* PendSV */                                                           \
        [15] = (uintptr_t)mota_arm_systick_handler

void mota_arm_fault_entry(void);     /* HardFault, MemManage, BusFault, UsageFault, SecureFault */
void mota_arm_svc_handler(void);     /* SVCall: guarded model calls */
void mota_arm_systick_handler(void); /* SysTick: the clock, and a model past its time budget */

/*
 * The linker script's part (ports/mps/common/mps.ld is one):
 * - .guard_exit: KEEP(*(.guard_exit)) then KEEP(*(.guard_exit.*)), 64 bytes aligned to 64, between
 *   __guard_exit_start and __guard_exit_end: the only firmware code a model may run;
 * - .bss.guard_stack first in RAM (nothing a model is granted lies below it), then .bss.guard_io and
 *   .bss.guard_io.*, all between __guard_ram_start and __guard_ram_end (NOLOAD: mota_arm_core_init
 *   clears them);
 * - __data_start (the start of the firmware's RAM), __stack_limit and __stack_top (the main stack).
 */

#endif /* MOTA_ARM_H */
