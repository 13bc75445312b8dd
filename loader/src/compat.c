/* SPDX-License-Identifier: Apache-2.0 */
/* Model-versus-device compatibility rules. */
#include "mota/compat.h"

#include "mota/err.h"
#include "mota/nbin.h"

#include <string.h>

static int fail(struct mota_compat_result *r, int reason, const char *field, uint64_t expected, uint64_t found)
{
    r->reason = reason;
    r->field = field;
    r->expected = expected;
    r->found = found;
    return reason;
}

static uint64_t ver3(uint32_t a, uint32_t b, uint32_t c)
{
    return (uint64_t)a << 16 | (uint64_t)b << 8 | c;
}

static bool fits(const struct mota_device_profile *d, const struct mota_compat *m, uint32_t mode)
{
    uint64_t need = mode == MOTA_INSTALL_XIP ? m->exec_ram_xip : m->exec_ram_copy;
    return (d->install_modes & (1u << mode)) && need <= d->exec_ram_size;
}

int mota_compat_check(const struct mota_device_profile *d, const struct mota_compat *m, bool split,
                      struct mota_compat_result *r)
{
    struct mota_compat_result dummy;
    if (r == NULL)
        r = &dummy;
    memset(r, 0, sizeof(*r));
    if (d == NULL || m == NULL)
        return fail(r, MOTA_ERR_ARG, "argument", 0, 0);
    if (m->reloc_major > 15 || !((d->reloc_families >> m->reloc_major) & 1u))
        return fail(r, MOTA_ERR_COMPAT_FAMILY, "reloc_families", d->reloc_families,
                    m->reloc_major > 15 ? 0 : 1u << m->reloc_major);
    if (m->reloc_minor > d->reloc_minor_max)
        return fail(r, MOTA_ERR_COMPAT_RELOC_VERSION, "reloc_minor", d->reloc_minor_max, m->reloc_minor);
    if (m->cpu_part != d->cpu_part)
        return fail(r, MOTA_ERR_COMPAT_CPU, "cpu_part", d->cpu_part, m->cpu_part);
    if (m->fpu && !d->fpu_enabled)
        return fail(r, MOTA_ERR_COMPAT_FPU, "fpu", d->fpu_enabled, m->fpu);
    /* soft and softfp share the base calling convention; hard does not */
    if ((m->float_abi == 2) != (d->float_abi == 2))
        return fail(r, MOTA_ERR_COMPAT_FLOAT_ABI, "float_abi", d->float_abi, m->float_abi);
    /* a non-secure model may run in a secure context (ST warns), not the reverse */
    if (m->secure && !d->secure)
        return fail(r, MOTA_ERR_COMPAT_SECURE, "secure", d->secure, m->secure);
    /* CPU-executable models (mota build-model) borrow the NPU family's
     * layout but need no NPU; every other model of that family does */
    bool cpu_model = m->rt_desc_len >= sizeof(MOTA_CPU_ABI_PREFIX) - 1 &&
                     memcmp(m->rt_desc, MOTA_CPU_ABI_PREFIX, sizeof(MOTA_CPU_ABI_PREFIX) - 1) == 0;
    if (m->reloc_major == MOTA_NBIN_FAMILY_NPU && !cpu_model && !d->has_ll_aton)
        return fail(r, MOTA_ERR_COMPAT_NPU, "npu", 0, 1);
    if (m->reloc_major == MOTA_NBIN_FAMILY_NPU && (d->has_ll_aton || !cpu_model)) {
        if (m->dbg_info != d->dbg_info)
            return fail(r, MOTA_ERR_COMPAT_DBG_INFO, "dbg_info", d->dbg_info, m->dbg_info);
        if (m->async != d->async)
            return fail(r, MOTA_ERR_COMPAT_ASYNC, "async", d->async, m->async);
        uint64_t want = ver3(d->ll_aton_major, d->ll_aton_minor, d->ll_aton_micro);
        uint64_t got = ver3(m->rt_major, m->rt_minor, m->rt_micro);
        if (!d->has_ll_aton || !m->has_runtime_version || want != got)
            return fail(r, MOTA_ERR_COMPAT_LL_ATON, "ll_aton_version", d->has_ll_aton ? want : 0, got);
        if (d->struct_sizes != 0 && m->has_struct_sizes && m->struct_sizes != d->struct_sizes)
            return fail(r, MOTA_ERR_COMPAT_STRUCT_SIZES, "struct_sizes", d->struct_sizes, m->struct_sizes);
    }
    if ((d->split_policy == MOTA_SPLIT_REQUIRED && !split && m->params_size > 0) ||
        (d->split_policy == MOTA_SPLIT_FORBIDDEN && split))
        return fail(r, MOTA_ERR_COMPAT_SPLIT, "split", d->split_policy, split);
    uint32_t pref = m->install_mode, other = pref == MOTA_INSTALL_XIP ? MOTA_INSTALL_COPY : MOTA_INSTALL_XIP;
    if (!(d->install_modes & ((1u << MOTA_INSTALL_XIP) | (1u << MOTA_INSTALL_COPY))))
        return fail(r, MOTA_ERR_COMPAT_INSTALL_MODE, "install_mode", d->install_modes, pref);
    if (fits(d, m, pref))
        r->install_mode = pref;
    else if (fits(d, m, other))
        r->install_mode = other;
    else
        return fail(r, MOTA_ERR_COMPAT_EXEC_RAM, "exec_ram", d->exec_ram_size,
                    (d->install_modes & (1u << MOTA_INSTALL_XIP)) ? m->exec_ram_xip : m->exec_ram_copy);
    if (m->ext_ram_size > d->ext_ram_size)
        return fail(r, MOTA_ERR_COMPAT_EXT_RAM, "ext_ram", d->ext_ram_size, m->ext_ram_size);
    r->reason = MOTA_OK;
    return MOTA_OK;
}

void mota_nbin_compat(const struct mota_nbin_info *in, uint32_t mode, struct mota_compat *c)
{
    memset(c, 0, sizeof(*c));
    c->reloc_major = in->reloc_major;
    c->reloc_minor = in->reloc_minor;
    c->cpu_part = in->cpu_part;
    c->fpu = in->fpu;
    c->float_abi = in->float_abi;
    c->secure = in->secure;
    c->dbg_info = in->dbg_info;
    c->async = in->async;
    c->toolchain = in->toolchain;
    if (in->family == MOTA_NBIN_FAMILY_NPU) {
        c->has_runtime_version = true;
        c->rt_major = in->rt_version >> 24;
        c->rt_minor = (in->rt_version >> 16) & 0xff;
        c->rt_micro = (in->rt_version >> 8) & 0xff;
        c->rt_desc = in->rt_desc;
        c->rt_desc_len = in->rt_desc_len;
    }
    if (in->rtctx_words == 17) {
        c->has_struct_sizes = true;
        c->struct_sizes = in->struct_sizes;
    }
    c->c_name = in->c_name;
    c->c_name_len = in->c_name_len;
    c->acts_size = in->acts_size;
    c->params_size = in->params_size;
    c->ext_ram_size = in->ext_ram_size;
    c->exec_ram_xip = in->exec_ram_xip;
    c->exec_ram_copy = in->exec_ram_copy;
    c->install_mode = mode;
}
