/* SPDX-License-Identifier: Apache-2.0 */
/*
 * B-U585I-IOT02A (STM32U585AII6Q, Cortex-M33 with FPU) for the STM32 family (ports/stm32/common), with
 * TrustZone disabled (TZEN=0, as the board ships): the firmware runs non-secure and drives the flash
 * through its non-secure registers. The part's registers from ST's CMSIS device header (STM32U585xx,
 * stm32.cmake), the board's facts here, its memory in board_layout.h. From ST's UM2839 (the board's user
 * manual) and RM0456:
 * - the ST-LINK's virtual COM port is USART1 on PA9 (TX) and PA10 (RX), alternate function 7, on APB2;
 * - the clock: the HSI16, no PLL (clock_u5.c);
 * - the flash: two banks of 128 pages of 8 KiB, 16-byte quad-words with ECC programmed once per erase, a
 *   double ECC error an NMI (flash_u5.c); the agent's is bank 2 while the firmware runs from bank 1;
 * - the CRC unit at 0x40023000, the unique id at 0x0BFA0700, the IWDG on the LSI.
 */
#ifndef MOTA_B_U585I_IOT02A_BOARD_CONFIG_H
#define MOTA_B_U585I_IOT02A_BOARD_CONFIG_H

#include "stm32u5xx.h"

#define MOTA_STM32_QEMU 0
#define MOTA_STM32_SERIES_F4 0
#define MOTA_STM32_SERIES_U5 1
#define MOTA_STM32_SERIES_H7 0
#define MOTA_STM32_SERIES_N6 0
#define MOTA_STM32_SYSTICK_HZ 16000000u
#define MOTA_STM32_N_IRQ (LSECSSD_IRQn + 1)

#define MOTA_STM32_USART USART1
#define MOTA_STM32_USART_IRQn USART1_IRQn
#define MOTA_STM32_USART_CLOCKS_ON() (RCC->AHB2ENR1 |= RCC_AHB2ENR1_GPIOAEN, RCC->APB2ENR |= RCC_APB2ENR_USART1EN)
#define MOTA_STM32_USART_CLOCKS_READBACK RCC->APB2ENR
#define MOTA_STM32_USART_GPIO GPIOA
#define MOTA_STM32_USART_TX_PIN 9u
#define MOTA_STM32_USART_RX_PIN 10u
#define MOTA_STM32_USART_AF 7u
#define MOTA_STM32_USART_CLOCK_HZ 16000000u /* PCLK2, USART1's kernel clock at reset */
#define MOTA_STM32_BAUD 115200u

#define MOTA_STM32_CRC_BASE CRC_BASE /* granted to legacy models: ST's licence check on the real unit */
#define MOTA_STM32_CRC_CLOCK_ON() (RCC->AHB1ENR |= RCC_AHB1ENR_CRCEN)
/* the LSI at its fastest (32 kHz within a few percent: the U585's datasheet): the IWDG's reload is counted
 * for it */
#define MOTA_STM32_LSI_MAX_HZ 33000u
#define MOTA_STM32_WATCHDOG_MIN_MS 2000u /* a page erases in 5 ms at most */

#define MOTA_STM32_FLASH_ERASE_TYP_US 1500u
#define MOTA_STM32_FLASH_ERASE_MAX_US 5000u
#define MOTA_STM32_FLASH_PROG_TYP_US 0u /* not stated */
#define MOTA_STM32_FLASH_PROG_MAX_US 0u

#endif
