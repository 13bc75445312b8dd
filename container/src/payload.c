/* SPDX-License-Identifier: Apache-2.0 */
/* Integrated payloads: their heads after the manifest, the walk that checks them against it (sizes, order,
 * digests), the whole container's verification, and the reconstruction of a transformed payload. */
#include "mota/container.h"

#include "mota/cbor.h"
#include "mota/crypto.h"
#include "mota/decompress.h"
#include "mota/delta.h"
#include "mota/encinfo.h"
#include "mota/err.h"

#include <string.h>

int mota_payload_head(const uint8_t *buf, size_t len, const char **name, size_t *name_len, uint64_t *size,
                      size_t *head_len)
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
        if (prev_name != NULL && mota_cbor_key_order((const uint8_t *)prev_name - 1, prev_name_len + 1,
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
            /* a transformed payload's own digest (its transport's); its image's is mota_payload_reconstruct's */
            mota_sha256(buf + pos + hl, (size_t)size, md);
            if (mota_ct_memcmp(md, comp->transport ? comp->wire_digest : comp->digest, MOTA_SHA256_LEN) != 0)
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

int mota_container_check_digests(const uint8_t *buf, size_t len, struct mota_verify_result *res)
{
    int ret;
    uint8_t md[MOTA_SHA256_LEN];
    if (buf == NULL || res == NULL)
        return MOTA_ERR_ARG;
    memset(res, 0, sizeof(*res));
    if ((ret = mota_envelope_decode(buf, len, &res->env)) != 0)
        return ret;
    /* the signature is the device's to check; the digest it signs must still be the manifest's */
    mota_sha256(res->env.manifest_wrapped, res->env.manifest_wrapped_len, md);
    if (mota_ct_memcmp(md, res->env.digest, MOTA_SHA256_LEN) != 0)
        return MOTA_ERR_MANIFEST_DIGEST;
    if ((ret = mota_manifest_decode(&res->env, &res->manifest)) != 0)
        return ret;
    return walk_payloads(buf, len, res, true);
}

int mota_container_verify(const uint8_t *buf, size_t len, const struct mota_trusted_key *keys, size_t n_keys,
                          struct mota_verify_result *res)
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

/* Decrypt n bytes of a payload in place, checking a GCM tag that follows them */
static int decrypt(const struct mota_enc_info *ei, const uint8_t cek[MOTA_AES128_KEY_LEN], const uint8_t *wire,
                   uint8_t *out, size_t n)
{
    struct mota_aes128 aes;
    uint8_t aad[MOTA_ENC_AAD_MAX];
    size_t aad_len;
    int ret = MOTA_OK;
    mota_aes128_setkey(&aes, cek, false);
    if (ei->alg == MOTA_ENC_A128CTR) {
        struct mota_ctr ctr;
        mota_ctr_start(&ctr, &aes, ei->iv, 0);
        mota_ctr_xor(&ctr, wire, out, n);
        mota_cipher_wipe(&ctr, sizeof(ctr));
    } else if ((ret = mota_enc_aad(ei, aad, sizeof(aad), &aad_len)) == MOTA_OK) {
        struct mota_gcm gcm;
        uint8_t tag[MOTA_GCM_TAG_LEN];
        memcpy(tag, wire + n, MOTA_GCM_TAG_LEN);
        mota_gcm_start(&gcm, &aes, ei->iv, true, aad, aad_len);
        mota_gcm_update(&gcm, wire, out, n);
        ret = mota_gcm_finish(&gcm, tag);
        mota_cipher_wipe(&gcm, sizeof(gcm));
    }
    mota_cipher_wipe(&aes, sizeof(aes));
    return ret;
}

/* A delta image: the decoded differences (out) plus the source's prediction, once the source is the one named. */
static int add_prediction(const struct mota_component *c, const uint8_t *src, size_t src_len, uint8_t *out)
{
#if !MOTA_FEATURE_DELTA
    (void)c, (void)src, (void)src_len, (void)out;
    return MOTA_ERR_DELTA_OFF; /* never decoded as one */
#else
    struct mota_delta d; /* host use: 780 bytes on the stack */
    const struct mota_delta_source s = {src, NULL, NULL};
    uint8_t md[MOTA_SHA256_LEN];
    if (src == NULL || src_len != c->src_size)
        return MOTA_ERR_DELTA_SOURCE;
    mota_sha256(src, src_len, md);
    if (mota_ct_memcmp(md, c->src_digest, MOTA_SHA256_LEN) != 0)
        return MOTA_ERR_DELTA_SOURCE;
    int ret = mota_delta_load(&d, c->regions, c->regions_len, (uint32_t)c->size, c->src_size);
    return ret != MOTA_OK ? ret : mota_delta_apply(&d, 0, out, (size_t)c->size, true, &s);
#endif
}

int mota_payload_reconstruct(const struct mota_component *c, const uint8_t *wire, size_t wire_len, const uint8_t *cek,
                             uint8_t *out, size_t cap)
{
    return mota_payload_reconstruct_from(c, wire, wire_len, cek, NULL, 0, out, cap);
}

int mota_payload_reconstruct_from(const struct mota_component *c, const uint8_t *wire, size_t wire_len,
                                  const uint8_t *cek, const uint8_t *src, size_t src_len, uint8_t *out, size_t cap)
{
    uint8_t md[MOTA_SHA256_LEN];
    int ret = MOTA_ERR_ARG;
    if (c == NULL || wire == NULL || out == NULL || !c->transport || c->encrypted != (cek != NULL) || c->size > cap ||
        c->size > 0xFFFFFFFFu || wire_len != c->wire_size)
        return ret;
    size_t body = wire_len;
    const uint8_t *in = wire;
    if (c->encrypted) {
        struct mota_enc_info ei;
        if ((ret = mota_enc_info_decode(c->enc_info, c->enc_len, &ei)) != MOTA_OK)
            return ret;
        size_t tag = ei.alg == MOTA_ENC_A128GCM ? MOTA_GCM_TAG_LEN : 0;
        if (body <= tag || (!c->compressed && body - tag != c->size))
            return MOTA_ERR_PAYLOAD_SIZE; /* what the profile refuses: checked here too, for any caller */
        body -= tag;
        /* decrypted where the image goes when it is the image, else in a second buffer behind it */
        uint8_t *plain = c->compressed ? out + c->size : out;
        if (c->compressed && cap - c->size < body)
            return MOTA_ERR_ARG;
        if ((ret = decrypt(&ei, cek, wire, plain, body)) != MOTA_OK)
            return ret;
        in = plain;
    }
    if (c->delta && src == NULL)
        return MOTA_ERR_DELTA_SOURCE; /* before any work: no source */
    if (c->compressed) {
        struct mota_decompress d; /* host use: up to 6.9 KiB (LZMA's models) on the stack */
        ret = mota_decompress_buffer(&d, c->z_alg, in, body, out, (uint32_t)c->size, c->z_block);
        if (ret == MOTA_OK && c->delta)
            ret = add_prediction(c, src, src_len, out);
        if (ret != MOTA_OK)
            return ret;
    }
    mota_sha256(out, (size_t)c->size, md);
    if (mota_ct_memcmp(md, c->digest, MOTA_SHA256_LEN) == 0)
        return MOTA_OK;
    return c->encrypted ? MOTA_ERR_DECRYPT_IMAGE_DIGEST : MOTA_ERR_DECOMP_IMAGE_DIGEST;
}
