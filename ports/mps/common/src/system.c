/* SPDX-License-Identifier: Apache-2.0 */
/* SysTick clock, reset, reset cause, and the CMSDK APB watchdog. */
#include "mps.h"

#include "mota/err.h"

#include <string.h>

#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define TICKS_PER_MS (MOTA_MPS_SYSCLK_HZ / 1000u)
_Static_assert(MOTA_MPS_SYSCLK_HZ % 1000000u == 0 && TICKS_PER_MS <= 0x1000000u,
               "whole ticks per microsecond; a millisecond fits SysTick's 24 bits");

static volatile uint32_t ms_count;

static void systick_tick(void) __attribute__((used));
static void systick_tick(void)
{
    ms_count++;
}

/* The clock; and a guarded model past its deadline is stopped here (guard.c). */
__attribute__((naked)) void mps_systick_handler(void)
{
    __asm__ volatile("push {r0, lr}\n\t"
                     "bl systick_tick\n\t"
                     "pop {r0, lr}\n\t"
                     "ldr r0, =mps_guard_active\n\t" /* a model runs: is it overdue? */
                     "ldr r0, [r0]\n\t"
                     "cbz r0, 1f\n\t"
                     "push {r0, lr}\n\t"
                     "mov r0, lr\n\t"
                     "bl mps_guard_overdue\n\t"
                     "pop {r1, lr}\n\t"
                     "cbz r0, 1f\n\t"
                     "ldr r0, =%c0\n\t"
                     "b mps_guard_unwind\n\t"
                     "1:\n\t"
                     "bx lr\n\t" ::"i"(MOTA_ERR_SELFTEST_TIMEOUT));
}

/* A 1 ms SysTick: the clock, and a periodic wake-up for timed waits. */
void mps_clock_init(void)
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

/* Processor clock ticks since boot (MOTA_MPS_SYSCLK_HZ; under -icount shift=0, 1 ns of guest time is
 * one instruction). */
uint64_t mps_ticks(void)
{
    uint32_t ms, t;
    clock_read(&ms, &t);
    return (uint64_t)ms * TICKS_PER_MS + t;
}

uint64_t mps_now_us(void *ctx)
{
    (void)ctx;
    uint32_t ms, t;
    clock_read(&ms, &t);
    return (uint64_t)ms * 1000u + t / (TICKS_PER_MS / 1000u);
}

static void system_reset(void *ctx)
{
    (void)ctx;
    mps_reset_announce("software", 0, 0, 0);
}

static enum mota_reset_cause reset_cause(void *ctx)
{
    (void)ctx;
    return mps_args.cause;
}

static void watchdog_kick(void *ctx);

void mps_system_init(struct mota_system *s)
{
    s->now_us = mps_now_us;
    s->reset = system_reset;
    s->reset_cause = reset_cause;
    s->watchdog_kick = watchdog_kick;
    s->ctx = NULL;
}

/* ---- watchdog: the CMSDK APB watchdog (its interrupt is the NMI) ---- */
#define WDOG_BASE MOTA_MPS_WDOG_BASE
#define WDOG_LOAD REG(WDOG_BASE + 0x000u)
#define WDOG_VALUE REG(WDOG_BASE + 0x004u)
#define WDOG_CTRL REG(WDOG_BASE + 0x008u)
#define WDOG_RIS REG(WDOG_BASE + 0x010u)
#define WDOG_INTCLR REG(WDOG_BASE + 0x00Cu)
#define WDOG_LOCK REG(WDOG_BASE + 0xC00u)
#define WDOG_UNLOCK_KEY 0x1ACCE551u

static bool wdog_running;
static uint32_t wdog_period_ms; /* to the first expiry (NMI), after a kick */

uint32_t mps_watchdog_period_ms(void)
{
    return wdog_running ? wdog_period_ms : 0;
}

/* Time to the watchdog's first expiry, from its own counter: the tick count
 * behind mps_now_us can fall behind when the host stalls QEMU (SysTick
 * expiries are then merged), the watchdog's counter cannot. */
uint32_t mps_watchdog_left_ms(void)
{
    if (!wdog_running)
        return 0xFFFFFFFFu;
    if (WDOG_RIS & 1u)
        return 0; /* expired once already */
    return WDOG_VALUE / (MOTA_MPS_WDOG_HZ / 1000u);
}

void mota_board_watchdog_start(uint32_t timeout_ms)
{
    /* it interrupts at the first expiry and resets at the second: half the timeout each */
    _Static_assert(MOTA_MPS_WDOG_HZ % 2000u == 0, "whole watchdog ticks per half millisecond");
    const uint32_t per_ms = MOTA_MPS_WDOG_HZ / 2000u; /* 32-bit arithmetic: no 64-bit division linked */
    WDOG_LOCK = WDOG_UNLOCK_KEY;
    WDOG_LOAD = timeout_ms > 0xFFFFFFFFu / per_ms ? 0xFFFFFFFFu : timeout_ms * per_ms;
    WDOG_CTRL = 3u; /* INTEN | RESEN */
    WDOG_LOCK = 0;
    wdog_running = true;
    wdog_period_ms = timeout_ms / 2u;
}

static void watchdog_kick(void *ctx)
{
    (void)ctx;
    if (!wdog_running)
        return;
    WDOG_LOCK = WDOG_UNLOCK_KEY;
    WDOG_INTCLR = 1u; /* clears the interrupt and reloads the counter */
    WDOG_LOCK = 0;
}

/* The watchdog's first expiry: the main loop stopped kicking. Say so, and
 * let the second expiry reset the board, as the hardware intends. */
void mps_nmi_handler(void)
{
    static bool said;
    if (!said) {
        said = true;
        mota_board_log(MOTA_BOARD_TAG "watchdog expired: the board resets at the next expiry\n");
    }
    for (;;)
        __asm__ volatile("wfi");
}

/* ---- the last words before a reset ---- */
static void put_hex(char *p, uint32_t v)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 8; i++)
        p[i] = hex[(v >> (28 - 4 * i)) & 0xF];
}

void mps_reset_announce(const char *cause, uint32_t pc, uint32_t addr, uint32_t cfsr)
{
    /* "mota-BOARD: reset CAUSE pc=XXXXXXXX addr=XXXXXXXX cfsr=XXXXXXXX" */
    char line[96] = MOTA_BOARD_TAG "reset ";
    size_t n = strlen(line), c = strlen(cause);
    memcpy(line + n, cause, c);
    n += c;
    memcpy(line + n, " pc=", 4);
    put_hex(line + n + 4, pc);
    memcpy(line + n + 12, " addr=", 6);
    put_hex(line + n + 18, addr);
    memcpy(line + n + 26, " cfsr=", 6);
    put_hex(line + n + 32, cfsr);
    line[n + 40] = '\n';
    line[n + 41] = 0;
    mota_board_log(line);
    __asm__ volatile("dsb");
    SCB_AIRCR = 0x05FA0004u; /* SYSRESETREQ */
    __asm__ volatile("dsb");
    for (;;)
        __asm__ volatile("wfi");
}
