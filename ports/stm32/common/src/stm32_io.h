/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How the STM32 drivers reach the part: every register access and every
 * write into or read of the flash array goes through these, so that the same
 * source runs on the part (volatile accesses) and, in host tests, against a
 * register-level model of the peripheral (MOTA_STM32_IO_MODEL: the model's
 * functions, tests/unit/stm32f4_flash_model.c and stm32u5_flash_model.c).
 */
#ifndef MOTA_STM32_IO_H
#define MOTA_STM32_IO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef MOTA_STM32_IO_MODEL
uint32_t mota_stm32_io_read32(uint32_t addr);
void mota_stm32_io_write32(uint32_t addr, uint32_t v);
/* one byte of a data register (the N6's XSPI DR: a transfer's last 1 to 3 bytes, as many as it has) */
uint8_t mota_stm32_io_read8(uint32_t addr);
void mota_stm32_io_write8(uint32_t addr, uint8_t v);
/* the host's view of device memory at addr (the flash array), for reads and map */
const uint8_t *mota_stm32_io_mem(uint32_t addr);
/* len bytes of the flash array from addr, read by the CPU: the U5 model raises its ECC errors (and the
 * NMI) here */
void mota_stm32_io_copy(void *dst, uint32_t addr, size_t len);
/* interrupts masked (PRIMASK set), returning the mask as it was; and that mask restored */
uint32_t mota_stm32_io_irq_off(void);
void mota_stm32_io_irq_restore(uint32_t primask);
/* the accesses before it done, and seen by what follows (DSB, ISB): after cache maintenance by address
 * (SCB's DCIMVAC, ICIALLU: written with mota_stm32_io_write32) and after a flash word's last write */
void mota_stm32_io_barrier(void);
#else
static inline uint32_t mota_stm32_io_read32(uint32_t addr)
{
    return *(volatile const uint32_t *)(uintptr_t)addr;
}

static inline void mota_stm32_io_write32(uint32_t addr, uint32_t v)
{
    *(volatile uint32_t *)(uintptr_t)addr = v;
}

static inline uint8_t mota_stm32_io_read8(uint32_t addr)
{
    return *(volatile const uint8_t *)(uintptr_t)addr;
}

static inline void mota_stm32_io_write8(uint32_t addr, uint8_t v)
{
    *(volatile uint8_t *)(uintptr_t)addr = v;
}

static inline const uint8_t *mota_stm32_io_mem(uint32_t addr)
{
    return (const uint8_t *)(uintptr_t)addr;
}

/* The barriers keep the loads between the caller's marks of "a read in progress", and the DSB and ISB
 * have an ECC error's NMI taken before the caller looks at what it recorded. */
static inline void mota_stm32_io_copy(void *dst, uint32_t addr, size_t len)
{
    __asm volatile("" ::: "memory");
    memcpy(dst, (const void *)(uintptr_t)addr, len);
    __asm volatile("dsb\n\tisb" ::: "memory");
}

static inline uint32_t mota_stm32_io_irq_off(void)
{
    uint32_t primask;
    __asm volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask)::"memory");
    return primask;
}

static inline void mota_stm32_io_irq_restore(uint32_t primask)
{
    __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
}

static inline void mota_stm32_io_barrier(void)
{
    __asm volatile("dsb\n\tisb" ::: "memory");
}
#endif

#endif
