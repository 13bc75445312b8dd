/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The guard's MPU on Armv7-M (Cortex-M4, M7): PMSAv7, 8 regions on QEMU's
 * cores (MPU_TYPE.DREGION), each a power of two of at least 32 bytes and
 * aligned to its size (RBAR, RASR). Regions may overlap: the highest number
 * wins. There is no PSPLIM, so a no-access region as large as the model's
 * stack lies below it, in the highest region: an overflowing model faults at
 * its first access there (an Armv8-M core stops it at the SP write). A region
 * that is not a power of two aligned to its size is never rounded into a
 * larger grant: the call is refused (the board lays its slots, exec RAM, I/O
 * area and stack out so, board.c). Subregions are not used (QEMU 7.2 loses
 * the faults of sub-kilobyte ones: docs/porting.md).
 */
#include "arm_int.h"

#if MOTA_ARM_V8M /* arm.cmake picked this file from -mcpu; the compiler says otherwise */
#error "the MPU file does not match the core's architecture (Armv7-M expected)"
#endif

#define MPU_TYPE REG(0xE000ED90u)
#define MPU_RNR REG(0xE000ED98u)
#define MPU_RBAR REG(0xE000ED9Cu)
#define MPU_RASR REG(0xE000EDA0u)

#define RASR_XN (1u << 28)
#define RASR_AP_NONE (0u << 24) /* no access at any privilege */
#define RASR_AP_RW (3u << 24)   /* read-write at any privilege */
#define RASR_AP_RO (6u << 24)   /* read-only at any privilege */
/* normal memory, write-back write-allocate (TEX 001, C, B): as the default map has SRAM, so an M7's cache
 * sees the agent's and the model's accesses alike */
#define RASR_NORMAL ((1u << 19) | (1u << 17) | (1u << 16))
#define RASR_DEVICE (1u << 16) /* shareable device (TEX 000, B): a peripheral's registers */
#define CRC_PAGE_MASK 0x3FFu   /* an STM32 peripheral's address block: 1 KiB */
#define STACK_GUARD_REGION 7u

extern uint32_t __guard_exit_start, __guard_exit_end;

/* [base, end) as one region, if it is one: a power of two of 32 bytes or more, aligned to its size */
static bool region(unsigned n, uint32_t base, uint32_t end, uint32_t rasr)
{
    uint32_t size = end - base;
    if (end <= base || size < 32u || (size & (size - 1u)) != 0 || (base & (size - 1u)) != 0)
        return false;
    uint32_t log2 = 31u - (uint32_t)__builtin_clz(size);
    MPU_RBAR = base | (1u << 4) | n; /* VALID: the region number is this one */
    MPU_RASR = rasr | (log2 - 1u) << 1 | 1u;
    return true;
}

static bool regions(const struct mota_arm_guard_call *c, uint32_t stack, uint32_t stack_size)
{
    uint32_t code_xn = c->ram_exec ? RASR_XN : 0u, ram_xn = c->ram_exec ? 0u : RASR_XN;
    uint32_t exit_base = (uint32_t)(uintptr_t)&__guard_exit_start, exit_end = (uint32_t)(uintptr_t)&__guard_exit_end;
    bool ok = c->code_base == 0 || region(0, c->code_base, c->code_end, RASR_AP_RO | code_xn | RASR_NORMAL);
    ok = ok && region(1, c->ram_base, c->ram_end, RASR_AP_RW | ram_xn | RASR_NORMAL);
    if (c->io_end > c->io_base) /* input, then output (a run only) */
        ok = ok && region(2, c->io_base, c->io_end, RASR_AP_RW | RASR_XN | RASR_NORMAL);
    ok = ok && region(3, stack, stack + stack_size, RASR_AP_RW | RASR_XN | RASR_NORMAL);
    ok = ok && region(4, exit_base, exit_end, RASR_AP_RO | RASR_NORMAL);
    if (MOTA_ARM_CRC_BASE != 0u) /* the board's CRC unit, its own page: the licence check runs untrapped */
        ok =
            ok && region(5, MOTA_ARM_CRC_BASE & ~CRC_PAGE_MASK,
                         (MOTA_ARM_CRC_BASE & ~CRC_PAGE_MASK) + CRC_PAGE_MASK + 1u, RASR_AP_RW | RASR_XN | RASR_DEVICE);
    /* below the stack, whatever lies there: no access (the highest region wins over any grant) */
    return ok && region(STACK_GUARD_REGION, stack - stack_size, stack, RASR_AP_NONE | RASR_XN | RASR_NORMAL);
}

bool mota_arm_mpu_grant(const struct mota_arm_guard_call *c, uint32_t stack, uint32_t stack_size)
{
    MPU_CTRL = 0;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    unsigned n = (MPU_TYPE >> 8) & 0xFFu; /* every region the MPU has (DREGION), not only those used here */
    if (n <= STACK_GUARD_REGION)
        return false;
    for (unsigned i = 0; i < n; i++) {
        MPU_RNR = i;
        MPU_RASR = 0;
    }
    if (!regions(c, stack, stack_size)) {
        for (unsigned i = 0; i < n; i++) { /* nothing half-granted stays */
            MPU_RNR = i;
            MPU_RASR = 0;
        }
        return false;
    }
    MPU_CTRL = 5u; /* ENABLE, PRIVDEFENA: privileged code keeps the default map */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    return true;
}
