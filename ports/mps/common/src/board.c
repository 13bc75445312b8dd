/* SPDX-License-Identifier: Apache-2.0 */
/* Board bring-up (the contract's mota_board_init, mota/port.h): the drivers, provisioning, the layout
 * of the slots, the device profile, and inference under the Arm layer's guard. */
#include "mps.h"

#include "mota/err.h"
#include "mota/features.h"
#include "mota/loader.h"
#include "mota/provision.h"

#include <string.h>

/* Everything the port provides to the agent. */
static struct mota_board {
    struct mota_flash flash;
    struct mota_transport uart;
    struct mota_system sys;
    struct mota_loader_mem mem;
    struct mota_port port; /* the above, and the inference under guard: what the agent is given */
    struct mota_arm_infer infer;
    char name[32];
} board;

/* The loader writes models into the exec RAM only. */
static void *exec_map(void *ctx, uint32_t addr, uint32_t len, bool write)
{
    (void)ctx, (void)write;
    bool inside =
        addr >= MOTA_MPS_EXEC_BASE && (uint64_t)addr + len <= (uint64_t)MOTA_MPS_EXEC_BASE + MOTA_MPS_EXEC_SIZE;
    return inside ? (void *)(uintptr_t)addr : NULL;
}

static struct mota_provision prov;

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

/* The port the agent is given: the drivers, the loader's memory (QEMU models no caches: the Arm layer's
 * maintenance is barriers there), inference under guard. */
static void port_fill(struct mota_board *b, const struct mota_agent_config *cfg)
{
    b->mem = (struct mota_loader_mem){
        .map = exec_map, .clean_dcache = mota_arm_clean_dcache, .invalidate_icache = mota_arm_invalidate_icache};
    b->port = (struct mota_port){.flash = &b->flash, .sys = &b->sys, .transport = &b->uart, .mem = &b->mem};
    b->infer = (struct mota_arm_infer){
        .cfg = cfg, .flash_base = MOTA_MPS_FLASH_BASE, .watchdog_period_ms = mps_watchdog_period_ms};
    mota_arm_infer_init(&b->infer, &b->port, &b->mem);
}

/* The device profile: the core's (mota_arm_profile), and what these boards run. */
static void profile(struct mota_device_profile *p)
{
    memset(p, 0, sizeof(*p));
    mota_arm_profile(p);
    /* CPU models of both families: the NBIN v8 layout (mota CPU ABI) and X-CUBE-AI legacy (a build with it:
     * without, a legacy container is refused by its family before any erase) */
    p->reloc_families = (1u << MOTA_NBIN_FAMILY_NPU) | (MOTA_FEATURE_LEGACY ? 1u << MOTA_NBIN_FAMILY_LEGACY : 0u);
    p->has_ll_aton = false; /* no Neural-ART NPU on these boards: CPU models only */
    p->install_modes = (1u << MOTA_INSTALL_XIP) | (1u << MOTA_INSTALL_COPY);
    p->split_policy = MOTA_SPLIT_ALLOWED;
    p->name = MOTA_BOARD_NAME; /* mota sim --profile NAME simulates this board */
}

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
    struct mota_board *b = &board;
    memset(b, 0, sizeof(*b));
    memset(st, 0, sizeof(*st));
    mota_arm_clock_init();
    if ((ret = mota_qemu_args_parse()) != MOTA_OK)
        return ret;
    st->boot = (struct mota_board_boot){mota_qemu_args.cause, mota_qemu_args.fault_pc, mota_qemu_args.fault_addr,
                                        mota_qemu_args.fault_cfsr};
    st->hang_on_trial = mota_qemu_args.hang_on_trial != 0;
    st->measure_stack = mota_qemu_args.measure_stack != 0;
    st->name = b->name;
    if ((ret = mota_qemu_flash_init(&b->flash, &nor)) != MOTA_OK)
        return ret;
    mps_system_init(&b->sys);
    mps_uart_init(&b->uart);
    port_fill(b, cfg);
    cfg->port = &b->port;
    cfg->selftest_buf = mota_arm_guard_io(); /* lent: the model's I/O area is the self-test's and INVOKE's */
    cfg->selftest_buf_size = MOTA_ARM_GUARD_IO;
    profile(&cfg->profile);
    cfg->journal_offset = MOTA_MPS_JOURNAL;

    /* identity, keys and model names from the provisioning sector */
    st->provision_status =
        mota_provision_decode(b->flash.map(NULL, MOTA_MPS_PROVISION, MOTA_MPS_SECTOR), MOTA_MPS_SECTOR, &prov);
    unsigned n = 1;
    if (st->provision_status == MOTA_OK &&
        (prov.n_models > MOTA_AGENT_MAX_MODELS || prov.n_keys > MOTA_AGENT_MAX_KEYS)) {
        st->provision_status = MOTA_ERR_PROVISION; /* more than this firmware serves: not half-applied */
        mota_board_log(MOTA_BOARD_TAG "provisioning: the record names more models or keys than this firmware "
                                      "serves (MOTA_AGENT_MAX_MODELS, MOTA_AGENT_MAX_KEYS)\n");
    }
    if (st->provision_status == MOTA_OK) {
        mota_provision_apply(&prov, cfg);
        n = prov.n_models ? prov.n_models : 1;
        memcpy(b->name, prov.name, sizeof(b->name));
    } else {
        cfg->n_keys = 0; /* every upload is refused: MOTA_ERR_NOT_PROVISIONED */
        strcpy(b->name, "mota-" MOTA_BOARD_NAME " (not provisioned)");
    }
    uint32_t slot, first, exec;
    layout(n, &slot, &first, &exec);
    cfg->n_models = n;
    for (unsigned m = 0; m < n; m++) {
        cfg->models[m].c_name = st->provision_status == MOTA_OK ? prov.models[m] : "network";
        cfg->models[m].slot_offset[0] = first + 2u * m * slot;
        cfg->models[m].slot_offset[1] = first + (2u * m + 1u) * slot;
        cfg->models[m].slot_size = slot;
        cfg->models[m].exec_ram_addr = MOTA_MPS_EXEC_BASE + m * exec;
        cfg->models[m].exec_ram_size = exec;
    }
    return MOTA_OK;
}
