/* SPDX-License-Identifier: Apache-2.0 */
/*
 * STM32H747I-DISCO (STM32H747XIH6: a Cortex-M7 with double-precision FPU, and a Cortex-M4 mota leaves
 * gated) for the STM32 family (ports/stm32/common). The part's registers from ST's CMSIS device header
 * (STM32H747xx with CORE_CM7, stm32.cmake), the board's facts here, its memory in board_layout.h. From
 * ST's UM2411 (the board's user manual) and RM0399:
 * - the supply: the board feeds the core from the part's SMPS directly (UM2411 "Power supply"): PWR_CR3
 *   says so once after each power-on, or the voltage scaling never reports ready (clock_h7.c);
 * - the clock: the HSI at 64 MHz, no PLL (clock_h7.c), the L1 caches on;
 * - the ST-LINK V3E's virtual COM port is USART1 on PA9 (TX) and PA10 (RX), alternate function 7, on
 *   APB2 (D2), whose kernel clock at reset is PCLK2;
 * - the flash: two banks of 8 sectors of 128 KiB, 32-byte flash words with ECC programmed once per erase,
 *   a double ECC error a bus fault (flash_h7.c); the agent's range spans both banks, the firmware runs from
 *   bank 1 while bank 2 erases;
 * - the CRC unit in D3, the unique id at 0x1FF1E800, the IWDG1 (the M7's) on the LSI.
 */
#ifndef MOTA_STM32H747I_DISCO_BOARD_CONFIG_H
#define MOTA_STM32H747I_DISCO_BOARD_CONFIG_H

#include "stm32h7xx.h"

#define MOTA_STM32_QEMU 0
#define MOTA_STM32_SERIES_F4 0
#define MOTA_STM32_SERIES_U5 0
#define MOTA_STM32_SERIES_H7 1
#define MOTA_STM32_SERIES_N6 0
#define MOTA_STM32_SYSTICK_HZ 64000000u
#define MOTA_STM32_N_IRQ (WAKEUP_PIN_IRQn + 1)

#define MOTA_STM32_USART USART1
#define MOTA_STM32_USART_IRQn USART1_IRQn
#define MOTA_STM32_USART_CLOCKS_ON() (RCC->AHB4ENR |= RCC_AHB4ENR_GPIOAEN, RCC->APB2ENR |= RCC_APB2ENR_USART1EN)
#define MOTA_STM32_USART_CLOCKS_READBACK RCC->APB2ENR
#define MOTA_STM32_USART_GPIO GPIOA
#define MOTA_STM32_USART_TX_PIN 9u
#define MOTA_STM32_USART_RX_PIN 10u
#define MOTA_STM32_USART_AF 7u
#define MOTA_STM32_USART_CLOCK_HZ 64000000u /* PCLK2: the HSI, every bus prescaler at 1 */
#define MOTA_STM32_BAUD 115200u

#define MOTA_STM32_CRC_BASE CRC_BASE /* granted to legacy models: ST's licence check on the real unit */
#define MOTA_STM32_CRC_CLOCK_ON() (RCC->AHB4ENR |= RCC_AHB4ENR_CRCEN)
#define MOTA_STM32_IWDG IWDG1 /* the M7's */
#define MOTA_STM32_RESET_FLAGS RCC->RSR
#define MOTA_STM32_RESET_IWDG RCC_RSR_IWDG1RSTF
#define MOTA_STM32_RESET_SOFTWARE RCC_RSR_SFT1RSTF /* the M7's own */
#define MOTA_STM32_RESET_CLEAR RCC_RSR_RMVF
/* the LSI at its fastest (32 kHz, 29 to 34 over the part's range: the H747's datasheet): the IWDG's
 * reload is counted for it */
#define MOTA_STM32_LSI_MAX_HZ 34000u
/* a 128 KiB sector erases in up to 4 s; the firmware keeps running (bank 1) but a bank-1 access waits
 * for nothing: the IWDG still gives more than the longest erase */
#define MOTA_STM32_WATCHDOG_MIN_MS 8000u

#define MOTA_STM32_FLASH_ERASE_TYP_US 1100000u /* one sector (the profile's: docs/device-profiles.md) */
#define MOTA_STM32_FLASH_ERASE_MAX_US 4000000u
#define MOTA_STM32_FLASH_PROG_TYP_US 130u /* one 32-byte flash word */
#define MOTA_STM32_FLASH_PROG_MAX_US 130u

#endif
