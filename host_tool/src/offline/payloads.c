/* SPDX-License-Identifier: Apache-2.0 */
/* Integrated payloads on the host: located by the container's own decoder, images rebuilt by the
 * device's code (mota_payload_reconstruct), so the host reads them as a device does; and encrypted for
 * mota pack with the draft's key distribution (mota_enc_info_encode, the KDF context of encinfo.c). */
#include "payloads.h"

#include "common/files.h"
#include "common/kek.h"
#include "common/util.h"

#include "mota/cbor.h"
#include "mota/cipher.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tool_payload_find(const uint8_t *buf, size_t len, const struct mota_verify_result *r, enum mota_component_role role,
                      const struct mota_component **comp, const uint8_t **wire, size_t *wire_len)
{
    size_t pos = r->env.head_len;
    for (size_t i = 0; i < r->env.n_payloads && pos <= len; i++) {
        const char *name;
        size_t name_len, hl;
        uint64_t size;
        int ret = mota_payload_head(buf + pos, len - pos, &name, &name_len, &size, &hl);
        if (ret != MOTA_OK)
            return ret;
        if (size > len - pos - hl)
            return MOTA_ERR_CBOR_TRUNCATED;
        const struct mota_component *c = mota_manifest_find_payload(&r->manifest, name, name_len);
        if (c != NULL && c->role == role) {
            *comp = c;
            *wire = buf + pos + hl;
            *wire_len = (size_t)size;
            return MOTA_OK;
        }
        pos += hl + (size_t)size;
    }
    return MOTA_ERR_PAYLOAD_MISSING;
}

int tool_payload_rebuild(const struct mota_component *c, const uint8_t *wire, size_t wire_len, const uint8_t *cek,
                         uint8_t **out)
{
    return tool_payload_rebuild_from(c, wire, wire_len, cek, NULL, 0, out);
}

int tool_payload_rebuild_from(const struct mota_component *c, const uint8_t *wire, size_t wire_len, const uint8_t *cek,
                              const uint8_t *src, size_t src_len, uint8_t **out)
{
    /* compressed and encrypted: the decrypted stream goes behind the image */
    size_t cap = (size_t)c->size + (c->compressed && c->encrypted ? wire_len : 0);
    int ret = MOTA_ERR_IO;
    *out = NULL;
    if (c->size > SIZE_MAX / 2 || wire_len > SIZE_MAX / 2)
        return MOTA_ERR_ARG;
    uint8_t *buf = malloc(cap > 0 ? cap : 1);
    if (buf == NULL)
        return ret;
    ret = mota_payload_reconstruct_from(c, wire, wire_len, cek, src, src_len, buf, cap);
    if (c->encrypted) /* no plaintext left in freed memory: the decrypted stream, a refused image */
        mota_cipher_wipe(ret == MOTA_OK ? buf + c->size : buf, ret == MOTA_OK ? cap - (size_t)c->size : cap);
    if (ret != MOTA_OK) {
        free(buf);
        return ret;
    }
    *out = buf;
    return MOTA_OK;
}

/* The content key of an encrypted component, from keys (NULL: none here). */
static int component_cek(const struct mota_component *c, const struct mota_enc_keys *keys,
                         uint8_t cek[MOTA_AES128_KEY_LEN])
{
    struct mota_enc_info ei;
    int ret = mota_enc_info_decode(c->enc_info, c->enc_len, &ei);
    if (ret != MOTA_OK)
        return ret;
    if (keys == NULL)
        return MOTA_ERR_ENC_NO_KEY;
    return mota_enc_cek(&ei, keys, cek);
}

int tool_payload_image(const struct mota_component *c, const uint8_t *wire, size_t wire_len,
                       const struct mota_enc_keys *keys, const uint8_t **img, size_t *img_len, uint8_t **owned)
{
    uint8_t cek[MOTA_AES128_KEY_LEN];
    int ret = MOTA_OK;
    *owned = NULL;
    if (!c->transport) {
        *img = wire;
        *img_len = wire_len;
        return MOTA_OK;
    }
    if (c->encrypted)
        ret = component_cek(c, keys, cek);
    if (ret == MOTA_OK)
        ret = tool_payload_rebuild(c, wire, wire_len, c->encrypted ? cek : NULL, owned);
    mota_cipher_wipe(cek, sizeof(cek));
    if (ret != MOTA_OK)
        return ret;
    *img = *owned;
    *img_len = (size_t)c->size;
    return MOTA_OK;
}

/* mota's profile, as a device holds it: one content key for a container (docs/container-format.md) */
static int one_cek(const struct mota_verify_result *r, const struct mota_enc_keys *keys,
                   const struct mota_component **failed)
{
    uint8_t first[MOTA_AES128_KEY_LEN], cek[MOTA_AES128_KEY_LEN];
    bool have = false;
    int ret = MOTA_OK;
    for (size_t c = 0; c < r->manifest.n_components && ret == MOTA_OK && keys != NULL; c++) {
        if (!r->manifest.comp[c].encrypted)
            continue;
        *failed = &r->manifest.comp[c];
        if ((ret = component_cek(&r->manifest.comp[c], keys, cek)) != MOTA_OK)
            break;
        if (have && mota_ct_memcmp(first, cek, sizeof(cek)) != 0)
            ret = MOTA_ERR_ENC_INFO; /* a device refuses it: the payloads carry two keys */
        memcpy(first, cek, sizeof(cek));
        have = true;
    }
    mota_cipher_wipe(first, sizeof(first));
    mota_cipher_wipe(cek, sizeof(cek));
    return ret;
}

int tool_verify_images(const uint8_t *buf, size_t len, const struct mota_verify_result *r,
                       const struct mota_enc_keys *keys, const struct mota_component **failed, size_t *unchecked)
{
    *unchecked = 0;
    int ret0 = one_cek(r, keys, failed);
    if (ret0 != MOTA_OK)
        return ret0;
    for (size_t c = 0; c < r->manifest.n_components; c++) {
        const struct mota_component *comp;
        const uint8_t *wire = NULL, *img = NULL;
        size_t wire_len = 0, img_len = 0;
        uint8_t *owned = NULL;
        if (!r->manifest.comp[c].transport)
            continue; /* its payload is its image: the payload digest was its image's */
        if ((r->manifest.comp[c].encrypted && keys == NULL) || r->manifest.comp[c].delta) {
            (*unchecked)++; /* its image is checked where its key is, or its source (a delta) */
            continue;
        }
        *failed = &r->manifest.comp[c];
        int ret = tool_payload_find(buf, len, r, r->manifest.comp[c].role, &comp, &wire, &wire_len);
        if (ret == MOTA_OK)
            ret = tool_payload_image(comp, wire, wire_len, keys, &img, &img_len, &owned);
        if (owned != NULL)
            mota_cipher_wipe(owned, img_len); /* a decrypted model is not left in freed memory */
        free(owned);
        if (ret != MOTA_OK)
            return ret;
    }
    *failed = NULL;
    return MOTA_OK;
}

/* ---- encryption (mota pack) ---- */

const char *tool_enc_alg_name(int alg)
{
    switch (alg) {
    case MOTA_ENC_A128GCM: return "A128GCM";
    case MOTA_ENC_A128CTR: return "A128CTR";
    case MOTA_ENC_A128KW: return "A128KW";
    case MOTA_ENC_ECDH_ES_A128KW: return "ECDH-ES+A128KW";
    default: return "unknown";
    }
}

bool tool_kid_is_text(const uint8_t *kid, size_t len)
{
    if (len == 0 || !mota_utf8_valid(kid, len))
        return false;
    for (size_t i = 0; i < len; i++) {
        if (kid[i] < 0x20 || kid[i] == 0x7F)
            return false;
    }
    return true;
}

/* Recipient i: the CEK wrapped with the KEK of the file at path (A128KW), named by its kid. */
static int recipient_kek(struct tool_enc *e, size_t i, const char *path)
{
    struct mota_kek k;
    struct mota_enc_recipient_spec *r = &e->spec.r[i];
    int ret = tool_kek_read(path, &k);
    if (ret == MOTA_OK)
        ret = mota_kw_wrap(k.k, e->cek, sizeof(e->cek), r->wrapped);
    if (ret == MOTA_OK) {
        r->alg = MOTA_ENC_A128KW;
        memcpy(e->kids[i], k.kid, k.kid_len);
        r->kid = e->kids[i];
        r->kid_len = k.kid_len;
    } else if (ret != MOTA_ERR_IO) { /* tool_map said why it could not read the file */
        tool_fail(ret, "--encrypt-kek %s", path);
    }
    mota_cipher_wipe(&k, sizeof(k));
    return ret;
}

/* Recipient i: the device whose P-256 public key is at path, by ECDH-ES+A128KW with a fresh ephemeral
 * key: the KEK is HKDF-SHA256 of the shared secret and the recipient's KDF context; its kid the device
 * key's id. */
static int recipient_ecdh(struct tool_enc *e, size_t i, const char *path)
{
    struct mota_p256_key dev, eph;
    struct mota_enc_recipient_spec *r = &e->spec.r[i];
    /* what the device will decode: the protected header mota writes, no salt */
    struct mota_enc_recipient view = {.alg = MOTA_ENC_ECDH_ES_A128KW,
                                      .protected_hdr = mota_enc_ecdh_protected,
                                      .protected_len = sizeof(mota_enc_ecdh_protected)};
    uint8_t kek[MOTA_AES128_KEY_LEN];
    memset(&eph, 0, sizeof(eph));
    int ret = tool_load_key(path, &dev);
    if (ret != MOTA_OK)
        return ret;      /* said with the path */
    if (dev.has_private) /* used all the same: its public half is the same */
        fprintf(stderr,
                "mota: warning: --encrypt-to %s holds a private key: only its public half is needed here, "
                "and a device's private key belongs on the device\n",
                path);
    if ((ret = mota_key_generate(&eph)) == MOTA_OK && (ret = mota_enc_ecdh_kek(eph.d, dev.pub, &view, kek)) == MOTA_OK)
        ret = mota_kw_wrap(kek, e->cek, sizeof(e->cek), r->wrapped);
    if (ret == MOTA_OK) {
        r->alg = MOTA_ENC_ECDH_ES_A128KW;
        memcpy(r->epk, eph.pub, sizeof(r->epk));
        mota_key_id(dev.pub, e->kids[i]);
        r->kid = e->kids[i];
        r->kid_len = MOTA_KEY_ID_LEN;
    } else {
        tool_fail(ret, "--encrypt-to %s", path);
    }
    mota_cipher_wipe(kek, sizeof(kek));
    mota_cipher_wipe(&eph, sizeof(eph)); /* the ephemeral key serves this container alone */
    mota_cipher_wipe(&dev, sizeof(dev));
    return ret;
}

/* e->who: "A128KW kid 'kid-1'; ECDH-ES+A128KW to device key <id>" */
static void describe_recipients(struct tool_enc *e)
{
    size_t at = 0;
    char hex[2 * MOTA_ENC_MAX_KID + 1];
    e->who[0] = '\0';
    for (size_t i = 0; i < e->spec.n_recipients && at < sizeof(e->who); i++) {
        const struct mota_enc_recipient_spec *r = &e->spec.r[i];
        const char *sep = i > 0 ? "; " : "";
        if (r->alg == MOTA_ENC_A128KW)
            at += (size_t)snprintf(e->who + at, sizeof(e->who) - at, "%sA128KW kid '%.*s'", sep, (int)r->kid_len,
                                   (const char *)r->kid);
        else
            at += (size_t)snprintf(e->who + at, sizeof(e->who) - at, "%sECDH-ES+A128KW to device key %s", sep,
                                   tool_hex_str(r->kid, r->kid_len, hex, sizeof(hex)));
    }
}

int tool_enc_start(struct tool_enc *e, int alg, const struct tool_recipient *r, size_t n)
{
    int ret = MOTA_ERR_ARG;
    memset(e, 0, sizeof(*e));
    if (n == 0 || n > MOTA_ENC_MAX_RECIPIENTS)
        return ret;
    e->spec.alg = alg;
    e->spec.n_recipients = n;
    if ((ret = mota_random(e->cek, sizeof(e->cek))) != MOTA_OK) {
        tool_fail(ret, "a content key");
        return ret;
    }
    for (size_t i = 0; i < n && ret == MOTA_OK; i++)
        ret = r[i].ecdh ? recipient_ecdh(e, i, r[i].path) : recipient_kek(e, i, r[i].path);
    if (ret != MOTA_OK) {
        tool_enc_wipe(e);
        return ret;
    }
    describe_recipients(e);
    return MOTA_OK;
}

/* Encrypt n bytes at in into out (GCM: its tag after them), as info describes them. */
static int encrypt(const struct tool_enc *e, const uint8_t *info, size_t info_len, const uint8_t *in, size_t n,
                   uint8_t *out)
{
    struct mota_enc_info ei;
    struct mota_aes128 aes;
    uint8_t aad[MOTA_ENC_AAD_MAX];
    size_t aad_len = 0;
    /* the AAD from the bytes the device will read: the info decodes as it will there */
    int ret = mota_enc_info_decode(info, info_len, &ei);
    if (ret == MOTA_OK && ei.alg == MOTA_ENC_A128GCM)
        ret = mota_enc_aad(&ei, aad, sizeof(aad), &aad_len);
    if (ret != MOTA_OK)
        return ret;
    mota_aes128_setkey(&aes, e->cek, false);
    if (ei.alg == MOTA_ENC_A128CTR) {
        struct mota_ctr ctr;
        mota_ctr_start(&ctr, &aes, ei.iv, 0);
        mota_ctr_xor(&ctr, in, out, n);
        mota_cipher_wipe(&ctr, sizeof(ctr));
    } else {
        struct mota_gcm gcm;
        mota_gcm_start(&gcm, &aes, ei.iv, false, aad, aad_len);
        mota_gcm_update(&gcm, in, out, n);
        ret = mota_gcm_finish(&gcm, out + n);
        mota_cipher_wipe(&gcm, sizeof(gcm));
    }
    mota_cipher_wipe(&aes, sizeof(aes));
    return ret;
}

int tool_enc_payload(const struct tool_enc *e, const uint8_t *in, size_t n, uint8_t **out, size_t *out_len,
                     uint8_t *info, size_t *info_len)
{
    struct mota_enc_info_spec s = e->spec;
    size_t tag = s.alg == MOTA_ENC_A128GCM ? MOTA_GCM_TAG_LEN : 0;
    int ret = mota_random(s.iv, s.alg == MOTA_ENC_A128GCM ? MOTA_GCM_IV_LEN : sizeof(s.iv) - 4);
    *out = NULL;
    /* CTR: the low 32 bits of the first counter block zero, so that a 32-bit and a 128-bit counter agree
     * (docs/container-format.md) */
    if (ret == MOTA_OK)
        ret = mota_enc_info_encode(&s, info, MOTA_ENC_MAX_INFO, info_len);
    uint8_t *buf = ret == MOTA_OK && n <= SIZE_MAX - tag ? malloc(n + tag > 0 ? n + tag : 1) : NULL;
    if (ret == MOTA_OK && buf == NULL)
        ret = MOTA_ERR_IO;
    if (ret == MOTA_OK)
        ret = encrypt(e, info, *info_len, in, n, buf);
    if (ret != MOTA_OK) {
        free(buf);
        return ret;
    }
    *out = buf;
    *out_len = n + tag;
    return MOTA_OK;
}

void tool_enc_wipe(struct tool_enc *e)
{
    mota_cipher_wipe(e, sizeof(*e));
}
