/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32N657's clock as the firmware leaves it (RM0486 "Reset and clock control"): the HSI (64 MHz,
 * divider 1) as the CPU's clock and the system buses', whatever the boot ROM chose while it loaded the
 * firmware (a PLL it set stays running, unused); USART1's kernel clock the HSI, so that the console's baud
 * rate does not hang on the buses' prescalers; then the M55's instruction and data caches on. No PLL, no
 * overdrive: a product sets its own clock tree (the NPU's among it). Every ready flag is read a bounded
 * number of times; a part that never says ready keeps the clock it had, said by the caller.
 */
#include "stm32.h"

#include "mota/err.h"

#define TRIES 100000u /* reads of a ready flag: milliseconds at 64 MHz */

int stm32_clock_init(void)
{
    int ret = MOTA_OK;
    RCC->CSR = RCC_CSR_HSIONS; /* on at reset: said again, for the switch below needs it */
    if (!stm32_wait(&RCC->SR, RCC_SR_HSIRDY, RCC_SR_HSIRDY, TRIES))
        return MOTA_ERR_TIMEOUT;
    RCC->HSICFGR &= ~RCC_HSICFGR_HSIDIV;                /* 64 MHz */
    RCC->CFGR1 &= ~(RCC_CFGR1_CPUSW | RCC_CFGR1_SYSSW); /* the HSI, for the CPU and the buses */
    if (!stm32_wait(&RCC->CFGR1, RCC_CFGR1_CPUSWS | RCC_CFGR1_SYSSWS, 0u, TRIES))
        ret = MOTA_ERR_TIMEOUT;
    RCC->CCIPR13 = (RCC->CCIPR13 & ~RCC_CCIPR13_USART1SEL) | RCC_CCIPR13_USART1SEL_2 | RCC_CCIPR13_USART1SEL_1;
    SCB_EnableICache();
    SCB_EnableDCache();
    return ret;
}
