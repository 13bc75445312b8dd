/* an547: board bring-up, the launcher's arguments, provisioning, the
 * hardware profile and model inference. */
#include "board_private.h"

#include "mota/err.h"
#include "mota/loader.h"
#include "mota/provision.h"
#include "semihost.h"

#include <string.h>

struct an547_args an547_args;
static char cmdline[512];

/* ---- the launcher's arguments: "mota-an547 flash=F reset=CAUSE [cut=N] [torn] [hang-on-trial] [measure-stack] [fault=PC:ADDR:CFSR]" ---- */

static uint32_t parse_num(const char *p, const char *end, int base)
{
    uint32_t v = 0;
    for (; p < end; p++) {
        uint32_t d = *p >= '0' && *p <= '9' ? (uint32_t)(*p - '0')
                   : (*p | 0x20) >= 'a' && (*p | 0x20) <= 'f' ? (uint32_t)((*p | 0x20) - 'a' + 10) : 99u;
        if (d >= (uint32_t)base)
            break;
        v = v * (uint32_t)base + d;
    }
    return v;
}

static bool word_is(const char *w, size_t n, const char *key, const char **val)
{
    size_t k = strlen(key);
    if (n < k || memcmp(w, key, k) != 0)
        return false;
    *val = w + k;
    return true;
}

int an547_args_parse(void)
{
    int32_t len = sh_cmdline(cmdline, sizeof(cmdline) - 1);
    if (len < 0)
        return MOTA_ERR_IO;
    cmdline[len] = 0;
    for (char *w = cmdline; *w;) {
        char *e = w;
        while (*e && *e != ' ')
            e++;
        size_t n = (size_t)(e - w);
        const char *v;
        if (word_is(w, n, "flash=", &v)) {
            an547_args.flash = v;
            an547_args.flash_len = (uint32_t)(e - v);
        } else if (word_is(w, n, "reset=", &v)) {
            an547_args.cause = memcmp(v, "software", 8) == 0 ? MOTA_RESET_SOFTWARE
                             : memcmp(v, "watchdog", 8) == 0 ? MOTA_RESET_WATCHDOG
                             : memcmp(v, "fault", 5) == 0    ? MOTA_RESET_FAULT
                                                             : MOTA_RESET_POWER_ON;
        } else if (word_is(w, n, "cut=", &v)) {
            an547_args.cut_at_op = parse_num(v, e, 10);
        } else if (n == 4 && memcmp(w, "torn", 4) == 0) {
            an547_args.torn = 1;
        } else if (n == 13 && memcmp(w, "hang-on-trial", 13) == 0) {
            an547_args.hang_on_trial = 1;
        } else if (n == 13 && memcmp(w, "measure-stack", 13) == 0) {
            an547_args.measure_stack = 1;
        } else if (word_is(w, n, "fault=", &v)) {
            /* ':' separated: QEMU's -semihosting-config splits its arguments at commas */
            const char *c1 = memchr(v, ':', (size_t)(e - v));
            const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
            an547_args.fault_pc = parse_num(v, e, 16);
            an547_args.fault_addr = c1 ? parse_num(c1 + 1, e, 16) : 0;
            an547_args.fault_cfsr = c2 ? parse_num(c2 + 1, e, 16) : 0;
        }
        w = *e ? e + 1 : e;
        *e = 0; /* terminate the value in place */
    }
    return MOTA_OK;
}

/* ---- the log: the semihosting console (QEMU's stderr, which the launcher reads) ---- */

void mota_an547_log(const char *s)
{
    semihost(SH_WRITE0, s);
}

void mota_an547_log_hex(const char *label, uint32_t v)
{
    static const char hex[] = "0123456789abcdef";
    char b[11] = "0x";
    for (int i = 0; i < 8; i++)
        b[2 + i] = hex[(v >> (28 - 4 * i)) & 0xF];
    b[10] = 0;
    mota_an547_log(label);
    mota_an547_log(b);
    mota_an547_log("\n");
}

/* ---- the device profile, from the hardware ---- */

#define SCB_CPUID REG(0xE000ED00u)
#define SCB_ID_PFR1 REG(0xE000ED44u)
#define SCB_CPUID_NS REG(0xE002ED00u)
#define FPU_MVFR0 REG(0xE000EF40u)

void mota_an547_profile(struct mota_device_profile *p)
{
    memset(p, 0, sizeof(*p));
    p->cpu_part = (SCB_CPUID >> 4) & 0xFFFu;
    /* an FPU exists (MVFR0 single precision field) and CP10/CP11 are on */
    p->fpu_enabled = (FPU_MVFR0 & 0xF0u) != 0 && ((SCB_CPACR >> 20) & 0xFu) == 0xFu;
#if defined(__ARM_PCS_VFP)
    p->float_abi = 2;
#elif defined(__ARM_FP)
    p->float_abi = 1;
#endif
    /* Secure state: the Security Extension is present, TT says this code is
     * Secure, and the Non-secure CPUID alias (RAZ from Non-secure) answers */
    if (((SCB_ID_PFR1 >> 4) & 0xFu) != 0) {
        uint32_t tt, addr = (uint32_t)(uintptr_t)&mota_an547_profile;
        __asm__ volatile("tt %0, %1" : "=r"(tt) : "r"(addr));
        p->secure = ((tt >> 22) & 1u) && SCB_CPUID_NS != 0;
    }
    /* CPU models of both families: the NBIN v8 layout (mota CPU ABI) and X-CUBE-AI legacy */
    p->reloc_families = (1u << MOTA_NBIN_FAMILY_NPU) | (1u << MOTA_NBIN_FAMILY_LEGACY);
    p->has_ll_aton = false; /* no Neural-ART NPU on this board: CPU models only */
    p->install_modes = (1u << MOTA_INSTALL_XIP) | (1u << MOTA_INSTALL_COPY);
    p->split_policy = MOTA_SPLIT_ALLOWED;
}

/* ---- inference: a CPU model (mota build-model ABI: init, run, sizes) ---- */

/* ---- models run under guard (guard.c) ---- */

/* The I/O the model may touch: its input, then its output, each 32-byte aligned (MPU granule). */
#define GUARD_IO 4096u
static uint8_t guard_io[GUARD_IO] __attribute__((aligned(32)));
#define ROUND32(n) (((n) + 31u) & ~(size_t)31u)

/* The device-wide budget of a call without one of its own (init, sizes, invoke). */
#define GUARD_DEFAULT_BUDGET_US 500000u

static int guarded(struct mota_an547 *b, const struct mota_installed *m, unsigned entry, uint32_t a0, uint32_t a1,
                   uint64_t budget_us, uint32_t *ret)
{
    const struct mota_agent_config *cfg = b->cfg;
    struct an547_guard_call c = {.r9 = m->ram_addr, .a0 = a0, .a1 = a1, .budget_us = budget_us,
                                 .io_base = (uint32_t)(uintptr_t)guard_io,
                                 .io_end = (uint32_t)(uintptr_t)guard_io + GUARD_IO};
    if (entry >= m->n_entries)
        return MOTA_ERR_SELFTEST_RUN;
    c.fn = m->entries[entry];
    /* its exec RAM, and the flash slot its code runs from (XIP) or was copied from */
    for (unsigned i = 0; i < cfg->n_models; i++) {
        const struct mota_agent_model_config *mc = &cfg->models[i];
        if (m->ram_addr >= mc->exec_ram_addr && m->ram_addr < mc->exec_ram_addr + mc->exec_ram_size) {
            c.ram_base = mc->exec_ram_addr;
            c.ram_end = mc->exec_ram_addr + mc->exec_ram_size;
            for (unsigned s = 0; s < 2; s++) {
                uint32_t base = MOTA_AN547_FLASH_BASE + mc->slot_offset[s];
                /* its code runs from the slot (XIP), or its params are read from it (COPY) */
                if ((m->rom_addr >= base && m->rom_addr < base + mc->slot_size) ||
                    (m->param0_addr >= base && m->param0_addr < base + mc->slot_size)) {
                    c.code_base = base;
                    c.code_end = base + mc->slot_size;
                }
            }
        }
    }
    if (c.ram_base == 0)
        return MOTA_ERR_SELFTEST_RUN;
    if (m->rom_addr >= c.ram_base && m->rom_addr < c.ram_end)
        c.ram_exec = true; /* COPY: its code runs from its exec RAM */
    struct an547_guard_fault f;
    uint64_t t0 = an547_ticks();
    int r = an547_guard_call(&c, ret, &f);
    b->guard_ticks = (uint32_t)(an547_ticks() - t0);
    if (entry == 2 && !b->guard_reported) { /* a size query: the guard's round trip around almost nothing */
        b->guard_reported = true;
        mota_an547_log_hex("mota-an547: guarded call round trip (SysTick ticks) ", b->guard_ticks);
    }
    if (r != MOTA_OK) {
        b->model_faults++;
        b->last_fault = (struct mota_an547_model_fault){.reason = r, .kind = f.kind, .pc = f.pc, .addr = f.addr,
                                                        .cfsr = f.cfsr};
        mota_an547_log_hex(r == MOTA_ERR_SELFTEST_TIMEOUT ? "mota-an547: model stopped at its time budget, entry "
                                                          : "mota-an547: model fault, exception ",
                           r == MOTA_ERR_SELFTEST_TIMEOUT ? entry : f.kind);
        if (r != MOTA_ERR_SELFTEST_TIMEOUT) {
            mota_an547_log_hex("mota-an547: model fault pc ", f.pc);
            mota_an547_log_hex("mota-an547: model fault address ", f.addr);
            mota_an547_log_hex("mota-an547: model fault cfsr ", f.cfsr);
        }
    }
    return r;
}

/* A call's budget: its own, within what is left of the whole inference's. */
static uint64_t within(uint64_t own, uint64_t end_us)
{
    uint64_t now = an547_now_us(NULL);
    uint64_t left = end_us > now ? end_us - now : 1u; /* nothing left: stopped at once */
    return own < left ? own : left;
}

/* "MemManage at pc 0x604012cc, address 0x20000100, cfsr 0x00000082" or "stopped at its time budget". */
size_t mota_an547_infer_detail(void *ctx, char *out, size_t cap)
{
    static const char *const names[] = {"?", "SVC", "time", "HardFault", "MemManage", "BusFault", "UsageFault",
                                        "SecureFault"};
    static const char hex[] = "0123456789abcdef";
    const struct mota_an547 *b = ctx;
    const struct mota_an547_model_fault *f = &b->last_fault;
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

int mota_an547_infer(void *ctx, const struct mota_installed *model, const uint8_t *in, size_t in_len, uint8_t *out,
                     size_t out_len, uint64_t *latency_us)
{
    struct mota_an547 *b = ctx;
    uint64_t budget = *latency_us ? *latency_us : GUARD_DEFAULT_BUDGET_US;
    uint32_t in_size = 0, out_size = 0, r = 0;
    int ret;
    *latency_us = 0;
    if (b == NULL || model == NULL || model->n_entries < 4)
        return MOTA_ERR_SELFTEST_RUN;
    /* the agent kicked the watchdog just before: the model's four calls together stop short of its first
     * expiry, so a slow model gets a verdict (MOTA_ERR_SELFTEST_TIMEOUT), not a board reset */
    uint32_t wd = an547_watchdog_period_ms();
    uint64_t end = an547_now_us(NULL) + (wd > 200u ? (uint64_t)(wd - 200u) * 1000u : budget + 3u * GUARD_DEFAULT_BUDGET_US);
    memset(guard_io, 0, sizeof(guard_io)); /* nothing of an earlier call's input or output */
    if ((ret = guarded(b, model, 2, 0, 0, within(GUARD_DEFAULT_BUDGET_US, end), &in_size)) != MOTA_OK ||
        (ret = guarded(b, model, 3, 0, 0, within(GUARD_DEFAULT_BUDGET_US, end), &out_size)) != MOTA_OK)
        return ret;
    if (in_len != in_size || out_len != out_size || ROUND32(in_len) + ROUND32(out_len) > GUARD_IO)
        return MOTA_ERR_SELFTEST_RUN; /* the container's self-test does not fit this model, or the I/O buffer */
    if ((ret = guarded(b, model, 0, 0, 0, within(GUARD_DEFAULT_BUDGET_US, end), &r)) != MOTA_OK)
        return ret;
    if (r != 0)
        return MOTA_ERR_SELFTEST_RUN;
    uint8_t *gin = guard_io, *gout = guard_io + ROUND32(in_len);
    memcpy(gin, in, in_len);
    uint64_t t0 = an547_now_us(NULL);
    ret = guarded(b, model, 1, (uint32_t)(uintptr_t)gin, (uint32_t)(uintptr_t)gout, within(budget, end), &r);
    *latency_us = an547_now_us(NULL) - t0;
    if (ret != MOTA_OK)
        return ret;
    memcpy(out, gout, out_len);
    return r == 0 ? MOTA_OK : MOTA_ERR_SELFTEST_RUN;
}

/* ---- bring-up ---- */

static void *exec_map(void *ctx, uint32_t addr, uint32_t len, bool write)
{
    (void)ctx;
    (void)write;
    if (addr >= MOTA_AN547_EXEC_BASE && (uint64_t)addr + len <= (uint64_t)MOTA_AN547_EXEC_BASE + MOTA_AN547_EXEC_SIZE)
        return (void *)(uintptr_t)addr;
    return NULL;
}

static void barriers(void *ctx, uint32_t addr, uint32_t len)
{
    (void)ctx;
    (void)addr;
    (void)len;
    __asm__ volatile("dsb\n\tisb" ::: "memory"); /* no caches modelled; a real M55 cleans D and invalidates I here */
}

static struct mota_provision prov;

int mota_an547_init(struct mota_an547 *b, struct mota_agent_config *cfg)
{
    int ret;
    memset(b, 0, sizeof(*b));
    an547_clock_init();
    if ((ret = an547_args_parse()) != MOTA_OK)
        return ret;
    b->boot.cause = an547_args.cause;
    b->boot.fault_pc = an547_args.fault_pc;
    b->boot.fault_addr = an547_args.fault_addr;
    b->boot.fault_cfsr = an547_args.fault_cfsr;
    b->hang_on_trial = an547_args.hang_on_trial != 0;
    b->measure_stack = an547_args.measure_stack != 0;
    if ((ret = an547_flash_init(&b->flash)) != MOTA_OK)
        return ret;
    an547_system_init(&b->sys);
    an547_uart_init(&b->uart);
    b->mem = (struct mota_loader_mem){.map = exec_map, .clean_dcache = barriers, .invalidate_icache = barriers};

    b->cfg = cfg;
    cfg->infer_ctx = b;
    cfg->flash = &b->flash;
    cfg->sys = &b->sys;
    cfg->loader_mem = &b->mem;
    mota_an547_profile(&cfg->profile);
    cfg->journal_offset = MOTA_AN547_JOURNAL;

    /* identity, keys and model names from the provisioning sector */
    b->provision_status = mota_provision_decode(b->flash.map(NULL, MOTA_AN547_PROVISION, MOTA_AN547_SECTOR),
                                                MOTA_AN547_SECTOR, &prov);
    unsigned n = 1;
    if (b->provision_status == MOTA_OK && (prov.n_models > MOTA_AGENT_MAX_MODELS || prov.n_keys > MOTA_AGENT_MAX_KEYS))
        b->provision_status = MOTA_ERR_PROVISION; /* more than this firmware serves: not half-applied */
    if (b->provision_status == MOTA_OK) {
        mota_provision_apply(&prov, cfg);
        n = prov.n_models ? prov.n_models : 1;
        memcpy(b->name, prov.name, sizeof(b->name));
    } else {
        cfg->n_keys = 0; /* every upload is refused: MOTA_ERR_NOT_PROVISIONED */
        strcpy(b->name, "mota-an547 (not provisioned)");
    }
    uint32_t slot = (MOTA_AN547_PROVISION - MOTA_AN547_SLOTS) / (2u * n) / MOTA_AN547_SECTOR * MOTA_AN547_SECTOR;
    uint32_t exec = MOTA_AN547_EXEC_SIZE / n / 8u * 8u;
    cfg->n_models = n;
    for (unsigned m = 0; m < n; m++) {
        cfg->models[m].c_name = b->provision_status == MOTA_OK ? prov.models[m] : "network";
        cfg->models[m].slot_offset[0] = MOTA_AN547_SLOTS + 2u * m * slot;
        cfg->models[m].slot_offset[1] = MOTA_AN547_SLOTS + (2u * m + 1u) * slot;
        cfg->models[m].slot_size = slot;
        cfg->models[m].exec_ram_addr = MOTA_AN547_EXEC_BASE + m * exec;
        cfg->models[m].exec_ram_size = exec;
    }
    return MOTA_OK;
}
