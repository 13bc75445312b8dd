/* SPDX-License-Identifier: Apache-2.0 */
/* Board bring-up of an STM32 (the contract's mota_board_init, mota/port.h): the clock, the drivers, the
 * reset cause, provisioning, the slots and exec RAM where board_layout.h puts them, the device id from the
 * part's unique id, and the Arm layer's port with its guard. */
#include "stm32.h"

#include "mota/err.h"

#include <string.h>

static struct mota_arm_board board; /* everything the port provides to the agent */
_Static_assert(MOTA_STM32_MODELS <= MOTA_AGENT_MAX_MODELS, "the build serves every slot pair the layout has");

int mota_board_init(struct mota_agent_config *cfg, struct mota_board_status *st)
{
    int ret;
    struct mota_arm_board *b = &board;
    memset(b, 0, sizeof(*b));
    memset(st, 0, sizeof(*st));
#if MOTA_STM32_QEMU
    if ((ret = mota_qemu_args_parse()) != MOTA_OK)
        return ret;
    st->hang_on_trial = mota_qemu_args.hang_on_trial != 0;
    st->measure_stack = mota_qemu_args.measure_stack != 0;
#endif
    int clock = stm32_clock_init();
    mota_arm_clock_init();
    stm32_usart_init(&b->uart); /* the console too: first */
    stm32_system_init(&b->sys, &st->boot);
    if (clock != MOTA_OK)
        mota_board_log(MOTA_BOARD_TAG "clock: an oscillator or the PLL never said ready: running on the "
                                      "reset clock (board_config.h)\n");
    MOTA_STM32_CRC_CLOCK_ON(); /* the CRC unit a legacy model's licence check is granted */
    if ((ret = stm32_flash_init(&b->flash)) != MOTA_OK)
        return ret;
#if MOTA_STM32_SERIES_N6
    /* ST's Neural-ART runtime, where the application links it (mota/arm.h): NPU models then install */
    b->npu = &mota_npu_runtime != NULL ? &mota_npu_runtime : NULL;
#endif
    b->exec_base = MOTA_STM32_EXEC;
    b->exec_size = MOTA_STM32_EXEC_SIZE;
    mota_arm_board_port(b, cfg, stm32_watchdog_period_ms);
    cfg->journal_offset = MOTA_STM32_JOURNAL;

    /* identity, keys and model names from the provisioning record; the part's own unique id */
    unsigned n = mota_arm_board_provision(b, cfg, st, b->flash.map(b->flash.ctx, MOTA_STM32_PROVISION, 4096), 4096);
    uint8_t uid[12];
    if (stm32_uid(uid)) {
        memcpy(cfg->device_id, uid, sizeof(uid));
        cfg->device_id_len = sizeof(uid);
    }
    /* the slots where the layout puts them; a record naming more models than it has is not half-applied */
    if (n > MOTA_STM32_MODELS) {
        st->provision_status = MOTA_ERR_PROVISION;
        cfg->n_keys = 0; /* every upload is refused, as for any record this firmware cannot serve */
        mota_board_log(MOTA_BOARD_TAG "provisioning: the record names more models than this board has slots for\n");
        n = cfg->n_models = MOTA_STM32_MODELS;
    }
    uint32_t exec = MOTA_STM32_EXEC_SIZE / n / 8u * 8u;
    for (unsigned m = 0; m < n; m++) {
        cfg->models[m].slot_offset[0] = MOTA_STM32_SLOTS + 2u * m * MOTA_STM32_SLOT_SIZE;
        cfg->models[m].slot_offset[1] = MOTA_STM32_SLOTS + (2u * m + 1u) * MOTA_STM32_SLOT_SIZE;
        cfg->models[m].slot_size = MOTA_STM32_SLOT_SIZE;
        cfg->models[m].exec_ram_addr = MOTA_STM32_EXEC + m * exec;
        cfg->models[m].exec_ram_size = exec;
    }
    return MOTA_OK;
}
