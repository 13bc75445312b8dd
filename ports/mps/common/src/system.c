/* SPDX-License-Identifier: Apache-2.0 */
/* Reset, reset cause, and the CMSDK APB watchdog (the clock is the Arm layer's SysTick). */
#include "mps.h"

#include "mota/err.h"

#include <string.h>

static void system_reset(void *ctx)
{
    (void)ctx;
    mota_qemu_reset("software", 0, 0, 0);
}

static enum mota_reset_cause reset_cause(void *ctx)
{
    (void)ctx;
    return mota_qemu_args.cause;
}

static void watchdog_kick(void *ctx);

void mps_system_init(struct mota_system *s)
{
    s->now_us = mota_arm_now_us;
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

/* Time to the watchdog's first expiry, from its own counter (the Arm layer's guard asks): the tick count
 * behind mota_arm_now_us can fall behind when the host stalls QEMU (SysTick expiries are then merged), the
 * watchdog's counter cannot. */
uint32_t mota_arm_port_watchdog_left_ms(void)
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

/* The Arm layer's last words before a reset are the launcher's */
void mota_arm_port_reset(const char *cause, uint32_t pc, uint32_t addr, uint32_t cfsr)
{
    mota_qemu_reset(cause, pc, addr, cfsr);
}
