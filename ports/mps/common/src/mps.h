/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the MPS layer's files; not part of its API. The board's
 * addresses, IRQ numbers and clock come from its board_config.h. */
#ifndef MOTA_MPS_H
#define MOTA_MPS_H

#include "board_config.h"
#include "mota/board.h"
#include "semihost.h"

#include <stdbool.h>
#include <stdint.h>

#ifndef MOTA_BOARD_NAME
#error "MOTA_BOARD_NAME: the board's name, set by ports/mps/common/mps.cmake"
#endif
#ifndef MOTA_MPS_CRC_BASE
#error "MOTA_MPS_CRC_BASE: the board's STM32 CRC unit, 0u if it has none (board_config.h)"
#endif

/* The core's architecture: Armv8-M (M33, M55: its MPU, PSPLIM, TT, the Security Extension) or Armv7-M
 * (M4, M7: the PMSAv7 MPU, none of the others) */
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define MPS_V8M 1
#elif defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_7M__)
#define MPS_V8M 0
#else
#error "the MPS layer runs on Armv7-M or Armv8-M Mainline"
#endif
/* What the guard grants a model must be one MPU region: 32-byte granules on Armv8-M; on PMSAv7 a power of
 * two aligned to its size (the model's I/O area and stack are placed so) */
#define MPS_REGION_ALIGN(size) (MPS_V8M ? 32u : (size))

#define REG(a) (*(volatile uint32_t *)(a))
#define SCB_ICSR REG(0xE000ED04u)
#define SCB_AIRCR REG(0xE000ED0Cu)
#define SCB_CCR REG(0xE000ED14u)
#define SCB_SHCSR REG(0xE000ED24u)
#define SCB_CFSR REG(0xE000ED28u)
#define SCB_HFSR REG(0xE000ED2Cu)
#define SCB_MMFAR REG(0xE000ED34u)
#define SCB_BFAR REG(0xE000ED38u)
#define SCB_CPACR REG(0xE000ED88u)
#define SCB_SFSR REG(0xE000EDE4u)
#define NVIC_ISER(n) REG(0xE000E100u + 4u * (n))
#define CFSR_MMARVALID (1u << 7)
#define CFSR_BFARVALID (1u << 15)

/* arguments from the launcher (semihosting command line) */
struct mps_args {
    const char *flash;
    uint32_t flash_len;
    enum mota_reset_cause cause;
    uint32_t fault_pc, fault_addr, fault_cfsr;
    uint64_t cut_at_op;
    int torn;
    int hang_on_trial;
    int measure_stack;
    int flash_timing; /* 0 none, 1 typ, 2 max: the emulated NOR takes its part's time */
    int flash_ecc;    /* the emulated flash has ECC: units programmed once, torn ones unreadable (flash_ecc.c) */
};
extern struct mps_args mps_args;

int mps_args_parse(void);
int mps_flash_init(struct mota_flash *f);
/* ECC on the emulated flash (flash_ecc.c): off and len in whole program units */
int mps_ecc_init(void);
bool mps_ecc_on(void);
bool mps_ecc_readable(uint32_t off, uint32_t len);
int mps_ecc_can_program(uint32_t off, const uint8_t *src, uint32_t len);
int mps_ecc_programmed(uint32_t off, uint32_t len);
int mps_ecc_torn(uint32_t off, bool whole_sector);
int mps_ecc_erased(uint32_t off);
int mps_uart_init(struct mota_transport *t);
void mps_clock_init(void);
uint64_t mps_now_us(void *ctx);
uint64_t mps_ticks(void);
uint32_t mps_watchdog_period_ms(void); /* 0: not running */
uint32_t mps_watchdog_left_ms(void);   /* to its first expiry, from its own counter; UINT32_MAX: not running */
void mps_system_init(struct mota_system *s);
/* the last words before a reset: the launcher reads them as the reset cause */
void mps_reset_announce(const char *cause, uint32_t pc, uint32_t addr, uint32_t cfsr);
/* the faulting address, when CFSR says the CPU recorded one */
uint32_t mps_fault_address(uint32_t cfsr);

/* guarded model calls (guard.c) */
struct mps_guard_call {
    uint32_t fn, r9, a0, a1, a2;  /* entry (Thumb bit kept), RW base, arguments */
    uint32_t code_base, code_end; /* its flash slot: code and params, read-only */
    uint32_t ram_base, ram_end;   /* its exec RAM: RW data, activations */
    bool ram_exec;                /* COPY mode: its code runs from that RAM */
    uint32_t io_base, io_end;     /* input then output */
    uint64_t budget_us;           /* stopped past this */
};
enum { MPS_FAULT_SVC = 1, MPS_FAULT_TIMEOUT = 2 }; /* else the exception number (3 HardFault .. 7) */
struct mps_guard_fault {
    uint32_t kind, pc, addr, cfsr;
};
int mps_guard_call(const struct mps_guard_call *c, uint32_t *ret, struct mps_guard_fault *fault);
/* The MPU for one guarded call (mpu_armv8m.c or mpu_pmsav7.c, by the core; guard.c): the model's slot, exec
 * RAM, I/O area, its stack [stack, stack + stack_size) and the exit stub, nothing else; privileged code
 * keeps the default map. False, with nothing granted, if a region cannot be one of this MPU's. */
bool mps_mpu_grant(const struct mps_guard_call *c, uint32_t stack, uint32_t stack_size);
void mps_mpu_off(void);
/* accesses the guard emulated for the last call (FP_CTRL, the STM32 CRC unit: mota/trap.h) */
uint32_t mps_guard_emulated(void);
/* ST's CRC-unit callbacks for legacy models (mota/loader.h crc_acquire, crc_release): code a guarded
 * model may call */
uint32_t mps_guard_crc_acquire(void);
void mps_guard_crc_release(uint32_t base);
extern volatile uint32_t mps_guard_active; /* a model runs */
/*
 * The one decision on a fault taken while a model runs (startup.c's fault
 * entry calls it with the exception's EXC_RETURN and number, and the model's
 * r4-r11 as saved there; r0-r3, r12, lr, pc are in its stacked frame):
 * MPS_GUARD_NOT_MODEL, the firmware's own (reported, the board resets);
 * MPS_GUARD_END, the model's: the call ends with MOTA_ERR_SELFTEST_FAULT;
 * MPS_GUARD_RESUME, the model continues (registers and frame as left).
 */
enum { MPS_GUARD_NOT_MODEL = 0, MPS_GUARD_END = 1, MPS_GUARD_RESUME = 2 };
int mps_guard_fault(uint32_t exc_return, uint32_t ipsr, uint32_t *r4_r11);
/* SysTick: whether a running model is past its deadline */
bool mps_guard_overdue(uint32_t exc_return);
/* leave the model with r0 as the call's result (naked: jumped to, never called) */
void mps_guard_unwind(void);

/* exception handlers (startup.c's vector table) */
void mps_svc_handler(void);
void mps_systick_handler(void);
void mps_nmi_handler(void);
void mps_uart_rx_handler(void);

#endif
