/* SPDX-License-Identifier: Apache-2.0 */
/* Board bring-up (the contract's mota_board_init, mota/port.h): the drivers, provisioning, the layout
 * of the slots, the device profile, and inference under the Arm layer's guard. */
#include "mps.h"

#include "mota/err.h"

#include <string.h>

static struct mota_arm_board board; /* everything the port provides to the agent */

/* The emulated flash (mota/arm_qemu.h): a RAM window standing for an external octal NOR like the
 * STM32N6570-DK's MX66UW1G45G (../shared/research/stm32-flash-facts.md): 4 KiB sectors erased in 25 ms (~)
 * / 400 ms, 256-byte pages programmed in 0.15 ms (~) / 0.75 ms (~), no ECC unless flash-ecc */
static const struct mota_qemu_flash_cfg nor = {
    .window = MOTA_MPS_FLASH_BASE,
    .size = MOTA_MPS_FLASH_SIZE,
    .prog_size = MOTA_MPS_PROG,
    .prog_block = 256,
    .prog_typ_us = 150,
    .prog_max_us = 750,
    .n_regions = 1,
    .regions = {{MOTA_MPS_FLASH_SIZE / MOTA_MPS_SECTOR, MOTA_MPS_SECTOR, 25000, 400000}},
    .n_owned = 1,
    .owned = {{0, MOTA_MPS_FLASH_SIZE}}};

/* The A/B slot pairs after the journal, and each model's exec RAM. Armv8-M: equal shares in whole sectors.
 * PMSAv7: each a power of two aligned to its size, so that it is one MPU region (ports/arm/v7m/mpu.c): slots of
 * 4 MiB for one model, 2 MiB for two, starting at the first such boundary. */
static void layout(unsigned n, uint32_t *slot, uint32_t *first, uint32_t *exec)
{
    uint32_t share = (MOTA_MPS_PROVISION - MOTA_MPS_SLOTS) / (2u * n);
    if (MOTA_ARM_V8M) {
        *slot = share / MOTA_MPS_SECTOR * MOTA_MPS_SECTOR;
        *first = MOTA_MPS_SLOTS;
        *exec = MOTA_MPS_EXEC_SIZE / n / 8u * 8u;
        return;
    }
    *slot = 1u << (31u - (uint32_t)__builtin_clz(share));
    while ((uint64_t)*slot * (2u * n + 1u) > MOTA_MPS_PROVISION) /* the journal's first boundary, then 2n */
        *slot >>= 1;
    *first = *slot;
    *exec = 1u << (31u - (uint32_t)__builtin_clz(MOTA_MPS_EXEC_SIZE / n));
}

int mota_board_init(struct mota_agent_config *cfg, struct mota_board_status *st)
{
    int ret;
    struct mota_arm_board *b = &board;
    memset(b, 0, sizeof(*b));
    memset(st, 0, sizeof(*st));
    mota_arm_clock_init();
    if ((ret = mota_qemu_args_parse()) != MOTA_OK)
        return ret;
    const struct mota_qemu_args *a = &mota_qemu_args;
    st->boot = (struct mota_board_boot){a->cause, a->fault_pc, a->fault_addr, a->fault_cfsr};
    st->hang_on_trial = a->hang_on_trial != 0;
    st->measure_stack = a->measure_stack != 0;
    if ((ret = mota_qemu_flash_init(&b->flash, &nor)) != MOTA_OK)
        return ret;
    mps_system_init(&b->sys);
    mps_uart_init(&b->uart);
    b->exec_base = MOTA_MPS_EXEC_BASE; /* QEMU models no caches: the Arm layer's maintenance is barriers there */
    b->exec_size = MOTA_MPS_EXEC_SIZE;
    mota_arm_board_port(b, cfg, mps_watchdog_period_ms);
    cfg->journal_offset = MOTA_MPS_JOURNAL;

    /* identity, keys and model names from the provisioning sector */
    unsigned n = mota_arm_board_provision(b, cfg, st, b->flash.map(b->flash.ctx, MOTA_MPS_PROVISION, MOTA_MPS_SECTOR),
                                          MOTA_MPS_SECTOR);
    uint32_t slot, first, exec;
    layout(n, &slot, &first, &exec);
    for (unsigned m = 0; m < n; m++) {
        cfg->models[m].slot_offset[0] = first + 2u * m * slot;
        cfg->models[m].slot_offset[1] = first + (2u * m + 1u) * slot;
        cfg->models[m].slot_size = slot;
        cfg->models[m].exec_ram_addr = MOTA_MPS_EXEC_BASE + m * exec;
        cfg->models[m].exec_ram_size = exec;
    }
    return MOTA_OK;
}
