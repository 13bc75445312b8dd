/* SPDX-License-Identifier: Apache-2.0 */
/* The core: its FPU and fault handlers switched on, the device profile read from it, cache maintenance,
 * and the main stack's high-water mark. */
#include "arm_int.h"

#include <string.h>

#define STACK_PAINT 0xA5A5A5A5u
#define CCR_DC (1u << 16)
#define CCR_IC (1u << 17)
#define SCB_CCSIDR REG(0xE000ED80u)
#define SCB_CSSELR REG(0xE000ED84u)
#define SCB_ICIMVAU REG(0xE000EF58u)
#define SCB_DCCMVAC REG(0xE000EF68u)

extern uint32_t __stack_limit, __stack_top;
extern uint32_t __guard_ram_start, __guard_ram_end; /* the model's stack and I/O areas (NOLOAD) */

void mota_arm_fpu_enable(void)
{
    SCB_CPACR |= 0xFu << 20; /* CP10, CP11: the FPU the models use */
    __asm__ volatile("dsb\n\tisb");
}

void mota_arm_core_init(void)
{
    memset(&__guard_ram_start, 0, (size_t)((uint8_t *)&__guard_ram_end - (uint8_t *)&__guard_ram_start));
    mota_arm_stack_repaint();
    SCB_SHCSR |= (1u << 16) | (1u << 17) | (1u << 18) | (MOTA_ARM_V8M ? 1u << 19 : 0u); /* MemManage, Bus, Usage,
                                                                                            Secure faults */
}

/* ---- the stack's high-water mark: painted, and the untouched bytes counted ---- */

void mota_arm_stack_repaint(void)
{
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (uint32_t *p = &__stack_limit; (uintptr_t)p < sp - 64u; p++)
        *p = STACK_PAINT;
}

uint32_t mota_arm_stack_size(void)
{
    return (uint32_t)((uintptr_t)&__stack_top - (uintptr_t)&__stack_limit);
}

uint32_t mota_arm_stack_unused(void)
{
    const uint32_t *p = &__stack_limit;
    while (p < &__stack_top && *p == STACK_PAINT)
        p++;
    return (uint32_t)((uintptr_t)p - (uintptr_t)&__stack_limit);
}

/* ---- the device profile, from the core ---- */

void mota_arm_profile(struct mota_device_profile *p)
{
    p->cpu_part = (SCB_CPUID >> 4) & 0xFFFu;
    /* an FPU exists (MVFR0 single precision field) and CP10/CP11 are on */
    p->fpu_enabled = (FPU_MVFR0 & 0xF0u) != 0 && ((SCB_CPACR >> 20) & 0xFu) == 0xFu;
#if defined(__ARM_PCS_VFP)
    p->float_abi = 2;
#elif defined(__ARM_FP)
    p->float_abi = 1;
#endif
    /* Secure state: the Security Extension is present, TT says this code is
     * Secure, and the Non-secure CPUID alias (RAZ from Non-secure) answers */
#if MOTA_ARM_V8M
    if (((SCB_ID_PFR1 >> 4) & 0xFu) != 0) {
        uint32_t tt, addr = (uint32_t)(uintptr_t)&mota_arm_profile;
        __asm__ volatile("tt %0, %1" : "=r"(tt) : "r"(addr));
        p->secure = ((tt >> 22) & 1u) && SCB_CPUID_NS != 0;
    }
#endif /* Armv7-M has no Security Extension (and no TT): never Secure */
}

/* ---- cache maintenance by address (Cortex-M7, M55; a no-op but for the barriers where caches are off or
 * absent, as on QEMU, which models none) ---- */

static uint32_t dcache_line(void)
{
    SCB_CSSELR = 0; /* level 1 data */
    __asm__ volatile("dsb");
    return 1u << ((SCB_CCSIDR & 7u) + 4u);
}

void mota_arm_clean_dcache(void *ctx, uint32_t addr, uint32_t len)
{
    (void)ctx;
    __asm__ volatile("dsb" ::: "memory");
    if ((SCB_CCR & CCR_DC) != 0 && len != 0) {
        uint32_t line = dcache_line();
        for (uint32_t a = addr & ~(line - 1u); a - (addr & ~(line - 1u)) < len + (addr & (line - 1u)); a += line)
            SCB_DCCMVAC = a;
    }
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

void mota_arm_invalidate_icache(void *ctx, uint32_t addr, uint32_t len)
{
    (void)ctx;
    __asm__ volatile("dsb" ::: "memory");
    if ((SCB_CCR & CCR_IC) != 0 && len != 0) {
        for (uint32_t a = addr & ~31u; a - (addr & ~31u) < len + (addr & 31u); a += 32u) /* 32-byte lines */
            SCB_ICIMVAU = a;
    }
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}
