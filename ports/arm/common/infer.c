/* SPDX-License-Identifier: Apache-2.0 */
/* The port's inference under guard, for every Cortex-M port: CPU models of mota build-model's ABI (init,
 * run, sizes) and X-CUBE-AI legacy models through their own API, every call of theirs guarded (guard.c). */
#include "arm_int.h"
#include "mota/err.h"
#include "mota/features.h"
#include "mota/legacy.h"

#include <string.h>

/* ---- inference: a CPU model (mota build-model ABI: init, run, sizes), under guard (guard.c) ---- */

/* The I/O a CPU model may touch: its input, then its output, each 32-byte aligned (MPU granule).
 * The agent gets it as its self-test buffer (mota_arm_infer_init): a RUN's input is already where the
 * model reads it, and one 4 KiB area serves both. */
#define GUARD_IO MOTA_ARM_GUARD_IO /* mota_arm_config.h */
static uint8_t guard_io[GUARD_IO] __attribute__((section(".bss.guard_io"), aligned(MOTA_ARM_REGION_ALIGN(GUARD_IO))));
#if MOTA_FEATURE_LEGACY
/* A legacy model's buffer descriptors, inputs and outputs (loader/src/legacy.c): an area of its own,
 * since the input of a RUN waits in guard_io while the model is opened. */
static uint8_t legacy_io[GUARD_IO]
    __attribute__((section(".bss.guard_io.legacy"), aligned(MOTA_ARM_REGION_ALIGN(GUARD_IO))));
#define MODEL_IO(m) ((m)->family == MOTA_NBIN_FAMILY_LEGACY ? legacy_io : guard_io)
#else
#define MODEL_IO(m) guard_io
#endif
#define ROUND32(n) (((n) + 31u) & ~(size_t)31u)

/* The device-wide budget of a call without one of its own (init, sizes, invoke). */
#define GUARD_DEFAULT_BUDGET_US 500000u

/* What the model owns: its exec RAM, and the flash slot its code runs from (XIP) or its params
 * (weights) are read from; false if the instance is not one of this board's. */
static bool model_regions(const struct mota_arm_infer *b, const struct mota_installed *m, struct mota_arm_guard_call *c)
{
    const struct mota_agent_config *cfg = b->cfg;
    c->io_base = (uint32_t)(uintptr_t)MODEL_IO(m);
    c->io_end = (uint32_t)(uintptr_t)MODEL_IO(m) + GUARD_IO;
    for (unsigned i = 0; i < cfg->n_models; i++) {
        const struct mota_agent_model_config *mc = &cfg->models[i];
        if (m->ram_addr >= mc->exec_ram_addr && m->ram_addr < mc->exec_ram_addr + mc->exec_ram_size) {
            c->ram_base = mc->exec_ram_addr;
            c->ram_end = mc->exec_ram_addr + mc->exec_ram_size;
            for (unsigned s = 0; s < 2; s++) {
                uint32_t base = b->flash_base + mc->slot_offset[s];
                /* its code runs from the slot (XIP), or its params are read from it (COPY) */
                if ((m->rom_addr >= base && m->rom_addr < base + mc->slot_size) ||
                    (m->param0_addr >= base && m->param0_addr < base + mc->slot_size)) {
                    c->code_base = base;
                    c->code_end = base + mc->slot_size;
                }
            }
        }
    }
    if (c->ram_base == 0)
        return false;
    c->ram_exec = m->rom_addr >= c->ram_base && m->rom_addr < c->ram_end; /* COPY: code in its exec RAM */
    return true;
}

static int guarded(struct mota_arm_infer *b, const struct mota_installed *m, unsigned entry, uint32_t a0, uint32_t a1,
                   uint32_t a2, uint64_t budget_us, uint32_t *ret)
{
    struct mota_arm_guard_call c = {.r9 = m->ram_addr, .a0 = a0, .a1 = a1, .a2 = a2, .budget_us = budget_us};
    if (entry >= m->n_entries || !model_regions(b, m, &c))
        return MOTA_ERR_SELFTEST_RUN;
    c.fn = m->entries[entry];
    if (m->family != MOTA_NBIN_FAMILY_LEGACY && entry != 1)
        c.io_base = c.io_end = 0; /* a CPU model's init and size queries get no I/O: another's input may wait there */
    struct mota_arm_guard_fault f;
    uint64_t t0 = mota_arm_ticks();
    int r = mota_arm_guard_call(&c, ret, &f);
    b->guard_ticks = (uint32_t)(mota_arm_ticks() - t0);
    if (m->family == MOTA_NBIN_FAMILY_NPU && entry == 2 &&
        !b->guard_reported) { /* a size query: the guard's round trip around almost nothing */
        b->guard_reported = true;
        mota_board_log_hex(MOTA_BOARD_TAG "guarded call round trip (SysTick ticks) ", b->guard_ticks);
    }
    if (r != MOTA_OK) {
        b->model_faults++;
        b->last_fault =
            (struct mota_arm_model_fault){.reason = r, .kind = f.kind, .pc = f.pc, .addr = f.addr, .cfsr = f.cfsr};
        mota_board_log_hex(r == MOTA_ERR_SELFTEST_TIMEOUT ? MOTA_BOARD_TAG "model stopped at its time budget, entry "
                                                          : MOTA_BOARD_TAG "model fault, exception ",
                           r == MOTA_ERR_SELFTEST_TIMEOUT ? entry : f.kind);
        if (r != MOTA_ERR_SELFTEST_TIMEOUT) {
            mota_board_log_hex(MOTA_BOARD_TAG "model fault pc ", f.pc);
            mota_board_log_hex(MOTA_BOARD_TAG "model fault address ", f.addr);
            mota_board_log_hex(MOTA_BOARD_TAG "model fault cfsr ", f.cfsr);
        }
    }
    return r;
}

/* A call's budget: its own, within what is left of the whole inference's. */
static uint64_t within(uint64_t own, uint64_t end_us)
{
    uint64_t now = mota_arm_now_us(NULL);
    uint64_t left = end_us > now ? end_us - now : 1u; /* nothing left: stopped at once */
    return own < left ? own : left;
}

/* "MemManage at pc 0x604012cc, address 0x20000100, cfsr 0x00000082" or "stopped at its time budget". */
size_t mota_arm_infer_detail(void *ctx, char *out, size_t cap)
{
    static const char *const names[] = {"?",         "SVC",      "time",       "HardFault",
                                        "MemManage", "BusFault", "UsageFault", "SecureFault"};
    static const char hex[] = "0123456789abcdef";
    const struct mota_arm_infer *b = ctx;
    const struct mota_arm_model_fault *f = &b->last_fault;
    char text[96];
    size_t n = 0;
    const char *what = f->reason == MOTA_ERR_SELFTEST_TIMEOUT ? "stopped at its time budget"
                       : f->kind < 8                          ? names[f->kind]
                                                              : "fault";
    while (*what && n < sizeof(text))
        text[n++] = *what++;
    if (f->reason != MOTA_ERR_SELFTEST_TIMEOUT) {
        const char *labels[3] = {" at pc 0x", ", address 0x", ", cfsr 0x"};
        uint32_t vals[3] = {f->pc, f->addr, f->cfsr};
        for (int i = 0; i < 3; i++) {
            for (const char *s = labels[i]; *s && n < sizeof(text); s++)
                text[n++] = *s;
            for (int d = 28; d >= 0 && n < sizeof(text); d -= 4)
                text[n++] = hex[(vals[i] >> d) & 0xF];
        }
    }
    n = n < cap ? n : cap;
    memcpy(out, text, n);
    return n;
}

#if MOTA_FEATURE_LEGACY
/* ---- X-CUBE-AI legacy models: through their own API (mota/legacy.h), every call guarded ---- */

struct legacy_ctx {
    struct mota_arm_infer *b;
    const struct mota_installed *m;
    struct mota_arm_guard_call regions; /* what the model owns */
    uint64_t end_us, run_budget_us;
    uint32_t emulated; /* peripheral accesses the guard emulated (ST's licence check) */
};

static int legacy_call(void *ctx, unsigned entry, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t *ret)
{
    struct legacy_ctx *l = ctx;
    uint64_t own = entry == MOTA_LEGACY_RUN ? l->run_budget_us : GUARD_DEFAULT_BUDGET_US;
    int r = guarded(l->b, l->m, entry, a0, a1, a2, within(own, l->end_us), ret);
    l->emulated += mota_arm_guard_emulated();
    return r;
}

static bool in_region(uint32_t addr, uint32_t len, uint32_t base, uint32_t end)
{
    return base != 0 && addr >= base && addr < end && len <= end - addr;
}

/* the model's report is read only where the model's own memory is */
static const void *legacy_peek(void *ctx, uint32_t addr, uint32_t len)
{
    const struct mota_arm_guard_call *c = &((const struct legacy_ctx *)ctx)->regions;
    if (in_region(addr, len, c->code_base, c->code_end) || in_region(addr, len, c->ram_base, c->ram_end) ||
        in_region(addr, len, c->io_base, c->io_end))
        return (const void *)(uintptr_t)addr;
    return NULL;
}

/* Legacy models opened since boot (create, init_v2 and the report done): later inferences reuse the
 * handle and the report, as ST's applications do. Keyed by the whole instance, and stale once the
 * installer has rewritten its rt_ctx (which leaves rt_ctx.network as the file has it, 0). */
static struct opened {
    struct mota_installed inst;
    uint32_t handle;
    struct mota_legacy_about about;
    bool valid;
} opened[MOTA_AGENT_MAX_MODELS];

static struct opened *opened_find(const struct mota_installed *m)
{
    uint32_t network = *(const volatile uint32_t *)(uintptr_t)(m->ctx_addr + 4u);
    for (unsigned i = 0; i < MOTA_AGENT_MAX_MODELS; i++) {
        if (opened[i].valid && opened[i].handle == network && memcmp(&opened[i].inst, m, sizeof(*m)) == 0)
            return &opened[i];
    }
    return NULL;
}

/* The calls and the memory of one legacy model; false if the instance is not one of this board's. */
static bool legacy_env(struct mota_arm_infer *b, const struct mota_installed *m, uint64_t end_us, struct legacy_ctx *l,
                       struct mota_legacy_env *env)
{
    *l = (struct legacy_ctx){.b = b, .m = m, .end_us = end_us};
    *env = (struct mota_legacy_env){.call = legacy_call,
                                    .peek = legacy_peek,
                                    .ctx = l,
                                    .io = legacy_io,
                                    .io_addr = (uint32_t)(uintptr_t)legacy_io,
                                    .io_size = GUARD_IO};
    return model_regions(b, m, &l->regions);
}

/* create, init_v2 and the report: the sequence of ai_rel_network_load_and_create and _init */
static int legacy_open(const struct mota_legacy_env *env, struct legacy_ctx *l, struct opened **out)
{
    const struct mota_installed *m = l->m;
    /* the slot of this exec RAM (a newer model there), else a free one */
    unsigned k = MOTA_AGENT_MAX_MODELS;
    for (unsigned i = 0; i < MOTA_AGENT_MAX_MODELS && k == MOTA_AGENT_MAX_MODELS; i++)
        if (opened[i].valid && opened[i].inst.ctx_addr == m->ctx_addr)
            k = i;
    for (unsigned i = 0; i < MOTA_AGENT_MAX_MODELS && k == MOTA_AGENT_MAX_MODELS; i++)
        if (!opened[i].valid)
            k = i;
    struct opened *o = &opened[k < MOTA_AGENT_MAX_MODELS ? k : 0];
    o->valid = false;
    memset(legacy_io, 0, sizeof(legacy_io));
    int ret = mota_legacy_open(env, m, &o->handle, &o->about);
    if (ret != MOTA_OK)
        return ret;
    o->inst = *m;
    o->valid = true;
    *out = o;
    return MOTA_OK;
}

/* A legacy model's report: it was opened for its first run; if not yet, it is now, guarded (the
 * application would have created it by now). */
static int legacy_report(struct mota_arm_infer *b, const struct mota_installed *m, const struct mota_legacy_about **out)
{
    struct legacy_ctx l;
    struct mota_legacy_env env;
    struct opened *o = opened_find(m);
    if (o == NULL) {
        if (!legacy_env(b, m, mota_arm_now_us(NULL) + 3u * GUARD_DEFAULT_BUDGET_US, &l, &env))
            return MOTA_ERR_SELFTEST_RUN;
        int ret = legacy_open(&env, &l, &o);
        if (ret != MOTA_OK)
            return ret;
    }
    *out = &o->about;
    return MOTA_OK;
}
#endif /* MOTA_FEATURE_LEGACY */

int mota_arm_model_io(void *ctx, const struct mota_installed *m, struct mota_model_io *out)
{
    struct mota_arm_infer *b = ctx;
    uint32_t in_size = 0, out_size = 0;
    int ret;
    if (b == NULL || m == NULL)
        return MOTA_ERR_ARG;
    memset(out, 0, sizeof(*out));
#if MOTA_FEATURE_LEGACY
    const struct mota_legacy_about *a;
    if (m->family == MOTA_NBIN_FAMILY_LEGACY) { /* its report: each tensor's format and size */
        if ((ret = legacy_report(b, m, &a)) != MOTA_OK)
            return ret;
        out->n_in = (uint8_t)(a->n_inputs < MOTA_MODEL_IO_MAX ? a->n_inputs : MOTA_MODEL_IO_MAX);
        out->n_out = (uint8_t)(a->n_outputs < MOTA_MODEL_IO_MAX ? a->n_outputs : MOTA_MODEL_IO_MAX);
        for (unsigned i = 0; i < out->n_in; i++)
            out->in[i] = (struct mota_model_tensor){a->in[i].format, a->in[i].bytes};
        for (unsigned i = 0; i < out->n_out; i++)
            out->out[i] = (struct mota_model_tensor){a->out[i].format, a->out[i].bytes};
        return MOTA_OK;
    }
#endif
    if (m->n_entries < 4) /* a CPU model says its sizes through entries 2 and 3, guarded like any call */
        return MOTA_ERR_ARG;
    uint64_t end = mota_arm_now_us(NULL) + 2u * GUARD_DEFAULT_BUDGET_US;
    if ((ret = guarded(b, m, 2, 0, 0, 0, within(GUARD_DEFAULT_BUDGET_US, end), &in_size)) != MOTA_OK ||
        (ret = guarded(b, m, 3, 0, 0, 0, within(GUARD_DEFAULT_BUDGET_US, end), &out_size)) != MOTA_OK)
        return ret;
    *out = (struct mota_model_io){.n_in = 1, .n_out = 1, .in = {{0, in_size}}, .out = {{0, out_size}}};
    return MOTA_OK;
}

#if MOTA_FEATURE_LEGACY
int mota_arm_model_about(void *ctx, const struct mota_installed *m, struct mota_model_about *out)
{
    struct mota_arm_infer *b = ctx;
    const struct mota_legacy_about *a;
    if (b == NULL || m == NULL || m->family != MOTA_NBIN_FAMILY_LEGACY)
        return MOTA_ERR_ARG; /* only legacy models describe themselves */
    int ret = legacy_report(b, m, &a);
    if (ret != MOTA_OK)
        return ret;
    memset(out, 0, sizeof(*out));
    memcpy(out->name, a->name, sizeof(out->name));
    memcpy(out->compiled, a->compiled, sizeof(out->compiled));
    memcpy(out->tool, a->tool_revision, sizeof(out->tool));
    out->tool_version = a->tool_version;
    out->acts_size = a->acts_size;
    out->weights_size = a->weights_size;
    return MOTA_OK;
}

static int legacy_infer(struct mota_arm_infer *b, const struct mota_installed *m, const uint8_t *in, size_t in_len,
                        uint8_t *out, size_t out_len, uint64_t budget, uint64_t end, uint64_t *latency_us)
{
    struct legacy_ctx l;
    struct mota_legacy_env env;
    if (!legacy_env(b, m, end, &l, &env))
        return MOTA_ERR_SELFTEST_RUN;
    struct opened *o = opened_find(m);
    memset(legacy_io, 0, sizeof(legacy_io)); /* nothing of another legacy model's last call */
    uint32_t at_open = 0; /* accesses emulated for create, init and the report, when this inference opened it */
    bool opening = o == NULL;
    if (opening) {
        int ret = legacy_open(&env, &l, &o);
        if (ret != MOTA_OK)
            return ret;
        at_open = l.emulated;
        l.emulated = 0;
    }
    l.run_budget_us = budget;
    uint64_t t0 = mota_arm_now_us(NULL);
    int ret = mota_legacy_run(&env, o->handle, &o->about, in, in_len, out, out_len);
    *latency_us = mota_arm_now_us(NULL) - t0;
    if (ret != MOTA_OK)
        o->valid = false; /* whatever it left behind, the next inference creates it again */
    if (ret == MOTA_OK && opening && (at_open | l.emulated) != 0) { /* its runtime runs ST's licence check */
        mota_board_log_hex(MOTA_BOARD_TAG "licence check: FP_CTRL and CRC accesses emulated at open ", at_open);
        mota_board_log_hex(MOTA_BOARD_TAG "licence check: FP_CTRL and CRC accesses emulated in a run ", l.emulated);
        mota_board_log_hex(MOTA_BOARD_TAG "legacy run, guarded call (SysTick ticks) ", b->guard_ticks);
    }
    return ret;
}
#endif /* MOTA_FEATURE_LEGACY */

/* An NPU model: ST's runtime runs it, where the application links it (mota/arm.h, struct mota_arm_npu). */
static int npu_infer(struct mota_arm_infer *b, const struct mota_installed *m, const uint8_t *in, size_t in_len,
                     uint8_t *out, size_t out_len, uint64_t budget_us, uint64_t *latency_us)
{
    if (b->npu == NULL || b->npu->run == NULL) {
        mota_board_log(MOTA_BOARD_TAG "an NPU model: this firmware links no Neural-ART runtime\n");
        return MOTA_ERR_SELFTEST_NO_NPU;
    }
    /* the NPU reads memory: the input cleaned to it; the output's lines cleaned too, so that none the CPU
     * dirtied is evicted over what the NPU writes (the runtime invalidates them after) */
    mota_arm_clean_dcache(NULL, (uint32_t)(uintptr_t)in, (uint32_t)in_len);
    mota_arm_clean_dcache(NULL, (uint32_t)(uintptr_t)out, (uint32_t)out_len);
    uint64_t t0 = mota_arm_now_us(NULL);
    int ret = b->npu->run(m, in, in_len, out, out_len, budget_us);
    *latency_us = mota_arm_now_us(NULL) - t0;
    return ret;
}

int mota_arm_infer_run(void *ctx, const struct mota_installed *model, const uint8_t *in, size_t in_len, uint8_t *out,
                       size_t out_len, uint64_t *latency_us)
{
    struct mota_arm_infer *b = ctx;
    uint64_t budget = *latency_us ? *latency_us : GUARD_DEFAULT_BUDGET_US;
    uint32_t in_size = 0, out_size = 0, r = 0;
    int ret;
    *latency_us = 0;
    if (b == NULL || model == NULL || model->n_entries < 4)
        return MOTA_ERR_SELFTEST_RUN;
    /* the agent kicked the watchdog just before: the model's four calls together stop short of its first
     * expiry, so a slow model gets a verdict (MOTA_ERR_SELFTEST_TIMEOUT), not a board reset */
    uint32_t wd = (b->watchdog_period_ms != NULL ? b->watchdog_period_ms() : 0u);
    uint64_t end =
        mota_arm_now_us(NULL) + (wd > 200u ? (uint64_t)(wd - 200u) * 1000u : budget + 3u * GUARD_DEFAULT_BUDGET_US);
#if MOTA_FEATURE_LEGACY
    if (model->family == MOTA_NBIN_FAMILY_LEGACY)
        return legacy_infer(b, model, in, in_len, out, out_len, budget, end, latency_us);
#endif
    if (model->npu)
        return npu_infer(b, model, in, in_len, out, out_len, within(budget, end), latency_us);
    /* a RUN's input is in place (the agent's buffer is guard_io); anything else of it is another
     * call's, cleared, and never a source */
    uint8_t *gin = guard_io, *gout = guard_io + ROUND32(in_len);
    bool in_place = in == gin && in_len <= GUARD_IO;
    uintptr_t src = (uintptr_t)in, io = (uintptr_t)guard_io;
    if (!in_place && src < io + GUARD_IO && in_len > 0 && src + in_len > io)
        return MOTA_ERR_ARG;
    memset(guard_io + (in_place ? in_len : 0u), 0, GUARD_IO - (in_place ? in_len : 0u));
    if ((ret = guarded(b, model, 2, 0, 0, 0, within(GUARD_DEFAULT_BUDGET_US, end), &in_size)) != MOTA_OK ||
        (ret = guarded(b, model, 3, 0, 0, 0, within(GUARD_DEFAULT_BUDGET_US, end), &out_size)) != MOTA_OK)
        return ret;
    if (in_len != in_size || out_len != out_size || ROUND32(in_len) + ROUND32(out_len) > GUARD_IO)
        return MOTA_ERR_SELFTEST_RUN; /* the container's self-test does not fit this model, or the I/O buffer */
    if ((ret = guarded(b, model, 0, 0, 0, 0, within(GUARD_DEFAULT_BUDGET_US, end), &r)) != MOTA_OK)
        return ret;
    if (r != 0)
        return MOTA_ERR_SELFTEST_RUN;
    if (!in_place)
        memcpy(gin, in, in_len);
    uint64_t t0 = mota_arm_now_us(NULL);
    ret = guarded(b, model, 1, (uint32_t)(uintptr_t)gin, (uint32_t)(uintptr_t)gout, 0, within(budget, end), &r);
    *latency_us = mota_arm_now_us(NULL) - t0;
    if (ret != MOTA_OK)
        return ret;
    if (out != gout)
        memmove(out, gout, out_len); /* the self-test's output goes to the buffer's start */
    return r == 0 ? MOTA_OK : MOTA_ERR_SELFTEST_RUN;
}

uint8_t *mota_arm_guard_io(void)
{
    return guard_io;
}

void mota_arm_infer_init(struct mota_arm_infer *x, struct mota_port *port, struct mota_loader_mem *mem)
{
#if MOTA_FEATURE_LEGACY
    /* a legacy model's licence check asks these for the CRC unit (guard.c: code the model may run) */
    mem->crc_acquire = (uint32_t)(uintptr_t)&mota_arm_guard_crc_acquire;
    mem->crc_release = (uint32_t)(uintptr_t)&mota_arm_guard_crc_release;
    port->model_about = mota_arm_model_about;
#else
    (void)mem;
#endif
    port->infer = mota_arm_infer_run;
    port->infer_detail = mota_arm_infer_detail;
    port->model_io = mota_arm_model_io;
    port->infer_ctx = x;
}
