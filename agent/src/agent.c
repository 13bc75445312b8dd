/* SPDX-License-Identifier: Apache-2.0 */
/* The device agent: verify before erase, A/B slots, trial and rollback. */
#include "agent_int.h"

#include "mota/cbor.h"
#include "mota/decompress.h"
#include "mota/err.h"
#include "mota/ms.h"

#include <string.h>

#define SLOT_ALIGN 32u /* components start on this boundary in a slot (XIP alignment) */

const struct mota_agent_model_config *mota_agent_model_cfg(const struct mota_agent *a, unsigned m)
{
    return &a->cfg->models[m];
}

uint32_t mota_agent_align_up(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

static uint32_t slot_align(const struct mota_agent *a)
{
    uint32_t p = a->cfg->port->flash->prog_size;
    return p > SLOT_ALIGN ? p : SLOT_ALIGN;
}

/* Bytes buffered before a program: whole program units, up to the buffer. */
uint32_t mota_agent_chunk_size(const struct mota_agent *a)
{
    uint32_t p = a->cfg->port->flash->prog_size;
    return (uint32_t)sizeof(a->up.unit) / p * p;
}

uint32_t mota_agent_slot_base(const struct mota_agent *a, unsigned m, unsigned slot)
{
    return mota_agent_model_cfg(a, m)->slot_offset[slot];
}

/* Long work (hashing a slot, erasing, a self-test) keeps the watchdog fed. */
uint32_t mota_agent_now_us(const struct mota_agent *a)
{
    return (uint32_t)a->cfg->port->sys->now_us(a->cfg->port->sys->ctx);
}

void mota_agent_kick(const struct mota_agent *a)
{
    const struct mota_system *sys = a->cfg->port->sys;
    if (sys->watchdog_kick != NULL)
        sys->watchdog_kick(sys->ctx);
}

/* A model's last error that is not journaled (a refusal before any erase, a fault): this boot's, now. */
void mota_agent_model_error(struct mota_agent *a, unsigned m, int reason)
{
    struct mota_agent_model_state *s = &a->st[m];
    s->last_error = reason;
    s->last_error_this_boot = true;
    s->last_error_ms = (uint32_t)mota_ms_of_us(a->cfg->port->sys->now_us(a->cfg->port->sys->ctx));
}

int mota_agent_journal(struct mota_agent *a, enum jrec_type type, unsigned m, int reason)
{
    struct jrec r;
    mota_journal_rec(&r, type, m);
    r.reason = (int16_t)reason;
    return mota_journal_append(&a->journal, &r);
}

/* ---- verification of a container head (before erase, and at boot) ---- */

/* Revoked keys are refused for new uploads; a stored model signed before the
 * revocation still re-validates (revoking must not brick the device). */
static int authenticate(const struct mota_agent *a, const struct mota_envelope *env, bool new_upload,
                        struct mota_agent_refusal *why)
{
    struct mota_trusted_key keys[MOTA_AGENT_MAX_KEYS];
    size_t idx = 0;
    for (unsigned k = 0; k < a->cfg->n_keys; k++)
        mota_trusted_key_set(&keys[k], a->cfg->keys[k].pub);
    int ret = mota_envelope_authenticate(env, keys, a->cfg->n_keys, &idx);
    if (ret != MOTA_OK)
        return ret;
    if (new_upload && a->cfg->keys[idx].index < a->key_floor) {
        *why = (struct mota_agent_refusal){MOTA_ERR_KEY_REVOKED, NULL, a->key_floor, a->cfg->keys[idx].index};
        return MOTA_ERR_KEY_REVOKED;
    }
    return MOTA_OK;
}

static uint32_t payload_head_len(const struct mota_component *c)
{
    return (uint32_t)mota_payload_head_size(c->role, mota_component_wire_size(c));
}

static const struct mota_component *component(const struct mota_manifest *man, enum mota_component_role role,
                                              size_t *index)
{
    for (size_t c = 0; c < man->n_components; c++) {
        if (man->comp[c].role == role) {
            if (index)
                *index = c;
            return &man->comp[c];
        }
    }
    return NULL;
}

/* What the model's slot offers (the device's profile, with this model's memories), against what the
 * container needs: the install mode, or the rule that refuses it with its values. */
static int check_compat(const struct mota_agent *a, const struct mota_manifest *man, struct mota_agent_head_check *hc)
{
    const struct mota_agent_model_config *mc = mota_agent_model_cfg(a, (unsigned)hc->model);
    struct mota_device_profile p = a->cfg->profile;
    struct mota_compat_result cr;
    p.exec_ram_size = mc->exec_ram_size;
    p.ext_ram_size = mc->ext_ram_size;
    if (a->cfg->port->flash->map == NULL) /* no memory-mapped flash: nothing can execute in place */
        p.install_modes &= ~(1u << MOTA_INSTALL_XIP);
    bool split = component(man, MOTA_COMPONENT_PARAMS, NULL) != NULL;
    int ret = mota_compat_check(&p, &man->compat, split, &cr);
    if (ret != MOTA_OK) {
        hc->why = (struct mota_agent_refusal){ret, cr.field, cr.expected, cr.found};
        return ret;
    }
    hc->lay.install_mode = cr.install_mode;
    if (man->compat.selftest.present &&
        (a->cfg->port->infer == NULL || component(man, MOTA_COMPONENT_SELFTEST, NULL) == NULL ||
         man->compat.selftest.output_size > a->cfg->selftest_buf_size))
        return MOTA_ERR_SELFTEST_RUN;
    return MOTA_OK;
}

/* The stream (head, then each payload head and content, in component order) and where each part goes in
 * a slot of slot_size bytes. */
static int plan_layout(const struct mota_agent *a, const struct mota_envelope *env, const struct mota_manifest *man,
                       struct mota_agent_layout *lay, uint32_t slot_size)
{
    uint64_t pos = env->head_len, slot = mota_agent_align_up((uint32_t)env->head_len, slot_align(a));
    for (size_t c = 0; c < man->n_components; c++) {
        lay->comp_phl[c] = payload_head_len(&man->comp[c]);
        if (lay->comp_phl[c] == 0)
            return MOTA_ERR_COMPONENT_ID;
        /* a decoder this build has (MOTA_FEATURE_LZ4, _DEFLATE): said before any erase */
        if (man->comp[c].compressed && !mota_decompress_built(man->comp[c].z_alg))
            return MOTA_ERR_DECOMP_OFF;
        if (man->comp[c].delta && !MOTA_FEATURE_DELTA)
            return MOTA_ERR_DELTA_OFF;
        /* a compressed image resumes at its blocks' ends: each must leave the program unit empty */
        if (man->comp[c].compressed && man->comp[c].z_block % mota_agent_chunk_size(a) != 0)
            return MOTA_ERR_COMPRESSION_INFO;
        lay->comp_stream[c] = (uint32_t)pos;
        pos += lay->comp_phl[c] + mota_component_wire_size(&man->comp[c]);
        lay->comp_slot[c] = (uint32_t)slot;
        /* in 64 bits (a compressed component's image size is not bounded by the stream's length), aligned by
         * a 32-bit remainder once the end is known to fit: no 64-bit division on the device */
        slot += man->comp[c].size;
        if (slot > slot_size)
            return MOTA_ERR_SLOT_TOO_SMALL;
        uint32_t rem = (uint32_t)slot % slot_align(a);
        slot += rem ? slot_align(a) - rem : 0u;
        if (pos > 0xFFFFFFFFu || slot > slot_size)
            return MOTA_ERR_SLOT_TOO_SMALL;
    }
    lay->container_len = (uint32_t)pos;
    lay->slot_used = (uint32_t)slot;
    return MOTA_OK;
}

int mota_agent_check_head(const struct mota_agent *a, const struct mota_envelope *env, struct mota_manifest *man,
                          struct mota_agent_head_check *hc, enum mota_agent_head_auth auth)
{
    int ret;
    memset(hc, 0, sizeof(*hc));
    hc->model = -1;
    if ((ret = authenticate(a, env, auth == MOTA_AGENT_AUTH_NEW_UPLOAD, &hc->why)) != MOTA_OK)
        return ret;
    if ((ret = mota_manifest_decode(env, man)) != MOTA_OK)
        return ret;
    if ((ret = mota_manifest_check_profile(man)) != MOTA_OK)
        return ret;
    hc->model = mota_agent_find_model(a, man->compat.c_name, man->compat.c_name_len);
    if (hc->model < 0)
        return MOTA_ERR_NO_SLOT;
    for (size_t c = 0; c < man->n_components; c++) {
        if (memcmp(man->comp[c].vendor_id, a->cfg->vendor_id, 16) != 0)
            return MOTA_ERR_VENDOR_MISMATCH;
        if (memcmp(man->comp[c].class_id, a->cfg->class_id, 16) != 0)
            return MOTA_ERR_CLASS_MISMATCH;
    }
    if ((ret = check_compat(a, man, hc)) != MOTA_OK)
        return ret;
    if (env->n_payloads != man->n_components)
        return env->n_payloads < man->n_components ? MOTA_ERR_PAYLOAD_MISSING : MOTA_ERR_PAYLOAD_UNKNOWN;
    return plan_layout(a, env, man, &hc->lay, mota_agent_model_cfg(a, (unsigned)hc->model)->slot_size);
}

/* A delta component's source: the image of its role in the model m runs (installed, so verified from
 * flash), the one its manifest names by digest and size; where it lies on flash in *src_off. */
int mota_agent_delta_source(const struct mota_agent *a, unsigned m, const struct mota_component *c, uint32_t *src_off)
{
#if !MOTA_FEATURE_DELTA
    (void)a, (void)m, (void)c, (void)src_off;
    return MOTA_ERR_DELTA_OFF;
#else
    const struct mota_agent_model_state *s = &a->st[m];
    const struct mota_component *old = NULL;
    struct mota_envelope env;
    struct mota_agent_layout lay;
    size_t idx = 0;
    if (!a->installed[m] || s->active.slot == MOTA_AGENT_NO_SLOT ||
        (old = component(&a->active_manifest[m], c->role, &idx)) == NULL || old->size != c->src_size ||
        mota_ct_memcmp(old->digest, c->src_digest, MOTA_SHA256_LEN) != 0)
        return MOTA_ERR_DELTA_SOURCE;
    /* where it is: the active slot's layout, planned as when it was installed */
    if (mota_agent_map_head(a, m, s->active.slot, &env) != MOTA_OK ||
        plan_layout(a, &env, &a->active_manifest[m], &lay, mota_agent_model_cfg(a, m)->slot_size) != MOTA_OK)
        return MOTA_ERR_DELTA_SOURCE;
    *src_off = mota_agent_slot_base(a, m, s->active.slot) + lay.comp_slot[idx];
    return MOTA_OK;
#endif
}

/* Anti-rollback: lower than committed refused; equal only for the same manifest. */
int mota_agent_check_sequence(const struct mota_agent *a, unsigned m, uint64_t seq,
                              const uint8_t digest[MOTA_SHA256_LEN])
{
    const struct mota_agent_model_state *s = &a->st[m];
    if (!s->has_committed)
        return MOTA_OK;
    if (seq < s->committed_seq)
        return MOTA_ERR_ROLLBACK;
    if (seq == s->committed_seq && memcmp(digest, s->committed_digest, MOTA_SHA256_LEN) != 0)
        return MOTA_ERR_ROLLBACK_SAME_SEQ;
    return MOTA_OK;
}

/* Hash [off, off+len) of the flash. */
int mota_agent_hash_flash(const struct mota_agent *a, uint32_t off, uint32_t len, struct mota_sha256 *ctx)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    uint8_t buf[256];
    while (len > 0) {
        /* straight from the mapped flash, a sector at a time (no copy); read() where it is not mapped, and
         * on ECC flash, where only read() reports a torn unit as such (a mapped one faults) */
        uint32_t n = len < 4096u ? len : 4096u;
        const uint8_t *p = (fl->flags & MOTA_FLASH_PROGRAM_ONCE) ? NULL : fl->map(fl->ctx, off, n);
        if (p == NULL) {
            n = n < sizeof(buf) ? n : (uint32_t)sizeof(buf);
            int ret = fl->read(fl->ctx, off, buf, n);
            if (ret != MOTA_OK)
                return ret;
            p = buf;
        }
        mota_sha256_update(ctx, p, n);
        off += n;
        len -= n;
        mota_agent_kick(a);
    }
    return MOTA_OK;
}

/* Every component, read back from the slot, matches its signed digest. */
int mota_agent_verify_components(const struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                                 const struct mota_agent_layout *lay)
{
    for (size_t c = 0; c < man->n_components; c++) {
        struct mota_sha256 ctx;
        uint8_t md[MOTA_SHA256_LEN];
        mota_sha256_init(&ctx);
        int ret = mota_agent_hash_flash(a, mota_agent_slot_base(a, m, slot) + lay->comp_slot[c],
                                        (uint32_t)man->comp[c].size, &ctx);
        mota_sha256_finish(&ctx, md);
        if (ret != MOTA_OK)
            return ret;
        if (mota_ct_memcmp(md, man->comp[c].digest, MOTA_SHA256_LEN) != 0)
            return man->comp[c].encrypted    ? MOTA_ERR_DECRYPT_IMAGE_DIGEST
                   : man->comp[c].compressed ? MOTA_ERR_DECOMP_IMAGE_DIGEST
                                             : MOTA_ERR_PAYLOAD_DIGEST;
    }
    return MOTA_OK;
}

/*
 * The head stored at the start of a slot, decoded in place: mapped a window at a time (512 bytes, doubled
 * while the envelope is cut short, up to the largest head this device takes), never the whole slot: past
 * its model a slot may hold what an earlier, longer upload left, units torn by a power cut among them,
 * which a mapped read must not meet on ECC flash (mota/port.h).
 */
int mota_agent_map_head(const struct mota_agent *a, unsigned m, unsigned slot, struct mota_envelope *env)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    uint32_t size = mota_agent_model_cfg(a, m)->slot_size, base = mota_agent_slot_base(a, m, slot);
    uint32_t max = a->cfg->scratch_size < size ? (uint32_t)a->cfg->scratch_size : size;
    for (uint32_t w = 512u < max ? 512u : max;; w = w > max / 2u ? max : 2u * w) {
        const uint8_t *p = fl->map(fl->ctx, base, w);
        if (p == NULL)
            return MOTA_ERR_SLOT_INVALID;
        int ret = mota_envelope_decode(p, w, env);
        if (ret != MOTA_ERR_CBOR_TRUNCATED || w == max)
            return ret;
    }
}

/*
 * The head of a stored model, decoded in place from the memory-mapped flash
 * (so the manifest stays readable while the model is active) and checked:
 * signature, manifest digest as journaled, the same rules as at upload.
 */
static int load_slot_head(struct mota_agent *a, unsigned m, const struct mota_agent_slot_ref *ref,
                          struct mota_envelope *env, struct mota_manifest *man, struct mota_agent_head_check *hc,
                          enum mota_agent_head_auth auth)
{
    if (ref->slot > 1)
        return MOTA_ERR_SLOT_INVALID;
    int ret = mota_agent_map_head(a, m, ref->slot, env);
    if (ret != MOTA_OK)
        return ret;
    if (memcmp(env->digest, ref->digest, MOTA_SHA256_LEN) != 0)
        return MOTA_ERR_SLOT_INVALID;
    if ((ret = mota_agent_check_head(a, env, man, hc, auth)) != MOTA_OK)
        return ret;
    if (hc->model != (int)m || man->seq != ref->seq)
        return MOTA_ERR_SLOT_INVALID;
    return MOTA_OK;
}

/* Full re-validation: the head, then every payload digest from flash. */
static int validate_slot(struct mota_agent *a, unsigned m, const struct mota_agent_slot_ref *ref,
                         struct mota_envelope *env, struct mota_manifest *man, struct mota_agent_head_check *hc)
{
    int ret = load_slot_head(a, m, ref, env, man, hc, MOTA_AGENT_AUTH_STORED);
    if (ret != MOTA_OK)
        return ret;
    return mota_agent_verify_components(a, m, ref->slot, man, &hc->lay);
}

/* The loader's view of the model stored in `slot`: its code (and split params) mapped, the exec memory of m. */
static int install_config(const struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                          const struct mota_agent_layout *lay, struct mota_install_config *c,
                          struct mota_install_mem *im)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    const struct mota_agent_model_config *mc = mota_agent_model_cfg(a, m);
    size_t ci = 0, pi = 0;
    const struct mota_component *code = component(man, MOTA_COMPONENT_CODE, &ci);
    const struct mota_component *params = component(man, MOTA_COMPONENT_PARAMS, &pi);
    uint32_t base = mota_agent_slot_base(a, m, slot);
    const struct mota_loader_mem *pm = a->cfg->port->mem;
    if (code == NULL || pm == NULL)
        return MOTA_ERR_CONFIG;
    /* the board's memory, as the loader takes it */
    *im = (struct mota_install_mem){.map = pm->map,
                                    .clean_dcache = pm->clean_dcache,
                                    .invalidate_icache = pm->invalidate_icache,
                                    .ctx = pm->ctx,
                                    .crc_acquire = pm->crc_acquire,
                                    .crc_release = pm->crc_release};
    *c = (struct mota_install_config){
        .image = fl->map(fl->ctx, base + lay->comp_slot[ci], (size_t)code->size),
        .image_len = (size_t)code->size,
        .image_addr = fl->xip_base + base + lay->comp_slot[ci],
        .exec_ram_addr = mc->exec_ram_addr,
        .exec_ram_size = mc->exec_ram_size,
        .ext_ram_addr = mc->ext_ram_addr,
        .ext_ram_size = mc->ext_ram_size,
        .mode = lay->install_mode,
        .clear = true,
        .mem = im,
    };
    if (params != NULL) {
        c->params = fl->map(fl->ctx, base + lay->comp_slot[pi], (size_t)params->size);
        c->params_len = (size_t)params->size;
        c->params_addr = fl->xip_base + base + lay->comp_slot[pi];
    }
    return c->image == NULL || (params != NULL && c->params == NULL) ? MOTA_ERR_SLOT_INVALID : MOTA_OK;
}

/* Validate the code in `slot` (mota_nbin_validate: every bound the install passes rely on) into
 * a->code_info: once per verification, right after the digests of those bytes were checked. */
int mota_agent_validate_code(struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                             const struct mota_agent_layout *lay)
{
    struct mota_install_config c;
    struct mota_install_mem im;
    int ret = install_config(a, m, slot, man, lay, &c, &im);
    if (ret != MOTA_OK)
        return ret;
    return mota_nbin_validate(c.image, c.image_len, &a->code_info);
}

/* Install the model stored in `slot` through the loader, mota_agent_validate_code() having run on it. */
int mota_agent_install_slot(struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                            const struct mota_agent_layout *lay, struct mota_installed *out)
{
    struct mota_install_config c;
    struct mota_install_mem im;
    int ret = install_config(a, m, slot, man, lay, &c, &im);
    if (ret != MOTA_OK)
        return ret;
    return mota_loader_install_validated(&c, &a->code_info, out);
}

/* The first 8 bytes of a digest as a number: enough to tell two outputs apart in a refusal's detail. */
static uint64_t digest_prefix(const uint8_t md[MOTA_SHA256_LEN])
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | md[i];
    return v;
}

/* Run the manifest's self-test on an installed model. */
int mota_agent_run_selftest(struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                            const struct mota_agent_layout *lay, const struct mota_installed *inst)
{
    const struct mota_selftest *t = &man->compat.selftest;
    size_t ii = 0;
    uint64_t latency = 0;
    uint8_t md[MOTA_SHA256_LEN];
    if (!t->present)
        return MOTA_OK;
    const struct mota_component *in = component(man, MOTA_COMPONENT_SELFTEST, &ii);
    const struct mota_flash *fl = a->cfg->port->flash;
    const uint8_t *input = fl->map(fl->ctx, mota_agent_slot_base(a, m, slot) + lay->comp_slot[ii], (size_t)in->size);
    if (input == NULL || t->output_size > a->cfg->selftest_buf_size)
        return MOTA_ERR_SELFTEST_RUN;
    memset(a->cfg->selftest_buf, 0, (size_t)t->output_size);
    latency = t->max_latency_us; /* its budget: a guarding port stops it there */
    mota_agent_kick(a);          /* the model gets a whole watchdog period */
    int ret = a->cfg->port->infer(a->cfg->port->infer_ctx, inst, input, (size_t)in->size, a->cfg->selftest_buf,
                                  (size_t)t->output_size, &latency);
    mota_agent_kick(a);
    a->timing.selftest_us = latency > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)latency;
    if (ret != MOTA_OK)
        return ret < 0 && ret != MOTA_ERR_ARG ? ret : MOTA_ERR_SELFTEST_RUN;
    mota_sha256(a->cfg->selftest_buf, (size_t)t->output_size, md);
    if (mota_ct_memcmp(md, t->output_digest, MOTA_SHA256_LEN) != 0) {
        /* the manifest holds the expected output's digest only: no byte offset to name */
        a->refusal = (struct mota_agent_refusal){MOTA_ERR_SELFTEST_OUTPUT, NULL, digest_prefix(md),
                                                 digest_prefix(t->output_digest)};
        return MOTA_ERR_SELFTEST_OUTPUT;
    }
    if (latency > t->max_latency_us) {
        a->refusal = (struct mota_agent_refusal){MOTA_ERR_SELFTEST_SLOW, NULL, latency, t->max_latency_us};
        return MOTA_ERR_SELFTEST_SLOW;
    }
    return MOTA_OK;
}

/* Bring the active model of m up: validate it and install it. */
int mota_agent_activate(struct mota_agent *a, unsigned m)
{
    struct mota_agent_model_state *s = &a->st[m];
    struct mota_envelope env;
    struct mota_agent_head_check hc;
    a->installed[m] = false;
    if (s->active.slot == MOTA_AGENT_NO_SLOT)
        return MOTA_ERR_NO_MODEL;
    int ret = validate_slot(a, m, &s->active, &env, &a->active_manifest[m], &hc);
    if (ret == MOTA_OK)
        ret = mota_agent_validate_code(a, m, s->active.slot, &a->active_manifest[m], &hc.lay);
    if (ret == MOTA_OK)
        ret = mota_agent_install_slot(a, m, s->active.slot, &a->active_manifest[m], &hc.lay, &a->inst[m]);
    if (ret == MOTA_OK)
        a->installed[m] = true;
    return ret;
}

/* ---- the verdict on an upload ---- */

/* The host waits through these steps in silence otherwise: say which one starts. */
static void phase(struct mota_agent *a, unsigned m, enum mota_agent_phase ph)
{
    if (a->on_phase != NULL)
        a->on_phase(a->phase_ctx, ph, a->st[m].upload_len);
}

/*
 * The new model's manifest must outlive the scratch buffer its head was
 * received in: it is the verified one, pointed at the same manifest bytes in
 * the head begin_upload (upload.c) wrote to the slot. Found through that head's
 * envelope, not assumed at the same offset: a resumed upload may have sent
 * the same manifest under another signature (its digest is what a resume
 * matches), and the slot keeps the first head.
 */
static void keep_manifest(struct mota_agent *a, unsigned m)
{
    struct mota_envelope env;
    if (mota_agent_map_head(a, m, a->st[m].active.slot, &env) != MOTA_OK ||
        env.manifest_len != a->up.env.manifest_len || memcmp(env.manifest, a->up.env.manifest, env.manifest_len) != 0) {
        memset(&a->active_manifest[m], 0, sizeof(a->active_manifest[m])); /* no texts to report */
        return;
    }
    a->active_manifest[m] = a->up.man;
    mota_manifest_rebase(&a->active_manifest[m], a->up.env.manifest, a->up.env.manifest_len, env.manifest);
}

/*
 * The head written to the slot is there whole (the digests cover the components, not it): read back through
 * read first, which alone reports a torn unit on ECC flash, then decoded in place, the manifest the upload's.
 */
static int stored_head_ok(struct mota_agent *a, unsigned m)
{
    const struct mota_agent_model_state *s = &a->st[m];
    struct mota_sha256 h;
    struct mota_envelope env;
    mota_sha256_init(&h);
    int ret = mota_agent_hash_flash(a, mota_agent_slot_base(a, m, s->upload.slot), s->upload_head_len, &h);
    if (ret == MOTA_OK)
        ret = mota_agent_map_head(a, m, s->upload.slot, &env);
    if (ret == MOTA_OK && memcmp(env.digest, s->upload.digest, MOTA_SHA256_LEN) != 0)
        ret = MOTA_ERR_SLOT_INVALID;
    return ret;
}

/* All payloads received: verify from flash, install, self-test, trial. */
static int verdict(struct mota_agent *a)
{
    unsigned m = (unsigned)a->up.model;
    struct mota_agent_model_state *s = &a->st[m];
    const struct mota_agent_layout *lay = &a->up.layout; /* decided with the head, before the erase */
    struct mota_installed inst;
    int ret = MOTA_ERR_SLOT_INVALID;
    bool validated = false;

    if (s->upload_state != MOTA_UPLOAD_VERIFIED) {
        phase(a, m, MOTA_PHASE_VERIFY);
        uint32_t t0 = mota_agent_now_us(a);
        ret = mota_agent_verify_components(a, m, s->upload.slot, &a->up.man, lay);
        if (ret == MOTA_OK) /* the loader's bounds, on the bytes whose digest was just checked */
            ret = mota_agent_validate_code(a, m, s->upload.slot, &a->up.man, lay);
        validated = ret == MOTA_OK;
        a->timing.digest_us = mota_agent_now_us(a) - t0;
        a->timing.digest_bytes = 0;
        for (size_t c = 0; c < a->up.man.n_components; c++)
            a->timing.digest_bytes += (uint32_t)a->up.man.comp[c].size;
        if (ret != MOTA_OK)
            return mota_agent_fail_upload(a, m, ret);
        if ((ret = mota_agent_journal(a, J_UPLOAD_VERIFIED, m, 0)) != MOTA_OK)
            return ret;
    }
    /* the new model takes the exec RAM for its self-test; the old one is
     * installed again if the new one does not make it */
    a->installed[m] = false;
    phase(a, m, MOTA_PHASE_INSTALL);
    uint32_t t0 = mota_agent_now_us(a);
    /* verified before a restart: the validation did not survive it */
    ret = validated ? MOTA_OK : mota_agent_validate_code(a, m, s->upload.slot, &a->up.man, lay);
    if (ret == MOTA_OK && (ret = stored_head_ok(a, m)) == MOTA_OK)
        ret = mota_agent_install_slot(a, m, s->upload.slot, &a->up.man, lay, &inst);
    a->timing.install_us = mota_agent_now_us(a) - t0;
    if (ret == MOTA_OK && a->up.man.compat.selftest.present) {
        phase(a, m, MOTA_PHASE_SELFTEST);
        ret = mota_agent_run_selftest(a, m, s->upload.slot, &a->up.man, lay, &inst);
    }
    if (ret != MOTA_OK) {
        int r2 = mota_agent_fail_upload(a, m, ret);
        (void)mota_agent_activate(a, m);
        return r2;
    }
    struct jrec r;
    phase(a, m, MOTA_PHASE_COMMIT);
    mota_journal_rec(&r, J_TRIAL, m);
    r.slot = s->upload.slot;
    r.seq = s->upload.seq;
    memcpy(r.digest, s->upload.digest, MOTA_SHA256_LEN);
    if ((ret = mota_journal_append(&a->journal, &r)) != MOTA_OK)
        return ret;
    a->inst[m] = inst;
    a->installed[m] = true;
    keep_manifest(a, m);
    a->up.model = MOTA_AGENT_NOT_RECEIVING;
    a->up.ready = false;
    a->up.active = false;
    return (int)s->upload_len;
}

/* Every byte is in: digests, install, self-test, verdict (timed from here). */
int mota_agent_finish_upload(struct mota_agent *a)
{
    uint32_t t0 = mota_agent_now_us(a);
    mota_agent_upload_wipe(a); /* every byte is in: the content key is needed no more */
    int ret = verdict(a);
    a->timing.verdict_us = mota_agent_now_us(a) - t0;
    return ret;
}

/* ---- boot ---- */

/* The port contract (mota/hal.h): every required callback present. */
static int port_ok(const struct mota_agent_config *c)
{
    if (c->port == NULL)
        return MOTA_ERR_PORT;
    const struct mota_flash *f = c->port->flash;
    const struct mota_system *s = c->port->sys;
    if (f == NULL || f->read == NULL || f->prog == NULL || f->erase == NULL || f->map == NULL || s == NULL ||
        s->now_us == NULL || s->reset == NULL || s->reset_cause == NULL)
        return MOTA_ERR_PORT;
    return MOTA_OK;
}

/* The end of the sectors [off, off+len) takes (a slot's erases reach it), or 0 if off is not a sector's start
 * or they leave the device. */
static uint64_t sectors_end(const struct mota_flash *f, uint32_t off, uint64_t len)
{
    uint32_t start = 0, size = 0;
    uint64_t end = (uint64_t)off + len;
    if (len == 0 || mota_flash_sector(f, off, &start, &size) != MOTA_OK || start != off || end > f->size)
        return 0;
    if (mota_flash_sector(f, (uint32_t)(end - 1), &start, &size) != MOTA_OK)
        return 0;
    return (uint64_t)start + size;
}

/* The regions cover the device, every sector whole program units. */
static bool geometry_ok(const struct mota_flash *f)
{
    uint64_t total = 0;
    if (f->prog_size == 0 || f->prog_size > 64 || JREC_SIZE % f->prog_size != 0 || f->n_regions == 0 ||
        f->n_regions > MOTA_FLASH_MAX_REGIONS)
        return false;
    for (unsigned i = 0; i < f->n_regions; i++) {
        const struct mota_flash_region *r = &f->regions[i];
        if (r->count == 0 || r->sector_size == 0 || r->sector_size % f->prog_size != 0)
            return false;
        total += (uint64_t)r->count * r->sector_size;
    }
    return total == f->size;
}

/* The journal's two sectors: equal, from journal_offset on. Its end, or 0 if they are not. */
static uint64_t journal_end(const struct mota_agent_config *c)
{
    const struct mota_flash *f = c->port->flash;
    uint32_t start = 0, size = 0, s2 = 0;
    if (mota_flash_sector(f, c->journal_offset, &start, &size) != MOTA_OK || start != c->journal_offset ||
        size < 2048 || (uint64_t)start + 2ull * size > f->size ||
        mota_flash_sector(f, start + size, &start, &s2) != MOTA_OK || s2 != size)
        return 0;
    return (uint64_t)c->journal_offset + 2ull * size;
}

static int config_ok(const struct mota_agent_config *c)
{
    const struct mota_flash *f = c->port->flash;
    uint64_t lo[2 * MOTA_AGENT_MAX_MODELS + 1], hi[2 * MOTA_AGENT_MAX_MODELS + 1];
    unsigned n = 0;
    lo[n] = c->journal_offset;
    hi[n++] = geometry_ok(f) ? journal_end(c) : 0;
    if (hi[0] == 0 || c->n_models == 0 || c->n_models > MOTA_AGENT_MAX_MODELS || c->n_keys > MOTA_AGENT_MAX_KEYS ||
        c->device_id_len > MOTA_AGENT_DEVICE_ID_MAX || c->scratch == NULL || c->scratch_size < MOTA_AGENT_SCRATCH_MIN)
        return MOTA_ERR_CONFIG;
    /* a compaction's snapshot fits a sector with room to append: header, revoke, end, 12 records a model */
    if ((hi[0] - lo[0]) / 2u / JREC_SIZE < 4u + 12u * c->n_models)
        return MOTA_ERR_CONFIG;
    for (unsigned m = 0; m < c->n_models; m++) {
        const struct mota_agent_model_config *mc = &c->models[m];
        if (mc->c_name == NULL)
            return MOTA_ERR_CONFIG;
        for (unsigned s = 0; s < 2; s++, n++) {
            /* a slot starts on a sector; the sectors it takes (they may differ in size) are its own */
            lo[n] = mc->slot_offset[s];
            if ((hi[n] = sectors_end(f, mc->slot_offset[s], mc->slot_size)) == 0)
                return MOTA_ERR_CONFIG;
            for (unsigned k = 0; k < n; k++)
                if (lo[n] < hi[k] && lo[k] < hi[n])
                    return MOTA_ERR_CONFIG;
        }
    }
    return MOTA_OK;
}

int mota_agent_init(struct mota_agent *a, const struct mota_agent_config *cfg)
{
    int ret;
    if (a == NULL || cfg == NULL)
        return MOTA_ERR_ARG;
    memset(a, 0, sizeof(*a));
    a->cfg = cfg;
    a->up.model = MOTA_AGENT_NOT_RECEIVING;
    a->verdict_model = -1;
    for (unsigned m = 0; m < MOTA_AGENT_MAX_MODELS; m++) {
        a->st[m].active.slot = a->st[m].previous.slot = a->st[m].upload.slot = MOTA_AGENT_NO_SLOT;
    }
    if ((ret = port_ok(cfg)) != MOTA_OK || (ret = config_ok(cfg)) != MOTA_OK)
        return ret;
    mota_journal_setup(&a->journal, cfg->port->flash, cfg->port->sys, cfg->journal_offset, cfg->n_models, a->st,
                       &a->key_floor);
    if ((ret = mota_journal_load(&a->journal)) != MOTA_OK)
        return ret;

    enum mota_reset_cause cause = cfg->port->sys->reset_cause(cfg->port->sys->ctx);
    a->reset_cause = cause;
    uint32_t max_boots = cfg->max_trial_boots ? cfg->max_trial_boots : 3;
    for (unsigned m = 0; m < cfg->n_models; m++) {
        struct mota_agent_model_state *s = &a->st[m];
        if (s->testing) {
            /* a trial model gets a bounded number of boots, and none after a watchdog reset */
            if (cause == MOTA_RESET_WATCHDOG) {
                ret = mota_agent_journal(a, J_ROLLBACK, m, MOTA_ERR_WATCHDOG);
            } else if (cause == MOTA_RESET_FAULT) {
                ret = mota_agent_journal(a, J_ROLLBACK, m, MOTA_ERR_DEVICE_FAULT);
            } else if (s->trial_boots + 1 > max_boots) {
                ret = mota_agent_journal(a, J_ROLLBACK, m, MOTA_ERR_TRIAL_EXPIRED);
            } else {
                struct jrec r;
                mota_journal_rec(&r, J_BOOT, m);
                r.value = s->trial_boots + 1;
                ret = mota_journal_append(&a->journal, &r);
            }
            if (ret != MOTA_OK)
                return ret;
        }
        ret = mota_agent_activate(a, m);
        if (ret != MOTA_OK && ret != MOTA_ERR_NO_MODEL) {
            /* the stored model no longer verifies: back to the previous one */
            int reason = ret;
            ret = MOTA_OK;
            if (s->previous.slot != MOTA_AGENT_NO_SLOT)
                ret = mota_agent_journal(a, J_ROLLBACK, m, reason);
            else if (MOTA_FEATURE_HISTORY)
                ret = mota_agent_journal(a, J_ERROR, m, reason);
            else
                mota_agent_model_error(a, m, reason); /* not journaled: said again at each boot it happens */
            if (ret != MOTA_OK)
                return ret;
            if (s->active.slot != MOTA_AGENT_NO_SLOT)
                (void)mota_agent_activate(a, m);
        }
    }
    return MOTA_OK;
}

bool mota_agent_receiving(const struct mota_agent *a)
{
    return a->up.active;
}

uint32_t mota_agent_upload_offset(const struct mota_agent *a)
{
    for (unsigned m = 0; m < a->cfg->n_models; m++) {
        if (a->st[m].upload_state != MOTA_UPLOAD_NONE)
            return a->st[m].upload_offset;
    }
    return 0;
}

int mota_agent_abort(struct mota_agent *a)
{
    int ret = MOTA_OK;
    mota_agent_upload_wipe(a);
    for (unsigned m = 0; m < a->cfg->n_models; m++) {
        if (a->st[m].upload_state != MOTA_UPLOAD_NONE &&
            (ret = mota_agent_journal(a, J_UPLOAD_ABORT, m, MOTA_OK)) != MOTA_OK)
            return ret;
    }
    a->up.model = MOTA_AGENT_NOT_RECEIVING;
    a->up.ready = false;
    a->up.active = false;
    a->up.expected = 0;
    return MOTA_OK;
}

int mota_agent_confirm(struct mota_agent *a, unsigned m)
{
    if (a == NULL || m >= a->cfg->n_models)
        return MOTA_ERR_ARG;
    if (!a->st[m].testing)
        return MOTA_ERR_NOT_TESTING;
    return mota_agent_journal(a, J_CONFIRM, m, 0);
}

int mota_agent_rollback(struct mota_agent *a, unsigned m)
{
    if (a == NULL || m >= a->cfg->n_models)
        return MOTA_ERR_ARG;
    /* a confirmed model may be retired only once it faulted or overran in the application's inference
     * (mota_agent_model_fault) since boot: the previous model comes back, the floor stays */
    bool retire = !a->st[m].testing;
    if (retire && (!MOTA_FEATURE_RETIRE || a->model_faults[m] == 0))
        return MOTA_ERR_NOT_TESTING;
    /* a first model on trial has nothing before it and is removed, as its trial's expiry would remove it;
     * a confirmed first model is all there is, and stays */
    if (retire && a->st[m].previous.slot == MOTA_AGENT_NO_SLOT)
        return MOTA_ERR_NO_PREVIOUS;
    /* a trial ended on request is a success and clears the last error; a retirement keeps the fault that
     * caused it (the application's own inference is not in the link's ERRORS ring) */
    int ret = mota_agent_journal(a, J_ROLLBACK, m, retire ? a->st[m].last_error : MOTA_OK);
    if (ret != MOTA_OK)
        return ret;
    if (a->st[m].active.slot == MOTA_AGENT_NO_SLOT) {
        a->installed[m] = false;
        return MOTA_OK;
    }
    return mota_agent_activate(a, m);
}

int mota_agent_revoke_keys(struct mota_agent *a, uint32_t floor)
{
    struct jrec r;
    if (a == NULL)
        return MOTA_ERR_ARG;
    if (floor <= a->key_floor)
        return MOTA_OK;
    mota_journal_rec(&r, J_REVOKE, 0);
    r.value = floor;
    return mota_journal_append(&a->journal, &r);
}

int mota_agent_selftest(struct mota_agent *a, unsigned m)
{
    struct mota_envelope env;
    struct mota_agent_head_check hc;
    struct mota_manifest man;
    if (a == NULL || m >= a->cfg->n_models)
        return MOTA_ERR_ARG;
    if (!a->installed[m])
        return MOTA_ERR_NO_MODEL;
    int ret = validate_slot(a, m, &a->st[m].active, &env, &man, &hc);
    if (ret != MOTA_OK)
        return ret;
    return mota_agent_run_selftest(a, m, a->st[m].active.slot, &man, &hc.lay, &a->inst[m]);
}

int mota_agent_model_info(const struct mota_agent *a, unsigned m, struct mota_agent_model_info *info)
{
    if (a == NULL || info == NULL || m >= a->cfg->n_models)
        return MOTA_ERR_ARG;
    memset(info, 0, sizeof(*info));
    const struct mota_agent_model_state *s = &a->st[m];
    if (!a->installed[m])
        return MOTA_ERR_NO_MODEL;
    const struct mota_manifest *man = &a->active_manifest[m];
    info->c_name = man->compat.c_name;
    info->c_name_len = man->compat.c_name_len;
    info->version = man->text.version;
    info->version_len = man->text.version_len;
    info->seq = s->active.seq;
    memcpy(info->digest, s->active.digest, MOTA_SHA256_LEN);
    info->install_mode = a->inst[m].mode;
    info->slot = s->active.slot;
    info->testing = s->testing;
    info->trial_boots = s->trial_boots;
    info->instance = &a->inst[m];
    info->exec_ram_addr = mota_agent_model_cfg(a, m)->exec_ram_addr;
    info->exec_ram_size = mota_agent_model_cfg(a, m)->exec_ram_size;
    info->activations_size = man->compat.acts_size;
    info->exec_ram_used =
        (uint32_t)(a->inst[m].mode == MOTA_INSTALL_XIP ? man->compat.exec_ram_xip : man->compat.exec_ram_copy);
    info->epochs = man->compat.has_epochs ? &man->compat.epochs : NULL;
    return MOTA_OK;
}

int mota_agent_model_fault(struct mota_agent *a, unsigned m, int reason)
{
    if (a == NULL || a->cfg == NULL || m >= a->cfg->n_models || reason >= 0)
        return MOTA_ERR_ARG;
    a->model_faults[m]++;
    mota_agent_model_error(a, m, reason);
    return MOTA_OK;
}

int mota_agent_last_error(const struct mota_agent *a, unsigned m)
{
    if (a == NULL || m >= a->cfg->n_models)
        return MOTA_ERR_ARG;
    return a->st[m].last_error;
}

int mota_agent_idle(struct mota_agent *a)
{
    if (a == NULL || a->cfg == NULL)
        return MOTA_ERR_ARG;
    if (a->up.model != MOTA_AGENT_NOT_RECEIVING || a->journal.spare_erased)
        return MOTA_OK;
    mota_agent_kick(a);
    int ret = mota_journal_tidy(&a->journal);
    mota_agent_kick(a);
    return ret;
}

int mota_agent_previous(const struct mota_agent *a, unsigned m, struct mota_agent_previous *out)
{
    struct mota_envelope env;
    struct mota_manifest man;
    uint8_t md[MOTA_SHA256_LEN];
    int ret = MOTA_ERR_NO_PREVIOUS;
    if (a == NULL || out == NULL || m >= a->cfg->n_models)
        return MOTA_ERR_ARG;
    const struct mota_agent_slot_ref *ref = &a->st[m].previous;
    if (ref->slot > 1)
        return ret;
    /* read in place: the slot must still hold the journaled head (an update forgets it when it begins) */
    if (mota_agent_map_head(a, m, ref->slot, &env) != MOTA_OK || memcmp(env.digest, ref->digest, MOTA_SHA256_LEN) != 0)
        return ret;
    mota_sha256(env.manifest_wrapped, env.manifest_wrapped_len, md);
    if (mota_ct_memcmp(md, env.digest, MOTA_SHA256_LEN) != 0 || mota_manifest_decode(&env, &man) != MOTA_OK ||
        man.seq != ref->seq)
        return ret;
    out->seq = ref->seq;
    memcpy(out->digest, ref->digest, MOTA_SHA256_LEN);
    out->slot = ref->slot;
    out->version = man.text.version; /* points into the mapped slot, not into man */
    out->version_len = man.text.version_len;
    return MOTA_OK;
}

int mota_agent_find_model(const struct mota_agent *a, const char *c_name, size_t len)
{
    for (unsigned m = 0; m < a->cfg->n_models; m++) {
        const char *n = a->cfg->models[m].c_name;
        if (strlen(n) == len && memcmp(n, c_name, len) == 0)
            return (int)m;
    }
    return -1;
}
