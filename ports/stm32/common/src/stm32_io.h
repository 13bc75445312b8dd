/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How the STM32 drivers reach the part: every register access and every
 * write into the flash array goes through these, so that the same source
 * runs on the part (volatile accesses) and, in host tests, against a
 * register-level model of the peripheral (MOTA_STM32_IO_MODEL: the model's
 * functions, tests/unit/stm32f4_flash_model.c).
 */
#ifndef MOTA_STM32_IO_H
#define MOTA_STM32_IO_H

#include <stdint.h>

#ifdef MOTA_STM32_IO_MODEL
uint32_t mota_stm32_io_read32(uint32_t addr);
void mota_stm32_io_write32(uint32_t addr, uint32_t v);
/* the host's view of device memory at addr (the flash array), for reads and map */
const uint8_t *mota_stm32_io_mem(uint32_t addr);
#else
static inline uint32_t mota_stm32_io_read32(uint32_t addr)
{
    return *(volatile const uint32_t *)(uintptr_t)addr;
}

static inline void mota_stm32_io_write32(uint32_t addr, uint32_t v)
{
    *(volatile uint32_t *)(uintptr_t)addr = v;
}

static inline const uint8_t *mota_stm32_io_mem(uint32_t addr)
{
    return (const uint8_t *)(uintptr_t)addr;
}
#endif

#endif
