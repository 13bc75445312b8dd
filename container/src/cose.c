/* SPDX-License-Identifier: Apache-2.0 */
/* The SUIT envelope and its authentication: the COSE_Sign1 blocks, the Sig_structure they sign, and the
 * check of a manifest's digest and signature against the trusted keys. */
#include "mota/container.h"

#include "decode.h"
#include "mota/cbor.h"
#include "mota/crypto.h"
#include "mota/err.h"
#include "mota/suit_keys.h"

#include <string.h>

void mota_trusted_key_set(struct mota_trusted_key *k, const uint8_t pub[MOTA_P256_PUB_LEN])
{
    memcpy(k->pub, pub, MOTA_P256_PUB_LEN);
    mota_key_id(pub, k->kid);
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
        MOTA_DEC_FIELD(d, mota_cbor_get_int(d, &alg), MOTA_ERR_COSE_ALG);
        b->alg = (int)(alg >= -100 && alg <= 100 ? alg : 0);
        break;
    case MOTA_COSE_LABEL_CRIT: /* we understand no extension parameter, so any entry is fatal */
        mota_cbor_fail(d, MOTA_ERR_COSE_CRIT);
        break;
    case MOTA_COSE_LABEL_KID:
        MOTA_DEC_FIELD(d, mota_cbor_get_bstr(d, &kid, &kid_len), MOTA_ERR_COSE_KID);
        if (kid_len == 0 || kid_len > 32)
            mota_cbor_fail(d, MOTA_ERR_COSE_KID);
        if (d->err == 0) {
            b->kid = kid;
            b->kid_len = kid_len;
        }
        break;
    default: mota_cbor_skip(d); break;
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
    mota_dec_digest(&dd, env->digest);
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
    if (d->err == 0 && d->pos < d->len && mota_cbor_head(d->buf + d->pos, d->len - d->pos, &major, &arg, &hl) == 0 &&
        major == 2 && arg > limit)
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

int mota_envelope_authenticate(const struct mota_envelope *env, const struct mota_trusted_key *keys, size_t n_keys,
                               size_t *key_index)
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
