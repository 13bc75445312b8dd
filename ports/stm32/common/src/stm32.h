/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the STM32 family's files; not part of its API. The part's registers come from ST's CMSIS
 * device header (board_config.h includes it: MOTA_STM32_SDK), the board's facts from its board_config.h
 * and board_layout.h, what every Cortex-M port shares from the Arm layer (mota/arm.h). */
#ifndef MOTA_STM32_H
#define MOTA_STM32_H

#include "board_config.h"
#include "board_layout.h"
#include "mota/agent.h"
#include "mota/arm.h"
#include "mota/port.h"
#include "mota/stm32_flash.h"
#include "mota_arm_config.h"

#include <stdbool.h>
#include <stdint.h>

#ifndef MOTA_BOARD_NAME
#error "MOTA_BOARD_NAME: the board's name, set by ports/stm32/common/stm32.cmake"
#endif
#if MOTA_STM32_QEMU
#include "mota/arm_qemu.h"
#endif
#if MOTA_STM32_SERIES_N6
#include "mota/stm32n6_nor.h"
#endif

/* The reset flags and the watchdog, where a part names them otherwise (board_config.h: the H7's are the
 * M7's own, RCC_RSR and IWDG1; the N6's RCC_RSR) */
#ifndef MOTA_STM32_IWDG
#define MOTA_STM32_IWDG IWDG
#endif
#ifndef MOTA_STM32_RESET_FLAGS
#define MOTA_STM32_RESET_FLAGS RCC->CSR
#define MOTA_STM32_RESET_IWDG RCC_CSR_IWDGRSTF
#define MOTA_STM32_RESET_SOFTWARE RCC_CSR_SFTRSTF
#define MOTA_STM32_RESET_CLEAR RCC_CSR_RMVF
#endif

/* clock_<series>.c: the board's default clock (board_config.h); every ready flag waited for a bounded
 * number of reads. MOTA_OK, or MOTA_ERR_TIMEOUT when an oscillator or PLL never said ready: the part then
 * runs on its reset clock, said on the console. */
int stm32_clock_init(void);
/* A bounded wait: true once (reg & mask) == want, false after `tries` reads. */
bool stm32_wait(volatile const uint32_t *reg, uint32_t mask, uint32_t want, uint32_t tries);

/* usart.c: the ST-LINK's virtual COM port, RX interrupt into a ring */
void stm32_usart_init(struct mota_transport *t);
void stm32_usart_irq(void);
void stm32_usart_put(const char *s, size_t n); /* polled: the console */

/* system.c: reset, reset cause, IWDG, the unique id, the last words before a reset */
void stm32_system_init(struct mota_system *s, struct mota_board_boot *boot);
uint32_t stm32_watchdog_period_ms(void); /* 0: not running */
void stm32_nmi(void);
/* The Arm layer's bus fault hook (MOTA_ARM_BUS_FAULT_HOOK, mota_arm_config.h) on an H7: true when the fault
 * is a flash read's ECC double error the driver takes (mota_stm32h7_flash_bus_fault), the load skipped */
bool stm32_bus_fault(uint32_t *frame, uint32_t cfsr);
/* the part's 96-bit unique id into id (12 bytes); false where the machine has none (QEMU) */
bool stm32_uid(uint8_t id[12]);

/* flash.c: the agent's flash, the part's driver (or, on QEMU, the stand-in) over board_layout.h's range */
int stm32_flash_init(struct mota_flash *f);

#endif
