/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The link's answers, encoded: HELLO's device and model information, STATUS, ERRORS, and the text of a
 * refusal's details. Built from the agent's state into the caller's buffer; link.c sends them.
 */
#include "link_replies.h"

#include "mota/cbor.h"
#include "mota/container.h" /* mota_epoch_summary_put */
#include "mota/crypto.h"    /* mota_key_id */
#include "mota/err.h"
#include "mota/ms.h"
#include "mota/features.h"
#include "mota/proto_keys.h"

#include <string.h>

uint32_t mota_link_now_ms(const struct mota_link *l)
{
    return l->sys && l->sys->now_us ? (uint32_t)mota_ms_of_us(l->sys->now_us(l->sys->ctx)) : 0;
}

#if MOTA_FEATURE_DETAIL /* refusal details: text built from the agent's state */
/* A text built in a caller's buffer; what does not fit is cut. */
struct text {
    uint8_t *p;
    size_t n, cap;
};

static const char hexd[] = "0123456789abcdef";

static void put_s(struct text *t, const char *s)
{
    for (; *s && t->n < t->cap; s++)
        t->p[t->n++] = (uint8_t)*s;
}

static void put_hex(struct text *t, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n && t->n + 2 <= t->cap; i++) {
        t->p[t->n++] = (uint8_t)hexd[b[i] >> 4];
        t->p[t->n++] = (uint8_t)hexd[b[i] & 15];
    }
}

/* 0x and hex digits (a compatibility field's bits), or decimal (counts, times) */
static void put_num(struct text *t, uint64_t v, bool hex)
{
    char b[24];
    size_t i = sizeof(b) - 1;
    b[i] = 0;
    do {
        b[--i] = hexd[hex ? v & 15 : v % 10];
        v = hex ? v >> 4 : v / 10;
    } while (v != 0);
    if (hex) {
        b[--i] = 'x';
        b[--i] = '0';
    }
    put_s(t, b + i);
}

static void put_uuid(struct text *t, const uint8_t u[16])
{
    for (unsigned i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            put_s(t, "-");
        put_hex(t, u + i, 1);
    }
}

/* The container's vendor or class id that differs from the device's. */
static const uint8_t *their_id(const struct mota_agent *a, bool vendor)
{
    const uint8_t *mine = vendor ? a->cfg->vendor_id : a->cfg->class_id;
    for (size_t c = 0; c < a->up.man.n_components; c++) {
        const uint8_t *id = vendor ? a->up.man.comp[c].vendor_id : a->up.man.comp[c].class_id;
        if (memcmp(id, mine, 16) != 0)
            return id;
    }
    return NULL;
}

/* vendor_id or class_id: the device's and the container's */
static void identity_detail(const struct mota_agent *a, bool vendor, const uint8_t *theirs, struct text *t)
{
    put_s(t, vendor ? "vendor_id: device " : "class_id: device ");
    put_uuid(t, vendor ? a->cfg->vendor_id : a->cfg->class_id);
    put_s(t, ", model ");
    put_uuid(t, theirs);
}

/* every key the device trusts, and the ones the container's signatures name */
static void key_detail(const struct mota_agent *a, struct text *t)
{
    const struct mota_agent_config *c = a->cfg;
    const char *none = " none";
    put_s(t, "key_id: device");
    for (unsigned k = 0; k < c->n_keys; k++) {
        uint8_t kid[MOTA_KEY_ID_LEN];
        mota_key_id(c->keys[k].pub, kid);
        put_s(t, " ");
        put_hex(t, kid, sizeof(kid));
    }
    put_s(t, ", model");
    for (size_t b = 0; b < a->up.env.n_blocks; b++) {
        if (a->up.env.blocks[b].kid != NULL) {
            put_s(t, " ");
            put_hex(t, a->up.env.blocks[b].kid, a->up.env.blocks[b].kid_len);
            none = "";
        }
    }
    put_s(t, none);
}

/* FIELD: device VALUE, model VALUE (a compatibility rule's values in hex; a digest's first 8 bytes) */
static void value_detail(const struct mota_agent_refusal *r, int reason, const char *field, struct text *t)
{
    uint64_t vals[2] = {r->device, r->model};
    put_s(t, field);
    for (int i = 0; i < 2; i++) {
        put_s(t, i == 0 ? ": device " : ", model ");
        if (reason == MOTA_ERR_SELFTEST_OUTPUT) { /* all 16 digits */
            uint8_t b[8];
            for (int k = 0; k < 8; k++)
                b[k] = (uint8_t)(vals[i] >> (56 - 8 * k));
            put_hex(t, b, sizeof(b));
        } else {
            put_num(t, vals[i], r->field != NULL);
        }
    }
}

/*
 * The facts behind a refusal, "FIELD: device VALUE, model VALUE": what the device has, trusts or measured,
 * and what the container says or needs (docs/protocol.md, "Refusal details"); 0 for a reason without any.
 * Built from the agent's state at the verdict, so it needs no message strings.
 */
size_t mota_link_refusal_detail(const struct mota_agent *a, int reason, uint8_t *out, size_t cap)
{
    const struct mota_agent_refusal *r = &a->refusal;
    struct text t = {out, 0, cap};
    const char *field = r->field;
    if (r->reason != reason)
        return 0;
    if (reason == MOTA_ERR_VENDOR_MISMATCH || reason == MOTA_ERR_CLASS_MISMATCH) {
        const uint8_t *theirs = their_id(a, reason == MOTA_ERR_VENDOR_MISMATCH);
        if (theirs == NULL)
            return 0;
        identity_detail(a, reason == MOTA_ERR_VENDOR_MISMATCH, theirs, &t);
        return t.n;
    }
    if (reason == MOTA_ERR_KEY_UNKNOWN) {
        key_detail(a, &t);
        return t.n;
    }
    if (field == NULL) {
        switch (reason) {
        case MOTA_ERR_KEY_REVOKED: field = "key_index"; break;
        case MOTA_ERR_ROLLBACK:
        case MOTA_ERR_ROLLBACK_SAME_SEQ: field = "seq"; break;
        case MOTA_ERR_SELFTEST_SLOW: field = "latency_us"; break;
        case MOTA_ERR_SELFTEST_OUTPUT: field = "output_sha256"; break;
        default: return 0;
        }
    }
    value_detail(r, reason, field, &t);
    return t.n;
}
#endif /* MOTA_FEATURE_DETAIL */

/* The active model's keys (MOTA_MINFO_SEQ to _ABOUT). */
static void put_active(struct mota_cbor_enc *e, const struct mota_agent *a, unsigned m,
                       const struct mota_agent_model_info *info, const struct mota_model_about *about, size_t vcap)
{
    mota_cbor_put_uint(e, MOTA_MINFO_SEQ);
    mota_cbor_put_uint(e, info->seq);
    mota_cbor_put_uint(e, MOTA_MINFO_DIGEST);
    mota_cbor_put_bstr(e, info->digest, MOTA_SHA256_LEN);
    mota_cbor_put_uint(e, MOTA_MINFO_VERSION);
    size_t vl = info->version ? info->version_len : 0;
    mota_cbor_put_tstr_n(e, info->version ? info->version : "", vl < vcap ? vl : vcap);
    mota_cbor_put_uint(e, MOTA_MINFO_PLACEMENT);
    mota_cbor_put_array(e, 4);
    mota_cbor_put_uint(e, info->slot);
    mota_cbor_put_uint(e, info->install_mode);
    mota_cbor_put_bool(e, info->testing);
    mota_cbor_put_uint(e, info->trial_boots);
    mota_cbor_put_uint(e, MOTA_MINFO_EXEC_USED);
    mota_cbor_put_uint(e, info->exec_ram_used);
    mota_cbor_put_uint(e, MOTA_MINFO_FAULTS); /* faults and overruns since boot (a guarding port) */
    mota_cbor_put_uint(e, a->model_faults[m]);
    if (about != NULL) { /* the model's own description: [name, compiled, tool, tool version, acts, weights] */
        mota_cbor_put_uint(e, MOTA_MINFO_ABOUT);
        mota_cbor_put_array(e, MOTA_MINFO_ABOUT_ITEMS);
        mota_cbor_put_tstr(e, about->name);
        mota_cbor_put_tstr(e, about->compiled);
        mota_cbor_put_tstr(e, about->tool);
        mota_cbor_put_uint(e, about->tool_version);
        mota_cbor_put_uint(e, about->acts_size);
        mota_cbor_put_uint(e, about->weights_size);
    }
}

/* key 18, the model's inputs and outputs: [inputs, outputs], each [* [format, bytes]] */
static void put_io(struct mota_cbor_enc *e, const struct mota_model_io *io)
{
    const struct mota_model_tensor *t[2] = {io->in, io->out};
    unsigned n[2] = {io->n_in, io->n_out};
    mota_cbor_put_uint(e, MOTA_MINFO_IO);
    mota_cbor_put_array(e, 2);
    for (int k = 0; k < 2; k++) {
        mota_cbor_put_array(e, n[k]);
        for (unsigned i = 0; i < n[k]; i++) {
            mota_cbor_put_array(e, 2);
            mota_cbor_put_uint(e, t[k][i].format);
            mota_cbor_put_uint(e, t[k][i].bytes);
        }
    }
}

/* What the port says of the active model (its description, its inputs and outputs), where it can. */
struct port_says {
    bool has_about, has_io;
    struct mota_model_about about;
    struct mota_model_io io;
};

static void port_says(const struct mota_agent *a, const struct mota_agent_model_info *info, struct port_says *ps)
{
    const struct mota_port *p = a->cfg->port;
    ps->has_about = info->instance != NULL && p->model_about != NULL &&
                    p->model_about(p->infer_ctx, info->instance, &ps->about) == MOTA_OK;
    ps->has_io = info->instance != NULL && p->model_io != NULL &&
                 p->model_io(p->infer_ctx, info->instance, &ps->io) == MOTA_OK && ps->io.n_in <= MOTA_MODEL_IO_MAX &&
                 ps->io.n_out <= MOTA_MODEL_IO_MAX;
}

/* extras: the previous model, when the last error happened and where the model's work runs, the first
 * things to go when an answer does not fit */
static void put_ref(struct mota_cbor_enc *e, const struct mota_agent *a, unsigned m, size_t vcap, bool extras)
{
    struct mota_agent_model_info info;
    const struct mota_agent_model_config *mc = &a->cfg->models[m];
    bool has = mota_agent_model_info(a, m, &info) == MOTA_OK;
    const struct mota_agent_model_state *s = &a->st[m];
    struct port_says ps = {0};
    if (has && vcap > 0) /* with the versions: the last things to go */
        port_says(a, &info, &ps);
    struct mota_agent_previous prev;
    bool has_prev = extras && mota_agent_previous(a, m, &prev) == MOTA_OK;
    bool has_when = extras && s->last_error != 0;
    bool has_epochs = MOTA_FEATURE_EPOCHS && extras && has && info.epochs != NULL;
    mota_cbor_put_map(e, (has ? 13u + ps.has_about + ps.has_io : 7u) + has_prev + has_when + has_epochs);
    mota_cbor_put_uint(e, MOTA_MINFO_C_NAME);
    mota_cbor_put_tstr(e, mc->c_name);
    mota_cbor_put_uint(e, MOTA_MINFO_SLOT_SIZE);
    mota_cbor_put_uint(e, mc->slot_size); /* largest container */
    mota_cbor_put_uint(e, MOTA_MINFO_COMMITTED);
    mota_cbor_put_uint(e, s->has_committed ? s->committed_seq : 0);
    mota_cbor_put_uint(e, MOTA_MINFO_LAST_ERROR);
    mota_cbor_put_int(e, s->last_error);
    mota_cbor_put_uint(e, MOTA_MINFO_UPLOAD);
    mota_cbor_put_array(e, 3);
    mota_cbor_put_uint(e, s->upload_state);
    mota_cbor_put_uint(e, s->upload_offset);
    mota_cbor_put_uint(e, s->upload_len);
    mota_cbor_put_uint(e, MOTA_MINFO_HAS_MODEL);
    mota_cbor_put_bool(e, has);
    if (has)
        put_active(e, a, m, &info, ps.has_about ? &ps.about : NULL, vcap);
    mota_cbor_put_uint(e, MOTA_MINFO_MEMORY); /* the memory a model may use here: [exec RAM, external RAM] */
    mota_cbor_put_array(e, 2);
    mota_cbor_put_uint(e, mc->exec_ram_size);
    mota_cbor_put_uint(e, mc->ext_ram_size);
    if (has_prev) { /* what a rollback would bring back: [seq, version, manifest digest, slot] */
        size_t vl = prev.version ? prev.version_len : 0;
        mota_cbor_put_uint(e, MOTA_MINFO_PREVIOUS);
        mota_cbor_put_array(e, 4);
        mota_cbor_put_uint(e, prev.seq);
        mota_cbor_put_tstr_n(e, prev.version ? prev.version : "", vl < vcap ? vl : vcap);
        mota_cbor_put_bstr(e, prev.digest, MOTA_SHA256_LEN);
        mota_cbor_put_uint(e, prev.slot);
    }
    if (has_when) { /* when the last error happened: [this boot, ms since boot]; false: an earlier boot */
        mota_cbor_put_uint(e, MOTA_MINFO_ERROR_WHEN);
        mota_cbor_put_array(e, 2);
        mota_cbor_put_bool(e, s->last_error_this_boot);
        mota_cbor_put_uint(e, s->last_error_ms);
    }
    if (has_epochs) { /* the manifest's npu-epochs, as signed */
        mota_cbor_put_uint(e, MOTA_MINFO_EPOCHS);
        mota_epoch_summary_put(e, info.epochs);
    }
    if (ps.has_io)
        put_io(e, &ps.io);
}

/* The models an answer describes (HELLO key 7, STATUS key 1) */
static void put_models(struct mota_cbor_enc *e, const struct mota_link *l, const struct mota_link_page *pg)
{
    mota_cbor_put_array(e, pg->count);
    for (unsigned m = pg->first; m < pg->first + pg->count; m++)
        put_ref(e, l->agent, m, pg->vcap, pg->extras);
}

static bool page_partial(const struct mota_link *l, const struct mota_link_page *pg)
{
    return MOTA_FEATURE_PAGES && pg->paged && (pg->first > 0 || pg->count < l->agent->cfg->n_models);
}

static void put_models_from(struct mota_cbor_enc *e, const struct mota_link *l, const struct mota_link_page *pg,
                            unsigned key)
{
    mota_cbor_put_uint(e, key); /* [first, total]: a host asks again from first + count */
    mota_cbor_put_array(e, 2);
    mota_cbor_put_uint(e, pg->first);
    mota_cbor_put_uint(e, l->agent->cfg->n_models);
}

/* HELLO key 6: [CPU part, FPU, float ABI, secure, dbg-info, async, families, LL_ATON, struct sizes, install modes,
 * split policy, key floor] */
static void put_profile(struct mota_cbor_enc *e, const struct mota_device_profile *p, uint32_t key_floor)
{
    mota_cbor_put_array(e, MOTA_INFO_PROFILE_ITEMS);
    mota_cbor_put_uint(e, p->cpu_part);
    mota_cbor_put_bool(e, p->fpu_enabled);
    mota_cbor_put_uint(e, p->float_abi);
    mota_cbor_put_bool(e, p->secure);
    mota_cbor_put_bool(e, p->dbg_info);
    mota_cbor_put_bool(e, p->async);
    mota_cbor_put_uint(e, p->reloc_families);
    mota_cbor_put_uint(e, p->has_ll_aton ? (p->ll_aton_major << 16 | p->ll_aton_minor << 8 | p->ll_aton_micro) : 0);
    mota_cbor_put_uint(e, p->struct_sizes);
    mota_cbor_put_uint(e, p->install_modes);
    mota_cbor_put_uint(e, p->split_policy);
    mota_cbor_put_uint(e, key_floor);
}

/* HELLO key 15: the names the vendor and class ids are made from, when the device knows them */
static bool has_names(const struct mota_agent_config *c)
{
    return (c->vendor_name != NULL && c->vendor_name[0] != 0) || (c->class_name != NULL && c->class_name[0] != 0);
}

static void put_names(struct mota_cbor_enc *e, const struct mota_agent_config *c)
{
    mota_cbor_put_uint(e, MOTA_INFO_IDENTITY_NAMES);
    mota_cbor_put_array(e, 2);
    mota_cbor_put_tstr(e, c->vendor_name != NULL ? c->vendor_name : "");
    mota_cbor_put_tstr(e, c->class_name != NULL ? c->class_name : "");
}

/* HELLO key 18: the ids of the keys this device decrypts with, in a build that decrypts and with a key */
static bool has_dec_keys(const struct mota_agent_config *c)
{
    return MOTA_FEATURE_DECRYPT && ((c->enc.keks != NULL && c->enc.n_keks > 0) || c->enc.device_pub != NULL);
}

/* Ids only, never k or d: the host's early refusal (mota push) and `mota status` need no more. */
static void put_dec_keys(struct mota_cbor_enc *e, const struct mota_enc_keys *k)
{
    size_t n = k->keks != NULL ? k->n_keks : 0;
    bool dev = k->device_pub != NULL && k->device_kid != NULL && k->device_kid_len > 0;
    n = n < MOTA_DECRYPT_KEKS_MAX ? n : MOTA_DECRYPT_KEKS_MAX; /* the answer's bound */
    mota_cbor_put_uint(e, MOTA_INFO_DECRYPT);
    mota_cbor_put_map(e, 1u + dev);
    mota_cbor_put_uint(e, MOTA_DECRYPT_KEK_IDS);
    mota_cbor_put_array(e, n);
    for (size_t i = 0; i < n; i++)
        mota_cbor_put_bstr(e, k->keks[i].kid,
                           k->keks[i].kid_len < MOTA_ENC_MAX_KID ? k->keks[i].kid_len : MOTA_ENC_MAX_KID);
    if (dev) {
        mota_cbor_put_uint(e, MOTA_DECRYPT_DEVICE_KEY_ID);
        mota_cbor_put_bstr(e, k->device_kid,
                           k->device_kid_len < MOTA_ENC_MAX_KID ? k->device_kid_len : MOTA_ENC_MAX_KID);
    }
}

size_t mota_link_device_info(struct mota_link *l, uint8_t *out, size_t cap, const struct mota_link_page *pg)
{
    const struct mota_agent_config *c = l->agent->cfg;
    const struct mota_device_profile *p = &c->profile;
    struct mota_cbor_enc e;
    bool partial = page_partial(l, pg), names = has_names(c), dec = has_dec_keys(c);
    mota_cbor_enc_init(&e, out, cap);
    mota_cbor_put_map(&e, 13u + (p->name != NULL) + (c->device_id_len > 0) + names + partial + dec);
    mota_cbor_put_uint(&e, MOTA_INFO_NAME);
    mota_cbor_put_tstr(&e, l->name);
    mota_cbor_put_uint(&e, MOTA_INFO_PROTOCOL);
    mota_cbor_put_uint(&e, MOTA_PROTO_VERSION);
    mota_cbor_put_uint(&e, MOTA_INFO_PAYLOAD);
    mota_cbor_put_uint(&e, l->max_payload);
    mota_cbor_put_uint(&e, MOTA_INFO_WINDOW);
    mota_cbor_put_uint(&e, mota_link_window(l));
    mota_cbor_put_uint(&e, MOTA_INFO_IDENTITY);
    mota_cbor_put_array(&e, 2);
    mota_cbor_put_bstr(&e, c->vendor_id, 16);
    mota_cbor_put_bstr(&e, c->class_id, 16);
    mota_cbor_put_uint(&e, MOTA_INFO_PROFILE); /* the profile compatibility is checked against */
    put_profile(&e, p, l->agent->key_floor);
    mota_cbor_put_uint(&e, MOTA_INFO_MODELS);
    put_models(&e, l, pg);
    mota_cbor_put_uint(&e, MOTA_INFO_PROVISIONED); /* provisioned: any trusted key */
    mota_cbor_put_bool(&e, c->n_keys > 0);
    mota_cbor_put_uint(&e, MOTA_INFO_RESET_CAUSE); /* why this boot happened */
    mota_cbor_put_uint(&e, l->agent->reset_cause);
    mota_cbor_put_uint(&e, MOTA_INFO_HEAD_MAX); /* the largest container head it takes */
    mota_cbor_put_uint(&e, c->scratch_size);
    if (p->name != NULL) {
        mota_cbor_put_uint(&e, MOTA_INFO_PROFILE_NAME); /* the profile's name */
        mota_cbor_put_tstr(&e, p->name);
    }
    mota_cbor_put_uint(
        &e, MOTA_INFO_IO_BUFFER); /* the I/O buffer for invoke's INPUT, RUN and OUTPUT (0: cannot run models) */
    mota_cbor_put_uint(
        &e, MOTA_FEATURE_INVOKE && c->port->infer != NULL && c->selftest_buf != NULL ? c->selftest_buf_size : 0);
    mota_cbor_put_uint(&e, MOTA_INFO_TRIAL_BOOTS); /* boots a model on trial gets before it is reverted: "boots left" */
    mota_cbor_put_uint(&e, c->max_trial_boots ? c->max_trial_boots : 3);
    if (c->device_id_len > 0) { /* which device this is (an STM32's UID): never left out, at most 18 bytes */
        mota_cbor_put_uint(&e, MOTA_INFO_DEVICE_ID);
        mota_cbor_put_bstr(&e, c->device_id, c->device_id_len);
    }
    if (names)
        put_names(&e, c);
    if (partial)
        put_models_from(&e, l, pg, MOTA_INFO_MODELS_FROM);
    mota_cbor_put_uint(&e, MOTA_INFO_FEATURES); /* what this build can take (mota/features.h) */
    mota_cbor_put_uint(&e, mota_features_built());
    if (dec)
        put_dec_keys(&e, &c->enc);
    return e.err ? 0 : e.len;
}

size_t mota_link_status_info(struct mota_link *l, uint8_t *out, size_t cap, const struct mota_link_page *pg)
{
    struct mota_cbor_enc e;
    const uint8_t *dev_pub = l->agent->cfg->enc.device_pub; /* its public point: `mota getpub --device` */
    bool partial = page_partial(l, pg);
    mota_cbor_enc_init(&e, out, cap);
    const struct mota_agent_timing *t = &l->agent->timing;
    mota_cbor_put_map(&e, 5u + partial + (dev_pub != NULL));
    mota_cbor_put_uint(&e, MOTA_STATUS_MODELS);
    put_models(&e, l, pg);
    mota_cbor_put_uint(&e, MOTA_STATUS_COUNTERS);
    mota_cbor_put_array(&e, MOTA_STATUS_COUNTER_ITEMS);
    mota_cbor_put_uint(&e, l->df.frames);
    mota_cbor_put_uint(&e, l->df.bad_crc);
    mota_cbor_put_uint(&e, l->df.bad_cobs + l->df.runts);
    mota_cbor_put_uint(&e, l->df.oversize);
    mota_cbor_put_uint(&e, l->responses);
    mota_cbor_put_uint(&e, l->replays);
    mota_cbor_put_uint(&e, MOTA_STATUS_RESULT);
    mota_cbor_put_int(&e, l->last_result);
    mota_cbor_put_uint(&e, MOTA_STATUS_TIMING); /* where the last update's time went */
    mota_cbor_put_array(&e, MOTA_STATUS_TIMING_ITEMS);
    mota_cbor_put_uint(&e, t->check_us);
    mota_cbor_put_uint(&e, t->erase_us);
    mota_cbor_put_uint(&e, t->digest_us);
    mota_cbor_put_uint(&e, t->install_us);
    mota_cbor_put_uint(&e, t->selftest_us);
    mota_cbor_put_uint(&e, t->verdict_us);
    mota_cbor_put_uint(&e, t->digest_bytes);
    mota_cbor_put_uint(&e, MOTA_STATUS_UPTIME); /* uptime in ms: how long ago a model's last error (key 16) happened */
    mota_cbor_put_uint(&e, mota_link_now_ms(l));
    if (partial)
        put_models_from(&e, l, pg, MOTA_STATUS_MODELS_FROM);
    if (dev_pub != NULL) {
        mota_cbor_put_uint(&e, MOTA_STATUS_DEVICE_KEY);
        mota_cbor_put_bstr(&e, dev_pub, MOTA_P256_PUB_LEN);
    }
    return e.err ? 0 : e.len;
}

#if MOTA_FEATURE_ERRLOG
/* ERRORS: the recent errors, oldest first, [code, model, ms since boot] each. */
int mota_link_errors_body(const struct mota_link *l, uint8_t *out, size_t cap, size_t *len)
{
    struct mota_cbor_enc e;
    mota_cbor_enc_init(&e, out, cap);
    mota_cbor_put_array(&e, l->n_errors);
    for (unsigned i = 0; i < l->n_errors; i++) {
        const struct mota_link_error *er =
            &l->errors[(l->next_error + MOTA_LINK_ERRORS - l->n_errors + i) % MOTA_LINK_ERRORS];
        mota_cbor_put_array(&e, 3);
        mota_cbor_put_int(&e, er->code);
        mota_cbor_put_uint(&e, er->model);
        mota_cbor_put_uint(&e, er->at_ms);
    }
    *len = e.len;
    return e.err ? MOTA_ERR_INTERNAL : MOTA_OK;
}
#endif /* MOTA_FEATURE_ERRLOG */
