/* SUIT envelope / COSE_Sign1 / manifest decoding for the mota container. */
#include "mota/container.h"

#include "mota/cbor.h"
#include "mota/err.h"
#include "mota/decompress.h"
#include "mota/suit_keys.h"

#include <string.h>

/* Encoded component identifiers of the three roles: [h'...'] */
static const uint8_t id_code[] = {0x81, 0x44, 'c', 'o', 'd', 'e'};
static const uint8_t id_params[] = {0x81, 0x46, 'p', 'a', 'r', 'a', 'm', 's'};
static const uint8_t id_selftest[] = {0x81, 0x48, 's', 'e', 'l', 'f', 't', 'e', 's', 't'};

enum mota_component_role mota_component_role_of(const uint8_t *id, size_t id_len)
{
    if (id_len == sizeof(id_code) && memcmp(id, id_code, id_len) == 0)
        return MOTA_COMPONENT_CODE;
    if (id_len == sizeof(id_params) && memcmp(id, id_params, id_len) == 0)
        return MOTA_COMPONENT_PARAMS;
    if (id_len == sizeof(id_selftest) && memcmp(id, id_selftest, id_len) == 0)
        return MOTA_COMPONENT_SELFTEST;
    return MOTA_COMPONENT_OTHER;
}

const char *mota_component_payload_name(enum mota_component_role role)
{
    switch (role) {
    case MOTA_COMPONENT_CODE: return "#code";
    case MOTA_COMPONENT_PARAMS: return "#params";
    case MOTA_COMPONENT_SELFTEST: return "#selftest";
    default: return NULL;
    }
}

const char *mota_component_name(enum mota_component_role role)
{
    switch (role) {
    case MOTA_COMPONENT_CODE: return "code";
    case MOTA_COMPONENT_PARAMS: return "params";
    case MOTA_COMPONENT_SELFTEST: return "selftest";
    default: return "other";
    }
}

void mota_trusted_key_set(struct mota_trusted_key *k, const uint8_t pub[MOTA_P256_PUB_LEN])
{
    memcpy(k->pub, pub, MOTA_P256_PUB_LEN);
    mota_key_id(pub, k->kid);
}

/* A field of the wrong type is refused with the field's own reason: the type error of this read is
 * renamed, never an earlier error (the decoder keeps the first). */
static int field(struct mota_cbor_dec *d, int was, int err)
{
    if (was == 0 && d->err == MOTA_ERR_CBOR_TYPE)
        d->err = err;
    return d->err;
}
#define FIELD(d, read, reason)                                                                              \
    do {                                                                                                    \
        int was_ = (d)->err;                                                                                \
        (void)(read);                                                                                       \
        field((d), was_, (reason));                                                                         \
    } while (0)

/* The next item is a bstr wrapping CBOR ("bstr .cbor X"): inner decodes its content. */
static int open_wrapped(struct mota_cbor_dec *d, struct mota_cbor_dec *inner)
{
    const uint8_t *p;
    size_t len;
    mota_cbor_get_bstr(d, &p, &len);
    mota_cbor_dec_init(inner, p, len);
    return d->err;
}

/* SUIT_Digest = [ -16, bstr .size 32 ] */
static int decode_digest(struct mota_cbor_dec *d, uint8_t out[MOTA_SHA256_LEN])
{
    size_t n;
    int64_t alg;
    const uint8_t *p;
    size_t len;
    mota_cbor_get_array(d, &n);
    if (n != 2)
        mota_cbor_fail(d, n < 2 ? MOTA_ERR_DIGEST_LEN : MOTA_ERR_CBOR_TOO_LARGE);
    mota_cbor_get_int(d, &alg);
    if (alg != MOTA_SUIT_DIGEST_SHA256)
        mota_cbor_fail(d, MOTA_ERR_DIGEST_ALG);
    mota_cbor_get_bstr(d, &p, &len);
    if (len != MOTA_SHA256_LEN)
        mota_cbor_fail(d, MOTA_ERR_DIGEST_LEN);
    if (d->err == 0)
        memcpy(out, p, MOTA_SHA256_LEN);
    return d->err;
}

/*
 * Labels met so far in one COSE_Sign1's headers, as their encoded bytes
 * (slices of the input): RFC 9052 section 3 forbids a label twice in a map
 * and a label in both maps, and a text label that repeats is not caught by
 * the integer keys' order check.
 */
struct cose_labels {
    const uint8_t *enc[16]; /* two maps of at most 8 pairs */
    size_t len[16];
    size_t n, n_protected;
};

/* One label's value: alg, crit and kid are ours; other labels are skipped. */
static void decode_cose_label(struct mota_cbor_dec *d, int64_t label, bool is_protected, struct mota_auth_block *b)
{
    int64_t alg;
    const uint8_t *kid;
    size_t kid_len;
    switch (label) {
    case MOTA_COSE_LABEL_ALG:
        if (!is_protected) /* the algorithm must be integrity protected */
            mota_cbor_fail(d, MOTA_ERR_COSE_ALG);
        FIELD(d, mota_cbor_get_int(d, &alg), MOTA_ERR_COSE_ALG);
        b->alg = (int)(alg >= -100 && alg <= 100 ? alg : 0);
        break;
    case MOTA_COSE_LABEL_CRIT: /* we understand no extension parameter, so any entry is fatal */
        mota_cbor_fail(d, MOTA_ERR_COSE_CRIT);
        break;
    case MOTA_COSE_LABEL_KID:
        FIELD(d, mota_cbor_get_bstr(d, &kid, &kid_len), MOTA_ERR_COSE_KID);
        if (kid_len == 0 || kid_len > 32)
            mota_cbor_fail(d, MOTA_ERR_COSE_KID);
        if (d->err == 0) {
            b->kid = kid;
            b->kid_len = kid_len;
        }
        break;
    default:
        mota_cbor_skip(d);
        break;
    }
}

/* Protected or unprotected COSE header map (RFC 9052 section 3). */
static int decode_cose_header(struct mota_cbor_dec *d, bool is_protected, struct mota_auth_block *b,
                              struct cose_labels *seen)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    mota_cbor_get_map(d, &n);
    if (n > 8)
        mota_cbor_fail(d, MOTA_ERR_CBOR_TOO_LARGE);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        struct mota_cbor_item it;
        mota_cbor_peek(d, &it);
        /* label = int / tstr (RFC 9052 section 1.5) */
        if (it.type != MOTA_CBOR_UINT && it.type != MOTA_CBOR_NINT && it.type != MOTA_CBOR_TSTR)
            mota_cbor_fail(d, MOTA_ERR_CBOR_TYPE);
        for (size_t k = 0; k < seen->n && d->err == 0; k++) {
            if (seen->len[k] == it.size && memcmp(seen->enc[k], it.start, it.size) == 0)
                mota_cbor_fail(d, k < seen->n_protected && !is_protected ? MOTA_ERR_COSE_DUP_LABEL
                                                                         : MOTA_ERR_CBOR_DUP_KEY);
        }
        if (d->err != 0)
            break;
        seen->enc[seen->n] = it.start;
        seen->len[seen->n++] = it.size;
        if (it.type == MOTA_CBOR_TSTR) { /* text labels are legal COSE but never ours: skip key and value */
            mota_cbor_skip(d);
            mota_cbor_skip(d);
            continue;
        }
        mota_cbor_get_int_key(d, &key, &prev);
        if (d->err == 0)
            decode_cose_label(d, key, is_protected, b);
    }
    if (is_protected)
        seen->n_protected = seen->n;
    return mota_cbor_finish(d);
}

/* A tagged item whose tag must be `want`, else `err` (also when the item is not tagged at all). */
static void expect_tag(struct mota_cbor_dec *d, uint64_t want, int err)
{
    struct mota_cbor_item it;
    uint64_t tag;
    mota_cbor_peek(d, &it);
    if (it.type != MOTA_CBOR_TAG)
        mota_cbor_fail(d, err);
    mota_cbor_get_tag(d, &tag);
    if (tag != want)
        mota_cbor_fail(d, err);
}

/* COSE_Sign1_Tagged = #6.18([ bstr .cbor hdr, hdr, nil, bstr ]) */
static int decode_sign1(const uint8_t *buf, size_t len, struct mota_auth_block *b)
{
    struct mota_cbor_dec d, hdr;
    size_t n, sig_len;
    struct mota_cbor_item it;
    struct cose_labels seen = {.n = 0};

    memset(b, 0, sizeof(*b));
    mota_cbor_dec_init(&d, buf, len);
    expect_tag(&d, MOTA_COSE_TAG_SIGN1, MOTA_ERR_COSE_TAG);
    mota_cbor_get_array(&d, &n);
    if (n != 4)
        mota_cbor_fail(&d, MOTA_ERR_CBOR_TYPE);
    mota_cbor_get_bstr(&d, &b->protected_hdr, &b->protected_len);
    if (b->protected_len > 128)
        mota_cbor_fail(&d, MOTA_ERR_CBOR_TOO_LARGE);
    if (d.err == 0) {
        mota_cbor_dec_init(&hdr, b->protected_hdr, b->protected_len);
        mota_cbor_fail(&d, decode_cose_header(&hdr, true, b, &seen));
    }
    size_t unprot_start = d.pos;
    mota_cbor_skip(&d);
    if (d.err == 0) {
        mota_cbor_dec_init(&hdr, buf + unprot_start, d.pos - unprot_start);
        mota_cbor_fail(&d, decode_cose_header(&hdr, false, b, &seen));
    }
    mota_cbor_peek(&d, &it);
    if (it.type != MOTA_CBOR_NULL)
        mota_cbor_fail(&d, MOTA_ERR_COSE_PAYLOAD);
    mota_cbor_get_null(&d);
    mota_cbor_get_bstr(&d, &b->sig, &sig_len);
    if (mota_cbor_finish(&d) != 0)
        return d.err;
    if (b->alg != MOTA_COSE_ALG_ES256 && b->alg != MOTA_COSE_ALG_ESP256)
        return MOTA_ERR_COSE_ALG;
    /* an empty signature is a block `mota pack --unsigned` left for `mota sign`: well formed, never
     * authentic (mota_envelope_authenticate refuses it with its own reason) */
    if (sig_len == 0) {
        b->sig = NULL;
        b->no_sig = true;
        return 0;
    }
    if (sig_len != MOTA_P256_SIG_LEN)
        return MOTA_ERR_COSE_SIG_LEN;
    return 0;
}

/* SUIT_Authentication = [ bstr .cbor SUIT_Digest, + bstr .cbor COSE_Sign1_Tagged ] */
static int decode_auth(const uint8_t *buf, size_t len, struct mota_envelope *env)
{
    struct mota_cbor_dec d, dd;
    size_t n;

    mota_cbor_dec_init(&d, buf, len);
    mota_cbor_get_array(&d, &n);
    if (n < 1)
        mota_cbor_fail(&d, MOTA_ERR_CBOR_TYPE);
    if (n < 2)
        mota_cbor_fail(&d, MOTA_ERR_AUTH_NO_BLOCK);
    if (n - 1 > MOTA_CONTAINER_MAX_AUTH_BLOCKS)
        mota_cbor_fail(&d, MOTA_ERR_AUTH_TOO_MANY);
    mota_cbor_get_bstr(&d, &env->digest_enc, &env->digest_enc_len);
    if (d.err != 0)
        return d.err;
    mota_cbor_dec_init(&dd, env->digest_enc, env->digest_enc_len);
    decode_digest(&dd, env->digest);
    if (mota_cbor_finish(&dd) != 0)
        return dd.err;
    env->n_blocks = n - 1;
    for (size_t i = 0; i < env->n_blocks && d.err == 0; i++) {
        const uint8_t *blk;
        size_t blk_len;
        if (mota_cbor_get_bstr(&d, &blk, &blk_len) == 0)
            mota_cbor_fail(&d, decode_sign1(blk, blk_len, &env->blocks[i]));
    }
    return mota_cbor_finish(&d);
}

/* A declared byte-string length over its limit is refused from the head
 * alone, before waiting for (or reading) the content it announces. */
static int check_declared(struct mota_cbor_dec *d, size_t limit)
{
    unsigned major;
    uint64_t arg;
    size_t hl;
    if (d->err == 0 && d->pos < d->len &&
        mota_cbor_head(d->buf + d->pos, d->len - d->pos, &major, &arg, &hl) == 0 && major == 2 && arg > limit)
        mota_cbor_fail(d, MOTA_ERR_ENV_TOO_LARGE);
    return d->err;
}

/* The envelope's next integer key; `missing` when the next item is not one (or there is none). */
static int64_t envelope_key(struct mota_cbor_dec *d, int64_t *prev, int missing)
{
    struct mota_cbor_item it;
    int64_t key;
    mota_cbor_peek(d, &it);
    if (it.type != MOTA_CBOR_UINT && it.type != MOTA_CBOR_NINT)
        mota_cbor_fail(d, missing);
    mota_cbor_get_int_key(d, &key, prev);
    return key;
}

int mota_envelope_decode(const uint8_t *buf, size_t len, struct mota_envelope *env)
{
    struct mota_cbor_dec d;
    struct mota_cbor_item it;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    const uint8_t *auth;
    size_t auth_len;

    if (buf == NULL || env == NULL)
        return MOTA_ERR_ARG;
    memset(env, 0, sizeof(*env));
    mota_cbor_dec_init(&d, buf, len);
    expect_tag(&d, MOTA_SUIT_TAG_ENVELOPE, MOTA_ERR_ENV_TAG);
    mota_cbor_peek(&d, &it);
    if (it.type != MOTA_CBOR_MAP)
        mota_cbor_fail(&d, MOTA_ERR_CBOR_TYPE);
    n = (size_t)it.val;
    d.pos += it.size;
    if (n > 2 + MOTA_CONTAINER_MAX_COMPONENTS)
        mota_cbor_fail(&d, MOTA_ERR_CBOR_TOO_LARGE);

    /* Authentication wrapper first (SUIT requires it before the manifest). */
    if (n < 1)
        mota_cbor_fail(&d, MOTA_ERR_ENV_NO_AUTH);
    key = envelope_key(&d, &prev, MOTA_ERR_ENV_NO_AUTH);
    if (key != MOTA_ENV_AUTH)
        mota_cbor_fail(&d, key == MOTA_ENV_MANIFEST ? MOTA_ERR_ENV_NO_AUTH : MOTA_ERR_ENV_UNKNOWN_KEY);
    check_declared(&d, MOTA_CONTAINER_MAX_AUTH);
    if (mota_cbor_get_bstr(&d, &auth, &auth_len) == 0)
        mota_cbor_fail(&d, decode_auth(auth, auth_len, env));

    /* Manifest second. */
    if (n < 2)
        mota_cbor_fail(&d, MOTA_ERR_ENV_NO_MANIFEST);
    key = envelope_key(&d, &prev, MOTA_ERR_ENV_NO_MANIFEST);
    if (key != MOTA_ENV_MANIFEST)
        mota_cbor_fail(&d, key < MOTA_ENV_MANIFEST ? MOTA_ERR_ENV_UNKNOWN_KEY : MOTA_ERR_ENV_NO_MANIFEST);
    check_declared(&d, MOTA_CONTAINER_MAX_MANIFEST);
    env->manifest_wrapped = buf + d.pos;
    mota_cbor_get_bstr(&d, &env->manifest, &env->manifest_len);
    env->manifest_wrapped_len = (size_t)(buf + d.pos - env->manifest_wrapped);
    env->head_len = d.pos;
    env->n_payloads = n - 2;
    return d.err;
}

/* Sig_structure = [ "Signature1", protected, h'', payload ] */
int mota_sig_structure(const struct mota_envelope *env, const struct mota_auth_block *b, uint8_t *out, size_t cap,
                       size_t *len)
{
    struct mota_cbor_enc e;
    if (env == NULL || b == NULL || out == NULL || len == NULL)
        return MOTA_ERR_ARG;
    mota_cbor_enc_init(&e, out, cap);
    mota_cbor_put_array(&e, 4);
    mota_cbor_put_tstr(&e, "Signature1");
    mota_cbor_put_bstr(&e, b->protected_hdr, b->protected_len);
    mota_cbor_put_bstr(&e, NULL, 0);
    mota_cbor_put_bstr(&e, env->digest_enc, env->digest_enc_len);
    if (e.err != 0)
        return MOTA_ERR_CBOR_TOO_LARGE;
    *len = e.len;
    return MOTA_OK;
}

static int sig_structure_hash(const struct mota_envelope *env, const struct mota_auth_block *b,
                              uint8_t hash[MOTA_SHA256_LEN])
{
    uint8_t buf[MOTA_SIG_STRUCTURE_MAX];
    size_t len;
    int ret = mota_sig_structure(env, b, buf, sizeof(buf), &len);
    if (ret != MOTA_OK)
        return ret;
    mota_sha256(buf, len, hash);
    return MOTA_OK;
}

int mota_envelope_authenticate(const struct mota_envelope *env, const struct mota_trusted_key *keys,
                               size_t n_keys, size_t *key_index)
{
    int ret = MOTA_ERR_SIGNATURE;
    uint8_t md[MOTA_SHA256_LEN], hash[MOTA_SHA256_LEN];
    bool any_known = false, any_signed = false;

    if (env == NULL || (keys == NULL && n_keys > 0))
        return MOTA_ERR_ARG;
    /* Digest before signature: the cheap check first, both must pass. */
    mota_sha256(env->manifest_wrapped, env->manifest_wrapped_len, md);
    if (mota_ct_memcmp(md, env->digest, MOTA_SHA256_LEN) != 0)
        return MOTA_ERR_MANIFEST_DIGEST;
    if (env->n_blocks == 0)
        return MOTA_ERR_AUTH_NO_BLOCK;

    for (size_t b = 0; b < env->n_blocks; b++) {
        const struct mota_auth_block *blk = &env->blocks[b];
        if (blk->no_sig)
            continue; /* nothing to verify, and never a pass */
        any_signed = true;
        int r = sig_structure_hash(env, blk, hash);
        if (r != MOTA_OK)
            return r;
        for (size_t k = 0; k < n_keys; k++) {
            if (blk->kid != NULL &&
                (blk->kid_len != MOTA_KEY_ID_LEN || memcmp(blk->kid, keys[k].kid, MOTA_KEY_ID_LEN) != 0))
                continue;
            any_known = true;
            r = mota_ecdsa_p256_verify(keys[k].pub, hash, blk->sig);
            if (r == MOTA_OK) {
                if (key_index != NULL)
                    *key_index = k;
                return MOTA_OK;
            }
            if (r != MOTA_ERR_SIGNATURE)
                return r;
        }
    }
    ret = !any_signed ? MOTA_ERR_UNSIGNED : any_known ? MOTA_ERR_SIGNATURE : MOTA_ERR_KEY_UNKNOWN;
    return ret;
}

/* ---- manifest ---- */

struct seq_state {
    struct mota_manifest *m;
    uint8_t selected; /* bitmask of selected components */
    int which;        /* manifest key of the sequence being run */
};

/* One parameter's value, checked; it is stored by set_param. */
struct param {
    const uint8_t *p;
    size_t len;
    uint64_t size;
    uint8_t digest[MOTA_SHA256_LEN];
    uint64_t z_alg, z_block, z_size; /* mota-parameter-compression */
};

/* mota-parameter-compression: bstr .cbor {1: algorithm, 2: block, 3: size, 4: digest}, all four,
 * in order (values are checked against the image by the profile) */
static void decode_compression(struct mota_cbor_dec *d, struct param *v)
{
    struct mota_cbor_dec dd;
    size_t n = 0;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    mota_cbor_get_bstr(d, &v->p, &v->len);
    if (d->err != 0)
        return;
    mota_cbor_dec_init(&dd, v->p, v->len);
    mota_cbor_get_map(&dd, &n);
    if (dd.err == 0 && n != 4)
        mota_cbor_fail(&dd, MOTA_ERR_COMPRESSION_INFO);
    for (size_t i = 0; i < n && dd.err == 0; i++) {
        mota_cbor_get_int_key(&dd, &key, &prev);
        switch (key) {
        case MOTA_Z_ALG: mota_cbor_get_uint(&dd, &v->z_alg); break;
        case MOTA_Z_BLOCK: mota_cbor_get_uint(&dd, &v->z_block); break;
        case MOTA_Z_SIZE: mota_cbor_get_uint(&dd, &v->z_size); break;
        case MOTA_Z_DIGEST: decode_digest(&dd, v->digest); break;
        default: mota_cbor_fail(&dd, MOTA_ERR_COMPRESSION_INFO); break;
        }
    }
    mota_cbor_fail(d, mota_cbor_finish(&dd));
}

static void decode_param(struct mota_cbor_dec *d, int64_t key, struct param *v)
{
    struct mota_cbor_dec dd;
    switch (key) {
    case MOTA_PAR_VENDOR:
    case MOTA_PAR_CLASS:
        mota_cbor_get_bstr(d, &v->p, &v->len);
        if (v->len != 16)
            mota_cbor_fail(d, MOTA_ERR_CBOR_TYPE);
        break;
    case MOTA_PAR_DIGEST:
        mota_cbor_get_bstr(d, &v->p, &v->len);
        if (d->err == 0) {
            mota_cbor_dec_init(&dd, v->p, v->len);
            decode_digest(&dd, v->digest);
            mota_cbor_fail(d, mota_cbor_finish(&dd));
        }
        break;
    case MOTA_PAR_SIZE:
        mota_cbor_get_uint(d, &v->size);
        break;
    case MOTA_PAR_URI:
        mota_cbor_get_tstr(d, (const char **)&v->p, &v->len);
        if (d->err == 0 && (v->len < 2 || v->len > MOTA_CONTAINER_MAX_PAYLOAD_NAME || v->p[0] != '#'))
            mota_cbor_fail(d, MOTA_ERR_URI);
        break;
    case MOTA_PAR_COMPRESSION:
        decode_compression(d, v);
        break;
    default:
        mota_cbor_fail(d, MOTA_ERR_PARAM_UNSUPPORTED);
        break;
    }
}

/* set-parameters keeps what a component has; override-parameters replaces it */
static void set_param(struct mota_component *comp, int64_t key, const struct param *v, bool override)
{
    switch (key) {
    case MOTA_PAR_VENDOR:
        if (override || !comp->has_vendor) {
            memcpy(comp->vendor_id, v->p, 16);
            comp->has_vendor = true;
        }
        break;
    case MOTA_PAR_CLASS:
        if (override || !comp->has_class) {
            memcpy(comp->class_id, v->p, 16);
            comp->has_class = true;
        }
        break;
    case MOTA_PAR_DIGEST:
        if (override || !comp->has_digest) {
            memcpy(comp->digest, v->digest, MOTA_SHA256_LEN);
            comp->has_digest = true;
        }
        break;
    case MOTA_PAR_SIZE:
        if (override || !comp->has_size) {
            comp->size = v->size;
            comp->has_size = true;
        }
        break;
    case MOTA_PAR_COMPRESSION:
        if (override || !comp->compressed) {
            comp->compressed = true;
            comp->z_alg = v->z_alg > 0xFFFFu ? 0xFFFFu : (uint32_t)v->z_alg; /* the profile refuses both */
            comp->z_block = v->z_block > 0xFFFFFFFFu ? 0 : (uint32_t)v->z_block;
            comp->z_size = v->z_size;
            memcpy(comp->z_digest, v->digest, MOTA_SHA256_LEN);
        }
        break;
    default: /* MOTA_PAR_URI */
        if (override || !comp->has_uri) {
            comp->uri = (const char *)v->p;
            comp->uri_len = v->len;
            comp->has_uri = true;
        }
        break;
    }
}

static int decode_params(struct mota_cbor_dec *d, struct seq_state *st, bool override)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    mota_cbor_get_map(d, &n);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        struct param v = {NULL, 0, 0, {0}, 0, 0, 0};
        mota_cbor_get_int_key(d, &key, &prev);
        decode_param(d, key, &v);
        for (size_t c = 0; c < st->m->n_components && d->err == 0; c++) {
            if (st->selected & (1u << c))
                set_param(&st->m->comp[c], key, &v, override);
        }
    }
    return d->err;
}

/* directive-set-component-index: an index, true (all) or an array of indices */
static void decode_set_index(struct mota_cbor_dec *d, struct seq_state *st)
{
    struct mota_cbor_item it;
    size_t n = st->m->n_components, k;
    uint64_t idx;
    mota_cbor_peek(d, &it);
    if (d->err != 0)
        return;
    if (it.type == MOTA_CBOR_TRUE || it.type == MOTA_CBOR_UINT) {
        d->pos += it.size;
        if (it.type == MOTA_CBOR_UINT && it.val >= n)
            mota_cbor_fail(d, MOTA_ERR_COMPONENT_INDEX);
        st->selected = (uint8_t)(it.type == MOTA_CBOR_TRUE ? (1u << n) - 1 : 1u << (it.val & 7));
    } else if (it.type == MOTA_CBOR_ARRAY) {
        mota_cbor_get_array(d, &k);
        if (k == 0 || k > MOTA_CONTAINER_MAX_COMPONENTS)
            mota_cbor_fail(d, MOTA_ERR_COMPONENT_INDEX);
        st->selected = 0;
        for (size_t j = 0; j < k && d->err == 0; j++) {
            mota_cbor_get_uint(d, &idx);
            if (idx >= n)
                mota_cbor_fail(d, MOTA_ERR_COMPONENT_INDEX);
            st->selected |= (uint8_t)(1u << (idx & 7));
        }
    } else {
        mota_cbor_fail(d, MOTA_ERR_CBOR_TYPE);
    }
}

/* A condition or directive on one selected component, in the sequence `which`. */
static int apply_command(struct mota_manifest *m, struct mota_component *comp, int64_t cmd, int which)
{
    switch (cmd) {
    case MOTA_SUIT_CMD_VENDOR:
        if (!comp->has_vendor)
            return MOTA_ERR_NO_VENDOR_CHECK;
        m->checks_vendor |= which == MOTA_MAN_COMMON;
        return 0;
    case MOTA_SUIT_CMD_CLASS:
        if (!comp->has_class)
            return MOTA_ERR_NO_CLASS_CHECK;
        m->checks_class |= which == MOTA_MAN_COMMON;
        return 0;
    case MOTA_SUIT_CMD_IMAGE_MATCH:
        if (!comp->has_digest || !comp->has_size)
            return MOTA_ERR_IMAGE_PARAMS;
        comp->image_match |= which == MOTA_MAN_VALIDATE;
        return 0;
    case MOTA_SUIT_CMD_FETCH:
        if (which != MOTA_MAN_INSTALL)
            return MOTA_ERR_COMMAND_UNSUPPORTED;
        if (!comp->has_uri)
            return MOTA_ERR_URI;
        comp->fetched = true;
        return 0;
    default: /* MOTA_SUIT_CMD_INVOKE */
        return which == MOTA_MAN_INVOKE ? 0 : MOTA_ERR_COMMAND_UNSUPPORTED;
    }
}

static int run_sequence(const uint8_t *buf, size_t len, struct mota_manifest *m, int which)
{
    struct mota_cbor_dec d;
    size_t n;
    struct seq_state st = {m, 1u, which};

    mota_cbor_dec_init(&d, buf, len);
    mota_cbor_get_array(&d, &n);
    if (n == 0 || n % 2 != 0)
        mota_cbor_fail(&d, MOTA_ERR_SEQUENCE_MALFORMED);
    for (size_t i = 0; i < n && d.err == 0; i += 2) {
        int64_t cmd;
        uint64_t policy;
        mota_cbor_get_int(&d, &cmd);
        if (d.err != 0)
            break;
        switch (cmd) {
        case MOTA_SUIT_CMD_SET_INDEX:
            decode_set_index(&d, &st);
            continue;
        case MOTA_SUIT_CMD_OVERRIDE_PARAMS:
        case MOTA_SUIT_CMD_SET_PARAMS:
            decode_params(&d, &st, cmd == MOTA_SUIT_CMD_OVERRIDE_PARAMS);
            continue;
        case MOTA_SUIT_CMD_VENDOR:
        case MOTA_SUIT_CMD_CLASS:
        case MOTA_SUIT_CMD_IMAGE_MATCH:
        case MOTA_SUIT_CMD_FETCH:
        case MOTA_SUIT_CMD_INVOKE:
            break;
        default:
            mota_cbor_fail(&d, MOTA_ERR_COMMAND_UNSUPPORTED);
            continue;
        }
        mota_cbor_get_uint(&d, &policy); /* conditions and directives take a reporting policy */
        for (size_t c = 0; c < m->n_components && d.err == 0; c++) {
            if (st.selected & (1u << c))
                mota_cbor_fail(&d, apply_command(m, &m->comp[c], cmd, which));
        }
    }
    return mota_cbor_finish(&d);
}

/* suit-components: [1*3 [* bstr]], each identifier once */
static void decode_components(struct mota_cbor_dec *d, struct mota_manifest *m)
{
    size_t nc, ne, pl;
    const uint8_t *p;
    mota_cbor_get_array(d, &nc);
    if (nc == 0 || nc > MOTA_CONTAINER_MAX_COMPONENTS)
        mota_cbor_fail(d, MOTA_ERR_COMPONENTS);
    if (d->err != 0)
        return;
    m->n_components = nc;
    for (size_t c = 0; c < nc && d->err == 0; c++) {
        size_t start = d->pos;
        mota_cbor_get_array(d, &ne);
        if (ne > 4)
            mota_cbor_fail(d, MOTA_ERR_COMPONENT_ID);
        for (size_t k = 0; k < ne && d->err == 0; k++) {
            mota_cbor_get_bstr(d, &p, &pl);
            if (pl > MOTA_CONTAINER_MAX_COMPONENT_ID)
                mota_cbor_fail(d, MOTA_ERR_COMPONENT_ID);
        }
        struct mota_component *comp = &m->comp[c];
        comp->id = d->buf + start;
        comp->id_len = d->pos - start;
        comp->role = mota_component_role_of(comp->id, comp->id_len);
        for (size_t o = 0; o < c && d->err == 0; o++) {
            if (m->comp[o].id_len == comp->id_len && memcmp(m->comp[o].id, comp->id, comp->id_len) == 0)
                mota_cbor_fail(d, MOTA_ERR_COMPONENT_ID);
        }
    }
}

static int decode_common(struct mota_cbor_dec *d, struct mota_manifest *m, const uint8_t **shared,
                         size_t *shared_len)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;

    mota_cbor_get_map(d, &n);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        mota_cbor_get_int_key(d, &key, &prev);
        if (d->err != 0)
            break;
        if (key == MOTA_COMMON_COMPONENTS)
            decode_components(d, m);
        else if (key == MOTA_COMMON_SHARED)
            mota_cbor_get_bstr(d, shared, shared_len);
        else
            mota_cbor_fail(d, MOTA_ERR_MANIFEST_UNKNOWN_KEY);
    }
    if (mota_cbor_finish(d) == 0 && m->n_components == 0)
        mota_cbor_fail(d, MOTA_ERR_COMPONENTS);
    return d->err;
}

/* A text of at most MOTA_CONTAINER_MAX_TEXT bytes; anything else is MOTA_ERR_TEXT. */
static void get_text(struct mota_cbor_dec *d, const char **s, size_t *n)
{
    FIELD(d, mota_cbor_get_tstr(d, s, n), MOTA_ERR_TEXT);
    if (*n > MOTA_CONTAINER_MAX_TEXT)
        mota_cbor_fail(d, MOTA_ERR_TEXT);
}

/* A text-map key in canonical order after the previous one (*prev, *prev_len: its encoding). */
static void text_key_order(struct mota_cbor_dec *d, size_t start, const uint8_t **prev, size_t *prev_len)
{
    if (d->err == 0 && *prev != NULL)
        mota_cbor_fail(d, mota_cbor_key_order(*prev, *prev_len, d->buf + start, d->pos - start));
    *prev = d->buf + start;
    *prev_len = d->pos - start;
}

/* A component's texts: { int => tstr }; those of the code component, in the first language, are kept. */
static void decode_component_text(struct mota_cbor_dec *d, struct mota_manifest *m, size_t id_start, bool use)
{
    const struct mota_component *comp = NULL;
    size_t nf, sl, id_len = d->pos - id_start;
    int64_t fk, fprev = MOTA_CBOR_KEY_NONE;
    const char *s;
    for (size_t c = 0; c < m->n_components; c++) { /* the identifier must name a component */
        if (m->comp[c].id_len == id_len && memcmp(m->comp[c].id, d->buf + id_start, id_len) == 0)
            comp = &m->comp[c];
    }
    if (comp == NULL)
        mota_cbor_fail(d, MOTA_ERR_COMPONENT_ID);
    FIELD(d, mota_cbor_get_map(d, &nf), MOTA_ERR_TEXT);
    for (size_t f = 0; f < nf && d->err == 0; f++) {
        mota_cbor_get_int_key(d, &fk, &fprev);
        get_text(d, &s, &sl);
        if (d->err != 0 || !use || comp->role != MOTA_COMPONENT_CODE)
            continue;
        if (fk == MOTA_CTEXT_VENDOR_NAME) {
            m->text.vendor_name = s;
            m->text.vendor_name_len = sl;
        } else if (fk == MOTA_CTEXT_MODEL_NAME) {
            m->text.model_name = s;
            m->text.model_name_len = sl;
        } else if (fk == MOTA_CTEXT_VERSION) {
            m->text.version = s;
            m->text.version_len = sl;
        }
    }
}

/* One language's texts: { int => tstr, * component-id => { int => tstr } } */
static void decode_language(struct mota_cbor_dec *d, struct mota_manifest *m, bool use)
{
    size_t ne, sl;
    const uint8_t *prev = NULL;
    size_t prev_len = 0;
    const char *s;
    FIELD(d, mota_cbor_get_map(d, &ne), MOTA_ERR_TEXT);
    for (size_t e = 0; e < ne && d->err == 0; e++) {
        struct mota_cbor_item it;
        size_t ks = d->pos;
        mota_cbor_peek(d, &it);
        if (d->err != 0)
            break;
        if (it.type == MOTA_CBOR_ARRAY)
            mota_cbor_skip(d);
        else if (it.type == MOTA_CBOR_UINT || it.type == MOTA_CBOR_NINT)
            d->pos += it.size;
        else
            mota_cbor_fail(d, MOTA_ERR_TEXT);
        text_key_order(d, ks, &prev, &prev_len);
        if (it.type == MOTA_CBOR_ARRAY) {
            decode_component_text(d, m, ks, use);
            continue;
        }
        get_text(d, &s, &sl);
        int64_t k = it.val > 0xFFFF ? 0 : it.type == MOTA_CBOR_UINT ? (int64_t)it.val : -1 - (int64_t)it.val;
        if (d->err == 0 && use && k == MOTA_TEXT_DESCRIPTION) {
            m->text.description = s;
            m->text.description_len = sl;
        } else if (d->err == 0 && use && k == MOTA_TEXT_CREATED) {
            m->text.created = s;
            m->text.created_len = sl;
        }
    }
}

/* SUIT_Text_Map = { + tag38-ltag => { int => tstr, * component-id => { int => tstr } } } */
static int decode_text(struct mota_cbor_dec *d, struct mota_manifest *m)
{
    size_t nl, lang_len;
    const uint8_t *prev_lang = NULL;
    size_t prev_lang_len = 0;
    const char *lang;

    FIELD(d, mota_cbor_get_map(d, &nl), MOTA_ERR_TEXT);
    if (nl == 0 || nl > 4)
        mota_cbor_fail(d, MOTA_ERR_TEXT);
    for (size_t l = 0; l < nl && d->err == 0; l++) {
        size_t kstart = d->pos;
        get_text(d, &lang, &lang_len);
        if (lang_len == 0 || lang_len > 35)
            mota_cbor_fail(d, MOTA_ERR_TEXT);
        text_key_order(d, kstart, &prev_lang, &prev_lang_len);
        decode_language(d, m, l == 0); /* report the first language */
    }
    if (mota_cbor_finish(d) == 0)
        m->has_text = true;
    return d->err;
}

/* Compatibility fields: a wrong type or a value out of range is MOTA_ERR_COMPAT_FIELD. */
static void get_u32(struct mota_cbor_dec *d, uint32_t *v, uint32_t max)
{
    uint64_t x;
    FIELD(d, mota_cbor_get_uint(d, &x), MOTA_ERR_COMPAT_FIELD);
    if (x > max)
        mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
    *v = d->err == 0 ? (uint32_t)x : 0;
}

static void get_flag(struct mota_cbor_dec *d, bool *v)
{
    FIELD(d, mota_cbor_get_bool(d, v), MOTA_ERR_COMPAT_FIELD);
}

static void get_size(struct mota_cbor_dec *d, uint64_t *v)
{
    FIELD(d, mota_cbor_get_uint(d, v), MOTA_ERR_COMPAT_FIELD);
    if (*v > 0xFFFFFFFFu) /* 32-bit address spaces */
        mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
}

static void get_name(struct mota_cbor_dec *d, const char **s, size_t *len, size_t min, size_t max)
{
    FIELD(d, mota_cbor_get_tstr(d, s, len), MOTA_ERR_COMPAT_FIELD);
    if (*len < min || *len > max)
        mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
}

/* an array of exactly n items, else MOTA_ERR_COMPAT_FIELD */
static void get_tuple(struct mota_cbor_dec *d, size_t n)
{
    size_t na;
    mota_cbor_get_array(d, &na);
    if (na != n)
        mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
}

static void decode_selftest(struct mota_cbor_dec *d, struct mota_selftest *t)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    unsigned seen = 0;
    FIELD(d, mota_cbor_get_map(d, &n), MOTA_ERR_SELFTEST_FIELD);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        mota_cbor_get_int_key(d, &key, &prev);
        if (d->err != 0)
            break;
        if (key == MOTA_SELFTEST_DIGEST) {
            FIELD(d, decode_digest(d, t->output_digest), MOTA_ERR_SELFTEST_FIELD);
        } else if (key == MOTA_SELFTEST_SIZE || key == MOTA_SELFTEST_LATENCY) {
            int was = d->err; /* any failure of these two reads is the field's */
            mota_cbor_get_uint(d, key == MOTA_SELFTEST_SIZE ? &t->output_size : &t->max_latency_us);
            if (was == 0 && d->err != 0)
                d->err = MOTA_ERR_SELFTEST_FIELD;
        } else if (key < 0) {
            mota_cbor_skip(d);
            continue;
        } else {
            mota_cbor_fail(d, MOTA_ERR_COMPAT_CRITICAL);
        }
        seen |= 1u << (key & 7);
    }
    if (seen != 0xEu || t->output_size == 0)
        mota_cbor_fail(d, MOTA_ERR_SELFTEST_FIELD);
    t->present = d->err == 0;
}

/* npu-epochs: [blocks, blob, hw, hybrid, sw, epochs / null, npu-epochs / null, hybrid-epochs, sw-epochs],
 * the counts agreeing with each other (informational, but signed: a wrong one is a wrong container) */
void mota_epoch_summary_get(struct mota_cbor_dec *d, struct mota_epoch_summary *s)
{
    struct mota_cbor_item it;
    uint32_t *counts[] = {&s->blocks, &s->blob, &s->hw, &s->hybrid, &s->sw};
    get_tuple(d, 9);
    for (size_t i = 0; i < 5; i++)
        get_u32(d, counts[i], MOTA_EPOCH_MAX_BLOCKS);
    mota_cbor_peek(d, &it);
    s->epochs_known = d->err == 0 && it.type != MOTA_CBOR_NULL;
    if (s->epochs_known) {
        get_u32(d, &s->epochs, 0xFFFFFFu);
        get_u32(d, &s->npu_epochs, 0xFFFFFFu);
    } else {
        FIELD(d, mota_cbor_get_null(d), MOTA_ERR_COMPAT_FIELD);
        FIELD(d, mota_cbor_get_null(d), MOTA_ERR_COMPAT_FIELD);
    }
    get_u32(d, &s->hybrid_epochs, MOTA_EPOCH_MAX_BLOCKS);
    get_u32(d, &s->sw_epochs, MOTA_EPOCH_MAX_BLOCKS);
    if (s->blob + s->hw + s->hybrid + s->sw != s->blocks || s->hybrid_epochs + s->sw_epochs > s->blocks ||
        (s->epochs_known && s->npu_epochs + s->hybrid_epochs + s->sw_epochs != s->epochs))
        mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
}

void mota_epoch_summary_put(struct mota_cbor_enc *e, const struct mota_epoch_summary *s)
{
    mota_cbor_put_array(e, 9);
    mota_cbor_put_uint(e, s->blocks);
    mota_cbor_put_uint(e, s->blob);
    mota_cbor_put_uint(e, s->hw);
    mota_cbor_put_uint(e, s->hybrid);
    mota_cbor_put_uint(e, s->sw);
    if (s->epochs_known) {
        mota_cbor_put_uint(e, s->epochs);
        mota_cbor_put_uint(e, s->npu_epochs);
    } else {
        mota_cbor_put_null(e);
        mota_cbor_put_null(e);
    }
    mota_cbor_put_uint(e, s->hybrid_epochs);
    mota_cbor_put_uint(e, s->sw_epochs);
}

/* One compatibility field by its key; unknown non-negative keys are requirements we cannot meet. */
static void decode_compat_field(struct mota_cbor_dec *d, int64_t key, struct mota_compat *c)
{
    switch (key) {
    case MOTA_COMPAT_RELOC:
        get_tuple(d, 2);
        get_u32(d, &c->reloc_major, 15);
        get_u32(d, &c->reloc_minor, 15);
        break;
    case MOTA_COMPAT_CPU: get_u32(d, &c->cpu_part, 0xFFF); break;
    case MOTA_COMPAT_FPU: get_flag(d, &c->fpu); break;
    case MOTA_COMPAT_ABI: get_u32(d, &c->float_abi, 2); break;
    case MOTA_COMPAT_SECURE: get_flag(d, &c->secure); break;
    case MOTA_COMPAT_DBG: get_flag(d, &c->dbg_info); break;
    case MOTA_COMPAT_ASYNC: get_flag(d, &c->async); break;
    case MOTA_COMPAT_TOOLCHAIN: get_u32(d, &c->toolchain, 15); break;
    case MOTA_COMPAT_RTVER:
        get_tuple(d, 3);
        get_u32(d, &c->rt_major, 255);
        get_u32(d, &c->rt_minor, 255);
        get_u32(d, &c->rt_micro, 255);
        c->has_runtime_version = true;
        break;
    case MOTA_COMPAT_CNAME: get_name(d, &c->c_name, &c->c_name_len, 1, 64); break;
    case MOTA_COMPAT_ACTS: get_size(d, &c->acts_size); break;
    case MOTA_COMPAT_PARAMS: get_size(d, &c->params_size); break;
    case MOTA_COMPAT_EXTRAM: get_size(d, &c->ext_ram_size); break;
    case MOTA_COMPAT_XIP: get_size(d, &c->exec_ram_xip); break;
    case MOTA_COMPAT_COPY: get_size(d, &c->exec_ram_copy); break;
    case MOTA_COMPAT_MODE:
        get_u32(d, &c->install_mode, 2);
        if (c->install_mode == 0)
            mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
        break;
    case MOTA_COMPAT_STRUCTS:
        get_u32(d, &c->struct_sizes, 0xFFFFFFFFu);
        c->has_struct_sizes = true;
        break;
    case MOTA_COMPAT_SELFTEST: decode_selftest(d, &c->selftest); break;
    case MOTA_COMPAT_RTDESC: get_name(d, &c->rt_desc, &c->rt_desc_len, 0, 128); break;
    case MOTA_COMPAT_EPOCHS:
        mota_epoch_summary_get(d, &c->epochs);
        c->has_epochs = d->err == 0;
        break;
    default:
        if (key >= 0)
            mota_cbor_fail(d, MOTA_ERR_COMPAT_CRITICAL); /* an unknown requirement: fail closed */
        else
            mota_cbor_skip(d); /* negative keys: optional hints */
        break;
    }
}

#define BIT(k) (1u << (k))
static int decode_compat(struct mota_cbor_dec *d, struct mota_compat *c)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    uint32_t seen = 0;
    const uint32_t required = BIT(MOTA_COMPAT_RELOC) | BIT(MOTA_COMPAT_CPU) | BIT(MOTA_COMPAT_FPU) |
                              BIT(MOTA_COMPAT_ABI) | BIT(MOTA_COMPAT_SECURE) | BIT(MOTA_COMPAT_DBG) |
                              BIT(MOTA_COMPAT_ASYNC) | BIT(MOTA_COMPAT_TOOLCHAIN) | BIT(MOTA_COMPAT_CNAME) |
                              BIT(MOTA_COMPAT_ACTS) | BIT(MOTA_COMPAT_PARAMS) | BIT(MOTA_COMPAT_EXTRAM) |
                              BIT(MOTA_COMPAT_XIP) | BIT(MOTA_COMPAT_COPY) | BIT(MOTA_COMPAT_MODE);

    FIELD(d, mota_cbor_get_map(d, &n), MOTA_ERR_COMPAT_FIELD);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        mota_cbor_get_int_key(d, &key, &prev);
        if (d->err != 0)
            break;
        decode_compat_field(d, key, c);
        if (key >= 0 && key < 32)
            seen |= BIT(key);
    }
    if (mota_cbor_finish(d) != 0)
        return d->err;
    if ((seen & required) != required || (c->reloc_major == 8 && !c->has_runtime_version))
        return mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
    return 0;
}

struct manifest_parts {
    const uint8_t *shared, *seqs[3]; /* the shared sequence; validate, install, invoke */
    size_t shared_len, seq_len[3];
    bool have_version, have_seq, have_common;
};

/* One manifest member; the sequences are kept to run once the whole manifest is read. */
static void decode_member(struct mota_cbor_dec *d, int64_t key, struct mota_manifest *m, struct manifest_parts *pt)
{
    struct mota_cbor_dec w;
    int slot = key == MOTA_MAN_VALIDATE ? 0 : key == MOTA_MAN_INSTALL ? 1 : 2;
    switch (key) {
    case MOTA_MAN_VERSION:
        FIELD(d, mota_cbor_get_uint(d, &m->version), MOTA_ERR_MANIFEST_VERSION);
        if (m->version != 1)
            mota_cbor_fail(d, MOTA_ERR_MANIFEST_VERSION);
        pt->have_version = true;
        break;
    case MOTA_MAN_SEQ:
        FIELD(d, mota_cbor_get_uint(d, &m->seq), MOTA_ERR_MANIFEST_SEQ);
        pt->have_seq = true;
        break;
    case MOTA_MAN_COMMON:
        if (open_wrapped(d, &w) == 0)
            mota_cbor_fail(d, decode_common(&w, m, &pt->shared, &pt->shared_len));
        pt->have_common = true;
        break;
    case MOTA_MAN_LOAD: /* run where it stands: nothing after it depends on it */
        if (open_wrapped(d, &w) == 0)
            mota_cbor_fail(d, pt->have_common ? run_sequence(w.buf, w.len, m, MOTA_MAN_LOAD)
                                              : MOTA_ERR_MANIFEST_NO_COMMON);
        m->has_load = true;
        break;
    case MOTA_MAN_VALIDATE:
    case MOTA_MAN_INSTALL:
    case MOTA_MAN_INVOKE:
        mota_cbor_get_bstr(d, &pt->seqs[slot], &pt->seq_len[slot]);
        break;
    case MOTA_MAN_TEXT:
        open_wrapped(d, &w);
        if (!pt->have_common)
            mota_cbor_fail(d, MOTA_ERR_MANIFEST_NO_COMMON);
        if (d->err == 0)
            mota_cbor_fail(d, decode_text(&w, m));
        break;
    case MOTA_MAN_COMPAT:
        if (open_wrapped(d, &w) == 0)
            mota_cbor_fail(d, decode_compat(&w, &m->compat));
        m->has_compat = d->err == 0;
        break;
    default:
        mota_cbor_fail(d, MOTA_ERR_MANIFEST_UNKNOWN_KEY);
        break;
    }
}

int mota_manifest_decode(const struct mota_envelope *env, struct mota_manifest *m)
{
    struct mota_cbor_dec d;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    struct manifest_parts pt;
    int ret;

    if (env == NULL || m == NULL)
        return MOTA_ERR_ARG;
    memset(m, 0, sizeof(*m));
    memset(&pt, 0, sizeof(pt));
    mota_cbor_dec_init(&d, env->manifest, env->manifest_len);
    mota_cbor_get_map(&d, &n);
    for (size_t i = 0; i < n && d.err == 0; i++) {
        mota_cbor_get_int_key(&d, &key, &prev);
        if (d.err == 0)
            decode_member(&d, key, m, &pt);
    }
    if (mota_cbor_finish(&d) != 0)
        return d.err;
    if (!pt.have_version)
        return MOTA_ERR_MANIFEST_VERSION;
    if (!pt.have_seq)
        return MOTA_ERR_MANIFEST_SEQ;
    if (!pt.have_common)
        return MOTA_ERR_MANIFEST_NO_COMMON;
    /* Shared sequence first, then the others in processing order. */
    if (pt.shared != NULL && (ret = run_sequence(pt.shared, pt.shared_len, m, MOTA_MAN_COMMON)) != 0)
        return ret;
    if (!m->checks_vendor)
        return MOTA_ERR_NO_VENDOR_CHECK;
    if (!m->checks_class)
        return MOTA_ERR_NO_CLASS_CHECK;
    static const int which[3] = {MOTA_MAN_VALIDATE, MOTA_MAN_INSTALL, MOTA_MAN_INVOKE};
    for (int s = 0; s < 3; s++) {
        if (pt.seqs[s] != NULL && (ret = run_sequence(pt.seqs[s], pt.seq_len[s], m, which[s])) != 0)
            return ret;
    }
    m->has_validate = pt.seqs[0] != NULL;
    m->has_install = pt.seqs[1] != NULL;
    m->has_invoke = pt.seqs[2] != NULL;
    return 0;
}

/* p moved from `from` to `to` if it points into the len bytes at `from` (integer compares: the two are
 * different objects) */
static const void *moved(const void *p, const uint8_t *from, size_t len, const uint8_t *to)
{
    uintptr_t a = (uintptr_t)p, f = (uintptr_t)from;
    return p != NULL && a >= f && a - f < len ? to + (a - f) : p;
}

void mota_manifest_rebase(struct mota_manifest *m, const uint8_t *from, size_t len, const uint8_t *to)
{
    for (size_t c = 0; c < m->n_components; c++) {
        m->comp[c].id = moved(m->comp[c].id, from, len, to);
        m->comp[c].uri = moved(m->comp[c].uri, from, len, to);
    }
    m->text.description = moved(m->text.description, from, len, to);
    m->text.created = moved(m->text.created, from, len, to);
    m->text.vendor_name = moved(m->text.vendor_name, from, len, to);
    m->text.model_name = moved(m->text.model_name, from, len, to);
    m->text.version = moved(m->text.version, from, len, to);
    m->compat.c_name = moved(m->compat.c_name, from, len, to);
    m->compat.rt_desc = moved(m->compat.rt_desc, from, len, to);
}

const struct mota_component *mota_manifest_find_payload(const struct mota_manifest *m, const char *name,
                                                        size_t name_len)
{
    for (size_t c = 0; c < m->n_components; c++) {
        const struct mota_component *comp = &m->comp[c];
        if (comp->has_uri && comp->fetched && comp->uri_len == name_len && memcmp(comp->uri, name, name_len) == 0)
            return comp;
    }
    return NULL;
}

/* What a device can decode: an algorithm it knows, blocks of a power of two bytes in range, a payload
 * no larger than the image stored block by block (and not empty). */
static bool compression_ok(const struct mota_component *c)
{
    uint32_t b = c->z_block, bound = mota_decompress_bound(c->z_alg, (uint32_t)c->size, b);
    return mota_decompress_known(c->z_alg) && b >= MOTA_DECOMP_MIN_BLOCK && b <= MOTA_DECOMP_MAX_BLOCK &&
           (b & (b - 1)) == 0 && c->z_size >= 2u && bound != 0 && c->z_size <= bound;
}

int mota_manifest_check_profile(const struct mota_manifest *m)
{
    bool have_code = false, have_params = false, have_selftest = false;
    if (!m->has_compat)
        return MOTA_ERR_COMPAT_MISSING;
    for (size_t c = 0; c < m->n_components; c++) {
        const struct mota_component *comp = &m->comp[c];
        const char *want = mota_component_payload_name(comp->role);
        if (comp->role == MOTA_COMPONENT_OTHER)
            return MOTA_ERR_COMPONENT_ID;
        if (!comp->has_digest || !comp->has_size || !comp->image_match)
            return MOTA_ERR_IMAGE_PARAMS;
        if (!comp->has_uri || !comp->fetched || comp->uri_len != strlen(want) ||
            memcmp(comp->uri, want, comp->uri_len) != 0)
            return MOTA_ERR_URI;
        have_code |= comp->role == MOTA_COMPONENT_CODE;
        have_params |= comp->role == MOTA_COMPONENT_PARAMS;
        have_selftest |= comp->role == MOTA_COMPONENT_SELFTEST;
        if (comp->size == 0 || comp->size > 0xFFFFFFFFu)
            return MOTA_ERR_PAYLOAD_SIZE;
        if (comp->compressed && !compression_ok(comp))
            return MOTA_ERR_COMPRESSION_INFO;
    }
    if (!have_code)
        return MOTA_ERR_COMPONENTS;
    if (m->compat.selftest.present != have_selftest)
        return MOTA_ERR_SELFTEST_FIELD;
    (void)have_params;
    return 0;
}

int mota_payload_head(const uint8_t *buf, size_t len, const char **name, size_t *name_len,
                      uint64_t *size, size_t *head_len)
{
    unsigned major;
    uint64_t arg;
    size_t hl, hl2;
    int ret;
    if ((ret = mota_cbor_head(buf, len, &major, &arg, &hl)) != 0)
        return ret;
    if (major != 3)
        return MOTA_ERR_ENV_UNKNOWN_KEY;
    if (arg == 0 || arg > MOTA_CONTAINER_MAX_PAYLOAD_NAME)
        return MOTA_ERR_CBOR_TOO_LARGE;
    if (len - hl < arg)
        return MOTA_ERR_CBOR_TRUNCATED;
    if (!mota_utf8_valid(buf + hl, (size_t)arg))
        return MOTA_ERR_CBOR_UTF8;
    *name = (const char *)buf + hl;
    *name_len = (size_t)arg;
    hl += (size_t)arg;
    if ((ret = mota_cbor_head(buf + hl, len - hl, &major, &arg, &hl2)) != 0)
        return ret;
    if (major != 2)
        return MOTA_ERR_CBOR_TYPE;
    *size = arg;
    *head_len = hl + hl2;
    return 0;
}

size_t mota_payload_head_size(enum mota_component_role role, uint64_t size)
{
    const char *name = mota_component_payload_name(role);
    if (name == NULL)
        return 0;
    size_t n = strlen(name); /* names are short: a one-byte tstr head */
    size_t bh = size < 24 ? 1 : size <= 0xFFu ? 2 : size <= 0xFFFFu ? 3 : size <= 0xFFFFFFFFu ? 5 : 9;
    return 1 + n + bh;
}

/* The integrated payloads after the head of a decoded container, with or without their digests. */
static int walk_payloads(const uint8_t *buf, size_t len, struct mota_verify_result *res, bool digests)
{
    int ret;
    const struct mota_manifest *m = &res->manifest;
    const char *prev_name = NULL;
    size_t prev_name_len = 0, pos = res->env.head_len;
    bool seen[MOTA_CONTAINER_MAX_COMPONENTS] = {false, false, false};

    res->mota_profile = m->has_compat || res->env.n_payloads > 0;
    if (res->mota_profile && (ret = mota_manifest_check_profile(m)) != 0)
        return ret;
    for (size_t i = 0; i < res->env.n_payloads; i++) {
        const char *name;
        size_t name_len, hl;
        uint64_t size;
        uint8_t md[MOTA_SHA256_LEN];
        if ((ret = mota_payload_head(buf + pos, len - pos, &name, &name_len, &size, &hl)) != 0)
            return ret;
        /* canonical order of the tstr keys, which also forbids repeats */
        if (prev_name != NULL &&
            mota_cbor_key_order((const uint8_t *)prev_name - 1, prev_name_len + 1,
                                (const uint8_t *)name - 1, name_len + 1) != 0)
            return MOTA_ERR_PAYLOAD_ORDER;
        prev_name = name;
        prev_name_len = name_len;
        const struct mota_component *comp = mota_manifest_find_payload(m, name, name_len);
        if (comp == NULL)
            return MOTA_ERR_PAYLOAD_UNKNOWN;
        if (size != mota_component_wire_size(comp))
            return MOTA_ERR_PAYLOAD_SIZE;
        if (size > len - pos - hl)
            return MOTA_ERR_CBOR_TRUNCATED;
        if (digests) {
            /* a compressed payload's own digest; its image's is mota_payload_expand's */
            mota_sha256(buf + pos + hl, (size_t)size, md);
            if (mota_ct_memcmp(md, comp->compressed ? comp->z_digest : comp->digest, MOTA_SHA256_LEN) != 0)
                return comp->compressed ? MOTA_ERR_DECOMP_DIGEST : MOTA_ERR_PAYLOAD_DIGEST;
            res->n_payloads_checked++;
        }
        seen[comp - m->comp] = true;
        pos += hl + (size_t)size;
    }
    if (pos != len)
        return MOTA_ERR_CBOR_TRAILING;
    for (size_t c = 0; res->mota_profile && c < m->n_components; c++) {
        if (!seen[c])
            return MOTA_ERR_PAYLOAD_MISSING;
    }
    return MOTA_OK;
}

int mota_container_check_payloads(const uint8_t *buf, size_t len, struct mota_verify_result *res)
{
    if (buf == NULL || res == NULL || res->env.head_len > len)
        return MOTA_ERR_ARG;
    return walk_payloads(buf, len, res, false);
}

int mota_container_verify(const uint8_t *buf, size_t len, const struct mota_trusted_key *keys,
                          size_t n_keys, struct mota_verify_result *res)
{
    int ret;
    if (buf == NULL || res == NULL)
        return MOTA_ERR_ARG;
    memset(res, 0, sizeof(*res));
    if ((ret = mota_envelope_decode(buf, len, &res->env)) != 0)
        return ret;
    if ((ret = mota_envelope_authenticate(&res->env, keys, n_keys, &res->key_index)) != 0)
        return ret;
    if ((ret = mota_manifest_decode(&res->env, &res->manifest)) != 0)
        return ret;
    return walk_payloads(buf, len, res, true);
}

int mota_payload_expand(const struct mota_component *c, const uint8_t *wire, size_t wire_len, uint8_t *out,
                        size_t cap)
{
    uint8_t md[MOTA_SHA256_LEN];
    if (c == NULL || !c->compressed || c->size > cap || c->size > 0xFFFFFFFFu || wire_len != c->z_size)
        return MOTA_ERR_ARG;
    struct mota_decompress d; /* host use: its 1.2 KiB of tables on the stack */
    int ret = mota_decompress_buffer(&d, c->z_alg, wire, wire_len, out, (uint32_t)c->size, c->z_block);
    if (ret != MOTA_OK)
        return ret;
    mota_sha256(out, (size_t)c->size, md);
    return mota_ct_memcmp(md, c->digest, MOTA_SHA256_LEN) == 0 ? MOTA_OK : MOTA_ERR_DECOMP_IMAGE_DIGEST;
}
