/*
 * The mota device firmware for QEMU mps3-an547: the agent with the update
 * link on UART0, the models it installs run by their self-tests and by
 * INVOKE, the watchdog fed from the main loop. Everything board-specific
 * comes from the port (mota/an547.h); this file is what a product's main()
 * looks like.
 */
#include "mota/an547.h"
#include "mota/crypto.h"
#include "mota/device.h"
#include "mota/err.h"

#include <string.h>

#define WATCHDOG_MS 2000u

static struct mota_an547 board;
static struct mota_agent_config cfg;
static struct mota_device dev;
static uint8_t scratch[MOTA_AGENT_SCRATCH_MIN];
static uint8_t selftest_out[4096];
static uint8_t crypto_arena[6144] __attribute__((aligned(8))); /* mbed TLS bignums: 3.6 KiB peak for P-256 */

static void log_result(const char *what, int ret)
{
    mota_an547_log(what);
    mota_an547_log(ret == MOTA_OK ? "ok" : mota_err_name(ret));
    mota_an547_log("\n");
}

/* A fault in the last run: the agent already reverted a model on trial;
 * the application reports where it happened. */
static void report_boot(void)
{
    static const char *const causes[] = {"power-on", "software", "watchdog", "fault"};
    mota_an547_log("mota-an547: boot, reset cause ");
    mota_an547_log(causes[board.boot.cause & 3]);
    mota_an547_log("\n");
    if (board.boot.cause == MOTA_RESET_FAULT) {
        mota_an547_log_hex("mota-an547: fault pc ", board.boot.fault_pc);
        mota_an547_log_hex("mota-an547: fault address ", board.boot.fault_addr);
    }
}

int main(void)
{
    int ret = mota_crypto_setup(crypto_arena, sizeof(crypto_arena));
    cfg.scratch = scratch;
    cfg.scratch_size = sizeof(scratch);
    cfg.selftest_buf = selftest_out;
    cfg.selftest_buf_size = sizeof(selftest_out);
    cfg.infer = mota_an547_infer;
    cfg.max_trial_boots = 3;
    if (ret == MOTA_OK)
        ret = mota_an547_init(&board, &cfg);
    if (ret != MOTA_OK) {
        log_result("mota-an547: board init failed: ", ret);
        return ret;
    }
    report_boot();
    mota_an547_watchdog_start(WATCHDOG_MS);
    ret = mota_device_start(&dev, &cfg, &board.uart, board.name);
    log_result("mota-an547: agent start: ", ret);
    if (ret != MOTA_OK)
        return ret;
    if (board.provision_status != MOTA_OK)
        log_result("mota-an547: provisioning: ", board.provision_status);
    mota_an547_log("mota-an547: ready\n");
    for (;;) {
        if (board.hang_on_trial && dev.agent.st[0].testing) {
            /* fault injection: the application locks up with the new model */
            mota_an547_log("mota-an547: application hangs (a model is on trial)\n");
            for (;;)
                __asm__ volatile("wfi");
        }
        ret = mota_device_step(&dev, 20);
        if (ret != MOTA_OK && ret != MOTA_ERR_TRANSPORT)
            log_result("mota-an547: link: ", ret);
    }
}
