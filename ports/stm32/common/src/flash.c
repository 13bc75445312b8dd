/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's flash on an STM32 board: the part's driver (flash_f4.c, flash_u5.c, flash_h7.c, the N6's NOR
 * flash_n6.c) over the range
 * board_layout.h gives it, with the part's sectors and times from board_config.h; on QEMU, which models no
 * flash interface, the Arm layer's emulated flash stands in over the same range and sectors, held in the
 * launcher's file and seen through the machine's own flash array (mota/arm_qemu.h). */
#include "stm32.h"

#include "mota/err.h"

#if MOTA_STM32_QEMU
static const struct mota_qemu_flash_cfg part = {
    .window = MOTA_STM32_FLASH_BASE,
    .rom = true,
    .size = MOTA_STM32_FLASH_SIZE,
    .prog_size = MOTA_STM32_FLASH_PROG,
    .prog_block = MOTA_STM32_FLASH_PROG,
    .prog_typ_us = MOTA_STM32_FLASH_PROG_TYP_US,
    .prog_max_us = MOTA_STM32_FLASH_PROG_MAX_US,
    .flags = MOTA_STM32_FLASH_FLAGS,
    .n_regions = MOTA_STM32_FLASH_N_REGIONS,
    .regions = MOTA_STM32_FLASH_REGIONS,
    .n_owned = 2, /* the journal, then the slots and the provisioning record: the rest is the firmware */
    .owned = {{MOTA_STM32_JOURNAL, MOTA_STM32_FW1_ADDR - MOTA_STM32_FLASH_BASE - MOTA_STM32_JOURNAL},
              {MOTA_STM32_SLOTS, MOTA_STM32_FLASH_SIZE - MOTA_STM32_SLOTS}}};

int stm32_flash_init(struct mota_flash *f)
{
    return mota_qemu_flash_init(f, &part);
}
#elif MOTA_STM32_SERIES_F4
static const struct mota_stm32f4_flash_cfg part = {.base = MOTA_STM32_FLASH_BASE,
                                                   .regs = MOTA_STM32F4_FLASH_REGS,
                                                   .n_regions = MOTA_STM32_FLASH_N_REGIONS,
                                                   .regions = MOTA_STM32_FLASH_REGIONS,
                                                   .prog_typ_us = MOTA_STM32_FLASH_PROG_TYP_US,
                                                   .prog_max_us = MOTA_STM32_FLASH_PROG_MAX_US,
                                                   .now_us = mota_arm_now_us};

int stm32_flash_init(struct mota_flash *f)
{
    return mota_stm32f4_flash_init(f, &part);
}
#elif MOTA_STM32_SERIES_H7
/* both banks, each through its own registers; the M7's data cache holds flash lines (clock_h7.c) */
static const struct mota_stm32h7_flash_cfg part = {.base = MOTA_STM32_FLASH_BASE,
                                                   .size = MOTA_STM32_FLASH_SIZE,
                                                   .regs = MOTA_STM32H7_FLASH_REGS,
                                                   .dcache = true,
                                                   .erase_typ_us = MOTA_STM32_FLASH_ERASE_TYP_US,
                                                   .erase_max_us = MOTA_STM32_FLASH_ERASE_MAX_US,
                                                   .prog_typ_us = MOTA_STM32_FLASH_PROG_TYP_US,
                                                   .prog_max_us = MOTA_STM32_FLASH_PROG_MAX_US,
                                                   .now_us = mota_arm_now_us};

int stm32_flash_init(struct mota_flash *f)
{
    return mota_stm32h7_flash_init(f, &part);
}
#elif MOTA_STM32_SERIES_N6
/* the NOR behind XSPI2, read through its window (cached by the M55: clock_n6.c) */
static const struct mota_stm32n6_nor_cfg part = {.regs = MOTA_STM32N6_XSPI2_REGS,
                                                 .window = MOTA_STM32N6_XSPI2_WINDOW,
                                                 .base = MOTA_STM32_FLASH_BASE,
                                                 .size = MOTA_STM32_FLASH_SIZE,
                                                 .prescaler = MOTA_STM32_XSPI_PRESCALER,
                                                 .dcache = true,
                                                 .erase_typ_us = MOTA_STM32_FLASH_ERASE_TYP_US,
                                                 .erase_max_us = MOTA_STM32_FLASH_ERASE_MAX_US,
                                                 .prog_typ_us = MOTA_STM32_FLASH_PROG_TYP_US,
                                                 .prog_max_us = MOTA_STM32_FLASH_PROG_MAX_US,
                                                 .now_us = mota_arm_now_us};

/* A pin of port N to XSPIM's port 2 (alternate function 9), very fast; the chip select pulled up, so that
 * the NOR stays deselected while the pin is not driven, and DQS (as ST's board support has it). */
static void xspi_pin(uint32_t pin, bool pull_up)
{
    GPIO_TypeDef *g = GPION;
    g->MODER = (g->MODER & ~(3u << (2u * pin))) | 2u << (2u * pin);
    g->OSPEEDR |= 3u << (2u * pin);
    g->PUPDR = (g->PUPDR & ~(3u << (2u * pin))) | (pull_up ? 1u : 0u) << (2u * pin);
    g->AFR[pin / 8u] = (g->AFR[pin / 8u] & ~(0xFu << (4u * (pin % 8u)))) | 9u << (4u * (pin % 8u));
}

/* What the driver needs of the board first: the NOR's supply (VDDIO3, 1.8 V on the DK), the clocks of
 * XSPI2, its I/O manager and port N, the pins (UM3300; ST's board support read for them). SystemInit
 * (ST's FSBL system file) has reset XSPI2 and XSPIM: whatever the boot ROM left there is gone. */
int stm32_flash_init(struct mota_flash *f)
{
    RCC->AHB4ENSR = RCC_AHB4ENSR_PWRENS | RCC_AHB4ENSR_GPIONENS;
    (void)RCC->AHB4ENR;
    PWR->SVMCR3 |= PWR_SVMCR3_VDDIO3VRSEL; /* 1.8 V */
    PWR->SVMCR3 |= PWR_SVMCR3_VDDIO3SV;
    (void)PWR->SVMCR3;
    RCC->CCIPR6 &= ~RCC_CCIPR6_XSPI2SEL; /* HCLK5, whatever the boot ROM chose to load the firmware */
    RCC->AHB5ENSR = RCC_AHB5ENSR_XSPI2ENS | RCC_AHB5ENSR_XSPIMENS;
    (void)RCC->AHB5ENR;
    static const uint8_t pins[] = {2, 3, 4, 5, 6, 8, 9, 10, 11}; /* IO0-3, CLK, IO4-7 */
    xspi_pin(0, true);                                           /* DQS */
    xspi_pin(1, true);                                           /* NCS */
    for (unsigned i = 0; i < sizeof(pins); i++)
        xspi_pin(pins[i], false);
    return mota_stm32n6_nor_init(f, &part);
}
#else
static const struct mota_stm32u5_flash_cfg part = {.base = MOTA_STM32_FLASH_BASE,
                                                   .size = MOTA_STM32_FLASH_SIZE,
                                                   .regs = MOTA_STM32U5_FLASH_REGS,
                                                   .icache = MOTA_STM32U5_ICACHE_REGS,
                                                   .erase_typ_us = MOTA_STM32_FLASH_ERASE_TYP_US,
                                                   .erase_max_us = MOTA_STM32_FLASH_ERASE_MAX_US,
                                                   .prog_typ_us = MOTA_STM32_FLASH_PROG_TYP_US,
                                                   .prog_max_us = MOTA_STM32_FLASH_PROG_MAX_US,
                                                   .now_us = mota_arm_now_us};

int stm32_flash_init(struct mota_flash *f)
{
    return mota_stm32u5_flash_init(f, &part);
}
#endif
