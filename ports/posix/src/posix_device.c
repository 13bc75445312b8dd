/* SPDX-License-Identifier: Apache-2.0 */
/* posix port: the simulated device, assembled once (see mota/posix_device.h). */
#define _POSIX_C_SOURCE 200809L
#include "mota/posix_device.h"

#include "mota/container.h"
#include "mota/err.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

const struct mota_device_profile mota_posix_default_profile = {.cpu_part = 0xD22,
                                                               .fpu_enabled = true,
                                                               .float_abi = 2,
                                                               .secure = true,
                                                               .reloc_families = 1u << MOTA_NBIN_FAMILY_NPU,
                                                               .has_ll_aton = true,
                                                               .ll_aton_major = 1,
                                                               .ll_aton_minor = 1,
                                                               .ll_aton_micro = 1,
                                                               .install_modes = (1u << MOTA_INSTALL_XIP) |
                                                                                (1u << MOTA_INSTALL_COPY)};

static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The clock starts at boot, as a board's does. */
static uint64_t dev_now(void *ctx)
{
    const struct mota_posix_device *d = ctx;
    return d->clock_at_zero ? 0 : mono_us() - d->boot_us;
}

/* A host cannot reset itself: the next boot says why, and the caller boots again. */
static void dev_reset(void *ctx)
{
    struct mota_posix_device *d = ctx;
    d->resets++;
    d->cause = MOTA_RESET_SOFTWARE;
    d->boot_us = mono_us();
}

static enum mota_reset_cause dev_cause(void *ctx)
{
    return ((const struct mota_posix_device *)ctx)->cause;
}

static void dev_kick(void *ctx)
{
    ((struct mota_posix_device *)ctx)->kicks++;
}

static void *dev_map(void *ctx, uint32_t addr, uint32_t len, bool write)
{
    struct mota_posix_device *d = ctx;
    (void)write;
    if (addr >= MOTA_POSIX_EXEC_BASE && (uint64_t)addr + len <= (uint64_t)MOTA_POSIX_EXEC_BASE + d->exec_size)
        return d->exec_ram + (addr - MOTA_POSIX_EXEC_BASE);
    if (d->ext_size && addr >= d->ext_base && (uint64_t)addr + len <= (uint64_t)d->ext_base + d->ext_size)
        return d->ext_ram + (addr - d->ext_base);
    for (unsigned i = 0; i < d->n_regions; i++)
        if (addr >= d->regions[i].base && (uint64_t)addr + len <= (uint64_t)d->regions[i].base + d->regions[i].size)
            return d->region_mem[i] + (addr - d->regions[i].base);
    return NULL;
}

static void free_ram(struct mota_posix_device *d)
{
    free(d->exec_ram);
    free(d->ext_ram);
    for (unsigned i = 0; i < d->n_regions; i++)
        free(d->region_mem[i]);
    d->exec_ram = d->ext_ram = NULL;
    memset(d->region_mem, 0, sizeof(d->region_mem));
}

/* Simulated RAM: exec RAM and external RAM per model, fixed-address regions; none may overlap. */
static int alloc_ram(struct mota_posix_device *d, const struct mota_posix_device_options *o, unsigned n)
{
    uint32_t ext = o->ext_ram_size;
    d->ext_base = o->ext_ram_base ? o->ext_ram_base : MOTA_POSIX_EXT_BASE;
    if (o->n_regions > MOTA_POSIX_MAX_REGIONS || (uint64_t)d->ext_base + (uint64_t)ext * n > 0x100000000ull ||
        d->ext_base % 8 != 0)
        return MOTA_ERR_CONFIG;
    d->ext_size = ext * n;
    d->n_regions = o->n_regions;
    memcpy(d->regions, o->regions, sizeof(d->regions[0]) * o->n_regions);
    uint64_t lo[2 + MOTA_POSIX_MAX_REGIONS], hi[2 + MOTA_POSIX_MAX_REGIONS];
    unsigned k = 0;
    lo[k] = MOTA_POSIX_EXEC_BASE, hi[k++] = (uint64_t)MOTA_POSIX_EXEC_BASE + d->exec_size;
    if (d->ext_size)
        lo[k] = d->ext_base, hi[k++] = (uint64_t)d->ext_base + d->ext_size;
    for (unsigned i = 0; i < d->n_regions; i++) {
        if (d->regions[i].size == 0 || (uint64_t)d->regions[i].base + d->regions[i].size > 0x100000000ull)
            return MOTA_ERR_CONFIG;
        lo[k] = d->regions[i].base, hi[k++] = (uint64_t)d->regions[i].base + d->regions[i].size;
    }
    for (unsigned i = 0; i < k; i++)
        for (unsigned j = i + 1; j < k; j++)
            if (lo[i] < hi[j] && lo[j] < hi[i])
                return MOTA_ERR_CONFIG;
    d->exec_ram = calloc(1, d->exec_size);
    d->ext_ram = d->ext_size ? calloc(1, d->ext_size) : NULL;
    bool ok = d->exec_ram != NULL && (d->ext_size == 0 || d->ext_ram != NULL);
    for (unsigned i = 0; i < d->n_regions; i++)
        ok &= (d->region_mem[i] = calloc(1, d->regions[i].size)) != NULL;
    if (!ok) {
        free_ram(d);
        return MOTA_ERR_NOSPC;
    }
    return MOTA_OK;
}

/* The end of the sectors from off (a sector start) that len bytes take: where the next slot may start. */
static uint64_t span_end(const struct mota_flash *f, uint64_t off, uint64_t len)
{
    uint32_t start = 0, size = 0;
    if (off + len > f->size || mota_flash_sector(f, (uint32_t)(off + len - 1), &start, &size) != MOTA_OK)
        return 0;
    return (uint64_t)start + size;
}

/* Slots of `slot` bytes, `count` of them, one after the other from `from` (a sector start): the end, or 0. */
static uint64_t place(const struct mota_flash *f, uint32_t from, uint32_t slot, unsigned count)
{
    uint64_t at = from;
    for (unsigned k = 0; k < count; k++)
        if ((at = span_end(f, at, slot)) == 0)
            return 0;
    return at;
}

/* The largest slot size (ending on a sector end when it starts the area) that fits count slots, or 0. */
static uint32_t largest_slot(const struct mota_flash *f, uint32_t from, unsigned count)
{
    uint32_t best = 0, start = 0, size = 0;
    for (uint64_t end = from; end < f->size && mota_flash_sector(f, (uint32_t)end, &start, &size) == MOTA_OK;) {
        end = (uint64_t)start + size;
        uint32_t cand = (uint32_t)(end - from);
        if (cand > best && place(f, from, cand, count) != 0)
            best = cand;
    }
    return best;
}

/* Journal, then two slots per model from slots_offset: each slot from the end of the sectors the last took. */
static int lay_out(struct mota_posix_device *d, const struct mota_posix_device_options *o, unsigned n)
{
    const struct mota_flash *f = &d->flash;
    uint32_t start = 0, jsec = 0;
    if (mota_flash_sector(f, o->journal_offset, &start, &jsec) != MOTA_OK)
        return MOTA_ERR_CONFIG;
    uint32_t from = o->slots_offset ? o->slots_offset : o->journal_offset + 2 * jsec;
    uint32_t slot = o->slot_size ? o->slot_size : largest_slot(f, from, 2 * n);
    if (slot == 0 || place(f, from, slot, 2 * n) == 0)
        return MOTA_ERR_CONFIG;
    struct mota_agent_config *c = &d->cfg;
    c->journal_offset = o->journal_offset;
    uint64_t at = from;
    for (unsigned m = 0; m < n; m++)
        for (unsigned s = 0; s < 2; s++) {
            c->models[m].slot_offset[s] = (uint32_t)at;
            at = span_end(f, at, slot);
        }
    for (unsigned m = 0; m < n; m++)
        c->models[m].slot_size = slot;
    return MOTA_OK;
}

int mota_posix_device_open(struct mota_posix_device *d, const struct mota_posix_device_options *o)
{
    int ret = MOTA_ERR_ARG;
    if (d == NULL || o == NULL || o->n_models > MOTA_AGENT_MAX_MODELS)
        return ret;
    memset(d, 0, sizeof(*d));
    uint32_t exec = o->exec_ram_size ? o->exec_ram_size : 1u << 20;
    unsigned n = o->n_models ? o->n_models : 1;
    struct mota_posix_flash_part uni =
        mota_posix_flash_uniform(o->flash_size ? o->flash_size : 8u << 20, o->sector_size ? o->sector_size : 4096,
                                 o->prog_size ? o->prog_size : 16);
    const struct mota_posix_flash_part *part = o->part != NULL ? o->part : &uni;
    if ((uint64_t)exec * n > 0x10000000u)
        return MOTA_ERR_CONFIG;
    ret = o->flash_path ? mota_posix_flash_open(&d->pf, o->flash_path, part) : mota_posix_flash_init(&d->pf, part);
    if (ret != MOTA_OK)
        return ret;
    d->pf.timing = o->timing;
    mota_posix_flash_hal(&d->pf, &d->flash, MOTA_POSIX_XIP_BASE);
    d->exec_size = exec * n;
    if ((ret = lay_out(d, o, n)) != MOTA_OK || (ret = alloc_ram(d, o, n)) != MOTA_OK) {
        mota_posix_flash_close(&d->pf);
        return ret;
    }
    d->clock_at_zero = o->clock_at_zero;
    d->boot_us = mono_us();
    d->mem.map = dev_map;
    d->mem.ctx = d;
    d->sys = (struct mota_system){
        .now_us = dev_now, .reset = dev_reset, .reset_cause = dev_cause, .watchdog_kick = dev_kick, .ctx = d};
    d->sim.latency_us = 2000;
    d->sim.slow_latency_us = 10u * 1000 * 1000;

    d->port = (struct mota_port){
        .flash = &d->flash, .sys = &d->sys, .mem = &d->mem, .infer = mota_posix_sim_infer, .infer_ctx = &d->sim};
    struct mota_agent_config *c = &d->cfg;
    c->port = &d->port;
    c->n_models = n;
    for (unsigned m = 0; m < n; m++) {
        c->models[m].c_name = o->models[m] ? o->models[m] : "network";
        c->models[m].exec_ram_addr = MOTA_POSIX_EXEC_BASE + m * exec;
        c->models[m].exec_ram_size = exec;
        c->models[m].ext_ram_addr = o->ext_ram_size ? d->ext_base + m * o->ext_ram_size : 0;
        c->models[m].ext_ram_size = o->ext_ram_size;
    }
    c->profile = mota_posix_default_profile;
    c->max_trial_boots = 3;
    c->selftest_buf = d->selftest;
    c->selftest_buf_size = sizeof(d->selftest);
    c->scratch = d->scratch;
    c->scratch_size = sizeof(d->scratch);
    mota_posix_device_identity(d, "example.com", "mota-sim");
    return MOTA_OK;
}

void mota_posix_device_identity(struct mota_posix_device *d, const char *vendor, const char *klass)
{
    mota_uuid5(mota_uuid_ns_dns, vendor, strlen(vendor), d->cfg.vendor_id);
    mota_uuid5(d->cfg.vendor_id, klass, strlen(klass), d->cfg.class_id);
    d->cfg.vendor_name = vendor; /* shown beside the ids (HELLO key 15): the caller keeps them */
    d->cfg.class_name = klass;
}

int mota_posix_device_boot(struct mota_posix_device *d, const struct mota_transport *tr, const char *name)
{
    d->boot_us = mono_us();
    d->port.transport = tr;
    return mota_device_start(&d->device, &d->cfg, name);
}

void mota_posix_device_close(struct mota_posix_device *d)
{
    mota_posix_flash_close(&d->pf);
    free_ram(d);
}
