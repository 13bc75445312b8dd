/* The device agent: verify before erase, A/B slots, trial and rollback. */
#include "mota/agent.h"

#include "journal.h"
#include "mota/cbor.h"
#include "mota/err.h"

#include <string.h>

#define SLOT_ALIGN 32u          /* components start on this boundary in a slot (XIP alignment) */
#define NOT_RECEIVING (-1)

static const struct mota_agent_model_config *model_config(const struct mota_agent *a, unsigned m)
{
    return &a->cfg->models[m];
}

static uint32_t align_up(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

static uint32_t slot_align(const struct mota_agent *a)
{
    uint32_t p = a->cfg->port->flash->prog_size;
    return p > SLOT_ALIGN ? p : SLOT_ALIGN;
}

/* Bytes buffered before a program: whole program units, up to the buffer. */
static uint32_t chunk_size(const struct mota_agent *a)
{
    uint32_t p = a->cfg->port->flash->prog_size;
    return (uint32_t)sizeof(a->unit) / p * p;
}

static uint32_t slot_base(const struct mota_agent *a, unsigned m, unsigned slot)
{
    return model_config(a, m)->slot_offset[slot];
}

/* Long work (hashing a slot, erasing, a self-test) keeps the watchdog fed. */
static uint32_t now_us(const struct mota_agent *a)
{
    return (uint32_t)a->cfg->port->sys->now_us(a->cfg->port->sys->ctx);
}

static void kick(const struct mota_agent *a)
{
    const struct mota_system *sys = a->cfg->port->sys;
    if (sys->watchdog_kick != NULL)
        sys->watchdog_kick(sys->ctx);
}

/* A model's last error that is not journaled (a refusal before any erase, a fault): this boot's, now. */
static void model_error(struct mota_agent *a, unsigned m, int reason)
{
    struct mota_agent_model_state *s = &a->st[m];
    s->last_error = reason;
    s->last_error_this_boot = true;
    s->last_error_ms = (uint32_t)(a->cfg->port->sys->now_us(a->cfg->port->sys->ctx) / 1000u);
}

static int journal(struct mota_agent *a, enum jrec_type type, unsigned m, int reason)
{
    struct jrec r;
    mota_journal_rec(&r, type, m);
    r.reason = (int16_t)reason;
    return mota_journal_append(&a->journal, &r);
}

/* ---- verification of a container head (before erase, and at boot) ---- */

struct head_check {
    int model;                     /* model index the container is for */
    struct mota_agent_layout lay;  /* where its parts go, how it installs */
    struct mota_agent_refusal why; /* the facts behind a refusal (a compatibility rule, a revoked key) */
};

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

/*
 * Everything that can be decided from the head: signature, manifest,
 * profile, which model, vendor and class, compatibility, the layout of the
 * stream and of the slot, and whether it fits.
 */
enum head_auth {
    AUTH_NEW_UPLOAD, /* signature by a trusted, unrevoked key */
    AUTH_STORED,     /* signature by a trusted key (revoked after it was installed is fine) */
};

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
static int check_compat(const struct mota_agent *a, const struct mota_manifest *man, struct head_check *hc)
{
    const struct mota_agent_model_config *mc = model_config(a, (unsigned)hc->model);
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
    if (man->compat.selftest.present && (a->cfg->port->infer == NULL || component(man, MOTA_COMPONENT_SELFTEST, NULL) == NULL ||
                                         man->compat.selftest.output_size > a->cfg->selftest_buf_size))
        return MOTA_ERR_SELFTEST_RUN;
    return MOTA_OK;
}

/* The stream (head, then each payload head and content, in component order) and where each part goes in
 * a slot of slot_size bytes. */
static int plan_layout(const struct mota_agent *a, const struct mota_envelope *env, const struct mota_manifest *man,
                       struct mota_agent_layout *lay, uint32_t slot_size)
{
    uint64_t pos = env->head_len, slot = align_up((uint32_t)env->head_len, slot_align(a));
    for (size_t c = 0; c < man->n_components; c++) {
        lay->comp_phl[c] = payload_head_len(&man->comp[c]);
        if (lay->comp_phl[c] == 0)
            return MOTA_ERR_COMPONENT_ID;
        /* a compressed image resumes at its blocks' ends: each must leave the program unit empty */
        if (man->comp[c].compressed && man->comp[c].z_block % chunk_size(a) != 0)
            return MOTA_ERR_COMPRESSION_INFO;
        lay->comp_stream[c] = (uint32_t)pos;
        pos += lay->comp_phl[c] + mota_component_wire_size(&man->comp[c]);
        lay->comp_slot[c] = (uint32_t)slot;
        /* in 64 bits: a compressed component's image size is not bounded by the stream's length */
        slot = (slot + man->comp[c].size + slot_align(a) - 1) / slot_align(a) * slot_align(a);
        if (pos > 0xFFFFFFFFu || slot > slot_size)
            return MOTA_ERR_SLOT_TOO_SMALL;
    }
    lay->container_len = (uint32_t)pos;
    lay->slot_used = (uint32_t)slot;
    return MOTA_OK;
}

static int check_head(const struct mota_agent *a, const struct mota_envelope *env, struct mota_manifest *man,
                      struct head_check *hc, enum head_auth auth)
{
    int ret;
    memset(hc, 0, sizeof(*hc));
    hc->model = -1;
    if ((ret = authenticate(a, env, auth == AUTH_NEW_UPLOAD, &hc->why)) != MOTA_OK)
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
    return plan_layout(a, env, man, &hc->lay, model_config(a, (unsigned)hc->model)->slot_size);
}

/* Anti-rollback: lower than committed refused; equal only for the same manifest. */
static int check_sequence(const struct mota_agent *a, unsigned m, uint64_t seq, const uint8_t digest[MOTA_SHA256_LEN])
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
static int hash_flash(const struct mota_agent *a, uint32_t off, uint32_t len, struct mota_sha256 *ctx)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    uint8_t buf[256];
    while (len > 0) {
        /* straight from the mapped flash, a sector at a time (no copy); read() where it is not mapped */
        uint32_t n = len < 4096u ? len : 4096u;
        const uint8_t *p = fl->map(fl->ctx, off, n);
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
        kick(a);
    }
    return MOTA_OK;
}

/* Every component, read back from the slot, matches its signed digest. */
static int verify_components(const struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                             const struct mota_agent_layout *lay)
{
    for (size_t c = 0; c < man->n_components; c++) {
        struct mota_sha256 ctx;
        uint8_t md[MOTA_SHA256_LEN];
        mota_sha256_init(&ctx);
        int ret = hash_flash(a, slot_base(a, m, slot) + lay->comp_slot[c], (uint32_t)man->comp[c].size, &ctx);
        mota_sha256_finish(&ctx, md);
        if (ret != MOTA_OK)
            return ret;
        if (mota_ct_memcmp(md, man->comp[c].digest, MOTA_SHA256_LEN) != 0)
            return man->comp[c].compressed ? MOTA_ERR_DECOMP_IMAGE_DIGEST : MOTA_ERR_PAYLOAD_DIGEST;
    }
    return MOTA_OK;
}

/*
 * The head of a stored model, decoded in place from the memory-mapped flash
 * (so the manifest stays readable while the model is active) and checked:
 * signature, manifest digest as journaled, the same rules as at upload.
 */
static int load_slot_head(struct mota_agent *a, unsigned m, const struct mota_agent_slot_ref *ref,
                          struct mota_envelope *env, struct mota_manifest *man, struct head_check *hc,
                          enum head_auth auth)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    if (ref->slot > 1 || fl->map == NULL)
        return MOTA_ERR_SLOT_INVALID;
    const uint8_t *p = fl->map(fl->ctx, slot_base(a, m, ref->slot), model_config(a, m)->slot_size);
    if (p == NULL)
        return MOTA_ERR_SLOT_INVALID;
    int ret = mota_envelope_decode(p, model_config(a, m)->slot_size, env);
    if (ret != MOTA_OK)
        return ret;
    if (memcmp(env->digest, ref->digest, MOTA_SHA256_LEN) != 0)
        return MOTA_ERR_SLOT_INVALID;
    if ((ret = check_head(a, env, man, hc, auth)) != MOTA_OK)
        return ret;
    if (hc->model != (int)m || man->seq != ref->seq)
        return MOTA_ERR_SLOT_INVALID;
    return MOTA_OK;
}

/* Full re-validation: the head, then every payload digest from flash. */
static int validate_slot(struct mota_agent *a, unsigned m, const struct mota_agent_slot_ref *ref,
                         struct mota_envelope *env, struct mota_manifest *man, struct head_check *hc)
{
    int ret = load_slot_head(a, m, ref, env, man, hc, AUTH_STORED);
    if (ret != MOTA_OK)
        return ret;
    return verify_components(a, m, ref->slot, man, &hc->lay);
}

/* The loader's view of the model stored in `slot`: its code (and split params) mapped, the exec memory of m. */
static int install_config(const struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                          const struct mota_agent_layout *lay, struct mota_install_config *c)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    const struct mota_agent_model_config *mc = model_config(a, m);
    size_t ci = 0, pi = 0;
    const struct mota_component *code = component(man, MOTA_COMPONENT_CODE, &ci);
    const struct mota_component *params = component(man, MOTA_COMPONENT_PARAMS, &pi);
    uint32_t base = slot_base(a, m, slot);
    if (code == NULL || a->cfg->port->mem == NULL)
        return MOTA_ERR_CONFIG;
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
        .mem = a->cfg->port->mem,
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
static int validate_code(struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                         const struct mota_agent_layout *lay)
{
    struct mota_install_config c;
    int ret = install_config(a, m, slot, man, lay, &c);
    if (ret != MOTA_OK)
        return ret;
    return mota_nbin_validate(c.image, c.image_len, &a->code_info);
}

/* Install the model stored in `slot` through the loader, validate_code() having run on it. */
static int install_slot(struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                        const struct mota_agent_layout *lay, struct mota_installed *out)
{
    struct mota_install_config c;
    int ret = install_config(a, m, slot, man, lay, &c);
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
static int run_selftest(struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
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
    const uint8_t *input = fl->map(fl->ctx, slot_base(a, m, slot) + lay->comp_slot[ii], (size_t)in->size);
    if (input == NULL || t->output_size > a->cfg->selftest_buf_size)
        return MOTA_ERR_SELFTEST_RUN;
    memset(a->cfg->selftest_buf, 0, (size_t)t->output_size);
    latency = t->max_latency_us; /* its budget: a guarding port stops it there */
    kick(a); /* the model gets a whole watchdog period */
    int ret = a->cfg->port->infer(a->cfg->port->infer_ctx, inst, input, (size_t)in->size, a->cfg->selftest_buf,
                            (size_t)t->output_size, &latency);
    kick(a);
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
static int activate(struct mota_agent *a, unsigned m)
{
    struct mota_agent_model_state *s = &a->st[m];
    struct mota_envelope env;
    struct head_check hc;
    a->installed[m] = false;
    if (s->active.slot == MOTA_AGENT_NO_SLOT)
        return MOTA_ERR_NO_MODEL;
    int ret = validate_slot(a, m, &s->active, &env, &a->active_manifest[m], &hc);
    if (ret == MOTA_OK)
        ret = validate_code(a, m, s->active.slot, &a->active_manifest[m], &hc.lay);
    if (ret == MOTA_OK)
        ret = install_slot(a, m, s->active.slot, &a->active_manifest[m], &hc.lay, &a->inst[m]);
    if (ret == MOTA_OK)
        a->installed[m] = true;
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

static int config_ok(const struct mota_agent_config *c)
{
    const struct mota_flash *f = c->port->flash;
    if (f->sector_size < 2048 ||
        f->prog_size == 0 || f->prog_size > 64 || JREC_SIZE % f->prog_size != 0 || c->n_models == 0 ||
        c->n_models > MOTA_AGENT_MAX_MODELS || c->n_keys > MOTA_AGENT_MAX_KEYS || c->scratch == NULL ||
        c->scratch_size < MOTA_AGENT_SCRATCH_MIN || c->journal_offset % f->sector_size != 0 ||
        (uint64_t)c->journal_offset + 2ull * f->sector_size > f->size)
        return MOTA_ERR_CONFIG;
    for (unsigned m = 0; m < c->n_models; m++) {
        const struct mota_agent_model_config *mc = &c->models[m];
        if (mc->c_name == NULL || mc->slot_size == 0 || mc->slot_size % f->sector_size != 0)
            return MOTA_ERR_CONFIG;
        for (unsigned s = 0; s < 2; s++) {
            uint64_t lo = mc->slot_offset[s], hi = lo + mc->slot_size;
            if (mc->slot_offset[s] % f->sector_size != 0 || hi > f->size || /* 32-bit: no 64-bit division linked */
                (lo < c->journal_offset + 2ull * f->sector_size && hi > c->journal_offset))
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
    a->up_model = NOT_RECEIVING;
    for (unsigned m = 0; m < MOTA_AGENT_MAX_MODELS; m++) {
        a->st[m].active.slot = a->st[m].previous.slot = a->st[m].upload.slot = MOTA_AGENT_NO_SLOT;
    }
    if ((ret = port_ok(cfg)) != MOTA_OK || (ret = config_ok(cfg)) != MOTA_OK)
        return ret;
    mota_journal_setup(&a->journal, cfg, a->st, &a->key_floor);
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
                ret = journal(a, J_ROLLBACK, m, MOTA_ERR_WATCHDOG);
            } else if (cause == MOTA_RESET_FAULT) {
                ret = journal(a, J_ROLLBACK, m, MOTA_ERR_DEVICE_FAULT);
            } else if (s->trial_boots + 1 > max_boots) {
                ret = journal(a, J_ROLLBACK, m, MOTA_ERR_TRIAL_EXPIRED);
            } else {
                struct jrec r;
                mota_journal_rec(&r, J_BOOT, m);
                r.value = s->trial_boots + 1;
                ret = mota_journal_append(&a->journal, &r);
            }
            if (ret != MOTA_OK)
                return ret;
        }
        ret = activate(a, m);
        if (ret != MOTA_OK && ret != MOTA_ERR_NO_MODEL) {
            /* the stored model no longer verifies: back to the previous one */
            int reason = ret;
            if (s->previous.slot == MOTA_AGENT_NO_SLOT)
                ret = journal(a, J_ERROR, m, reason);
            else
                ret = journal(a, J_ROLLBACK, m, reason);
            if (ret != MOTA_OK)
                return ret;
            if (s->active.slot != MOTA_AGENT_NO_SLOT)
                (void)activate(a, m);
        }
    }
    return MOTA_OK;
}

/* ---- upload ---- */

static int fail_upload(struct mota_agent *a, unsigned m, int reason)
{
    a->last_error = reason;
    a->up_model = NOT_RECEIVING;
    a->up_ready = false;
    if (a->st[m].upload_state != MOTA_UPLOAD_NONE)
        (void)journal(a, J_UPLOAD_ABORT, m, reason); /* the reason stands even if the journal write fails */
    else
        model_error(a, m, reason);
    return reason;
}

/* Program the buffered bytes (padded to whole units with the erased value). */
static int prog_unit(struct mota_agent *a)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    uint32_t at = slot_base(a, (unsigned)a->up_model, a->st[a->up_model].upload.slot) + a->unit_slot_off;
    uint32_t len = align_up(a->unit_fill, fl->prog_size);
    int ret;
    memset(a->unit + a->unit_fill, fl->erased_value, len - a->unit_fill);
    if (a->up_resumed) {
        /* After a reset, bytes past the last recorded offset may already be
         * on flash: identical ones are kept, erased ones programmed; anything
         * else (a torn program) cannot be fixed without an erase. */
        uint8_t cur[sizeof(a->unit)];
        bool blank = true;
        if ((ret = fl->read(fl->ctx, at, cur, len)) != MOTA_OK)
            return ret;
        for (uint32_t i = 0; i < len; i++)
            blank &= cur[i] == fl->erased_value;
        if (!blank) {
            if (memcmp(cur, a->unit, len) != 0)
                return MOTA_ERR_FLASH_NOT_ERASED;
            a->unit_slot_off += len;
            a->unit_fill = 0;
            return MOTA_OK;
        }
        a->up_resumed = false; /* programs are sequential: the rest is erased */
    }
    ret = fl->prog(fl->ctx, at, a->unit, len);
    a->unit_slot_off += len;
    a->unit_fill = 0;
    return ret;
}

/* ---- compressed payloads: the decoder writes the image through the program unit ---- */

/* A full unit from the decoder's sink: a flash error is kept for the caller, which may restart the
 * upload (a unit torn before a reset) once the decoder has returned. */
static int z_prog(struct mota_agent *a)
{
    a->up_z_resumed = a->up_resumed;
    int ret = prog_unit(a);
    a->up_z_err = ret;
    return ret;
}

static int z_write(void *ctx, const uint8_t *p, size_t n)
{
    struct mota_agent *a = ctx;
    while (n > 0) {
        uint32_t k = chunk_size(a) - a->unit_fill;
        if (k > n)
            k = (uint32_t)n;
        memcpy(a->unit + a->unit_fill, p, k);
        a->unit_fill += k;
        p += k;
        n -= k;
        int ret = a->unit_fill == chunk_size(a) ? z_prog(a) : MOTA_OK;
        if (ret != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

/* A match: bytes dist back in the image, from the unit when they are still there, else from the
 * flash they were programmed to (the decoder checked dist against what was written). */
static int z_copy(void *ctx, uint32_t dist, uint32_t n)
{
    struct mota_agent *a = ctx;
    const struct mota_flash *fl = a->cfg->port->flash;
    uint32_t img_off = a->up_layout.comp_slot[a->up_sha_comp];
    while (n > 0) {
        uint32_t ubase = a->unit_slot_off - img_off, src = ubase + a->unit_fill - dist;
        uint32_t k = chunk_size(a) - a->unit_fill;
        k = k < n ? k : n;
        k = k < dist ? k : dist; /* a run that does not overlap what it writes */
        int ret = MOTA_OK;
        if (src >= ubase) {
            memcpy(a->unit + a->unit_fill, a->unit + (src - ubase), k);
        } else {
            k = k < ubase - src ? k : ubase - src;
            if (a->up_img != NULL)
                memcpy(a->unit + a->unit_fill, a->up_img + src, k);
            else
                ret = fl->read(fl->ctx, slot_base(a, (unsigned)a->up_model, a->st[a->up_model].upload.slot) + img_off + src,
                               a->unit + a->unit_fill, k);
        }
        if (ret != MOTA_OK)
            return a->up_z_err = ret;
        a->unit_fill += k;
        n -= k;
        if (a->unit_fill == chunk_size(a) && (ret = z_prog(a)) != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

/* Component c's decoder, at `plain` bytes of its image (0: a new frame, else a block boundary). */
static int z_start(struct mota_agent *a, unsigned m, int c, uint32_t plain)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    const struct mota_component *comp = &a->up_man.comp[c];
    uint32_t at = slot_base(a, m, a->st[m].upload.slot) + a->up_layout.comp_slot[c];
    a->up_img = fl->map(fl->ctx, at, (size_t)comp->size);
    a->up_z_skip = 0;
    return mota_decompress_start(&a->up_z, comp->z_alg, (uint32_t)comp->size, comp->z_block, plain);
}

/*
 * Resume a compressed payload at stream offset o, `done` bytes into it: the journal holds the
 * transported hash's state there (o is where the hash's whole blocks end), how many bytes on the
 * block boundary is, and the image bytes written up to it. MOTA_ERR_JOURNAL if they disagree.
 */
static int z_resume_at(struct mota_agent *a, unsigned m, int c, uint32_t o, uint32_t done)
{
    const struct mota_agent_model_state *s = &a->st[m];
    const struct mota_component *comp = &a->up_man.comp[c];
    bool at_block = s->upload_plain % comp->z_block == 0 || s->upload_plain == comp->size;
    if (done % 64u != 0 || s->upload_skip >= 64u || s->upload_plain > comp->size || !at_block ||
        (uint64_t)done + s->upload_skip > comp->z_size)
        return MOTA_ERR_JOURNAL;
    (void)mota_sha256_resume(&a->up_sha, s->upload_mid, done); /* done is a multiple of 64 */
    a->up_sha_comp = c;
    a->unit_slot_off = a->up_layout.comp_slot[c] + s->upload_plain;
    a->up_expected = o;
    if (z_start(a, m, c, s->upload_plain) != MOTA_OK)
        return MOTA_ERR_JOURNAL;
    a->up_z_skip = s->upload_skip;
    return MOTA_OK;
}

/* Record how far the stream is durably on flash, now and then. */
static int maybe_persist(struct mota_agent *a, uint32_t stream_off, bool force)
{
    if (!force && stream_off - a->last_persist < MOTA_AGENT_PROGRESS_STEP)
        return MOTA_OK;
    struct jrec r;
    mota_journal_rec(&r, J_UPLOAD_PROGRESS, (unsigned)a->up_model);
    r.value = stream_off;
    a->last_persist = stream_off;
    return mota_journal_append(&a->journal, &r);
}

/* Where in the stream is offset o: component index and whether in its payload head. */
static int locate(const struct mota_agent *a, uint32_t o, bool *in_head)
{
    for (int c = (int)a->up_man.n_components - 1; c >= 0; c--) {
        if (o >= a->up_layout.comp_stream[c]) {
            *in_head = o < a->up_layout.comp_stream[c] + a->up_layout.comp_phl[c];
            return c;
        }
    }
    return -1;
}

/* Set up hashing and programming to continue at stream offset o (a resume). */
static int resume_at(struct mota_agent *a, uint32_t o)
{
    bool in_head = false;
    int c = locate(a, o, &in_head);
    unsigned m = (unsigned)a->up_model;
    a->unit_fill = 0;
    a->up_sha_comp = -1;
    a->up_resumed = true;
    if (c < 0 || in_head) {
        a->up_expected = o;
        return MOTA_OK;
    }
    uint32_t done = o - (a->up_layout.comp_stream[c] + a->up_layout.comp_phl[c]);
    if (a->up_man.comp[c].compressed)
        return z_resume_at(a, m, c, o, done);
    mota_sha256_init(&a->up_sha);
    a->up_sha_comp = c;
    a->unit_slot_off = a->up_layout.comp_slot[c] + done;
    a->up_expected = o;
    return hash_flash(a, slot_base(a, m, a->st[m].upload.slot) + a->up_layout.comp_slot[c], done, &a->up_sha);
}

/* All payloads received: verify from flash, install, self-test, trial. */
static int finish_upload_(struct mota_agent *a);

/* The host waits through these steps in silence otherwise: say which one starts. */
static void phase(struct mota_agent *a, unsigned m, enum mota_agent_phase ph)
{
    if (a->on_phase != NULL)
        a->on_phase(a->phase_ctx, ph, a->st[m].upload_len);
}

/*
 * The new model's manifest must outlive the scratch buffer its head was
 * received in: it is the verified one, pointed at the same manifest bytes in
 * the head begin_upload wrote to the slot. Found through that head's
 * envelope, not assumed at the same offset: a resumed upload may have sent
 * the same manifest under another signature (its digest is what a resume
 * matches), and the slot keeps the first head.
 */
static void keep_manifest(struct mota_agent *a, unsigned m)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    uint32_t slot_size = model_config(a, m)->slot_size;
    const uint8_t *stored = fl->map != NULL ? fl->map(fl->ctx, slot_base(a, m, a->st[m].active.slot), slot_size) : NULL;
    struct mota_envelope env;
    if (stored == NULL || mota_envelope_decode(stored, slot_size, &env) != MOTA_OK ||
        env.manifest_len != a->up_env.manifest_len || memcmp(env.manifest, a->up_env.manifest, env.manifest_len) != 0) {
        memset(&a->active_manifest[m], 0, sizeof(a->active_manifest[m])); /* no texts to report */
        return;
    }
    a->active_manifest[m] = a->up_man;
    mota_manifest_rebase(&a->active_manifest[m], a->up_env.manifest, a->up_env.manifest_len, env.manifest);
}

/* Every byte is in: digests, install, self-test, verdict (timed from here). */
static int finish_upload(struct mota_agent *a)
{
    uint32_t t0 = now_us(a);
    int ret = finish_upload_(a);
    a->timing.verdict_us = now_us(a) - t0;
    return ret;
}

static int finish_upload_(struct mota_agent *a)
{
    unsigned m = (unsigned)a->up_model;
    struct mota_agent_model_state *s = &a->st[m];
    const struct mota_agent_layout *lay = &a->up_layout; /* decided with the head, before the erase */
    struct mota_installed inst;
    int ret = MOTA_ERR_SLOT_INVALID;
    bool validated = false;

    if (s->upload_state != MOTA_UPLOAD_VERIFIED) {
        phase(a, m, MOTA_PHASE_VERIFY);
        uint32_t t0 = now_us(a);
        ret = verify_components(a, m, s->upload.slot, &a->up_man, lay);
        if (ret == MOTA_OK) /* the loader's bounds, on the bytes whose digest was just checked */
            ret = validate_code(a, m, s->upload.slot, &a->up_man, lay);
        validated = ret == MOTA_OK;
        a->timing.digest_us = now_us(a) - t0;
        a->timing.digest_bytes = 0;
        for (size_t c = 0; c < a->up_man.n_components; c++)
            a->timing.digest_bytes += (uint32_t)a->up_man.comp[c].size;
        if (ret != MOTA_OK)
            return fail_upload(a, m, ret);
        if ((ret = journal(a, J_UPLOAD_VERIFIED, m, 0)) != MOTA_OK)
            return ret;
    }
    /* the new model takes the exec RAM for its self-test; the old one is
     * installed again if the new one does not make it */
    a->installed[m] = false;
    phase(a, m, MOTA_PHASE_INSTALL);
    uint32_t t0 = now_us(a);
    /* verified before a restart: the validation did not survive it */
    ret = validated ? MOTA_OK : validate_code(a, m, s->upload.slot, &a->up_man, lay);
    if (ret == MOTA_OK)
        ret = install_slot(a, m, s->upload.slot, &a->up_man, lay, &inst);
    a->timing.install_us = now_us(a) - t0;
    if (ret == MOTA_OK && a->up_man.compat.selftest.present) {
        phase(a, m, MOTA_PHASE_SELFTEST);
        ret = run_selftest(a, m, s->upload.slot, &a->up_man, lay, &inst);
    }
    if (ret != MOTA_OK) {
        int r2 = fail_upload(a, m, ret);
        (void)activate(a, m);
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
    a->up_model = NOT_RECEIVING;
    a->up_ready = false;
    a->up_active = false;
    return (int)s->upload_len;
}

/* A new upload into the inactive slot: journal, erase, the head. Returns the head length. */
static int begin_upload(struct mota_agent *a, uint32_t container_len)
{
    unsigned m = (unsigned)a->up_model;
    struct mota_agent_model_state *s = &a->st[m];
    unsigned slot = s->active.slot == 1 ? 0 : (s->active.slot == 0 ? 1 : 0);
    struct jrec r;
    int ret;
    a->up_resumed = false;
    mota_journal_rec(&r, J_UPLOAD_BEGIN, m);
    r.slot = (uint8_t)slot;
    r.seq = a->up_man.seq;
    memcpy(r.digest, a->up_env.digest, MOTA_SHA256_LEN);
    r.value = container_len;
    r.value2 = (uint32_t)a->up_env.head_len;
    if ((ret = mota_journal_append(&a->journal, &r)) != MOTA_OK)
        return ret;
    const struct mota_flash *fl = a->cfg->port->flash;
    uint32_t base = slot_base(a, m, slot), t0 = now_us(a);
    for (uint32_t off = 0; off < a->up_layout.slot_used; off += fl->sector_size) {
        kick(a);
        if ((ret = fl->erase(fl->ctx, base + off)) != MOTA_OK)
            return fail_upload(a, m, ret);
    }
    a->timing.erase_us = now_us(a) - t0;
    if ((ret = journal(a, J_UPLOAD_ERASED, m, 0)) != MOTA_OK)
        return ret;
    /* the head goes to the slot too: the stored model carries its manifest */
    uint32_t hl = (uint32_t)a->up_env.head_len, whole = hl / fl->prog_size * fl->prog_size;
    if (whole > 0 && (ret = fl->prog(fl->ctx, base, a->cfg->scratch, whole)) != MOTA_OK)
        return fail_upload(a, m, ret);
    a->unit_slot_off = whole;
    a->unit_fill = hl - whole;
    memcpy(a->unit, a->cfg->scratch + whole, a->unit_fill);
    if (a->unit_fill > 0 && (ret = prog_unit(a)) != MOTA_OK)
        return fail_upload(a, m, ret);
    if ((ret = maybe_persist(a, hl, true)) != MOTA_OK)
        return ret;
    a->up_sha_comp = -1;
    a->up_expected = hl;
    return (int)hl;
}

/* The head is complete in scratch: decide, then erase and start writing. */
static int head_complete(struct mota_agent *a)
{
    struct head_check hc;
    uint32_t t0 = now_us(a);
    memset(&a->timing, 0, sizeof(a->timing)); /* a new update */
    int ret = check_head(a, &a->up_env, &a->up_man, &hc, AUTH_NEW_UPLOAD);
    if (ret == MOTA_OK) {
        unsigned m = (unsigned)hc.model;
        if (a->st[m].testing)
            ret = MOTA_ERR_TRIAL_PENDING; /* one trial at a time: its verdict decides what "previous" is */
        else if ((ret = check_sequence(a, m, a->up_man.seq, a->up_env.digest)) != MOTA_OK)
            hc.why = (struct mota_agent_refusal){ret, NULL, a->st[m].committed_seq, a->up_man.seq};
    }
    a->timing.check_us = now_us(a) - t0;
    if (ret != MOTA_OK) {
        a->last_error = ret;
        a->refusal = hc.why;
        a->refusal.reason = ret; /* vendor, class, unknown key: the ids are read where they are kept */
        a->up_model = NOT_RECEIVING;
        if (hc.model >= 0)
            model_error(a, (unsigned)hc.model, ret);
        return ret; /* refused before any erase */
    }
    unsigned m = (unsigned)hc.model;
    struct mota_agent_model_state *s = &a->st[m];
    a->up_model = (int)m;
    a->up_layout = hc.lay;
    a->up_ready = true;

    /* the same container interrupted earlier: continue where it stopped */
    if ((s->upload_state == MOTA_UPLOAD_ERASED || s->upload_state == MOTA_UPLOAD_VERIFIED) &&
        memcmp(s->upload.digest, a->up_env.digest, MOTA_SHA256_LEN) == 0 && s->upload_offset >= a->up_env.head_len &&
        s->upload_len == hc.lay.container_len) {
        a->last_persist = s->upload_offset;
        if (s->upload_state == MOTA_UPLOAD_VERIFIED || s->upload_offset == s->upload_len)
            return finish_upload(a); /* every byte is on flash already */
        ret = resume_at(a, s->upload_offset);
        if (ret == MOTA_ERR_JOURNAL) /* a resume point that does not fit this container: start over */
            return begin_upload(a, hc.lay.container_len);
        if (ret != MOTA_OK)
            return ret;
        return (int)a->up_expected;
    }

    return begin_upload(a, hc.lay.container_len);
}

/*
 * The steps of stream_bytes return MOTA_OK to go on with the next bytes, or what stream_bytes returns:
 * a refusal, or the new stream position after a restart or the verdict.
 */

/* A program that fails on bytes not erased, after a resume: a unit torn before the reset. Start over. */
static int unit_failed(struct mota_agent *a, unsigned m, int ret, bool was_resumed)
{
    if (ret == MOTA_ERR_FLASH_NOT_ERASED && was_resumed)
        return begin_upload(a, a->st[m].upload_len);
    return fail_upload(a, m, ret);
}

/*
 * At a block boundary of a compressed payload (stream offset b, the unit empty), now and then: the
 * resume point. The transported hash's state covers its whole 64-byte blocks only, so the record
 * names the stream offset where they end; the sender resumes there and the few bytes up to b are
 * hashed again, not decoded.
 */
static int z_persist(struct mota_agent *a, unsigned m, int c, uint32_t b)
{
    /* not right after an LZ4 frame's header (no image byte yet): a resume there would start a new frame */
    if (b - a->last_persist < MOTA_AGENT_PROGRESS_STEP || a->unit_fill != 0 || mota_decompress_out(&a->up_z) == 0)
        return MOTA_OK;
    struct jrec r;
    uint32_t start = a->up_layout.comp_stream[c] + a->up_layout.comp_phl[c];
    mota_journal_rec(&r, J_UPLOAD_PROGRESS, m);
    r.value = start + (uint32_t)mota_sha256_midstate(&a->up_sha, r.digest);
    r.flags = (uint8_t)(b - r.value);
    r.value2 = mota_decompress_out(&a->up_z);
    a->last_persist = b;
    return mota_journal_append(&a->journal, &r);
}

/* n content bytes of compressed component c at a->up_expected: hashed as they are decoded, so that a
 * block boundary's record has the hash of the bytes before it. */
static int z_content_bytes(struct mota_agent *a, unsigned m, int c, const uint8_t *data, uint32_t n)
{
    const struct mota_decomp_sink sink = {z_write, z_copy, a};
    uint32_t o = a->up_expected;
    uint32_t skip = a->up_z_skip < n ? a->up_z_skip : n; /* after a resume: up to the block boundary */
    mota_sha256_update(&a->up_sha, data, skip);
    a->up_z_skip -= skip;
    for (uint32_t p = skip; p < n;) {
        size_t used = 0;
        a->up_z_err = MOTA_OK;
        int ret = mota_decompress_feed(&a->up_z, data + p, n - p, &sink, &used);
        if (ret != MOTA_OK)
            return a->up_z_err != MOTA_OK ? unit_failed(a, m, ret, a->up_z_resumed) : fail_upload(a, m, ret);
        mota_sha256_update(&a->up_sha, data + p, used);
        p += (uint32_t)used;
        if (mota_decompress_at_boundary(&a->up_z) && (ret = z_persist(a, m, c, o + p)) != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

/* Bytes of a payload head: gathered, then checked against the manifest (not stored). */
static int payload_head_bytes(struct mota_agent *a, unsigned m, int c, const uint8_t **data, size_t *len)
{
    const struct mota_component *comp = &a->up_man.comp[c];
    const struct mota_agent_layout *lay = &a->up_layout;
    uint32_t at = a->up_expected - lay->comp_stream[c], n = lay->comp_phl[c] - at;
    if (n > *len)
        n = (uint32_t)*len;
    if (at == 0)
        a->payload_head_fill = 0;
    memcpy(a->payload_head + a->payload_head_fill, *data, n); /* comp_phl <= sizeof(payload_head): check_head */
    a->payload_head_fill += n;
    *data += n;
    *len -= n;
    a->up_expected += n;
    if (a->payload_head_fill < lay->comp_phl[c])
        return MOTA_OK;
    const char *name;
    size_t name_len, hl;
    uint64_t size;
    int ret = mota_payload_head(a->payload_head, a->payload_head_fill, &name, &name_len, &size, &hl);
    if (ret != MOTA_OK)
        return fail_upload(a, m, ret);
    if (hl != a->payload_head_fill || name_len != comp->uri_len || memcmp(name, comp->uri, name_len) != 0)
        return fail_upload(a, m, MOTA_ERR_PAYLOAD_ORDER);
    if (size != mota_component_wire_size(comp))
        return fail_upload(a, m, MOTA_ERR_PAYLOAD_SIZE);
    mota_sha256_init(&a->up_sha);
    a->up_sha_comp = c;
    a->unit_slot_off = lay->comp_slot[c];
    a->unit_fill = 0;
    if (comp->compressed && (ret = z_start(a, m, c, 0)) != MOTA_OK)
        return fail_upload(a, m, MOTA_ERR_COMPRESSION_INFO); /* the profile checked it: not reached */
    return MOTA_OK;
}

/* n content bytes at stream offset o into program units; each full unit is programmed, the offset made
 * durable now and then. */
static int program_bytes(struct mota_agent *a, unsigned m, uint32_t o, const uint8_t *data, uint32_t n)
{
    const uint8_t *p = data;
    while (p < data + n) {
        uint32_t k = chunk_size(a) - a->unit_fill, left = (uint32_t)(data + n - p);
        if (k > left)
            k = left;
        memcpy(a->unit + a->unit_fill, p, k);
        a->unit_fill += k;
        p += k;
        if (a->unit_fill < chunk_size(a))
            continue;
        bool was_resumed = a->up_resumed;
        int ret = prog_unit(a);
        if (ret != MOTA_OK)
            return unit_failed(a, m, ret, was_resumed);
        if ((ret = maybe_persist(a, o + (uint32_t)(p - data), false)) != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

/* A component is complete: its last partial unit, then its digest; after the last one, the verdict. */
static int component_done(struct mota_agent *a, unsigned m, int c, uint32_t end, size_t extra)
{
    uint8_t md[MOTA_SHA256_LEN];
    const struct mota_component *comp = &a->up_man.comp[c];
    bool was_resumed = a->up_resumed;
    int ret;
    if (comp->compressed && (ret = mota_decompress_finish(&a->up_z)) != MOTA_OK)
        return fail_upload(a, m, ret); /* the payload ends before its frame does */
    if (a->unit_fill > 0 && (ret = prog_unit(a)) != MOTA_OK)
        return unit_failed(a, m, ret, was_resumed);
    mota_sha256_finish(&a->up_sha, md);
    a->up_sha_comp = -1;
    /* the bytes sent; a compressed image's own digest is checked from flash with the others */
    if (mota_ct_memcmp(md, comp->compressed ? comp->z_digest : comp->digest, MOTA_SHA256_LEN) != 0)
        return fail_upload(a, m, comp->compressed ? MOTA_ERR_DECOMP_DIGEST : MOTA_ERR_PAYLOAD_DIGEST);
    if ((ret = maybe_persist(a, end, true)) != MOTA_OK)
        return ret;
    if (end != a->st[m].upload_len)
        return MOTA_OK;
    return extra > 0 ? fail_upload(a, m, MOTA_ERR_UPLOAD_TOO_LONG) : finish_upload(a);
}

/* Content bytes of component c: hashed and programmed. */
static int content_bytes(struct mota_agent *a, unsigned m, int c, const uint8_t **data, size_t *len)
{
    const struct mota_agent_layout *lay = &a->up_layout;
    uint32_t o = a->up_expected;
    uint32_t end = lay->comp_stream[c] + lay->comp_phl[c] + (uint32_t)mota_component_wire_size(&a->up_man.comp[c]);
    uint32_t n = end - o;
    if (n > *len)
        n = (uint32_t)*len;
    if (a->up_sha_comp != c)
        return fail_upload(a, m, MOTA_ERR_INTERNAL);
    int ret;
    if (a->up_man.comp[c].compressed) {
        ret = z_content_bytes(a, m, c, *data, n);
    } else {
        mota_sha256_update(&a->up_sha, *data, n);
        ret = program_bytes(a, m, o, *data, n);
    }
    if (ret != MOTA_OK)
        return ret;
    *data += n;
    *len -= n;
    a->up_expected += n;
    return a->up_expected == end ? component_done(a, m, c, end, *len) : MOTA_OK;
}

static int stream_bytes(struct mota_agent *a, const uint8_t *data, size_t len)
{
    unsigned m = (unsigned)a->up_model;
    while (len > 0) {
        if (a->up_expected >= a->st[m].upload_len)
            return fail_upload(a, m, MOTA_ERR_UPLOAD_TOO_LONG);
        bool in_head = false;
        int c = locate(a, a->up_expected, &in_head);
        if (c < 0)
            return fail_upload(a, m, MOTA_ERR_INTERNAL);
        int ret = in_head ? payload_head_bytes(a, m, c, &data, &len) : content_bytes(a, m, c, &data, &len);
        if (ret != MOTA_OK)
            return ret;
    }
    return (int)a->up_expected;
}

static int write_stream(struct mota_agent *a, uint32_t offset, const uint8_t *data, size_t len);

int mota_agent_write(struct mota_agent *a, uint32_t offset, const uint8_t *data, size_t len)
{
    if (a == NULL || a->cfg == NULL || (data == NULL && len > 0))
        return MOTA_ERR_ARG;
    if (offset == 0)
        a->up_active = true;
    int ret = write_stream(a, offset, data, len);
    if (ret < 0 && ret != MOTA_ERR_UPLOAD_OFFSET)
        a->up_active = false; /* refused: the container is over */
    return ret;
}

static int write_stream(struct mota_agent *a, uint32_t offset, const uint8_t *data, size_t len)
{
    if (offset == 0) {
        /* a (re)start: the head is collected again and decides what follows */
        memset(&a->refusal, 0, sizeof(a->refusal));
        if (a->cfg->n_keys == 0) {
            a->last_error = MOTA_ERR_NOT_PROVISIONED;
            return MOTA_ERR_NOT_PROVISIONED; /* nothing can be authenticated */
        }
        a->up_ready = false;
        a->up_model = NOT_RECEIVING;
        a->up_expected = 0;
    } else if (offset != a->up_expected || (!a->up_ready && !a->up_active)) {
        return MOTA_ERR_UPLOAD_OFFSET; /* a head is collected from offset 0 on, over as many writes as it takes */
    }
    if (len > 0xFFFFFFFFu - offset)
        return MOTA_ERR_UPLOAD_TOO_LONG;
    while (len > 0 && !a->up_ready) {
        size_t room = a->cfg->scratch_size - a->up_expected;
        size_t n = len < room ? len : room;
        memcpy(a->cfg->scratch + a->up_expected, data, n);
        uint32_t before = a->up_expected;
        a->up_expected += (uint32_t)n;
        int ret = mota_envelope_decode(a->cfg->scratch, a->up_expected, &a->up_env);
        if (ret == MOTA_ERR_CBOR_TRUNCATED) {
            if (a->up_expected == a->cfg->scratch_size) {
                a->up_expected = 0;
                return MOTA_ERR_ENV_TOO_LARGE;
            }
            data += n;
            len -= n;
            continue;
        }
        if (ret != MOTA_OK) {
            a->up_expected = 0;
            a->last_error = ret;
            return ret;
        }
        /* bytes past the head belong to the payloads */
        size_t used = a->up_env.head_len - before;
        data += used;
        len -= used;
        a->up_expected = (uint32_t)a->up_env.head_len;
        ret = head_complete(a);
        if (ret < 0)
            return ret;
        if ((uint32_t)ret != a->up_env.head_len) {
            /* resumed (or finished): the sender continues at ret */
            return ret;
        }
    }
    if (len == 0)
        return (int)a->up_expected;
    return stream_bytes(a, data, len);
}

bool mota_agent_receiving(const struct mota_agent *a)
{
    return a->up_active;
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
    for (unsigned m = 0; m < a->cfg->n_models; m++) {
        if (a->st[m].upload_state != MOTA_UPLOAD_NONE && (ret = journal(a, J_UPLOAD_ABORT, m, MOTA_OK)) != MOTA_OK)
            return ret;
    }
    a->up_model = NOT_RECEIVING;
    a->up_ready = false;
    a->up_active = false;
    a->up_expected = 0;
    return MOTA_OK;
}

int mota_agent_confirm(struct mota_agent *a, unsigned m)
{
    if (a == NULL || m >= a->cfg->n_models)
        return MOTA_ERR_ARG;
    if (!a->st[m].testing)
        return MOTA_ERR_NOT_TESTING;
    return journal(a, J_CONFIRM, m, 0);
}

int mota_agent_rollback(struct mota_agent *a, unsigned m)
{
    if (a == NULL || m >= a->cfg->n_models)
        return MOTA_ERR_ARG;
    /* a confirmed model may be retired only once it faulted or overran in the application's inference
     * (mota_agent_model_fault) since boot: the previous model comes back, the floor stays */
    bool retire = !a->st[m].testing;
    if (retire && a->model_faults[m] == 0)
        return MOTA_ERR_NOT_TESTING;
    /* a first model on trial has nothing before it and is removed, as its trial's expiry would remove it;
     * a confirmed first model is all there is, and stays */
    if (retire && a->st[m].previous.slot == MOTA_AGENT_NO_SLOT)
        return MOTA_ERR_NO_PREVIOUS;
    /* a trial ended on request is a success and clears the last error; a retirement keeps the fault that
     * caused it (the application's own inference is not in the link's ERRORS ring) */
    int ret = journal(a, J_ROLLBACK, m, retire ? a->st[m].last_error : MOTA_OK);
    if (ret != MOTA_OK)
        return ret;
    if (a->st[m].active.slot == MOTA_AGENT_NO_SLOT) {
        a->installed[m] = false;
        return MOTA_OK;
    }
    return activate(a, m);
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
    struct head_check hc;
    struct mota_manifest man;
    if (a == NULL || m >= a->cfg->n_models)
        return MOTA_ERR_ARG;
    if (!a->installed[m])
        return MOTA_ERR_NO_MODEL;
    int ret = validate_slot(a, m, &a->st[m].active, &env, &man, &hc);
    if (ret != MOTA_OK)
        return ret;
    return run_selftest(a, m, a->st[m].active.slot, &man, &hc.lay, &a->inst[m]);
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
    info->exec_ram_addr = model_config(a, m)->exec_ram_addr;
    info->exec_ram_size = model_config(a, m)->exec_ram_size;
    info->activations_size = man->compat.acts_size;
    info->exec_ram_used = (uint32_t)(a->inst[m].mode == MOTA_INSTALL_XIP ? man->compat.exec_ram_xip
                                                                          : man->compat.exec_ram_copy);
    info->epochs = man->compat.has_epochs ? &man->compat.epochs : NULL;
    return MOTA_OK;
}

int mota_agent_model_fault(struct mota_agent *a, unsigned m, int reason)
{
    if (a == NULL || a->cfg == NULL || m >= a->cfg->n_models || reason >= 0)
        return MOTA_ERR_ARG;
    a->model_faults[m]++;
    model_error(a, m, reason);
    return MOTA_OK;
}

int mota_agent_last_error(const struct mota_agent *a, unsigned m)
{
    if (a == NULL || m >= a->cfg->n_models)
        return MOTA_ERR_ARG;
    return a->st[m].last_error;
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
    const struct mota_flash *fl = a->cfg->port->flash;
    if (ref->slot > 1)
        return ret;
    /* read in place: the slot must still hold the journaled head (an update forgets it when it begins) */
    const uint8_t *p = fl->map(fl->ctx, slot_base(a, m, ref->slot), model_config(a, m)->slot_size);
    if (p == NULL || mota_envelope_decode(p, model_config(a, m)->slot_size, &env) != MOTA_OK ||
        memcmp(env.digest, ref->digest, MOTA_SHA256_LEN) != 0)
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
