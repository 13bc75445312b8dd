/* SPDX-License-Identifier: Apache-2.0 */
/*
 * QEMU netduinoplus2 (an STM32F405 as QEMU 7.2 models it) running the NUCLEO-F401RE port: the F401's
 * board_config.h, layout, start-up, clock code, USART2 driver and interrupts unchanged, against QEMU's
 * model of ST's USART (USART2 is QEMU's second serial port). What QEMU does not model stands in, as on the
 * MPS boards (../shared/research/stm32-ports.md): the flash interface (the Arm layer's emulated flash over
 * the F405's flash array, held in the launcher's file), the RCC (its reset flags: the launcher gives the
 * reset cause; its PLL never locks: the clock code gives up after its bounded waits), the IWDG (a watchdog
 * on SysTick), the CRC unit (the guard emulates a licence check's accesses) and the unique id.
 */
#ifndef MOTA_NETDUINOPLUS2_BOARD_CONFIG_H
#define MOTA_NETDUINOPLUS2_BOARD_CONFIG_H

#define MOTA_STM32_QEMU 1
/* QEMU's SysTick counts its machine's fixed 168 MHz system clock, whatever the RCC was told */
#define MOTA_STM32_SYSTICK_HZ 168000000u
#define MOTA_STM32_CRC_BASE 0u

#include "../nucleo-f401re/board_config.h"

#endif
