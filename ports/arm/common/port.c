/* SPDX-License-Identifier: Apache-2.0 */
/* What every board's mota_board_init shares on the Arm layer (mota/arm.h "A board"): the struct mota_port
 * the agent is given with inference under guard, the device profile, and the provisioning record applied. */
#include "mota/arm.h"
#include "mota/err.h"
#include "mota/features.h"
#include "mota/nbin.h"
#include "mota_arm_config.h"

#include <string.h>

/* The loader writes models into the board's exec RAM only. */
static void *exec_map(void *ctx, uint32_t addr, uint32_t len, bool write)
{
    const struct mota_arm_board *b = ctx;
    (void)write;
    bool inside = addr >= b->exec_base && (uint64_t)addr + len <= (uint64_t)b->exec_base + b->exec_size;
    return inside ? (void *)(uintptr_t)addr : NULL;
}

/* The device profile: the core's (mota_arm_profile), and what these boards run. */
static void profile(struct mota_device_profile *p, const struct mota_arm_npu *npu)
{
    memset(p, 0, sizeof(*p));
    mota_arm_profile(p);
    /* CPU models of both families: the NBIN v8 layout (mota CPU ABI) and X-CUBE-AI legacy (a build with it:
     * without, a legacy container is refused by its family before any erase) */
    p->reloc_families = (1u << MOTA_NBIN_FAMILY_NPU) | (MOTA_FEATURE_LEGACY ? 1u << MOTA_NBIN_FAMILY_LEGACY : 0u);
    /* ST's NPU models where the application links ST's runtime (an N6's): else CPU models only */
    p->has_ll_aton = npu != NULL;
    if (npu != NULL) {
        p->ll_aton_major = npu->major;
        p->ll_aton_minor = npu->minor;
        p->ll_aton_micro = npu->micro;
    }
    p->install_modes = (1u << MOTA_INSTALL_XIP) | (1u << MOTA_INSTALL_COPY);
    p->split_policy = MOTA_SPLIT_ALLOWED;
    p->name = MOTA_BOARD_NAME; /* mota sim --profile NAME simulates this board */
}

void mota_arm_board_port(struct mota_arm_board *b, struct mota_agent_config *cfg, uint32_t (*watchdog_period_ms)(void))
{
    b->mem = (struct mota_loader_mem){.map = exec_map,
                                      .ctx = b,
                                      .clean_dcache = mota_arm_clean_dcache,
                                      .invalidate_icache = mota_arm_invalidate_icache};
    b->port = (struct mota_port){.flash = &b->flash, .sys = &b->sys, .transport = &b->uart, .mem = &b->mem};
    b->infer = (struct mota_arm_infer){
        .cfg = cfg, .npu = b->npu, .flash_base = b->flash.xip_base, .watchdog_period_ms = watchdog_period_ms};
    mota_arm_infer_init(&b->infer, &b->port, &b->mem);
    cfg->port = &b->port;
    cfg->selftest_buf = mota_arm_guard_io(); /* lent: the model's I/O area is the self-test's and INVOKE's */
    cfg->selftest_buf_size = MOTA_ARM_GUARD_IO;
    profile(&cfg->profile, b->npu);
}

unsigned mota_arm_board_provision(struct mota_arm_board *b, struct mota_agent_config *cfg, struct mota_board_status *st,
                                  const uint8_t *rec, size_t len)
{
    st->name = b->name;
    st->provision_status = rec != NULL ? mota_provision_decode(rec, len, &b->prov) : MOTA_ERR_FLASH_IO;
    if (st->provision_status == MOTA_OK &&
        (b->prov.n_models > MOTA_AGENT_MAX_MODELS || b->prov.n_keys > MOTA_AGENT_MAX_KEYS)) {
        st->provision_status = MOTA_ERR_PROVISION; /* more than this firmware serves: not half-applied */
        mota_board_log(MOTA_BOARD_TAG "provisioning: the record names more models or keys than this firmware "
                                      "serves (MOTA_AGENT_MAX_MODELS, MOTA_AGENT_MAX_KEYS)\n");
    }
    unsigned n = 1;
    if (st->provision_status == MOTA_OK) {
        mota_provision_apply(&b->prov, cfg);
        n = b->prov.n_models ? b->prov.n_models : 1;
        memcpy(b->name, b->prov.name, sizeof(b->name) - 1);
    } else {
        cfg->n_keys = 0; /* every upload is refused: MOTA_ERR_NOT_PROVISIONED */
        static const char unprovisioned[] = "mota-" MOTA_BOARD_NAME " (not provisioned)";
        _Static_assert(sizeof(unprovisioned) <= sizeof(b->name), "the board's name fits");
        memcpy(b->name, unprovisioned, sizeof(unprovisioned));
    }
    cfg->n_models = n;
    for (unsigned m = 0; m < n; m++)
        cfg->models[m].c_name = st->provision_status == MOTA_OK ? b->prov.models[m] : "network";
    return n;
}

/* The contract's log of a number (mota/port.h): the family gives mota_board_log. */
void mota_board_log_hex(const char *label, uint32_t v)
{
    static const char hex[] = "0123456789abcdef";
    char b[11] = "0x";
    for (int i = 0; i < 8; i++)
        b[2 + i] = hex[(v >> (28 - 4 * i)) & 0xF];
    b[10] = 0;
    mota_board_log(label);
    mota_board_log(b);
    mota_board_log("\n");
}

/* The board contract's stack measurement (mota/port.h) is the Arm layer's. */
void mota_board_stack_repaint(void)
{
    mota_arm_stack_repaint();
}

uint32_t mota_board_stack_size(void)
{
    return mota_arm_stack_size();
}

uint32_t mota_board_stack_unused(void)
{
    return mota_arm_stack_unused();
}

/* newlib's __errno reaches errno through its 1 KiB reentrancy structure (_impure_ptr); a single-threaded
 * firmware needs one int. libcbor's ldexp is what sets it. */
int *__errno(void);
int *__errno(void)
{
    static int err;
    return &err;
}
