/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the MPS family's files; not part of its API. The board's
 * addresses, IRQ numbers and clock come from its board_config.h; what every
 * Cortex-M port shares (guard, clock, faults) from the Arm layer (mota/arm.h). */
#ifndef MOTA_MPS_H
#define MOTA_MPS_H

#include "board_config.h"
#include "mota/agent.h"
#include "mota/arm.h"
#include "mota/arm_qemu.h"
#include "mota/mps_layout.h"
#include "mota_arm_config.h"
#include "mota/port.h"

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

int mps_uart_init(struct mota_transport *t);
uint32_t mps_watchdog_period_ms(void); /* 0: not running */
void mps_system_init(struct mota_system *s);

/* exception handlers of the family (startup.c's vector table); the Arm layer's are in mota/arm.h */
void mps_nmi_handler(void);
void mps_uart_rx_handler(void);

#endif
