/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's flash on an STM32 board: the part's driver (flash_f4.c, flash_u5.c) over the range
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
