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
    struct mota_nbin_info info;
    struct mota_installed *out;
    uint8_t *ram;          /* host view of the RW segment */
    uint8_t *rom_copy;     /* host view of the RO copy (COPY mode), else NULL */
    const uint8_t *pblob;  /* host view of the params blob */
    uint32_t pblob_addr;
    size_t pblob_len;
    uint32_t ext_size;     /* usable external RAM */
};

/* A tagged link-time value as a device address; validated values only. */
static int relocate(const struct inst *s, uint32_t v, uint32_t *res)
{
    const struct mota_installed *o = s->out;
    uint32_t off = OFF(v);
    if (v == 0) {
        *res = 0;
        return MOTA_OK;
    }
    switch (TAG(v)) {
    case 0x2:
        *res = o->rom_addr + off;
        return MOTA_OK;
    case 0x4:
        if (s->info.family != MOTA_NBIN_FAMILY_NPU)
            break;
        *res = o->ram_addr + off;
        return MOTA_OK;
    case 0x8:
        *res = (s->info.family == MOTA_NBIN_FAMILY_NPU ? o->param0_addr : o->ram_addr) + off;
        return MOTA_OK;
    case 0x9:
        if (s->info.family != MOTA_NBIN_FAMILY_NPU || o->ext_addr == 0 || off > s->ext_size)
            return MOTA_ERR_INSTALL_EXT_RAM;
        *res = o->ext_addr + off;
        return MOTA_OK;
    default:
        break;
    }
    return MOTA_ERR_NBIN_TAG; /* unreachable after validation: fail closed */
}

static bool uses_ext_ram(const struct inst *s)
{
    for (unsigned i = 0; i < s->info.n_pools; i++) {
        uint32_t f = s->info.pools[i].flags;
        if ((f >> 24) == 1 && (f & 0xff) == 1)
            return true;
    }
    return s->info.ext_ram_size > 0;
}

/* Memory pools (NPU): before the data image, as ST's loader does. */
static int install_pools(struct inst *s)
{
    const struct mota_install_config *c = s->cfg;
    uint32_t base0 = s->pblob_addr;
    for (unsigned i = 0; i < s->info.n_pools; i++) {
        const struct mota_nbin_pool *p = &s->info.pools[i];
        uint32_t type = p->flags >> 24, dtype = (p->flags >> 16) & 0xff, attr = (p->flags >> 8) & 0xff;
        uint32_t id = p->flags & 0xff, sz = round8(p->size);
        const uint8_t *src = s->pblob + p->foff; /* in range: validated against the blob */
        bool cacheable = (attr & 4) != 0;
        if (type == 1 && id == 0) {
            if (cacheable && s->pblob_addr <= EXT_ADDR_MIN)
                return MOTA_ERR_INSTALL_CACHEABLE;
            if (dtype == 1)
                base0 = s->pblob_addr + p->foff; /* tag-8 values resolve here */
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
            } else if (dtype == 2 && c->clear) {
                memset(dst, 0, sz);
                s->out->bytes_zeroed += sz;
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
        }
    }
    s->out->param0_addr = base0;
    return MOTA_OK;
}

static int check_config(struct inst *s)
{
    const struct mota_install_config *c = s->cfg;
    const struct mota_nbin_info *in = &s->info;
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
    const struct mota_nbin_info *in = &s->info;
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
    const struct mota_loader_mem *mem = s->cfg->mem;
    struct mota_installed *out = s->out;
    out->param0_addr = s->info.params_len > 0 ? s->pblob_addr : 0;
    out->acts_addr = out->ram_addr + round8(s->info.rw_size);
    out->acts_size = s->info.acts_size;
    if (mem->map(mem->ctx, out->acts_addr, round8(s->info.acts_size), true) == NULL)
        return MOTA_ERR_INSTALL_REGION;
    return MOTA_OK;
}

/* Data image, then .bss zeroed (up to the rounded RW size). */
static int load_data(struct inst *s)
{
    const struct mota_loader_mem *mem = s->cfg->mem;
    const struct mota_nbin_info *in = &s->info;
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
 * just copied (mota_nbin_validate). */
static int patch_got(struct inst *s)
{
    int ret = MOTA_ERR_INSTALL_ARG;
    const struct mota_nbin_info *in = &s->info;
    uint8_t *ram = s->ram; /* locals, not s->: kept in registers across relocate() */
    struct mota_installed *out = s->out;
    for (uint32_t off = in->got_off; off < in->got_end; off += 4) {
        uint32_t v = mota_get32(ram + off), r;
        if ((ret = relocate(s, v, &r)) != MOTA_OK)
            return ret;
        mota_put32(ram + off, r);
        out->got_patched++;
    }
    return MOTA_OK;
}

/* REL pass (R_ARM_ABS32 words), entries read from the file: mota_nbin_validate
 * proved each word inside the data image, or inside the code for tag 2. */
static int patch_rel(struct inst *s)
{
    int ret = MOTA_ERR_INSTALL_ARG;
    const struct mota_nbin_info *in = &s->info;
    const uint8_t *image = s->cfg->image; /* locals, not s->: kept in registers across relocate() */
    uint8_t *ram = s->ram, *rom_copy = s->rom_copy;
    struct mota_installed *out = s->out;
    for (uint32_t i = 0; i < in->rel_count; i++) {
        uint32_t e = mota_get32(image + in->rel_off + 4 * i), r;
        uint8_t *w = TAG(e) == 0x2 ? rom_copy + OFF(e) : ram + OFF(e); /* tag 2: COPY only (checked) */
        if ((ret = relocate(s, mota_get32(w), &r)) != MOTA_OK)
            return ret;
        mota_put32(w, r);
        out->rel_patched++;
    }
    return MOTA_OK;
}

/* Runtime context (inside the data image: mota_nbin_parse), and the entry
 * points as device addresses. */
static void write_rtctx(struct inst *s)
{
    const struct mota_install_config *cfg = s->cfg;
    const struct mota_nbin_info *in = &s->info;
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
    }
    out->n_entries = in->n_entries;
    for (unsigned i = 0; i < in->n_entries; i++)
        out->entries[i] = out->rom_addr + OFF(in->entries[i]);
}

/* What was written reaches memory, and the core fetches the new code. */
static void sync_caches(const struct inst *s)
{
    const struct mota_loader_mem *mem = s->cfg->mem;
    const struct mota_installed *out = s->out;
    if (mem->clean_dcache != NULL) {
        mem->clean_dcache(mem->ctx, out->ram_addr, round8(s->info.rw_size));
        if (s->rom_copy != NULL)
            mem->clean_dcache(mem->ctx, out->rom_addr, round8(s->info.ro_size));
    }
    if (mem->invalidate_icache != NULL)
        mem->invalidate_icache(mem->ctx, out->rom_addr, round8(s->info.ro_size));
}

int mota_loader_install(const struct mota_install_config *cfg, struct mota_installed *out)
{
    int ret = MOTA_ERR_INSTALL_ARG;
    struct inst s;

    if (cfg == NULL || out == NULL || cfg->image == NULL)
        return MOTA_ERR_ARG;
    memset(&s, 0, sizeof(s));
    memset(out, 0, sizeof(*out));
    s.cfg = cfg;
    s.out = out;
    if ((ret = mota_nbin_validate(cfg->image, cfg->image_len, &s.info)) != MOTA_OK)
        return ret;
    if ((ret = check_config(&s)) != MOTA_OK)
        return ret;
    out->family = s.info.family;
    out->mode = cfg->mode;
    out->ext_addr = cfg->ext_ram_addr;

    if (s.info.family == MOTA_NBIN_FAMILY_NPU && (ret = install_pools(&s)) != MOTA_OK)
        return ret;
    if ((ret = place_code(&s)) != MOTA_OK)
        return ret;
    if (s.info.family != MOTA_NBIN_FAMILY_NPU && (ret = place_legacy_acts(&s)) != MOTA_OK)
        return ret;
    if ((ret = load_data(&s)) != MOTA_OK)
        return ret;
    if ((ret = patch_got(&s)) != MOTA_OK)
        return ret;
    if ((ret = patch_rel(&s)) != MOTA_OK)
        return ret;
    write_rtctx(&s);
    sync_caches(&s);
    return MOTA_OK;
}
