/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32H747's default clock (RM0399 sections 6 and 8), on the STM32H747I-DISCO: the supply set once
 * after power-on as the board wires it (the SMPS feeding the core directly, UM2411: another setting on
 * this board can keep the part from starting again until its supply is cut), voltage scale 3 as at
 * reset, the HSI (64 MHz, on at reset, divider 1) as the system clock, every bus prescaler at 1 (64 MHz
 * is within each bus's limit at scale 3), the flash at 2 wait states (enough for 64 MHz at any scale: a
 * wait state too many only slows) and the programming delay of a 70 MHz or slower flash clock, then the M7's instruction and data caches on. No PLL: a product sets
 * its own clock tree for its peripherals. Every ready flag is read a bounded number of times; a part that
 * never says ready stays on its reset clock, said by the caller.
 */
#include "stm32.h"

#include "mota/err.h"

#define TRIES 100000u /* reads of a ready flag: milliseconds at 64 MHz */
#define SUPPLY (PWR_CR3_SMPSLEVEL | PWR_CR3_SMPSEXTHP | PWR_CR3_SMPSEN | PWR_CR3_LDOEN | PWR_CR3_BYPASS)

int stm32_clock_init(void)
{
    int ret = MOTA_OK;
    /* the supply configuration is written once per power-on; the voltage then reports ready */
    PWR->CR3 = (PWR->CR3 & ~SUPPLY) | PWR_CR3_SMPSEN;
    if (!stm32_wait(&PWR->CSR1, PWR_CSR1_ACTVOSRDY, PWR_CSR1_ACTVOSRDY, TRIES))
        ret = MOTA_ERR_TIMEOUT;
    RCC->CR = (RCC->CR & ~RCC_CR_HSIDIV) | RCC_CR_HSION; /* 64 MHz */
    if (!stm32_wait(&RCC->CR, RCC_CR_HSIRDY, RCC_CR_HSIRDY, TRIES))
        ret = MOTA_ERR_TIMEOUT;
    /* 2 wait states; the programming delay for a flash clock of 70 MHz or below (WRHIGHFREQ 0: its reset
     * value is the start-up one, for any clock) */
    FLASH->ACR = (FLASH->ACR & ~(FLASH_ACR_LATENCY | FLASH_ACR_WRHIGHFREQ)) | FLASH_ACR_LATENCY_2WS;
    if ((FLASH->ACR & (FLASH_ACR_LATENCY | FLASH_ACR_WRHIGHFREQ)) != FLASH_ACR_LATENCY_2WS)
        ret = MOTA_ERR_TIMEOUT;
    RCC->CFGR &= ~RCC_CFGR_SW; /* the HSI */
    if (!stm32_wait(&RCC->CFGR, RCC_CFGR_SWS, RCC_CFGR_SWS_HSI, TRIES))
        ret = MOTA_ERR_TIMEOUT;
    RCC->D1CFGR &= ~(RCC_D1CFGR_D1CPRE | RCC_D1CFGR_HPRE | RCC_D1CFGR_D1PPRE);
    RCC->D2CFGR &= ~(RCC_D2CFGR_D2PPRE1 | RCC_D2CFGR_D2PPRE2);
    RCC->D3CFGR &= ~RCC_D3CFGR_D3PPRE;
    /* the caches: the loader cleans what it writes for code (exec RAM is AXI SRAM), the flash driver
     * invalidates what a program or an erase changes; TCM (the firmware's RAM, the guard's I/O) is not cached */
    SCB_EnableICache();
    SCB_EnableDCache();
    return ret;
}
