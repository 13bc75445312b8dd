/* SPDX-License-Identifier: Apache-2.0 */
/*
 * STM32N6570-DK (STM32N657X0H3Q: a Cortex-M55 with the Neural-ART NPU, no internal flash) for the STM32
 * family (ports/stm32/common). The firmware is the first-stage boot loader (FSBL) the boot ROM copies
 * from the octal NOR into AXISRAM2 and starts in the Secure state; it runs from RAM, built with -mcmse so
 * that ST's device header names the peripherals' secure aliases. The part's registers from ST's CMSIS
 * device header (STM32N657xx, stm32.cmake), the board's facts here, its memory in board_layout.h. From
 * ST's UM3300 (the board's user manual), RM0486 and ST's board support (../shared/stm32/stm32n6/
 * bsp-reference, read for the pins):
 * - the ST-LINK V3EC's virtual COM port is USART1 on PE5 (TX) and PE6 (RX), alternate function 7, its
 *   kernel clock the HSI (64 MHz) chosen in clock_n6.c, whatever the boot ROM left on the buses;
 * - the clock: the CPU and the system buses on the HSI at 64 MHz, the L1 caches on (clock_n6.c);
 * - the NOR: an MX66UW1G45G (128 MiB) on XSPI2 through port 2 of the I/O manager: PN0 DQS, PN1 NCS,
 *   PN2-PN5 IO0-3, PN6 CLK, PN8-PN11 IO4-7, alternate function 9, its supply VDDIO3 at 1.8 V
 *   (flash.c); XSPI2's kernel clock HCLK5 (chosen again in flash.c: the boot ROM may have changed it),
 *   divided by 2: 32 MHz or less;
 * - the CRC unit, the unique id (UID_BASE), the IWDG on the LSI.
 */
#ifndef MOTA_STM32N6570_DK_BOARD_CONFIG_H
#define MOTA_STM32N6570_DK_BOARD_CONFIG_H

#include "stm32n6xx.h"

#define MOTA_STM32_QEMU 0
#define MOTA_STM32_SERIES_F4 0
#define MOTA_STM32_SERIES_U5 0
#define MOTA_STM32_SERIES_H7 0
#define MOTA_STM32_SERIES_N6 1
#define MOTA_STM32_SYSTICK_HZ 64000000u
#define MOTA_STM32_N_IRQ (LTDC_UP_ERR_IRQn + 1)

#define MOTA_STM32_USART USART1
#define MOTA_STM32_USART_IRQn USART1_IRQn
#define MOTA_STM32_USART_CLOCKS_ON() (RCC->AHB4ENSR = RCC_AHB4ENSR_GPIOEENS, RCC->APB2ENSR = RCC_APB2ENSR_USART1ENS)
#define MOTA_STM32_USART_CLOCKS_READBACK RCC->APB2ENR
#define MOTA_STM32_USART_GPIO GPIOE
#define MOTA_STM32_USART_TX_PIN 5u
#define MOTA_STM32_USART_RX_PIN 6u
#define MOTA_STM32_USART_AF 7u
#define MOTA_STM32_USART_CLOCK_HZ 64000000u /* the HSI (clock_n6.c: USART1SEL) */
#define MOTA_STM32_BAUD 115200u

#define MOTA_STM32_CRC_BASE CRC_BASE /* granted to legacy models: ST's licence check on the real unit */
#define MOTA_STM32_CRC_CLOCK_ON() (RCC->AHB4ENSR = RCC_AHB4ENSR_CRCENS)
/* the unique id is in BSEC, whose clock the boot ROM may leave off */
#define MOTA_STM32_UID_CLOCK_ON() (RCC->APB4ENSR2 = RCC_APB4ENSR2_BSECENS, (void)RCC->APB4ENR2)
/* the last words before a reset in TAMP's backup registers (0 to 4): the N6 does not keep RAM across a
 * reset; their bus clock on and the backup domain's write protection off first */
#define MOTA_STM32_LAST_WORDS_TAMP()                                                                                   \
    (RCC->AHB4ENSR = RCC_AHB4ENSR_PWRENS, RCC->APB4ENSR1 = RCC_APB4ENSR1_RTCAPBENS, (void)RCC->APB4ENR1,               \
     PWR->DBPCR |= PWR_DBPCR_DBP, (void)PWR->DBPCR)
#define MOTA_STM32_RESET_FLAGS RCC->RSR
#define MOTA_STM32_RESET_IWDG RCC_RSR_IWDGRSTF
#define MOTA_STM32_RESET_SOFTWARE RCC_RSR_SFTRSTF
#define MOTA_STM32_RESET_CLEAR RCC_RSR_RMVF
/* the LSI at its fastest (32 kHz within a few percent: the N657's datasheet): the IWDG's reload is
 * counted for it */
#define MOTA_STM32_LSI_MAX_HZ 34000u
#define MOTA_STM32_WATCHDOG_MIN_MS 2000u /* a 4 KiB NOR sector erases in 400 ms at most */

/* the MX66UW1G45G (its datasheet): a 4 KiB sector 25 ms typical, 400 ms at most; a 256-byte page
 * 0.15 ms, 0.75 ms (the same figures as the host's stm32n6570-dk profile) */
#define MOTA_STM32_FLASH_ERASE_TYP_US 25000u
#define MOTA_STM32_FLASH_ERASE_MAX_US 400000u
#define MOTA_STM32_FLASH_PROG_TYP_US 150u
#define MOTA_STM32_FLASH_PROG_MAX_US 750u
#define MOTA_STM32_XSPI_PRESCALER 1u /* XSPI2's clock: its kernel clock / (1 + 1) */

#endif
