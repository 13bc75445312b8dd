/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32U5's default clock (RM0456 section 11): the HSI16 as the system clock, AHB and APB1..3 at
 * 16 MHz, in the voltage range the part resets in (range 4), the flash at 2 wait states (more than 16 MHz
 * needs there: a wait state too many only slows), the instruction cache on. No PLL: a faster clock needs
 * voltage range 1 or 2 and the EPOD booster, which a product sets for its own peripherals. Every ready
 * flag is read a bounded number of times; a part that never says ready stays on the MSIS (4 MHz), said
 * by the caller.
 */
#include "stm32.h"

#include "mota/err.h"

#define TRIES 100000u /* reads of a ready flag: tens of milliseconds at 4 MHz */

int stm32_clock_init(void)
{
    RCC->CR |= RCC_CR_HSION;
    if (!stm32_wait(&RCC->CR, RCC_CR_HSIRDY, RCC_CR_HSIRDY, TRIES))
        return MOTA_ERR_TIMEOUT;
    FLASH->ACR = (FLASH->ACR & ~FLASH_ACR_LATENCY) | FLASH_ACR_LATENCY_2WS;
    if ((FLASH->ACR & FLASH_ACR_LATENCY) != FLASH_ACR_LATENCY_2WS)
        return MOTA_ERR_TIMEOUT;
    RCC->CFGR1 = (RCC->CFGR1 & ~RCC_CFGR1_SW) | RCC_CFGR1_SW_0; /* HSI16 */
    if (!stm32_wait(&RCC->CFGR1, RCC_CFGR1_SWS, RCC_CFGR1_SWS_0, TRIES))
        return MOTA_ERR_TIMEOUT;
    /* the flash's instruction cache (ICACHE): the flash driver invalidates it after each change */
    ICACHE->CR |= ICACHE_CR_EN;
    return MOTA_OK;
}
