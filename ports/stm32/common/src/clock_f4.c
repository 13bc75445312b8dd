/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32F4's default clock (RM0368 section 6): the HSI (16 MHz, on at reset) into the main PLL, M 16,
 * N 336, P 4 (84 MHz, the F401's most; Q 7: 48 MHz), AHB 84 MHz, APB1 42 MHz (its most), APB2 84 MHz,
 * the flash at 2 wait states (2.7 to 3.6 V) with its prefetch and ART caches on. The NUCLEO-F401RE's HSE
 * comes from the ST-LINK's MCO only when its solder bridges say so: the HSI needs nothing of the board.
 * Every ready flag is read a bounded number of times: a part or a machine (QEMU models no RCC) that never
 * says ready leaves the part on the HSI, said by the caller.
 */
#include "stm32.h"

#include "mota/err.h"

#define TRIES 100000u /* reads of a ready flag: milliseconds at 16 MHz, where ST's figures are microseconds */

int stm32_clock_init(void)
{
    RCC->CR |= RCC_CR_HSION;
    if (!stm32_wait(&RCC->CR, RCC_CR_HSIRDY, RCC_CR_HSIRDY, TRIES))
        return MOTA_ERR_TIMEOUT;
    /* more wait states before a faster clock, never after */
    FLASH->ACR = FLASH_ACR_LATENCY_2WS | FLASH_ACR_PRFTEN | FLASH_ACR_ICEN | FLASH_ACR_DCEN;
    if ((FLASH->ACR & FLASH_ACR_LATENCY) != FLASH_ACR_LATENCY_2WS)
        return MOTA_ERR_TIMEOUT;
    RCC->CR &= ~RCC_CR_PLLON;
    RCC->PLLCFGR = RCC_PLLCFGR_PLLSRC_HSI | 16u << RCC_PLLCFGR_PLLM_Pos | 336u << RCC_PLLCFGR_PLLN_Pos |
                   1u << RCC_PLLCFGR_PLLP_Pos /* P = 4 */ | 7u << RCC_PLLCFGR_PLLQ_Pos;
    RCC->CR |= RCC_CR_PLLON;
    if (!stm32_wait(&RCC->CR, RCC_CR_PLLRDY, RCC_CR_PLLRDY, TRIES)) {
        RCC->CR &= ~RCC_CR_PLLON;
        return MOTA_ERR_TIMEOUT;
    }
    RCC->CFGR = RCC_CFGR_HPRE_DIV1 | RCC_CFGR_PPRE1_DIV2 | RCC_CFGR_PPRE2_DIV1 | RCC_CFGR_SW_PLL;
    if (!stm32_wait(&RCC->CFGR, RCC_CFGR_SWS, RCC_CFGR_SWS_PLL, TRIES)) {
        RCC->CFGR = 0; /* back to the HSI */
        return MOTA_ERR_TIMEOUT;
    }
    return MOTA_OK;
}
