/* SUIT envelope / COSE_Sign1 / manifest decoding for the mota container. */
#include "mota/container.h"

#include "mota/cbor.h"
#include "mota/err.h"

#include <string.h>

#define ENV_KEY_AUTH 2
#define ENV_KEY_MANIFEST 3

enum {
    MAN_VERSION = 1, MAN_SEQ = 2, MAN_COMMON = 3, MAN_VALIDATE = 7, MAN_LOAD = 8, MAN_INVOKE = 9,
    MAN_INSTALL = 20, MAN_TEXT = 23,
};
enum { COMMON_COMPONENTS = 2, COMMON_SHARED = 4 };
enum {
    CMD_VENDOR = 1, CMD_CLASS = 2, CMD_IMAGE_MATCH = 3, CMD_SET_INDEX = 12, CMD_SET_PARAMS = 19,
    CMD_OVERRIDE_PARAMS = 20, CMD_FETCH = 21, CMD_INVOKE = 23,
};
enum { PAR_VENDOR = 1, PAR_CLASS = 2, PAR_DIGEST = 3, PAR_SIZE = 14, PAR_URI = 21 };

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

/* SUIT_Digest = [ -16, bstr .size 32 ] */
static int decode_digest(struct mota_cbor_dec *d, uint8_t out[MOTA_SHA256_LEN])
{
    size_t n;
    int64_t alg;
    const uint8_t *p;
    size_t len;
    if (mota_cbor_get_array(d, &n) != 0)
        return d->err;
    if (n != 2)
        return mota_cbor_fail(d, n < 2 ? MOTA_ERR_DIGEST_LEN : MOTA_ERR_CBOR_TOO_LARGE);
    if (mota_cbor_get_int(d, &alg) != 0)
        return d->err;
    if (alg != MOTA_SUIT_DIGEST_SHA256)
        return mota_cbor_fail(d, MOTA_ERR_DIGEST_ALG);
    if (mota_cbor_get_bstr(d, &p, &len) != 0)
        return d->err;
    if (len != MOTA_SHA256_LEN)
        return mota_cbor_fail(d, MOTA_ERR_DIGEST_LEN);
    memcpy(out, p, MOTA_SHA256_LEN);
    return 0;
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

/* Protected or unprotected COSE header map: alg (1), crit (2), kid (4). */
static int decode_cose_header(const uint8_t *buf, size_t len, bool is_protected, struct mota_auth_block *b,
                              struct cose_labels *seen)
{
    struct mota_cbor_dec d;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    mota_cbor_dec_init(&d, buf, len);
    if (mota_cbor_get_map(&d, &n) != 0)
        return d.err;
    if (n > 8)
        return MOTA_ERR_CBOR_TOO_LARGE;
    for (size_t i = 0; i < n; i++) {
        struct mota_cbor_item it;
        if (mota_cbor_peek(&d, &it) != 0)
            return d.err;
        /* label = int / tstr (RFC 9052 section 1.5) */
        if (it.type != MOTA_CBOR_UINT && it.type != MOTA_CBOR_NINT && it.type != MOTA_CBOR_TSTR)
            return MOTA_ERR_CBOR_TYPE;
        for (size_t k = 0; k < seen->n; k++) {
            if (seen->len[k] == it.size && memcmp(seen->enc[k], it.start, it.size) == 0)
                return k < seen->n_protected && !is_protected ? MOTA_ERR_COSE_DUP_LABEL : MOTA_ERR_CBOR_DUP_KEY;
        }
        seen->enc[seen->n] = it.start;
        seen->len[seen->n++] = it.size;
        if (it.type == MOTA_CBOR_TSTR) {
            /* text labels are legal COSE but never ours: skip key and value */
            if (mota_cbor_skip(&d) != 0 || mota_cbor_skip(&d) != 0)
                return d.err;
            continue;
        }
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return d.err;
        if (key == 1) {
            int64_t alg;
            if (!is_protected) /* the algorithm must be integrity protected */
                return MOTA_ERR_COSE_ALG;
            if (mota_cbor_get_int(&d, &alg) != 0)
                return d.err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_COSE_ALG : d.err;
            b->alg = (int)(alg >= -100 && alg <= 100 ? alg : 0);
        } else if (key == 2) {
            /* crit: we understand no extension parameter, so any entry is fatal */
            return MOTA_ERR_COSE_CRIT;
        } else if (key == 4) {
            const uint8_t *kid;
            size_t kid_len;
            if (mota_cbor_get_bstr(&d, &kid, &kid_len) != 0)
                return d.err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_COSE_KID : d.err;
            if (kid_len == 0 || kid_len > 32)
                return MOTA_ERR_COSE_KID;
            b->kid = kid;
            b->kid_len = kid_len;
        } else if (mota_cbor_skip(&d) != 0) {
            return d.err;
        }
    }
    if (is_protected)
        seen->n_protected = seen->n;
    return mota_cbor_finish(&d);
}

/* COSE_Sign1_Tagged = #6.18([ bstr .cbor hdr, hdr, nil, bstr ]) */
static int decode_sign1(const uint8_t *buf, size_t len, struct mota_auth_block *b)
{
    struct mota_cbor_dec d;
    uint64_t tag;
    size_t n, sig_len;
    struct mota_cbor_item it;
    struct cose_labels seen = {.n = 0};
    int ret;

    memset(b, 0, sizeof(*b));
    mota_cbor_dec_init(&d, buf, len);
    if (mota_cbor_peek(&d, &it) != 0)
        return d.err;
    if (it.type != MOTA_CBOR_TAG)
        return MOTA_ERR_COSE_TAG;
    if (mota_cbor_get_tag(&d, &tag) != 0)
        return d.err;
    if (tag != MOTA_COSE_TAG_SIGN1)
        return MOTA_ERR_COSE_TAG;
    if (mota_cbor_get_array(&d, &n) != 0)
        return d.err;
    if (n != 4)
        return MOTA_ERR_CBOR_TYPE;
    if (mota_cbor_get_bstr(&d, &b->protected_hdr, &b->protected_len) != 0)
        return d.err;
    if (b->protected_len > 128)
        return MOTA_ERR_CBOR_TOO_LARGE;
    ret = decode_cose_header(b->protected_hdr, b->protected_len, true, b, &seen);
    if (ret != 0)
        return ret;
    size_t unprot_start = d.pos;
    if (mota_cbor_skip(&d) != 0)
        return d.err;
    ret = decode_cose_header(buf + unprot_start, d.pos - unprot_start, false, b, &seen);
    if (ret != 0)
        return ret;
    if (mota_cbor_peek(&d, &it) != 0)
        return d.err;
    if (it.type != MOTA_CBOR_NULL)
        return MOTA_ERR_COSE_PAYLOAD;
    if (mota_cbor_get_null(&d) != 0)
        return d.err;
    if (mota_cbor_get_bstr(&d, &b->sig, &sig_len) != 0)
        return d.err;
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
    int ret;

    mota_cbor_dec_init(&d, buf, len);
    if (mota_cbor_get_array(&d, &n) != 0)
        return d.err;
    if (n < 1)
        return MOTA_ERR_CBOR_TYPE;
    if (n < 2)
        return MOTA_ERR_AUTH_NO_BLOCK;
    if (n - 1 > MOTA_CONTAINER_MAX_AUTH_BLOCKS)
        return MOTA_ERR_AUTH_TOO_MANY;
    if (mota_cbor_get_bstr(&d, &env->digest_enc, &env->digest_enc_len) != 0)
        return d.err;
    mota_cbor_dec_init(&dd, env->digest_enc, env->digest_enc_len);
    if (decode_digest(&dd, env->digest) != 0 || mota_cbor_finish(&dd) != 0)
        return dd.err;
    env->n_blocks = n - 1;
    for (size_t i = 0; i < env->n_blocks; i++) {
        const uint8_t *blk;
        size_t blk_len;
        if (mota_cbor_get_bstr(&d, &blk, &blk_len) != 0)
            return d.err;
        ret = decode_sign1(blk, blk_len, &env->blocks[i]);
        if (ret != 0)
            return ret;
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
    if (d->pos < d->len && mota_cbor_head(d->buf + d->pos, d->len - d->pos, &major, &arg, &hl) == 0 &&
        major == 2 && arg > limit)
        return MOTA_ERR_ENV_TOO_LARGE;
    return 0;
}

int mota_envelope_decode(const uint8_t *buf, size_t len, struct mota_envelope *env)
{
    struct mota_cbor_dec d;
    struct mota_cbor_item it;
    uint64_t tag;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    const uint8_t *auth;
    size_t auth_len;
    int ret;

    if (buf == NULL || env == NULL)
        return MOTA_ERR_ARG;
    memset(env, 0, sizeof(*env));
    mota_cbor_dec_init(&d, buf, len);
    if (mota_cbor_peek(&d, &it) != 0)
        return d.err;
    if (it.type != MOTA_CBOR_TAG)
        return MOTA_ERR_ENV_TAG;
    if (mota_cbor_get_tag(&d, &tag) != 0)
        return d.err;
    if (tag != MOTA_SUIT_TAG_ENVELOPE)
        return MOTA_ERR_ENV_TAG;
    if (mota_cbor_peek(&d, &it) != 0)
        return d.err;
    if (it.type != MOTA_CBOR_MAP)
        return MOTA_ERR_CBOR_TYPE;
    n = (size_t)it.val;
    d.pos += it.size;
    if (n > 2 + MOTA_CONTAINER_MAX_COMPONENTS)
        return MOTA_ERR_CBOR_TOO_LARGE;

    /* Authentication wrapper first (SUIT requires it before the manifest). */
    if (n < 1)
        return MOTA_ERR_ENV_NO_AUTH;
    if (mota_cbor_peek(&d, &it) != 0)
        return d.err;
    if (it.type != MOTA_CBOR_UINT && it.type != MOTA_CBOR_NINT)
        return MOTA_ERR_ENV_NO_AUTH;
    if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
        return d.err;
    if (key == ENV_KEY_MANIFEST)
        return MOTA_ERR_ENV_NO_AUTH;
    if (key != ENV_KEY_AUTH)
        return MOTA_ERR_ENV_UNKNOWN_KEY;
    if ((ret = check_declared(&d, MOTA_CONTAINER_MAX_AUTH)) != 0)
        return ret;
    if (mota_cbor_get_bstr(&d, &auth, &auth_len) != 0)
        return d.err;
    ret = decode_auth(auth, auth_len, env);
    if (ret != 0)
        return ret;

    /* Manifest second. */
    if (n < 2)
        return MOTA_ERR_ENV_NO_MANIFEST;
    if (mota_cbor_peek(&d, &it) != 0)
        return d.err;
    if (it.type != MOTA_CBOR_UINT && it.type != MOTA_CBOR_NINT)
        return MOTA_ERR_ENV_NO_MANIFEST;
    if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
        return d.err;
    if (key != ENV_KEY_MANIFEST)
        return key < ENV_KEY_MANIFEST ? MOTA_ERR_ENV_UNKNOWN_KEY : MOTA_ERR_ENV_NO_MANIFEST;
    if ((ret = check_declared(&d, MOTA_CONTAINER_MAX_MANIFEST)) != 0)
        return ret;
    env->manifest_wrapped = buf + d.pos;
    if (mota_cbor_get_bstr(&d, &env->manifest, &env->manifest_len) != 0)
        return d.err;
    env->manifest_wrapped_len = (size_t)(buf + d.pos - env->manifest_wrapped);
    env->head_len = d.pos;
    env->n_payloads = n - 2;
    return 0;
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

static int decode_params(struct mota_cbor_dec *d, struct seq_state *st, bool override)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    if (mota_cbor_get_map(d, &n) != 0)
        return d->err;
    for (size_t i = 0; i < n; i++) {
        if (mota_cbor_get_int_key(d, &key, &prev) != 0)
            return d->err;
        const uint8_t *p = NULL;
        size_t len = 0;
        uint64_t size = 0;
        uint8_t digest[MOTA_SHA256_LEN];
        switch (key) {
        case PAR_VENDOR:
        case PAR_CLASS:
            if (mota_cbor_get_bstr(d, &p, &len) != 0)
                return d->err;
            if (len != 16)
                return mota_cbor_fail(d, MOTA_ERR_CBOR_TYPE);
            break;
        case PAR_DIGEST: {
            struct mota_cbor_dec dd;
            if (mota_cbor_get_bstr(d, &p, &len) != 0)
                return d->err;
            mota_cbor_dec_init(&dd, p, len);
            if (decode_digest(&dd, digest) != 0 || mota_cbor_finish(&dd) != 0)
                return mota_cbor_fail(d, dd.err);
            break;
        }
        case PAR_SIZE:
            if (mota_cbor_get_uint(d, &size) != 0)
                return d->err;
            break;
        case PAR_URI:
            if (mota_cbor_get_tstr(d, (const char **)&p, &len) != 0)
                return d->err;
            if (len < 2 || len > MOTA_CONTAINER_MAX_PAYLOAD_NAME || p[0] != '#')
                return mota_cbor_fail(d, MOTA_ERR_URI);
            break;
        default:
            return mota_cbor_fail(d, MOTA_ERR_PARAM_UNSUPPORTED);
        }
        for (size_t c = 0; c < st->m->n_components; c++) {
            struct mota_component *comp = &st->m->comp[c];
            if (!(st->selected & (1u << c)))
                continue;
            switch (key) {
            case PAR_VENDOR:
                if (override || !comp->has_vendor) {
                    memcpy(comp->vendor_id, p, 16);
                    comp->has_vendor = true;
                }
                break;
            case PAR_CLASS:
                if (override || !comp->has_class) {
                    memcpy(comp->class_id, p, 16);
                    comp->has_class = true;
                }
                break;
            case PAR_DIGEST:
                if (override || !comp->has_digest) {
                    memcpy(comp->digest, digest, MOTA_SHA256_LEN);
                    comp->has_digest = true;
                }
                break;
            case PAR_SIZE:
                if (override || !comp->has_size) {
                    comp->size = size;
                    comp->has_size = true;
                }
                break;
            default: /* PAR_URI */
                if (override || !comp->has_uri) {
                    comp->uri = (const char *)p;
                    comp->uri_len = len;
                    comp->has_uri = true;
                }
                break;
            }
        }
    }
    return 0;
}

static int run_sequence(const uint8_t *buf, size_t len, struct mota_manifest *m, int which)
{
    struct mota_cbor_dec d;
    size_t n;
    struct seq_state st = {m, 1u, which};

    mota_cbor_dec_init(&d, buf, len);
    if (mota_cbor_get_array(&d, &n) != 0)
        return d.err;
    if (n == 0 || n % 2 != 0)
        return MOTA_ERR_SEQUENCE_MALFORMED;
    for (size_t i = 0; i < n; i += 2) {
        int64_t cmd;
        uint64_t policy;
        struct mota_cbor_item it;
        if (mota_cbor_get_int(&d, &cmd) != 0)
            return d.err;
        switch (cmd) {
        case CMD_SET_INDEX:
            if (mota_cbor_peek(&d, &it) != 0)
                return d.err;
            if (it.type == MOTA_CBOR_TRUE) {
                d.pos += it.size;
                st.selected = (uint8_t)((1u << m->n_components) - 1);
            } else if (it.type == MOTA_CBOR_UINT) {
                d.pos += it.size;
                if (it.val >= m->n_components)
                    return MOTA_ERR_COMPONENT_INDEX;
                st.selected = (uint8_t)(1u << it.val);
            } else if (it.type == MOTA_CBOR_ARRAY) {
                size_t k;
                if (mota_cbor_get_array(&d, &k) != 0)
                    return d.err;
                if (k == 0 || k > MOTA_CONTAINER_MAX_COMPONENTS)
                    return MOTA_ERR_COMPONENT_INDEX;
                st.selected = 0;
                for (size_t j = 0; j < k; j++) {
                    uint64_t idx;
                    if (mota_cbor_get_uint(&d, &idx) != 0)
                        return d.err;
                    if (idx >= m->n_components)
                        return MOTA_ERR_COMPONENT_INDEX;
                    st.selected |= (uint8_t)(1u << idx);
                }
            } else {
                return MOTA_ERR_CBOR_TYPE;
            }
            continue;
        case CMD_OVERRIDE_PARAMS:
        case CMD_SET_PARAMS:
            if (decode_params(&d, &st, cmd == CMD_OVERRIDE_PARAMS) != 0)
                return d.err;
            continue;
        case CMD_VENDOR:
        case CMD_CLASS:
        case CMD_IMAGE_MATCH:
        case CMD_FETCH:
        case CMD_INVOKE:
            break;
        default:
            return MOTA_ERR_COMMAND_UNSUPPORTED;
        }
        /* Conditions and directives take a reporting policy. */
        if (mota_cbor_get_uint(&d, &policy) != 0)
            return d.err;
        for (size_t c = 0; c < m->n_components; c++) {
            struct mota_component *comp = &m->comp[c];
            if (!(st.selected & (1u << c)))
                continue;
            switch (cmd) {
            case CMD_VENDOR:
                if (!comp->has_vendor)
                    return MOTA_ERR_NO_VENDOR_CHECK;
                if (which == MAN_COMMON)
                    m->checks_vendor = true;
                break;
            case CMD_CLASS:
                if (!comp->has_class)
                    return MOTA_ERR_NO_CLASS_CHECK;
                if (which == MAN_COMMON)
                    m->checks_class = true;
                break;
            case CMD_IMAGE_MATCH:
                if (!comp->has_digest || !comp->has_size)
                    return MOTA_ERR_IMAGE_PARAMS;
                if (which == MAN_VALIDATE)
                    comp->image_match = true;
                break;
            case CMD_FETCH:
                if (which != MAN_INSTALL)
                    return MOTA_ERR_COMMAND_UNSUPPORTED;
                if (!comp->has_uri)
                    return MOTA_ERR_URI;
                comp->fetched = true;
                break;
            default: /* CMD_INVOKE */
                if (which != MAN_INVOKE)
                    return MOTA_ERR_COMMAND_UNSUPPORTED;
                break;
            }
        }
    }
    return mota_cbor_finish(&d);
}

static int decode_common(const uint8_t *buf, size_t len, struct mota_manifest *m, const uint8_t **shared,
                         size_t *shared_len)
{
    struct mota_cbor_dec d;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;

    mota_cbor_dec_init(&d, buf, len);
    if (mota_cbor_get_map(&d, &n) != 0)
        return d.err;
    for (size_t i = 0; i < n; i++) {
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return d.err;
        if (key == COMMON_COMPONENTS) {
            size_t nc;
            if (mota_cbor_get_array(&d, &nc) != 0)
                return d.err;
            if (nc == 0 || nc > MOTA_CONTAINER_MAX_COMPONENTS)
                return MOTA_ERR_COMPONENTS;
            m->n_components = nc;
            for (size_t c = 0; c < nc; c++) {
                size_t start = d.pos, ne;
                if (mota_cbor_get_array(&d, &ne) != 0)
                    return d.err;
                if (ne > 4)
                    return MOTA_ERR_COMPONENT_ID;
                for (size_t k = 0; k < ne; k++) {
                    const uint8_t *p;
                    size_t pl;
                    if (mota_cbor_get_bstr(&d, &p, &pl) != 0)
                        return d.err;
                    if (pl > MOTA_CONTAINER_MAX_COMPONENT_ID)
                        return MOTA_ERR_COMPONENT_ID;
                }
                m->comp[c].id = buf + start;
                m->comp[c].id_len = d.pos - start;
                m->comp[c].role = mota_component_role_of(m->comp[c].id, m->comp[c].id_len);
                for (size_t o = 0; o < c; o++) {
                    if (m->comp[o].id_len == m->comp[c].id_len &&
                        memcmp(m->comp[o].id, m->comp[c].id, m->comp[c].id_len) == 0)
                        return MOTA_ERR_COMPONENT_ID;
                }
            }
        } else if (key == COMMON_SHARED) {
            if (mota_cbor_get_bstr(&d, shared, shared_len) != 0)
                return d.err;
        } else {
            return MOTA_ERR_MANIFEST_UNKNOWN_KEY;
        }
    }
    if (mota_cbor_finish(&d) != 0)
        return d.err;
    if (m->n_components == 0)
        return MOTA_ERR_COMPONENTS;
    return 0;
}

static int get_text(struct mota_cbor_dec *d, const char **s, size_t *n)
{
    if (mota_cbor_get_tstr(d, s, n) != 0)
        return d->err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_TEXT : d->err;
    if (*n > MOTA_CONTAINER_MAX_TEXT)
        return MOTA_ERR_TEXT;
    return 0;
}

/* SUIT_Text_Map = { + tag38-ltag => { int => tstr, * component-id => { int => tstr } } } */
static int decode_text(const uint8_t *buf, size_t len, struct mota_manifest *m)
{
    struct mota_cbor_dec d;
    size_t nl;
    const uint8_t *prev_lang = NULL;
    size_t prev_lang_len = 0;
    int ret;

    mota_cbor_dec_init(&d, buf, len);
    if (mota_cbor_get_map(&d, &nl) != 0)
        return d.err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_TEXT : d.err;
    if (nl == 0 || nl > 4)
        return MOTA_ERR_TEXT;
    for (size_t l = 0; l < nl; l++) {
        size_t kstart = d.pos, ne;
        const char *lang;
        size_t lang_len;
        if ((ret = get_text(&d, &lang, &lang_len)) != 0)
            return ret;
        if (lang_len == 0 || lang_len > 35)
            return MOTA_ERR_TEXT;
        if (prev_lang != NULL && (ret = mota_cbor_key_order(prev_lang, prev_lang_len, buf + kstart,
                                                            d.pos - kstart)) != 0)
            return ret;
        prev_lang = buf + kstart;
        prev_lang_len = d.pos - kstart;
        bool use = (l == 0); /* report the first language */
        if (mota_cbor_get_map(&d, &ne) != 0)
            return d.err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_TEXT : d.err;
        const uint8_t *prev = NULL;
        size_t prev_len = 0;
        for (size_t e = 0; e < ne; e++) {
            struct mota_cbor_item it;
            size_t ks = d.pos;
            if (mota_cbor_peek(&d, &it) != 0)
                return d.err;
            if (it.type == MOTA_CBOR_ARRAY) {
                if (mota_cbor_skip(&d) != 0)
                    return d.err;
            } else if (it.type == MOTA_CBOR_UINT || it.type == MOTA_CBOR_NINT) {
                d.pos += it.size;
            } else {
                return MOTA_ERR_TEXT;
            }
            if (prev != NULL && (ret = mota_cbor_key_order(prev, prev_len, buf + ks, d.pos - ks)) != 0)
                return ret;
            prev = buf + ks;
            prev_len = d.pos - ks;
            if (it.type == MOTA_CBOR_ARRAY) {
                /* component text: the identifier must name a component */
                const struct mota_component *comp = NULL;
                for (size_t c = 0; c < m->n_components; c++) {
                    if (m->comp[c].id_len == d.pos - ks && memcmp(m->comp[c].id, buf + ks, d.pos - ks) == 0)
                        comp = &m->comp[c];
                }
                if (comp == NULL)
                    return MOTA_ERR_COMPONENT_ID;
                size_t nf;
                int64_t fk, fprev = MOTA_CBOR_KEY_NONE;
                if (mota_cbor_get_map(&d, &nf) != 0)
                    return d.err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_TEXT : d.err;
                for (size_t f = 0; f < nf; f++) {
                    const char *s;
                    size_t sl;
                    if (mota_cbor_get_int_key(&d, &fk, &fprev) != 0)
                        return d.err;
                    if ((ret = get_text(&d, &s, &sl)) != 0)
                        return ret;
                    if (!use || comp->role != MOTA_COMPONENT_CODE)
                        continue;
                    if (fk == 1) {
                        m->text.vendor_name = s;
                        m->text.vendor_name_len = sl;
                    } else if (fk == 2) {
                        m->text.model_name = s;
                        m->text.model_name_len = sl;
                    } else if (fk == 6) {
                        m->text.version = s;
                        m->text.version_len = sl;
                    }
                }
            } else {
                const char *s;
                size_t sl;
                if ((ret = get_text(&d, &s, &sl)) != 0)
                    return ret;
                int64_t k = it.type == MOTA_CBOR_UINT ? (int64_t)it.val : -1 - (int64_t)it.val;
                if (use && k == 1) {
                    m->text.description = s;
                    m->text.description_len = sl;
                } else if (use && k == -1) {
                    m->text.created = s;
                    m->text.created_len = sl;
                }
            }
        }
    }
    if (mota_cbor_finish(&d) != 0)
        return d.err;
    m->has_text = true;
    return 0;
}

static int get_u32(struct mota_cbor_dec *d, uint32_t *v, uint32_t max)
{
    uint64_t x;
    if (mota_cbor_get_uint(d, &x) != 0)
        return d->err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_COMPAT_FIELD : d->err;
    if (x > max)
        return MOTA_ERR_COMPAT_FIELD;
    *v = (uint32_t)x;
    return 0;
}

static int get_flag(struct mota_cbor_dec *d, bool *v)
{
    if (mota_cbor_get_bool(d, v) != 0)
        return d->err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_COMPAT_FIELD : d->err;
    return 0;
}

static int get_size(struct mota_cbor_dec *d, uint64_t *v)
{
    if (mota_cbor_get_uint(d, v) != 0)
        return d->err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_COMPAT_FIELD : d->err;
    if (*v > 0xFFFFFFFFu) /* 32-bit address spaces */
        return MOTA_ERR_COMPAT_FIELD;
    return 0;
}

static int decode_selftest(struct mota_cbor_dec *d, struct mota_selftest *t)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    unsigned seen = 0;
    if (mota_cbor_get_map(d, &n) != 0)
        return d->err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_SELFTEST_FIELD : d->err;
    for (size_t i = 0; i < n; i++) {
        if (mota_cbor_get_int_key(d, &key, &prev) != 0)
            return d->err;
        if (key == 1) {
            if (decode_digest(d, t->output_digest) != 0)
                return d->err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_SELFTEST_FIELD : d->err;
        } else if (key == 2) {
            if (mota_cbor_get_uint(d, &t->output_size) != 0)
                return MOTA_ERR_SELFTEST_FIELD;
        } else if (key == 3) {
            if (mota_cbor_get_uint(d, &t->max_latency_us) != 0)
                return MOTA_ERR_SELFTEST_FIELD;
        } else if (key < 0) {
            if (mota_cbor_skip(d) != 0)
                return d->err;
            continue;
        } else {
            return MOTA_ERR_COMPAT_CRITICAL;
        }
        seen |= 1u << key;
    }
    if (seen != 0xEu || t->output_size == 0)
        return MOTA_ERR_SELFTEST_FIELD;
    t->present = true;
    return 0;
}

enum {
    C_RELOC = 1, C_CPU, C_FPU, C_ABI, C_SECURE, C_DBG, C_ASYNC, C_TOOLCHAIN, C_RTVER, C_CNAME,
    C_ACTS, C_PARAMS, C_EXTRAM, C_XIP, C_COPY, C_MODE, C_STRUCTS, C_RESERVED18, C_SELFTEST, C_RTDESC,
};

static int decode_compat(const uint8_t *buf, size_t len, struct mota_compat *c)
{
    struct mota_cbor_dec d;
    size_t n, na;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    uint32_t seen = 0;
    int ret = 0;

    mota_cbor_dec_init(&d, buf, len);
    if (mota_cbor_get_map(&d, &n) != 0)
        return d.err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_COMPAT_FIELD : d.err;
    for (size_t i = 0; i < n; i++) {
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return d.err;
        switch (key) {
        case C_RELOC:
            if (mota_cbor_get_array(&d, &na) != 0 || na != 2)
                return d.err ? d.err : MOTA_ERR_COMPAT_FIELD;
            if ((ret = get_u32(&d, &c->reloc_major, 15)) || (ret = get_u32(&d, &c->reloc_minor, 15)))
                return ret;
            break;
        case C_CPU: ret = get_u32(&d, &c->cpu_part, 0xFFF); break;
        case C_FPU: ret = get_flag(&d, &c->fpu); break;
        case C_ABI: ret = get_u32(&d, &c->float_abi, 2); break;
        case C_SECURE: ret = get_flag(&d, &c->secure); break;
        case C_DBG: ret = get_flag(&d, &c->dbg_info); break;
        case C_ASYNC: ret = get_flag(&d, &c->async); break;
        case C_TOOLCHAIN: ret = get_u32(&d, &c->toolchain, 15); break;
        case C_RTVER:
            if (mota_cbor_get_array(&d, &na) != 0 || na != 3)
                return d.err ? d.err : MOTA_ERR_COMPAT_FIELD;
            if ((ret = get_u32(&d, &c->rt_major, 255)) || (ret = get_u32(&d, &c->rt_minor, 255)) ||
                (ret = get_u32(&d, &c->rt_micro, 255)))
                return ret;
            c->has_runtime_version = true;
            break;
        case C_CNAME:
            if (mota_cbor_get_tstr(&d, &c->c_name, &c->c_name_len) != 0)
                return d.err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_COMPAT_FIELD : d.err;
            if (c->c_name_len == 0 || c->c_name_len > 64)
                return MOTA_ERR_COMPAT_FIELD;
            break;
        case C_ACTS: ret = get_size(&d, &c->acts_size); break;
        case C_PARAMS: ret = get_size(&d, &c->params_size); break;
        case C_EXTRAM: ret = get_size(&d, &c->ext_ram_size); break;
        case C_XIP: ret = get_size(&d, &c->exec_ram_xip); break;
        case C_COPY: ret = get_size(&d, &c->exec_ram_copy); break;
        case C_MODE:
            ret = get_u32(&d, &c->install_mode, 2);
            if (ret == 0 && c->install_mode == 0)
                ret = MOTA_ERR_COMPAT_FIELD;
            break;
        case C_STRUCTS:
            ret = get_u32(&d, &c->struct_sizes, 0xFFFFFFFFu);
            c->has_struct_sizes = true;
            break;
        case C_SELFTEST: ret = decode_selftest(&d, &c->selftest); break;
        case C_RTDESC:
            if (mota_cbor_get_tstr(&d, &c->rt_desc, &c->rt_desc_len) != 0)
                return d.err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_COMPAT_FIELD : d.err;
            if (c->rt_desc_len > 128)
                return MOTA_ERR_COMPAT_FIELD;
            break;
        default:
            if (key >= 0)
                return MOTA_ERR_COMPAT_CRITICAL; /* an unknown requirement: fail closed */
            if (mota_cbor_skip(&d) != 0)       /* negative keys: optional hints */
                return d.err;
            continue;
        }
        if (ret != 0)
            return ret;
        seen |= 1u << key;
    }
    if (mota_cbor_finish(&d) != 0)
        return d.err;
    const uint32_t required = (1u << C_RELOC) | (1u << C_CPU) | (1u << C_FPU) | (1u << C_ABI) |
                              (1u << C_SECURE) | (1u << C_DBG) | (1u << C_ASYNC) | (1u << C_TOOLCHAIN) |
                              (1u << C_CNAME) | (1u << C_ACTS) | (1u << C_PARAMS) | (1u << C_EXTRAM) |
                              (1u << C_XIP) | (1u << C_COPY) | (1u << C_MODE);
    if ((seen & required) != required)
        return MOTA_ERR_COMPAT_FIELD;
    if (c->reloc_major == 8 && !c->has_runtime_version)
        return MOTA_ERR_COMPAT_FIELD;
    return 0;
}

int mota_manifest_decode(const struct mota_envelope *env, struct mota_manifest *m)
{
    struct mota_cbor_dec d;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    const uint8_t *p, *shared = NULL;
    size_t len, shared_len = 0;
    const uint8_t *seqs[3] = {NULL, NULL, NULL}; /* validate, install, invoke */
    size_t seq_len[3] = {0, 0, 0};
    int ret;
    bool have_version = false, have_seq = false, have_common = false;

    if (env == NULL || m == NULL)
        return MOTA_ERR_ARG;
    memset(m, 0, sizeof(*m));
    mota_cbor_dec_init(&d, env->manifest, env->manifest_len);
    if (mota_cbor_get_map(&d, &n) != 0)
        return d.err;
    for (size_t i = 0; i < n; i++) {
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return d.err;
        switch (key) {
        case MAN_VERSION:
            if (mota_cbor_get_uint(&d, &m->version) != 0)
                return d.err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_MANIFEST_VERSION : d.err;
            if (m->version != 1)
                return MOTA_ERR_MANIFEST_VERSION;
            have_version = true;
            break;
        case MAN_SEQ:
            if (mota_cbor_get_uint(&d, &m->seq) != 0)
                return d.err == MOTA_ERR_CBOR_TYPE ? MOTA_ERR_MANIFEST_SEQ : d.err;
            have_seq = true;
            break;
        case MAN_COMMON:
            if (mota_cbor_get_bstr(&d, &p, &len) != 0)
                return d.err;
            if ((ret = decode_common(p, len, m, &shared, &shared_len)) != 0)
                return ret;
            have_common = true;
            break;
        case MAN_VALIDATE:
        case MAN_INSTALL:
        case MAN_INVOKE:
        case MAN_LOAD: {
            int slot = key == MAN_VALIDATE ? 0 : key == MAN_INSTALL ? 1 : 2;
            if (mota_cbor_get_bstr(&d, &p, &len) != 0)
                return d.err;
            if (key == MAN_LOAD) {
                m->has_load = true;
                ret = have_common ? run_sequence(p, len, m, MAN_LOAD) : MOTA_ERR_MANIFEST_NO_COMMON;
                if (ret != 0)
                    return ret;
                break;
            }
            seqs[slot] = p;
            seq_len[slot] = len;
            break;
        }
        case MAN_TEXT:
            if (mota_cbor_get_bstr(&d, &p, &len) != 0)
                return d.err;
            if (!have_common)
                return MOTA_ERR_MANIFEST_NO_COMMON;
            if ((ret = decode_text(p, len, m)) != 0)
                return ret;
            break;
        case MOTA_MANIFEST_KEY_COMPAT:
            if (mota_cbor_get_bstr(&d, &p, &len) != 0)
                return d.err;
            if ((ret = decode_compat(p, len, &m->compat)) != 0)
                return ret;
            m->has_compat = true;
            break;
        default:
            return MOTA_ERR_MANIFEST_UNKNOWN_KEY;
        }
    }
    if (mota_cbor_finish(&d) != 0)
        return d.err;
    if (!have_version)
        return MOTA_ERR_MANIFEST_VERSION;
    if (!have_seq)
        return MOTA_ERR_MANIFEST_SEQ;
    if (!have_common)
        return MOTA_ERR_MANIFEST_NO_COMMON;
    /* Shared sequence first, then the others in processing order. */
    if (shared != NULL && (ret = run_sequence(shared, shared_len, m, MAN_COMMON)) != 0)
        return ret;
    if (!m->checks_vendor)
        return MOTA_ERR_NO_VENDOR_CHECK;
    if (!m->checks_class)
        return MOTA_ERR_NO_CLASS_CHECK;
    static const int which[3] = {MAN_VALIDATE, MAN_INSTALL, MAN_INVOKE};
    for (int s = 0; s < 3; s++) {
        if (seqs[s] == NULL)
            continue;
        if ((ret = run_sequence(seqs[s], seq_len[s], m, which[s])) != 0)
            return ret;
    }
    m->has_validate = seqs[0] != NULL;
    m->has_install = seqs[1] != NULL;
    m->has_invoke = seqs[2] != NULL;
    return 0;
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
        if (size != comp->size)
            return MOTA_ERR_PAYLOAD_SIZE;
        if (size > len - pos - hl)
            return MOTA_ERR_CBOR_TRUNCATED;
        if (digests) {
            mota_sha256(buf + pos + hl, (size_t)size, md);
            if (mota_ct_memcmp(md, comp->digest, MOTA_SHA256_LEN) != 0)
                return MOTA_ERR_PAYLOAD_DIGEST;
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
