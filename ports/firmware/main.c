/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mota device firmware, the same for every board: the agent with the
 * update link on the board's transport, the models it installs run by their
 * self-tests and by INVOKE, the watchdog fed from the main loop. Everything
 * board-specific comes through the port contract (mota/port.h: struct
 * mota_port and "A board's firmware"); this file is what a product's main()
 * looks like.
 */
#include "mota/device.h"
#include "mota/err.h"
#include "mota/port.h"
#include "mota/proto.h"

#include <string.h>

#define WATCHDOG_MS 2000u

static struct mota_board_status board;
static struct mota_agent_config cfg;
static struct mota_device dev;
#ifndef MOTA_HEAD_BUFFER
#define MOTA_HEAD_BUFFER 2048u
#endif
/* container heads up to 2 KiB, 1 KiB in the min build (cmake/features.cmake; mota pack writes about 0.6 KiB) */
static uint8_t scratch[MOTA_HEAD_BUFFER];
static const char *decimal(char buf[12], int v)
{
    char *p = buf + 11;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    *p = 0;
    do
        *--p = (char)('0' + u % 10u);
    while ((u /= 10u) != 0);
    if (v < 0)
        *--p = '-';
    return p;
}

/* "ok" or "error -NNN": the firmware carries no reason-code strings; the launcher names the code in its log. */
static void log_result(const char *what, int ret)
{
    char num[12];
    mota_board_log(what);
    if (ret != MOTA_OK) {
        mota_board_log("error ");
        mota_board_log(decimal(num, ret));
    } else {
        mota_board_log("ok");
    }
    mota_board_log("\n");
}

/* ---- stack high-water mark per phase (measure-stack): the stack is painted
 * again before each step of the main loop; what the step touched is charged
 * to the phase it ran (interrupts included, as in the field) ---- */
enum phase { PH_BOOT, PH_LINK, PH_RECEIVE, PH_CHECK, PH_VERDICT, PH_INVOKE, PH_COMMIT, PH_N };
static const char *const phase_name[PH_N] = {"boot (journal, re-validation, install)",
                                             "link (HELLO, STATUS)",
                                             "upload: receive, hash, program",
                                             "upload: head check (signature)",
                                             "upload: digests, install, self-test",
                                             "invoke (model run)",
                                             "confirm, rollback, reboot"};
static uint32_t phase_max[PH_N];

static void charge(enum phase ph)
{
    uint32_t used = mota_board_stack_size() - mota_board_stack_unused();
    if (used > phase_max[ph]) {
        phase_max[ph] = used;
        char num[12];
        mota_board_log(MOTA_BOARD_TAG "stack high-water ");
        mota_board_log(decimal(num, (int)used));
        mota_board_log(" bytes in ");
        mota_board_log(phase_name[ph]);
        mota_board_log("\n");
    }
}

static enum phase phase_of(const struct mota_agent_timing *before)
{
    const struct mota_agent_timing *t = &dev.agent.timing;
    if (t->verdict_us != before->verdict_us || t->install_us != before->install_us)
        return PH_VERDICT;
    if (t->check_us != before->check_us)
        return PH_CHECK;
    switch (dev.link.last_cmd) {
    case MOTA_CMD_BEGIN:
    case MOTA_CMD_DATA: return PH_RECEIVE;
    case MOTA_CMD_INVOKE: return PH_INVOKE;
    case MOTA_CMD_CONFIRM:
    case MOTA_CMD_ROLLBACK:
    case MOTA_CMD_REBOOT:
    case MOTA_CMD_ABORT: return PH_COMMIT;
    default: return PH_LINK;
    }
}

/* A fault in the last run: the agent already reverted a model on trial;
 * the application reports where it happened. */
static void report_boot(void)
{
    static const char *const causes[] = {"power-on", "software", "watchdog", "fault"};
    mota_board_log(MOTA_BOARD_TAG "boot, reset cause ");
    mota_board_log(causes[board.boot.cause & 3]);
    mota_board_log("\n");
    if (board.boot.cause == MOTA_RESET_FAULT) {
        mota_board_log_hex(MOTA_BOARD_TAG "fault pc ", board.boot.fault_pc);
        mota_board_log_hex(MOTA_BOARD_TAG "fault address ", board.boot.fault_addr);
    }
}

int main(void)
{
    int ret;
    cfg.scratch = scratch;
    cfg.scratch_size = sizeof(scratch);
    cfg.max_trial_boots = 3;
    ret = mota_board_init(&cfg, &board);
    if (ret != MOTA_OK) {
        log_result(MOTA_BOARD_TAG "board init failed: ", ret);
        return ret;
    }
    report_boot();
    mota_board_watchdog_start(WATCHDOG_MS);
    ret = mota_device_start(&dev, &cfg, board.name);
    log_result(MOTA_BOARD_TAG "agent start: ", ret);
    if (board.measure_stack)
        charge(PH_BOOT); /* painted at reset */
    if (ret != MOTA_OK)
        return ret;
    if (board.provision_status != MOTA_OK)
        log_result(MOTA_BOARD_TAG "provisioning: ", board.provision_status);
    mota_board_log(MOTA_BOARD_TAG "ready\n");
    for (;;) {
        if (board.hang_on_trial && dev.agent.st[0].testing) {
            /* fault injection: the application locks up with the new model */
            mota_board_log(MOTA_BOARD_TAG "application hangs (a model is on trial)\n");
            for (;;)
                __asm__ volatile("wfi");
        }
        struct mota_agent_timing before = dev.agent.timing;
        if (board.measure_stack)
            mota_board_stack_repaint();
        ret = mota_device_step(&dev, 20);
        if (board.measure_stack)
            charge(phase_of(&before));
        if (ret != MOTA_OK && ret != MOTA_ERR_TRANSPORT)
            log_result(MOTA_BOARD_TAG "link: ", ret);
    }
}
