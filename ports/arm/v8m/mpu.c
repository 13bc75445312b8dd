/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The guard's MPU on Armv8-M (Cortex-M33, M55): regions of 32-byte
 * granules, base and limit (RBAR, RLAR), attributes through MAIR0. Regions
 * never overlap here: an access matching two faults.
 */
#include "arm_int.h"

#if !MOTA_ARM_V8M /* arm.cmake picked this file from -mcpu; the compiler says otherwise */
#error "the MPU file does not match the core's architecture (Armv8-M expected)"
#endif

#define MPU_TYPE REG(0xE000ED90u)
#define MPU_RNR REG(0xE000ED98u)
#define MPU_RBAR REG(0xE000ED9Cu)
#define MPU_RLAR REG(0xE000EDA0u)
#define MPU_MAIR0 REG(0xE000EDC0u)

#define ATTR_NORMAL 0u /* MAIR attribute 0: normal memory, non-cacheable */
#define ATTR_DEVICE 1u /* MAIR attribute 1: Device-nGnRE (a peripheral's registers) */
#define ATTR_MAIR0 0x0444u
#define CRC_PAGE_MASK 0x3FFu /* an STM32 peripheral's address block: 1 KiB */
#define AP_RW 0x2u           /* AP=01: read-write at any privilege */
#define AP_RO 0x6u           /* AP=11: read-only at any privilege */
#define XN 0x1u

extern uint32_t __guard_exit_start, __guard_exit_end;

static void region(unsigned n, uint32_t base, uint32_t end, uint32_t flags, uint32_t attr)
{
    MPU_RNR = n;
    MPU_RBAR = (base & ~31u) | flags;
    MPU_RLAR = ((end - 1u) & ~31u) | attr << 1 | 1u; /* AttrIndx, enabled */
}

bool mota_arm_mpu_grant(const struct mota_arm_guard_call *c, uint32_t stack, uint32_t stack_size)
{
    MPU_CTRL = 0;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    MPU_MAIR0 = ATTR_MAIR0;
    unsigned regions = (MPU_TYPE >> 8) & 0xFFu; /* every region the MPU has (DREGION), not only those used here */
    for (unsigned n = 0; n < regions; n++) {
        MPU_RNR = n;
        MPU_RLAR = 0;
    }
    /* the slot: code and params (XIP), params only (COPY: the code runs from its exec RAM) */
    if (c->code_base != 0)
        region(0, c->code_base, c->code_end, AP_RO | (c->ram_exec ? XN : 0), ATTR_NORMAL);
    region(1, c->ram_base, c->ram_end, AP_RW | (c->ram_exec ? 0 : XN), ATTR_NORMAL); /* exec RAM */
    if (c->io_end > c->io_base)
        region(2, c->io_base, c->io_end, AP_RW | XN, ATTR_NORMAL); /* input, then output (a run only) */
    region(3, stack, stack + stack_size, AP_RW | XN, ATTR_NORMAL); /* PSPLIM at its base (guard.c) */
    /* the exit stub and the CRC callbacks */
    region(4, (uint32_t)(uintptr_t)&__guard_exit_start, (uint32_t)(uintptr_t)&__guard_exit_end, AP_RO, ATTR_NORMAL);
    if (MOTA_ARM_CRC_BASE != 0u) /* the board's CRC unit, its own page: the licence check runs untrapped */
        region(5, MOTA_ARM_CRC_BASE & ~CRC_PAGE_MASK, (MOTA_ARM_CRC_BASE & ~CRC_PAGE_MASK) + CRC_PAGE_MASK + 1u,
               AP_RW | XN, ATTR_DEVICE);
    MPU_CTRL = 5u; /* ENABLE, PRIVDEFENA: privileged code keeps the default map */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    return true;
}
