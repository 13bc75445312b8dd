/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NUCLEO-F401RE (STM32F401RET6, Cortex-M4F at 84 MHz) for the STM32 family (ports/stm32/common): the
 * part's registers from ST's CMSIS device header (STM32F401xE, stm32.cmake), the board's facts here, its
 * memory in board_layout.h. From ST's UM1724 (the Nucleo-64 user manual) and RM0368:
 * - the ST-LINK's virtual COM port is USART2 on PA2 (TX) and PA3 (RX), alternate function 7, on APB1;
 * - the clock: the HSI into the PLL, 84 MHz, APB1 42 MHz (clock_f4.c);
 * - the flash: one bank, sectors 4 x 16, 64, 3 x 128 KiB, programmed a word at a time (PSIZE x32: the
 *   board's 3.3 V), no ECC, the CPU stalled while it works (flash_f4.c); times as in
 *   docs/device-profiles.md "Flash";
 * - the CRC unit at 0x40023000, the unique id at 0x1FFF7A10, the IWDG on the LSI.
 */
#ifndef MOTA_NUCLEO_F401RE_BOARD_CONFIG_H
#define MOTA_NUCLEO_F401RE_BOARD_CONFIG_H

#include "stm32f4xx.h"

#ifndef MOTA_STM32_QEMU
#define MOTA_STM32_QEMU 0
#endif
#define MOTA_STM32_SERIES_F4 1
#define MOTA_STM32_SERIES_U5 0
#define MOTA_STM32_SERIES_H7 0
#define MOTA_STM32_SERIES_N6 0
#ifndef MOTA_STM32_SYSTICK_HZ
#define MOTA_STM32_SYSTICK_HZ 84000000u /* SysTick on the processor clock */
#endif
#define MOTA_STM32_N_IRQ (SPI4_IRQn + 1)

#define MOTA_STM32_USART USART2
#define MOTA_STM32_USART_IRQn USART2_IRQn
#define MOTA_STM32_USART_CLOCKS_ON() (RCC->AHB1ENR |= RCC_AHB1ENR_GPIOAEN, RCC->APB1ENR |= RCC_APB1ENR_USART2EN)
#define MOTA_STM32_USART_CLOCKS_READBACK RCC->APB1ENR
#define MOTA_STM32_USART_GPIO GPIOA
#define MOTA_STM32_USART_TX_PIN 2u
#define MOTA_STM32_USART_RX_PIN 3u
#define MOTA_STM32_USART_AF 7u
#define MOTA_STM32_USART_CLOCK_HZ 42000000u /* APB1 */
#define MOTA_STM32_BAUD 115200u

#ifndef MOTA_STM32_CRC_BASE
#define MOTA_STM32_CRC_BASE CRC_BASE /* granted to legacy models: ST's licence check on the real unit */
#endif
#define MOTA_STM32_CRC_CLOCK_ON() (RCC->AHB1ENR |= RCC_AHB1ENR_CRCEN)
/* a 128 KiB sector erases in up to 4 s with nothing running: the IWDG gives twice that */
/* the LSI at its fastest (17 to 47 kHz: the F401's datasheet): the IWDG's reload is counted for it */
#define MOTA_STM32_LSI_MAX_HZ 47000u
#define MOTA_STM32_WATCHDOG_MIN_MS 8000u

#define MOTA_STM32_FLASH_PROG 4u
#define MOTA_STM32_FLASH_PROG_TYP_US 16u
#define MOTA_STM32_FLASH_PROG_MAX_US 100u
#define MOTA_STM32_FLASH_FLAGS MOTA_FLASH_STALLS_CPU
#define MOTA_STM32_FLASH_N_REGIONS 3
#define MOTA_STM32_FLASH_REGIONS                                                                                       \
    {                                                                                                                  \
        {4, 16u * 1024u, 250000, 500000}, {1, 64u * 1024u, 550000, 1100000},                                           \
        {                                                                                                              \
            3, 128u * 1024u, 1000000, 4000000                                                                          \
        }                                                                                                              \
    }

#endif
