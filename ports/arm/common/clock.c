/* SPDX-License-Identifier: Apache-2.0 */
/* The SysTick clock: a 1 ms tick on the processor clock, microseconds from its counter in between; a
 * guarded model past its deadline is stopped at a tick. */
#include "arm_int.h"
#include "mota/err.h"

#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define TICKS_PER_MS (MOTA_ARM_SYSCLK_HZ / 1000u)
_Static_assert(MOTA_ARM_SYSCLK_HZ % 1000000u == 0 && TICKS_PER_MS <= 0x1000000u,
               "whole ticks per microsecond; a millisecond fits SysTick's 24 bits");

static volatile uint32_t ms_count;

static void systick_tick(void) __attribute__((used));
static void systick_tick(void)
{
    ms_count++;
#ifdef MOTA_ARM_TICK_HOOK
    MOTA_ARM_TICK_HOOK(); /* the family's, each millisecond (mota_arm_config.h) */
#endif
}

/* The clock; and a guarded model past its deadline is stopped here (guard.c). */
__attribute__((naked)) void mota_arm_systick_handler(void)
{
    __asm__ volatile("push {r0, lr}\n\t"
                     "bl systick_tick\n\t"
                     "pop {r0, lr}\n\t"
                     "ldr r0, =mota_arm_guard_active\n\t" /* a model runs: is it overdue? */
                     "ldr r0, [r0]\n\t"
                     "cbz r0, 1f\n\t"
                     "push {r0, lr}\n\t"
                     "mov r0, lr\n\t"
                     "bl mota_arm_guard_overdue\n\t"
                     "pop {r1, lr}\n\t"
                     "cbz r0, 1f\n\t"
                     "ldr r0, =%c0\n\t"
                     "b mota_arm_guard_unwind\n\t"
                     "1:\n\t"
                     "bx lr\n\t" ::"i"(MOTA_ERR_SELFTEST_TIMEOUT));
}

/* A 1 ms SysTick: the clock, and a periodic wake-up for timed waits. */
void mota_arm_clock_init(void)
{
    SYST_CSR = 0;
    SYST_RVR = TICKS_PER_MS - 1u;
    SYST_CVR = 0;
    ms_count = 0;
    SYST_CSR = 7; /* processor clock, interrupt, enable */
}

/*
 * Milliseconds since boot and processor ticks into the current one, read consistently: the count, the
 * counter, SysTick's pending bit and the counter again, all between two equal reads of the count (the
 * interrupt did not run in between). A reload between the two counter reads, or a pending wrap the
 * interrupt has not counted yet (masked, or about to be taken), is one more millisecond. The pending bit is
 * read inside the loop: read after it, the interrupt could have taken it and not yet be seen in the count,
 * and the clock went back by a millisecond (a self-test once measured -290 us).
 */
static void clock_read(uint32_t *ms, uint32_t *ticks)
{
    uint32_t ms1, v1, v2, ms2;
    bool pending;
    do {
        ms1 = ms_count;
        v1 = SYST_CVR;
        pending = (SCB_ICSR & (1u << 26)) != 0;
        v2 = SYST_CVR;
        ms2 = ms_count;
    } while (ms1 != ms2);
    if (v2 > v1) { /* reloaded between the two reads */
        ms1++;
        v1 = v2;
    } else if (pending) { /* wrapped before the first read */
        ms1++;
    }
    *ms = ms1;
    *ticks = TICKS_PER_MS - 1u - v1;
}

uint64_t mota_arm_ticks(void)
{
    uint32_t ms, t;
    clock_read(&ms, &t);
    return (uint64_t)ms * TICKS_PER_MS + t;
}

uint64_t mota_arm_now_us(void *ctx)
{
    (void)ctx;
    uint32_t ms, t;
    clock_read(&ms, &t);
    return (uint64_t)ms * 1000u + t / (TICKS_PER_MS / 1000u);
}
