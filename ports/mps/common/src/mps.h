/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the MPS family's files; not part of its API. The board's
 * addresses, IRQ numbers and clock come from its board_config.h; what every
 * Cortex-M port shares (guard, clock, faults) from the Arm layer (mota/arm.h). */
#ifndef MOTA_MPS_H
#define MOTA_MPS_H

#include "board_config.h"
#include "mota/agent.h"
#include "mota/arm.h"
#include "mota/mps_layout.h"
#include "mota_arm_config.h"
#include "mota/port.h"
#include "semihost.h"

#include <stdbool.h>
#include <stdint.h>

#ifndef MOTA_BOARD_NAME
#error "MOTA_BOARD_NAME: the board's name, set by ports/mps/common/mps.cmake"
#endif
#ifndef MOTA_MPS_CRC_BASE
#error "MOTA_MPS_CRC_BASE: the board's STM32 CRC unit, 0u if it has none (board_config.h)"
#endif

#define REG(a) (*(volatile uint32_t *)(a))
#define SCB_ICSR REG(0xE000ED04u)
#define SCB_AIRCR REG(0xE000ED0Cu)
#define NVIC_ISER(n) REG(0xE000E100u + 4u * (n))

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
uint32_t mps_watchdog_period_ms(void); /* 0: not running */
void mps_system_init(struct mota_system *s);
/* the last words before a reset: the launcher reads them as the reset cause */
void mps_reset_announce(const char *cause, uint32_t pc, uint32_t addr, uint32_t cfsr) __attribute__((noreturn));

/* exception handlers of the family (startup.c's vector table); the Arm layer's are in mota/arm.h */
void mps_nmi_handler(void);
void mps_uart_rx_handler(void);

#endif
