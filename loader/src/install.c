/* SPDX-License-Identifier: Apache-2.0 */
/* The installer: pools, copies, GOT and REL passes, runtime context. */
#include "mota/loader.h"

#include "mota/err.h"

#include "tags.h"

#include <string.h>

#define EXT_ADDR_MIN 0x60000000u /* NPU caches work on external memory only */

static uint32_t round8(uint32_t v)
{
    return (v + 7u) & ~7u;
}

struct inst {
    const struct mota_install_config *cfg;
    const struct mota_nbin_info *info; /* validated over cfg->image */
    struct mota_installed *out;
    uint8_t *ram;         /* host view of the RW segment */
    uint8_t *rom_copy;    /* host view of the RO copy (COPY mode), else NULL */
    const uint8_t *pblob; /* host view of the params blob */
    uint32_t pblob_addr;
    size_t pblob_len;
    uint32_t ext_size; /* usable external RAM */
    uint32_t base[16]; /* device address of each segment tag (make_bases) */
};

/*
 * The device address of each segment tag, from the tags validation saw in the
 * GOT and REL targets (mota_nbin_validate proved each value's tag allowed for
 * the family and its offset inside its segment): relocating a word is then a
 * load, a table lookup, an add and a store. A tag the model uses without a
 * place here (external RAM not configured) fails before the first write.
 */
static int make_bases(struct inst *s)
{
    const struct mota_installed *o = s->out;
    bool npu = s->info->family == MOTA_NBIN_FAMILY_NPU;
    s->base[0x0] = 0;
    s->base[0x2] = o->rom_addr;
    s->base[0x4] = o->ram_addr;
    s->base[0x8] = npu ? o->param0_addr : o->ram_addr;
    s->base[0x9] = o->ext_addr;
    uint16_t known = (1u << 0x2) | (1u << 0x8) | (npu ? (1u << 0x4) | (1u << 0x9) : 0);
    if (s->info->value_tags & ~known)
        return MOTA_ERR_NBIN_TAG; /* unreachable after validation: fail closed */
    if ((s->info->value_tags & (1u << 0x9)) && (o->ext_addr == 0 || s->ext_size < s->info->ext_ram_size))
        return MOTA_ERR_INSTALL_EXT_RAM;
    return MOTA_OK;
}

/* A validated word, relocated. No branch: the only tag-0 value validation admits is 0, and base[0] is 0. */
static inline uint32_t relocate(const uint32_t *base, uint32_t v)
{
    return base[v >> 28] + (v & 0x0FFFFFFFu);
}

/* Aligned words of the little-endian image (offsets proved 4-aligned by validation). */
static inline uint32_t load32(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
#else
    return mota_get32(p);
#endif
}

static inline void store32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 4);
#else
    mota_put32(p, v);
#endif
}

static bool uses_ext_ram(const struct inst *s)
{
    for (unsigned i = 0; i < s->info->n_pools; i++) {
        uint32_t f = s->info->pools[i].flags;
        if ((f >> 24) == 1 && (f & 0xff) == 1)
            return true;
    }
    return s->info->ext_ram_size > 0;
}

/* Memory the installer wrote, on its way to memory: the NPU reads pools past the core's data cache. */
static void clean(const struct inst *s, uint32_t addr, uint32_t len)
{
    const struct mota_install_mem *mem = s->cfg->mem;
    if (mem->clean_dcache != NULL)
        mem->clean_dcache(mem->ctx, addr, len);
}

/* Memory pools (NPU): before the data image, as ST's loader does. */
static int install_pools(struct inst *s)
{
    const struct mota_install_config *c = s->cfg;
    uint32_t base0 = s->pblob_addr + s->info->params0_off; /* tag-8 values resolve here */
    for (unsigned i = 0; i < s->info->n_pools; i++) {
        const struct mota_nbin_pool *p = &s->info->pools[i];
        uint32_t type = p->flags >> 24, dtype = (p->flags >> 16) & 0xff, attr = (p->flags >> 8) & 0xff;
        uint32_t id = p->flags & 0xff, sz = round8(p->size);
        const uint8_t *src = s->pblob + p->foff; /* in range: validated against the blob */
        bool cacheable = (attr & 4) != 0;
        if (type == 1 && id == 0) {
            if (cacheable && s->pblob_addr <= EXT_ADDR_MIN)
                return MOTA_ERR_INSTALL_CACHEABLE;
        } else if (type == 1) { /* id 1: the external R/W pool */
            if (cacheable && c->ext_ram_addr <= EXT_ADDR_MIN)
                return MOTA_ERR_INSTALL_CACHEABLE;
            if (c->ext_ram_addr == 0 || c->ext_ram_size < sz)
                return MOTA_ERR_INSTALL_EXT_RAM;
            uint8_t *dst = c->mem->map(c->mem->ctx, c->ext_ram_addr, sz, true);
            if (dst == NULL)
                return MOTA_ERR_INSTALL_REGION;
            if (dtype == 3) {
                memcpy(dst, src, sz);
                s->out->bytes_copied += sz;
                clean(s, c->ext_ram_addr, sz);
            } else if (dtype == 2 && c->clear) {
                memset(dst, 0, sz);
                s->out->bytes_zeroed += sz;
                clean(s, c->ext_ram_addr, sz);
            }
        } else if (type == 2 || (type == 3 && c->clear)) {
            uint8_t *dst = c->mem->map(c->mem->ctx, p->dst, sz, true);
            if (dst == NULL)
                return MOTA_ERR_INSTALL_REGION;
            if (type == 2) {
                memcpy(dst, src, sz);
                s->out->bytes_copied += sz;
            } else {
                memset(dst, 0, sz);
                s->out->bytes_zeroed += sz;
            }
            clean(s, p->dst, sz);
        }
    }
    s->out->param0_addr = base0;
    return MOTA_OK;
}

static int check_config(struct inst *s)
{
    const struct mota_install_config *c = s->cfg;
    const struct mota_nbin_info *in = s->info;
    if (c->mem == NULL || c->mem->map == NULL || (c->mode != MOTA_INSTALL_XIP && c->mode != MOTA_INSTALL_COPY))
        return MOTA_ERR_INSTALL_ARG;
    if (c->image_addr % 4 != 0 || c->exec_ram_addr % 8 != 0 || c->ext_ram_addr % 4 != 0 ||
        (c->params != NULL && c->params_addr % 4 != 0))
        return MOTA_ERR_INSTALL_ALIGN;
    uint32_t need = c->mode == MOTA_INSTALL_XIP ? in->exec_ram_xip : in->exec_ram_copy;
    if (c->exec_ram_size < need || (uint64_t)c->exec_ram_addr + need > 0x100000000ull)
        return MOTA_ERR_INSTALL_EXEC_RAM;
    if ((uint64_t)c->image_addr + c->image_len > 0x100000000ull)
        return MOTA_ERR_INSTALL_ARG;
    if (c->mode == MOTA_INSTALL_XIP && in->rel_code_entries > 0)
        return MOTA_ERR_NBIN_REL_XIP;
    if (in->split) {
        if (c->params == NULL || c->params_len < in->params_len)
            return MOTA_ERR_INSTALL_PARAMS;
        s->pblob = c->params;
        s->pblob_addr = c->params_addr;
        s->pblob_len = c->params_len;
    } else {
        if (c->params != NULL)
            return MOTA_ERR_NBIN_SPLIT;
        s->pblob = c->image + in->params_offset;
        s->pblob_addr = c->image_addr + in->params_offset;
        s->pblob_len = in->params_len;
    }
    if (in->family == MOTA_NBIN_FAMILY_NPU && uses_ext_ram(s) &&
        (c->ext_ram_addr == 0 || c->ext_ram_size < in->ext_ram_size))
        return MOTA_ERR_INSTALL_EXT_RAM;
    s->ext_size = c->ext_ram_size;
    return MOTA_OK;
}

/* Code: in place (XIP) or copied to the start of exec RAM (COPY); the RW
 * segment follows it in exec RAM. */
static int place_code(struct inst *s)
{
    const struct mota_install_config *cfg = s->cfg;
    const struct mota_nbin_info *in = s->info;
    struct mota_installed *out = s->out;
    if (cfg->mode == MOTA_INSTALL_COPY) {
        uint32_t ro8 = round8(in->ro_size);
        s->rom_copy = cfg->mem->map(cfg->mem->ctx, cfg->exec_ram_addr, ro8, true);
        if (s->rom_copy == NULL)
            return MOTA_ERR_INSTALL_REGION;
        memcpy(s->rom_copy, cfg->image, in->ro_size);
        memset(s->rom_copy + in->ro_size, 0, ro8 - in->ro_size);
        out->bytes_copied += in->ro_size;
        out->rom_addr = cfg->exec_ram_addr;
        out->ram_addr = cfg->exec_ram_addr + ro8;
    } else {
        out->rom_addr = cfg->image_addr;
        out->ram_addr = cfg->exec_ram_addr;
    }
    return MOTA_OK;
}

/* Legacy: the weights are passed to init, not relocated; the activations
 * follow the RW segment (exec_ram_* count them). */
static int place_legacy_acts(struct inst *s)
{
    const struct mota_install_mem *mem = s->cfg->mem;
    struct mota_installed *out = s->out;
    out->param0_addr = s->info->params_len > 0 ? s->pblob_addr : 0;
    out->acts_addr = out->ram_addr + round8(s->info->rw_size);
    out->acts_size = s->info->acts_size;
    if (mem->map(mem->ctx, out->acts_addr, round8(s->info->acts_size), true) == NULL)
        return MOTA_ERR_INSTALL_REGION;
    return MOTA_OK;
}

/* Data image, then .bss zeroed (up to the rounded RW size). */
static int load_data(struct inst *s)
{
    const struct mota_install_mem *mem = s->cfg->mem;
    const struct mota_nbin_info *in = s->info;
    uint32_t rw_bytes = round8(in->rw_size);
    s->ram = mem->map(mem->ctx, s->out->ram_addr, rw_bytes, true);
    if (s->ram == NULL)
        return MOTA_ERR_INSTALL_REGION;
    memcpy(s->ram, s->cfg->image + in->ro_size, in->data_copy);
    memset(s->ram + in->data_copy, 0, rw_bytes - in->data_copy);
    s->out->bytes_copied += in->data_copy;
    s->out->bytes_zeroed += rw_bytes - in->data_copy;
    return MOTA_OK;
}

/* GOT pass (R_ARM_GOT_BREL slots), in RAM: the GOT lies in the data image
 * just copied, every word's tag and range proved by mota_nbin_validate. */
static void patch_got(struct inst *s)
{
    const struct mota_nbin_info *in = s->info;
    const uint32_t *base = s->base;
    uint8_t *p = s->ram + in->got_off, *end = s->ram + in->got_end;
    for (; p < end; p += 4)
        store32(p, relocate(base, load32(p)));
    s->out->got_patched = (in->got_end - in->got_off) / 4;
}

/* REL pass (R_ARM_ABS32 words), entries read from the file: mota_nbin_validate
 * proved each word inside the data image, or inside the code for tag 2 (COPY
 * mode only: check_config), and its value's tag and range. */
static void patch_rel(struct inst *s)
{
    const struct mota_nbin_info *in = s->info;
    const uint32_t *base = s->base;
    const uint8_t *e = s->cfg->image + in->rel_off, *end = e + 4 * in->rel_count;
    uint8_t *seg[16] = {NULL}; /* where an entry's word lies, by its tag: the RW segment, or the code copy */
    seg[in->family == MOTA_NBIN_FAMILY_NPU ? 0x4 : 0x8] = s->ram;
    seg[0x2] = s->rom_copy;
    for (; e < end; e += 4) {
        uint32_t entry = load32(e);
        uint8_t *w = seg[entry >> 28] + (entry & 0x0FFFFFFFu);
        store32(w, relocate(base, load32(w)));
    }
    s->out->rel_patched = in->rel_count;
}

/* Runtime context (inside the data image: mota_nbin_parse), and the entry
 * points as device addresses. */
static void write_rtctx(struct inst *s)
{
    const struct mota_install_config *cfg = s->cfg;
    const struct mota_nbin_info *in = s->info;
    struct mota_installed *out = s->out;
    uint8_t *ctx = s->ram + in->ctx_off;
    out->ctx_addr = out->ram_addr + in->ctx_off;
    if (in->family == MOTA_NBIN_FAMILY_NPU) {
        mota_put32(ctx + 0, 1u | (cfg->mode == MOTA_INSTALL_XIP ? 2u : 0u)); /* INITIALIZED | XIP */
        mota_put32(ctx + 4, cfg->image_addr);
        mota_put32(ctx + 8, out->ram_addr);
        mota_put32(ctx + 12, out->rom_addr);
        mota_put32(ctx + 16, cfg->callbacks_addr);
        mota_put32(ctx + (in->rtctx_words == 17 ? 60 : 56), cfg->ll_instance_addr);
    } else {
        mota_put32(ctx + 0, 1u | (cfg->mode == MOTA_INSTALL_XIP ? 2u : 0u)); /* INITIALIZED | XIP, as ST's loader */
        mota_put32(ctx + 8, out->ram_addr);
        mota_put32(ctx + 12, out->rom_addr);
        if (in->crc_callbacks) { /* ST's ai_rel_network_load_and_create_ext: the port's CRC arbitration */
            mota_put32(ctx + 52, cfg->mem->crc_acquire);
            mota_put32(ctx + 56, cfg->mem->crc_release);
        }
    }
    out->n_entries = in->n_entries;
    for (unsigned i = 0; i < in->n_entries; i++)
        out->entries[i] = out->rom_addr + OFF(in->entries[i]);
}

/* What was written reaches memory, and the core fetches the new code. */
static void sync_caches(const struct inst *s)
{
    const struct mota_install_mem *mem = s->cfg->mem;
    const struct mota_installed *out = s->out;
    clean(s, out->ram_addr, round8(s->info->rw_size));
    if (s->rom_copy != NULL)
        clean(s, out->rom_addr, round8(s->info->ro_size));
    if (mem->invalidate_icache != NULL)
        mem->invalidate_icache(mem->ctx, out->rom_addr, round8(s->info->ro_size));
}

static int install(struct inst *s)
{
    int ret = MOTA_ERR_INSTALL_ARG;
    if ((ret = check_config(s)) != MOTA_OK)
        return ret;
    s->out->family = s->info->family;
    s->out->npu = s->info->family == MOTA_NBIN_FAMILY_NPU &&
                  !(s->info->rt_desc_len >= sizeof(MOTA_NBIN_CPU_ABI) - 1 &&
                    memcmp(s->info->rt_desc, MOTA_NBIN_CPU_ABI, sizeof(MOTA_NBIN_CPU_ABI) - 1) == 0);
    s->out->mode = s->cfg->mode;
    s->out->ext_addr = s->cfg->ext_ram_addr;
    if (s->info->family == MOTA_NBIN_FAMILY_NPU && (ret = install_pools(s)) != MOTA_OK)
        return ret;
    if ((ret = place_code(s)) != MOTA_OK)
        return ret;
    if (s->info->family != MOTA_NBIN_FAMILY_NPU && (ret = place_legacy_acts(s)) != MOTA_OK)
        return ret;
    if ((ret = make_bases(s)) != MOTA_OK)
        return ret;
    if ((ret = load_data(s)) != MOTA_OK)
        return ret;
    patch_got(s);
    patch_rel(s);
    write_rtctx(s);
    sync_caches(s);
    return MOTA_OK;
}

int mota_loader_install_validated(const struct mota_install_config *cfg, const struct mota_nbin_info *info,
                                  struct mota_installed *out)
{
    struct inst s;
    if (cfg == NULL || out == NULL || cfg->image == NULL || info == NULL || info->image_len != cfg->image_len)
        return MOTA_ERR_ARG;
    memset(&s, 0, sizeof(s));
    memset(out, 0, sizeof(*out));
    s.cfg = cfg;
    s.out = out;
    s.info = info;
    return install(&s);
}

int mota_loader_install(const struct mota_install_config *cfg, struct mota_installed *out)
{
    struct mota_nbin_info info;
    int ret = MOTA_ERR_ARG;
    if (cfg == NULL || out == NULL || cfg->image == NULL)
        return MOTA_ERR_ARG;
    if ((ret = mota_nbin_validate(cfg->image, cfg->image_len, &info)) != MOTA_OK)
        return ret;
    return mota_loader_install_validated(cfg, &info, out);
}
