/* SPDX-License-Identifier: Apache-2.0 */
/* The Arm layer's build-time configuration for an STM32 board (mota/arm.h): from the board's
 * board_config.h and the family's sizes (sizes.cmake). */
#ifndef MOTA_ARM_CONFIG_H
#define MOTA_ARM_CONFIG_H

#include "board_config.h"

#define MOTA_ARM_SYSCLK_HZ MOTA_STM32_SYSTICK_HZ
#define MOTA_ARM_CRC_BASE MOTA_STM32_CRC_BASE
#define MOTA_ARM_GUARD_STACK MOTA_STM32_GUARD_STACK
#define MOTA_ARM_GUARD_IO MOTA_STM32_GUARD_IO
#if MOTA_STM32_SERIES_H7 && !MOTA_STM32_QEMU
/* a flash read's ECC double error is a bus fault on an H7: its driver's first (system.c) */
#include <stdbool.h>
#include <stdint.h>
bool stm32_bus_fault(uint32_t *frame, uint32_t cfsr);
#define MOTA_ARM_BUS_FAULT_HOOK stm32_bus_fault
#endif
#if MOTA_STM32_QEMU
/* QEMU models no IWDG: a watchdog stands in for it on SysTick (system.c) */
void stm32_qemu_watchdog_tick(void);
#define MOTA_ARM_TICK_HOOK stm32_qemu_watchdog_tick
#endif

#endif
