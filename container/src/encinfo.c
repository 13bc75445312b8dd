/* SPDX-License-Identifier: Apache-2.0 */
/* SUIT_Encryption_Info (encinfo.h): the decoder and the content-key unwrap a device runs before it erases
 * anything, the Enc_structure and COSE_KDF_Context they need, and the encoder the host writes with. Bounded
 * and allocation-free: results are slices of the caller's buffer, secrets are wiped on the way out. */
#include "mota/encinfo.h"

#include "decode.h"
#include "mota/cbor.h"
#include "mota/err.h"

#include <string.h>

const uint8_t mota_enc_ecdh_protected[4] = {0xa1, 0x01, 0x38, 0x1c};
static const uint8_t gcm_protected[3] = {0xa1, 0x01, 0x01}; /* {1: A128GCM} */
static const char kdf_other[] = "SUIT Payload Encryption";  /* a bstr in the context, as the draft fixes it */

/* The COSE header labels the profile reads, one bit each. Every other label is refused, not skipped: the
 * ones COSE defines for these layers (partial IV, counter signatures, static keys, PartyU/V identities)
 * would each change what the keys or the AAD are, and nothing of ours writes another. */
enum {
    HDR_ALG = 1u << 0,
    HDR_KID = 1u << 1,
    HDR_IV = 1u << 2,
    HDR_EPK = 1u << 3,
    HDR_SALT = 1u << 4,
};
#define BODY_LABELS (HDR_ALG | HDR_IV)
#define RECIPIENT_LABELS (HDR_ALG | HDR_KID | HDR_EPK | HDR_SALT)
#define HDR_MAX_PAIRS 5u
/* Protected headers short enough for the Enc_structure (11 bytes around a 1-byte head) and the KDF context
 * (37 bytes around a head of up to 2) to fit their buffers whatever else they hold. */
#define BODY_PROTECTED_MAX (MOTA_ENC_AAD_MAX - 12u)
#define RECIPIENT_PROTECTED_MAX (MOTA_ENC_KDF_CONTEXT_MAX - 40u)
#define P256_COORD 32u

/* What the two header maps of one layer (the body or a recipient) say. */
struct hdr {
    int64_t alg;
    const uint8_t *kid, *iv, *salt, *x, *y;
    size_t kid_len, iv_len, salt_len;
    unsigned seen; /* labels of the maps read so far, the protected one first */
};

static unsigned label_bit(int64_t label)
{
    switch (label) {
    case MOTA_ENC_LABEL_ALG: return HDR_ALG;
    case MOTA_ENC_LABEL_KID: return HDR_KID;
    case MOTA_ENC_LABEL_IV: return HDR_IV;
    case MOTA_ENC_LABEL_EPK: return HDR_EPK;
    case MOTA_ENC_LABEL_SALT: return HDR_SALT;
    default: return 0;
    }
}

/* One coordinate or parameter of the ephemeral COSE_Key; a bit per label as for the headers. */
static void decode_epk_value(struct mota_cbor_dec *d, int64_t label, int64_t *kty, int64_t *crv, struct hdr *h)
{
    const uint8_t **coord = label == MOTA_COSE_KEY_X ? &h->x : &h->y;
    size_t len = 0;
    if (label == MOTA_COSE_KEY_KTY || label == MOTA_COSE_KEY_CRV) {
        MOTA_DEC_FIELD(d, mota_cbor_get_int(d, label == MOTA_COSE_KEY_KTY ? kty : crv), MOTA_ERR_ENC_EPK);
        return;
    }
    /* a boolean y (a compressed point) is a type error here, so ENC_EPK */
    MOTA_DEC_FIELD(d, mota_cbor_get_bstr(d, coord, &len), MOTA_ERR_ENC_EPK);
    if (len != P256_COORD)
        mota_cbor_fail(d, MOTA_ERR_ENC_EPK);
}

/* COSE_Key = {1: 2 (EC2), -1: 1 (P-256), -2: x, -3: y}, any order, nothing else: an uncompressed P-256
 * point (whether it is on the curve is for mota_p256_ecdh to say). */
static void decode_epk(struct mota_cbor_dec *d, struct hdr *h)
{
    size_t n;
    unsigned seen = 0;
    int64_t kty = 0, crv = 0;
    MOTA_DEC_FIELD(d, mota_cbor_get_map(d, &n), MOTA_ERR_ENC_EPK);
    if (n != 4)
        mota_cbor_fail(d, MOTA_ERR_ENC_EPK);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        int64_t label;
        MOTA_DEC_FIELD(d, mota_cbor_get_int(d, &label), MOTA_ERR_ENC_EPK);
        unsigned bit = label == MOTA_COSE_KEY_KTY   ? 1u
                       : label == MOTA_COSE_KEY_CRV ? 2u
                       : label == MOTA_COSE_KEY_X   ? 4u
                       : label == MOTA_COSE_KEY_Y   ? 8u
                                                    : 0u;
        if (bit == 0)
            mota_cbor_fail(d, MOTA_ERR_ENC_EPK);
        else if (seen & bit)
            mota_cbor_fail(d, MOTA_ERR_CBOR_DUP_KEY);
        seen |= bit;
        if (d->err == 0)
            decode_epk_value(d, label, &kty, &crv, h);
    }
    if (d->err == 0 && (kty != 2 || crv != 1)) /* 4 distinct labels of 4: all are there */
        mota_cbor_fail(d, MOTA_ERR_ENC_EPK);
}

static void decode_value(struct mota_cbor_dec *d, unsigned bit, struct hdr *h)
{
    switch (bit) {
    case HDR_ALG: /* a text alg is legal COSE, but none of ours */
        MOTA_DEC_FIELD(d, mota_cbor_get_int(d, &h->alg), MOTA_ERR_ENC_ALG);
        break;
    case HDR_KID: /* an empty kid would read as none */
        MOTA_DEC_FIELD(d, mota_cbor_get_bstr(d, &h->kid, &h->kid_len), MOTA_ERR_ENC_INFO);
        if (h->kid_len == 0 || h->kid_len > MOTA_ENC_MAX_KID)
            mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
        break;
    case HDR_IV: /* its length is checked against the alg, which may come later */
        MOTA_DEC_FIELD(d, mota_cbor_get_bstr(d, &h->iv, &h->iv_len), MOTA_ERR_ENC_INFO);
        break;
    case HDR_SALT:
        MOTA_DEC_FIELD(d, mota_cbor_get_bstr(d, &h->salt, &h->salt_len), MOTA_ERR_ENC_INFO);
        if (h->salt_len > MOTA_ENC_MAX_SALT)
            mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
        break;
    default: decode_epk(d, h); break;
    }
}

/*
 * One COSE header map of a layer whose labels are `allowed`. Checked for repeats, not for key order (the
 * draft's own manifests write {-1, 4}): a label twice in one map is a CBOR duplicate, a label in both of a
 * layer's maps is RFC 9052's COSE_DUP_LABEL. Integer labels only: a text label is no label of ours.
 */
static void decode_header(struct mota_cbor_dec *d, unsigned allowed, struct hdr *h)
{
    size_t n;
    unsigned here = 0;
    MOTA_DEC_FIELD(d, mota_cbor_get_map(d, &n), MOTA_ERR_ENC_INFO);
    if (n > HDR_MAX_PAIRS)
        mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        int64_t label;
        MOTA_DEC_FIELD(d, mota_cbor_get_int(d, &label), MOTA_ERR_ENC_INFO);
        unsigned bit = label_bit(label);
        if (label == MOTA_ENC_LABEL_CRIT) /* we understand no extension, so any crit is fatal */
            mota_cbor_fail(d, MOTA_ERR_COSE_CRIT);
        else if ((bit & allowed) == 0)
            mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
        else if (here & bit)
            mota_cbor_fail(d, MOTA_ERR_CBOR_DUP_KEY);
        else if (h->seen & bit)
            mota_cbor_fail(d, MOTA_ERR_COSE_DUP_LABEL);
        here |= bit;
        h->seen |= bit;
        if (d->err == 0)
            decode_value(d, bit, h);
    }
}

/* A protected header: a bstr holding a header map, or h'' for an empty one. */
static void decode_protected(struct mota_cbor_dec *d, unsigned allowed, size_t max, struct hdr *h, const uint8_t **p,
                             size_t *len)
{
    struct mota_cbor_dec in;
    MOTA_DEC_FIELD(d, mota_cbor_get_bstr(d, p, len), MOTA_ERR_ENC_INFO);
    if (*len > max)
        mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
    if (d->err != 0 || *len == 0)
        return;
    mota_cbor_dec_init(&in, *p, *len);
    decode_header(&in, allowed, h);
    mota_cbor_finish(&in);
    mota_cbor_fail(d, in.err);
}

/* The body's headers: the content cipher and its IV. */
static void decode_body(struct mota_cbor_dec *d, struct mota_enc_info *ei)
{
    struct hdr h;
    memset(&h, 0, sizeof(h));
    decode_protected(d, BODY_LABELS, BODY_PROTECTED_MAX, &h, &ei->protected_hdr, &ei->protected_len);
    decode_header(d, BODY_LABELS, &h);
    if (d->err != 0)
        return;
    if (h.alg != MOTA_ENC_A128GCM && h.alg != MOTA_ENC_A128CTR) /* also when there is none */
        mota_cbor_fail(d, MOTA_ERR_ENC_ALG);
    else if (h.iv_len != (h.alg == MOTA_ENC_A128GCM ? MOTA_GCM_IV_LEN : MOTA_AES_BLOCK))
        mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
    else if (h.alg == MOTA_ENC_A128CTR && ei->protected_len != 0) /* the draft: h'' for a non-AEAD cipher */
        mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
    ei->alg = (int)h.alg;
    ei->iv = h.iv;
    ei->iv_len = h.iv_len;
}

/* A recipient's headers against its alg, then into r. */
static void check_recipient(struct mota_cbor_dec *d, const struct hdr *h, struct mota_enc_recipient *r)
{
    bool ecdh = h->alg == MOTA_ENC_ECDH_ES_A128KW;
    if (h->alg != MOTA_ENC_A128KW && !ecdh)
        mota_cbor_fail(d, MOTA_ERR_ENC_ALG);
    else if (ecdh && (h->seen & HDR_EPK) == 0)
        mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
    else if (!ecdh && (h->seen & (HDR_EPK | HDR_SALT)) != 0)
        mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
    else if (!ecdh && r->protected_len != 0 && !(r->protected_len == 1 && r->protected_hdr[0] == 0xa0))
        mota_cbor_fail(d, MOTA_ERR_ENC_INFO); /* RFC 9053 6.2.1: AES key wrap's protected header is empty */
    if (d->err != 0)
        return;
    r->alg = (int)h->alg;
    r->kid = h->kid;
    r->kid_len = h->kid_len;
    r->epk_x = h->x;
    r->epk_y = h->y;
    r->salt = h->salt;
    r->salt_len = h->salt_len;
}

/* COSE_recipient = [protected, unprotected, ciphertext: the wrapped CEK], no recipients of its own */
static void decode_recipient(struct mota_cbor_dec *d, struct mota_enc_recipient *r)
{
    struct hdr h;
    size_t n, wrapped_len = 0;
    memset(&h, 0, sizeof(h));
    MOTA_DEC_FIELD(d, mota_cbor_get_array(d, &n), MOTA_ERR_ENC_INFO);
    if (n != 3)
        mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
    decode_protected(d, RECIPIENT_LABELS, RECIPIENT_PROTECTED_MAX, &h, &r->protected_hdr, &r->protected_len);
    decode_header(d, RECIPIENT_LABELS, &h);
    MOTA_DEC_FIELD(d, mota_cbor_get_bstr(d, &r->wrapped, &wrapped_len), MOTA_ERR_ENC_INFO);
    if (wrapped_len != MOTA_ENC_WRAPPED_LEN)
        mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
    if (d->err == 0)
        check_recipient(d, &h, r);
}

/* The CBOR layer's reasons say where in a container; inside this bstr they all mean a malformed
 * SUIT_Encryption_Info, except a repeated key, which keeps its own name (as in cose.c). */
static int enc_reason(int err)
{
    if (err <= MOTA_ERR_CBOR_TRUNCATED && err > MOTA_ERR_CBOR_TRUNCATED - 100 && err != MOTA_ERR_CBOR_DUP_KEY)
        return MOTA_ERR_ENC_INFO;
    return err;
}

/* SUIT_Encryption_Info = #6.96([protected, unprotected, nil (detached), [+ COSE_recipient]]) */
int mota_enc_info_decode(const uint8_t *buf, size_t len, struct mota_enc_info *ei)
{
    struct mota_cbor_dec d;
    size_t n = 0;
    uint64_t tag = 0;
    if (buf == NULL || ei == NULL)
        return MOTA_ERR_ARG;
    memset(ei, 0, sizeof(*ei));
    if (len > MOTA_ENC_MAX_INFO)
        return MOTA_ERR_ENC_INFO;
    mota_cbor_dec_init(&d, buf, len);
    MOTA_DEC_FIELD(&d, mota_cbor_get_tag(&d, &tag), MOTA_ERR_ENC_INFO);
    if (tag != MOTA_COSE_TAG_ENCRYPT)
        mota_cbor_fail(&d, MOTA_ERR_ENC_INFO);
    MOTA_DEC_FIELD(&d, mota_cbor_get_array(&d, &n), MOTA_ERR_ENC_INFO);
    if (n != 4)
        mota_cbor_fail(&d, MOTA_ERR_ENC_INFO);
    decode_body(&d, ei);
    MOTA_DEC_FIELD(&d, mota_cbor_get_null(&d), MOTA_ERR_ENC_INFO); /* the ciphertext is the payload, apart */
    MOTA_DEC_FIELD(&d, mota_cbor_get_array(&d, &n), MOTA_ERR_ENC_INFO);
    if (n < 1 || n > MOTA_ENC_MAX_RECIPIENTS)
        mota_cbor_fail(&d, MOTA_ERR_ENC_INFO);
    for (size_t i = 0; i < n && d.err == 0; i++)
        decode_recipient(&d, &ei->r[i]);
    if (mota_cbor_finish(&d) != 0) {
        memset(ei, 0, sizeof(*ei));
        return enc_reason(d.err);
    }
    ei->n_recipients = n;
    return MOTA_OK;
}

/* Enc_structure = ["Encrypt", protected, external_aad: h''] */
int mota_enc_aad(const struct mota_enc_info *ei, uint8_t *out, size_t cap, size_t *len)
{
    struct mota_cbor_enc e;
    if (ei == NULL || out == NULL || len == NULL || (ei->protected_hdr == NULL && ei->protected_len != 0))
        return MOTA_ERR_ARG;
    mota_cbor_enc_init(&e, out, cap);
    mota_cbor_put_array(&e, 3);
    mota_cbor_put_tstr(&e, "Encrypt");
    mota_cbor_put_bstr(&e, ei->protected_hdr, ei->protected_len);
    mota_cbor_put_bstr(&e, NULL, 0);
    if (e.err != 0)
        return e.err;
    *len = e.len;
    return MOTA_OK;
}

static void put_party_info(struct mota_cbor_enc *e)
{
    mota_cbor_put_array(e, 3); /* identity, nonce, other: none */
    mota_cbor_put_null(e);
    mota_cbor_put_null(e);
    mota_cbor_put_null(e);
}

/* COSE_KDF_Context = [AlgorithmID: A128KW (the KEK's alg, not -29), PartyUInfo, PartyVInfo,
 * SuppPubInfo: [keyDataLength 128, protected, other]], no SuppPrivInfo: the examples' KEKs need exactly this. */
int mota_enc_kdf_context(const struct mota_enc_recipient *r, uint8_t *out, size_t cap, size_t *len)
{
    struct mota_cbor_enc e;
    if (r == NULL || out == NULL || len == NULL || r->alg != MOTA_ENC_ECDH_ES_A128KW ||
        (r->protected_hdr == NULL && r->protected_len != 0))
        return MOTA_ERR_ARG;
    mota_cbor_enc_init(&e, out, cap);
    mota_cbor_put_array(&e, 4);
    mota_cbor_put_int(&e, MOTA_ENC_A128KW);
    put_party_info(&e);
    put_party_info(&e);
    mota_cbor_put_array(&e, 3);
    mota_cbor_put_uint(&e, MOTA_AES128_KEY_LEN * 8u);
    mota_cbor_put_bstr(&e, r->protected_hdr, r->protected_len);
    mota_cbor_put_bstr(&e, kdf_other, sizeof(kdf_other) - 1);
    if (e.err != 0)
        return e.err;
    *len = e.len;
    return MOTA_OK;
}

int mota_enc_ecdh_kek(const uint8_t d[32], const uint8_t pub[65], const struct mota_enc_recipient *r,
                      uint8_t kek[MOTA_AES128_KEY_LEN])
{
    int ret = MOTA_ERR_ARG;
    uint8_t z[MOTA_ECDH_SECRET_LEN], ctx[MOTA_ENC_KDF_CONTEXT_MAX];
    size_t ctx_len = 0;
    if (d == NULL || pub == NULL || r == NULL || kek == NULL)
        return ret;
    ret = mota_enc_kdf_context(r, ctx, sizeof(ctx), &ctx_len);
    if (ret == MOTA_OK)
        ret = mota_p256_ecdh(d, pub, z);
    if (ret == MOTA_OK) /* no salt header: an empty salt */
        ret = mota_hkdf_sha256(r->salt, r->salt_len, z, sizeof(z), ctx, ctx_len, kek, MOTA_AES128_KEY_LEN);
    mota_cipher_wipe(z, sizeof(z));
    return ret;
}

/* A KW recipient: the KEK its kid names, or without a kid every KEK. */
static int cek_kw(const struct mota_enc_recipient *r, const struct mota_enc_keys *keys, uint8_t *cek, bool *attempted)
{
    for (size_t k = 0; k < keys->n_keks; k++) {
        const struct mota_kek *kek = &keys->keks[k];
        if (r->kid != NULL && (kek->kid_len != r->kid_len || memcmp(kek->kid, r->kid, r->kid_len) != 0))
            continue;
        *attempted = true;
        int ret = mota_kw_unwrap(kek->k, r->wrapped, MOTA_ENC_WRAPPED_LEN, cek);
        if (ret != MOTA_ERR_ENC_UNWRAP)
            return ret;
    }
    return MOTA_ERR_ENC_NO_KEY;
}

/* An ECDH recipient: the device's key, if the recipient names no other. */
static int cek_ecdh(const struct mota_enc_recipient *r, const struct mota_enc_keys *keys, uint8_t *cek, bool *attempted)
{
    int ret = MOTA_ERR_ENC_NO_KEY;
    uint8_t pub[1 + 2 * P256_COORD], kek[MOTA_AES128_KEY_LEN];
    if (keys->device_d == NULL)
        return ret;
    if (r->kid != NULL && (keys->device_kid == NULL || keys->device_kid_len != r->kid_len ||
                           memcmp(keys->device_kid, r->kid, r->kid_len) != 0))
        return ret;
    pub[0] = 0x04; /* uncompressed */
    memcpy(pub + 1, r->epk_x, P256_COORD);
    memcpy(pub + 1 + P256_COORD, r->epk_y, P256_COORD);
    ret = mota_enc_ecdh_kek(keys->device_d, pub, r, kek);
    if (ret == MOTA_OK) {
        *attempted = true;
        ret = mota_kw_unwrap(kek, r->wrapped, MOTA_ENC_WRAPPED_LEN, cek);
    }
    mota_cipher_wipe(kek, sizeof(kek));
    return ret;
}

int mota_enc_cek(const struct mota_enc_info *ei, const struct mota_enc_keys *keys, uint8_t cek[MOTA_AES128_KEY_LEN])
{
    int ret = MOTA_ERR_ENC_NO_KEY;
    uint8_t tmp[MOTA_AES128_KEY_LEN];
    bool attempted = false, bad_epk = false;
    if (ei == NULL || keys == NULL || cek == NULL || (keys->keks == NULL && keys->n_keks > 0) ||
        ei->n_recipients > MOTA_ENC_MAX_RECIPIENTS)
        return MOTA_ERR_ARG;
    for (size_t i = 0; i < ei->n_recipients; i++) {
        const struct mota_enc_recipient *r = &ei->r[i];
        if (r->alg == MOTA_ENC_A128KW)
            ret = cek_kw(r, keys, tmp, &attempted);
        else if (r->alg == MOTA_ENC_ECDH_ES_A128KW && r->epk_x != NULL && r->epk_y != NULL)
            ret = cek_ecdh(r, keys, tmp, &attempted);
        else
            ret = MOTA_ERR_ENC_ALG; /* not what mota_enc_info_decode gives */
        if (ret == MOTA_OK) {
            memcpy(cek, tmp, sizeof(tmp));
            break;
        }
        if (ret == MOTA_ERR_ENC_EPK) /* another recipient may still serve */
            bad_epk = true;
        else if (ret != MOTA_ERR_ENC_NO_KEY && ret != MOTA_ERR_ENC_UNWRAP)
            break; /* the device's own key or the library failed: no recipient helps */
    }
    mota_cipher_wipe(tmp, sizeof(tmp));
    if (ret == MOTA_OK || (ret != MOTA_ERR_ENC_NO_KEY && ret != MOTA_ERR_ENC_UNWRAP && ret != MOTA_ERR_ENC_EPK))
        return ret;
    return bad_epk ? MOTA_ERR_ENC_EPK : attempted ? MOTA_ERR_ENC_UNWRAP : MOTA_ERR_ENC_NO_KEY;
}

/* ---- encoder ---- */

/* [protected, unprotected, wrapped] in canonical key order: 1 (KW's alg; ECDH's is protected), 4, -1 */
static void put_recipient(struct mota_cbor_enc *e, const struct mota_enc_recipient_spec *r)
{
    bool ecdh = r->alg == MOTA_ENC_ECDH_ES_A128KW;
    mota_cbor_put_array(e, 3);
    if (ecdh)
        mota_cbor_put_bstr(e, mota_enc_ecdh_protected, sizeof(mota_enc_ecdh_protected));
    else
        mota_cbor_put_bstr(e, NULL, 0);
    mota_cbor_put_map(e, 1u + (r->kid_len > 0));
    if (!ecdh) {
        mota_cbor_put_int(e, MOTA_ENC_LABEL_ALG);
        mota_cbor_put_int(e, MOTA_ENC_A128KW);
    }
    if (r->kid_len > 0) {
        mota_cbor_put_int(e, MOTA_ENC_LABEL_KID);
        mota_cbor_put_bstr(e, r->kid, r->kid_len);
    }
    if (ecdh) {
        mota_cbor_put_int(e, MOTA_ENC_LABEL_EPK);
        mota_cbor_put_map(e, 4);
        mota_cbor_put_int(e, MOTA_COSE_KEY_KTY);
        mota_cbor_put_int(e, 2); /* EC2 */
        mota_cbor_put_int(e, MOTA_COSE_KEY_CRV);
        mota_cbor_put_int(e, 1); /* P-256 */
        mota_cbor_put_int(e, MOTA_COSE_KEY_X);
        mota_cbor_put_bstr(e, r->epk + 1, P256_COORD);
        mota_cbor_put_int(e, MOTA_COSE_KEY_Y);
        mota_cbor_put_bstr(e, r->epk + 1 + P256_COORD, P256_COORD);
    }
    mota_cbor_put_bstr(e, r->wrapped, MOTA_ENC_WRAPPED_LEN);
}

/* What the encoder would write and the decoder then refuse is an argument error. */
static bool spec_ok(const struct mota_enc_info_spec *s)
{
    if (s->alg != MOTA_ENC_A128GCM && s->alg != MOTA_ENC_A128CTR)
        return false;
    if (s->n_recipients < 1 || s->n_recipients > MOTA_ENC_MAX_RECIPIENTS)
        return false;
    for (size_t i = 0; i < s->n_recipients; i++) {
        const struct mota_enc_recipient_spec *r = &s->r[i];
        if (r->alg != MOTA_ENC_A128KW && r->alg != MOTA_ENC_ECDH_ES_A128KW)
            return false;
        if (r->kid_len > MOTA_ENC_MAX_KID || (r->kid == NULL && r->kid_len > 0))
            return false;
        if (r->alg == MOTA_ENC_ECDH_ES_A128KW && r->epk[0] != 0x04)
            return false;
    }
    return true;
}

int mota_enc_info_encode(const struct mota_enc_info_spec *s, uint8_t *out, size_t cap, size_t *len)
{
    struct mota_cbor_enc e;
    bool gcm;
    if (s == NULL || out == NULL || len == NULL || !spec_ok(s))
        return MOTA_ERR_ARG;
    gcm = s->alg == MOTA_ENC_A128GCM;
    mota_cbor_enc_init(&e, out, cap);
    mota_cbor_put_tag(&e, MOTA_COSE_TAG_ENCRYPT);
    mota_cbor_put_array(&e, 4);
    /* the examples' layout: GCM's alg protected (the AAD covers it), CTR's unprotected beside h'' */
    mota_cbor_put_bstr(&e, gcm ? gcm_protected : NULL, gcm ? sizeof(gcm_protected) : 0);
    mota_cbor_put_map(&e, gcm ? 1 : 2);
    if (!gcm) {
        mota_cbor_put_int(&e, MOTA_ENC_LABEL_ALG);
        mota_cbor_put_int(&e, MOTA_ENC_A128CTR);
    }
    mota_cbor_put_int(&e, MOTA_ENC_LABEL_IV);
    mota_cbor_put_bstr(&e, s->iv, gcm ? MOTA_GCM_IV_LEN : MOTA_AES_BLOCK);
    mota_cbor_put_null(&e);
    mota_cbor_put_array(&e, s->n_recipients);
    for (size_t i = 0; i < s->n_recipients; i++)
        put_recipient(&e, &s->r[i]);
    if (e.err != 0)
        return e.err;
    *len = e.len;
    return MOTA_OK;
}
