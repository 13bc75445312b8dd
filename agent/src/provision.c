/* SPDX-License-Identifier: Apache-2.0 */
/* The provisioning record (see mota/provision.h): decoded, encoded, applied to the agent's configuration. */
#include "mota/provision.h"

#include "mota/cipher.h"
#include "mota/crc32.h"
#include "mota/crypto.h"
#include "mota/err.h"
#include "mota/features.h"
#include "mota/le.h"

#include <string.h>

static bool terminated(const char *s, size_t cap)
{
    return memchr(s, 0, cap) != NULL;
}

/* The device's id from a record that carries it, else one derived from the whole record (a record of an
 * older mota): stable for as long as the record is, and apart for records that differ. */
static void device_id(const struct mota_provision_rec *r, const uint8_t *buf, size_t size, struct mota_provision *p)
{
    static const char tag[] = "mota-provision:";
    if (r->device_id_len > 0) {
        memcpy(p->device_id, r->device_id, r->device_id_len);
        p->device_id_len = r->device_id_len;
        return;
    }
    uint8_t h[MOTA_SHA256_LEN];
    struct mota_sha256 ctx;
    mota_sha256_init(&ctx);
    mota_sha256_update(&ctx, tag, sizeof(tag) - 1);
    mota_sha256_update(&ctx, buf, size); /* the record as written: a version 1 one, 480 bytes */
    mota_sha256_finish(&ctx, h);
    memcpy(p->device_id, h, MOTA_PROVISION_DEVICE_ID_LEN);
    p->device_id_len = MOTA_PROVISION_DEVICE_ID_LEN;
    p->device_id_derived = true;
}

/* The record's own size by its version (version 1 has no names, 2 no keys), 0 for none; its crc is its last
 * word. */
static size_t record_size(const uint8_t *buf, size_t len)
{
    struct mota_provision_rec r;
    memcpy(&r, buf, MOTA_PROVISION_V1_SIZE);
    size_t size = r.version == 1   ? MOTA_PROVISION_V1_SIZE
                  : r.version == 2 ? MOTA_PROVISION_V2_SIZE
                  : r.version == 3 ? sizeof(r)
                                   : 0;
    if (r.magic != MOTA_PROVISION_MAGIC || size == 0 || r.size != size || len < size ||
        mota_get32(buf + size - 4u) != mota_crc32(0, buf, size - 4u))
        return 0;
    return size;
}

/* P-256's base point G, uncompressed (SEC 2) */
static const uint8_t p256_g[MOTA_P256_PUB_LEN] = {
    0x04, 0x6b, 0x17, 0xd1, 0xf2, 0xe1, 0x2c, 0x42, 0x47, 0xf8, 0xbc, 0xe6, 0xe5, 0x63, 0xa4, 0x40, 0xf2,
    0x77, 0x03, 0x7d, 0x81, 0x2d, 0xeb, 0x33, 0xa0, 0xf4, 0xa1, 0x39, 0x45, 0xd8, 0x98, 0xc2, 0x96, 0x4f,
    0xe3, 0x42, 0xe2, 0xfe, 0x1a, 0x7f, 0x9b, 0x8e, 0xe7, 0xeb, 0x4a, 0x7c, 0x0f, 0x9e, 0x16, 0x2b, 0xce,
    0x33, 0x57, 0x6b, 0x31, 0x5e, 0xce, 0xcb, 0xb6, 0x40, 0x68, 0x37, 0xbf, 0x51, 0xf5};

/*
 * The device's key pair holds together: pub is a point of the curve (ECDH with it works) whose x is that
 * of d.G (ECDH of d with G). The device has no scalar multiplication that gives y, so -d.G would pass too:
 * it is the same key for ECDH (the shared secret is an x), only its id would differ. A build without
 * decryption has no ECDH: it checks the point's form only, and never uses the key.
 */
static int device_key_check(const uint8_t d[32], const uint8_t pub[MOTA_P256_PUB_LEN])
{
    int ret = MOTA_ERR_PROVISION;
    if (pub[0] != 0x04)
        return ret;
#if MOTA_FEATURE_DECRYPT
    uint8_t z[MOTA_ECDH_SECRET_LEN];
    if (mota_p256_ecdh(d, p256_g, z) == MOTA_OK && mota_ct_memcmp(z, pub + 1, sizeof(z)) == 0 &&
        mota_p256_ecdh(d, pub, z) == MOTA_OK)
        ret = MOTA_OK;
    mota_cipher_wipe(z, sizeof(z));
#else
    (void)d, (void)p256_g;
    ret = MOTA_OK;
#endif
    return ret;
}

/* Version 3's keys of encrypted payloads into p, checked (a version 1 or 2 record: zero, none). */
static int decode_enc_keys(const struct mota_provision_rec *r, struct mota_provision *p)
{
    if (r->n_keks > MOTA_PROVISION_KEKS || r->device_key > 1)
        return MOTA_ERR_PROVISION;
    for (unsigned i = 0; i < r->n_keks; i++) {
        if (r->keks[i].kid_len == 0 || r->keks[i].kid_len > MOTA_ENC_MAX_KID)
            return MOTA_ERR_PROVISION;
        p->keks[i].kid_len = r->keks[i].kid_len;
        memcpy(p->keks[i].kid, r->keks[i].kid, r->keks[i].kid_len);
        memcpy(p->keks[i].k, r->keks[i].k, MOTA_AES128_KEY_LEN);
    }
    p->n_keks = r->n_keks;
    if (r->device_key == 0)
        return MOTA_OK;
    if (device_key_check(r->device_d, r->device_pub) != MOTA_OK)
        return MOTA_ERR_PROVISION;
    memcpy(p->device_d, r->device_d, sizeof(p->device_d));
    memcpy(p->device_pub, r->device_pub, sizeof(p->device_pub));
    mota_key_id(p->device_pub, p->device_kid);
    p->has_device_key = true;
    return MOTA_OK;
}

/* The identity and trust anchors of a record whose size and crc are right into p, checked. */
static int decode_identity(const struct mota_provision_rec *r, struct mota_provision *p)
{
    if (r->n_keys > MOTA_PROVISION_KEYS || r->n_models == 0 || r->n_models > MOTA_PROVISION_MODELS ||
        !terminated(r->name, sizeof(r->name)) || r->device_id_len > MOTA_AGENT_DEVICE_ID_MAX ||
        !terminated(r->vendor_name, sizeof(r->vendor_name)) || !terminated(r->class_name, sizeof(r->class_name)))
        return MOTA_ERR_PROVISION;
    memcpy(p->vendor_id, r->vendor_id, 16);
    memcpy(p->class_id, r->class_id, 16);
    memcpy(p->name, r->name, sizeof(p->name));
    p->n_keys = r->n_keys;
    for (unsigned k = 0; k < r->n_keys; k++) {
        if (r->keys[k].pub[0] != 0x04)
            return MOTA_ERR_PROVISION;
        p->keys[k].index = r->keys[k].index;
        memcpy(p->keys[k].pub, r->keys[k].pub, MOTA_P256_PUB_LEN);
    }
    p->n_models = r->n_models;
    for (unsigned m = 0; m < r->n_models; m++) {
        if (!terminated(r->models[m], sizeof(r->models[m])) || r->models[m][0] == 0)
            return MOTA_ERR_PROVISION;
        memcpy(p->models[m], r->models[m], sizeof(p->models[m]));
    }
    p->max_trial_boots = r->max_trial_boots;
    memcpy(p->vendor_name, r->vendor_name, sizeof(p->vendor_name));
    memcpy(p->class_name, r->class_name, sizeof(p->class_name));
    return MOTA_OK;
}

int mota_provision_decode(const uint8_t *buf, size_t len, struct mota_provision *p)
{
    struct mota_provision_rec r;
    int ret = MOTA_ERR_PROVISION;
    if (buf == NULL || p == NULL || len < MOTA_PROVISION_V1_SIZE)
        return MOTA_ERR_ARG;
    memset(p, 0, sizeof(*p));
    bool erased = true;
    for (size_t i = 0; i < MOTA_PROVISION_V1_SIZE && erased; i++)
        erased = buf[i] == 0xFF;
    if (erased)
        return MOTA_ERR_NOT_PROVISIONED;
    size_t size = record_size(buf, len);
    if (size == 0)
        return MOTA_ERR_PROVISION;
    /* an older version's crc is where the newer fields begin: those read as zero (no names, no keys) */
    memset(&r, 0, sizeof(r));
    memcpy(&r, buf, size - 4u);
    if ((ret = decode_identity(&r, p)) == MOTA_OK && (ret = decode_enc_keys(&r, p)) == MOTA_OK)
        device_id(&r, buf, size, p);
    mota_cipher_wipe(&r, sizeof(r)); /* the copy holds the keys */
    if (ret != MOTA_OK)
        mota_provision_wipe(p);
    return ret;
}

/* p's keys of encrypted payloads into the record (version 3); MOTA_ERR_ARG for what decode would refuse. */
static int encode_enc_keys(const struct mota_provision *p, struct mota_provision_rec *r)
{
    if (p->n_keks > MOTA_PROVISION_KEKS)
        return MOTA_ERR_ARG;
    for (unsigned i = 0; i < p->n_keks; i++) {
        if (p->keks[i].kid_len == 0 || p->keks[i].kid_len > MOTA_ENC_MAX_KID)
            return MOTA_ERR_ARG;
        r->keks[i].kid_len = (uint8_t)p->keks[i].kid_len;
        memcpy(r->keks[i].kid, p->keks[i].kid, p->keks[i].kid_len);
        memcpy(r->keks[i].k, p->keks[i].k, MOTA_AES128_KEY_LEN);
    }
    r->n_keks = (uint8_t)p->n_keks;
    if (p->has_device_key) {
        r->device_key = 1;
        memcpy(r->device_d, p->device_d, sizeof(r->device_d));
        memcpy(r->device_pub, p->device_pub, sizeof(r->device_pub));
    }
    return MOTA_OK;
}

int mota_provision_encode(const struct mota_provision *p, uint8_t *out, size_t cap)
{
    struct mota_provision_rec r;
    if (p == NULL || out == NULL || cap < sizeof(r) || p->n_keys > MOTA_PROVISION_KEYS || p->n_models == 0 ||
        p->n_models > MOTA_PROVISION_MODELS || p->max_trial_boots > 255 || !terminated(p->name, sizeof(p->name)) ||
        p->device_id_len > MOTA_AGENT_DEVICE_ID_MAX || !terminated(p->vendor_name, sizeof(p->vendor_name)) ||
        !terminated(p->class_name, sizeof(p->class_name)))
        return MOTA_ERR_ARG;
    memset(&r, 0, sizeof(r));
    r.magic = MOTA_PROVISION_MAGIC;
    r.version = MOTA_PROVISION_VERSION;
    r.size = sizeof(r);
    memcpy(r.vendor_id, p->vendor_id, 16);
    memcpy(r.class_id, p->class_id, 16);
    memcpy(r.name, p->name, sizeof(r.name));
    memcpy(r.vendor_name, p->vendor_name, sizeof(r.vendor_name));
    memcpy(r.class_name, p->class_name, sizeof(r.class_name));
    r.n_keys = (uint8_t)p->n_keys;
    r.n_models = (uint8_t)p->n_models;
    r.max_trial_boots = (uint8_t)p->max_trial_boots;
    if (!p->device_id_derived) { /* a derived id is the record's own: not written into it */
        r.device_id_len = p->device_id_len;
        memcpy(r.device_id, p->device_id, p->device_id_len);
    }
    for (unsigned k = 0; k < p->n_keys; k++) {
        r.keys[k].index = p->keys[k].index;
        memcpy(r.keys[k].pub, p->keys[k].pub, MOTA_P256_PUB_LEN);
    }
    for (unsigned m = 0; m < p->n_models; m++) {
        if (!terminated(p->models[m], sizeof(p->models[m])) || p->models[m][0] == 0)
            return MOTA_ERR_ARG; /* nothing secret in r yet */
        memcpy(r.models[m], p->models[m], sizeof(r.models[m]));
    }
    int ret = encode_enc_keys(p, &r);
    if (ret == MOTA_OK) {
        r.crc = mota_crc32(0, &r, offsetof(struct mota_provision_rec, crc));
        memcpy(out, &r, sizeof(r));
        ret = (int)sizeof(r);
    }
    mota_cipher_wipe(&r, sizeof(r)); /* the copy holds the keys */
    return ret;
}

void mota_provision_apply(const struct mota_provision *p, struct mota_agent_config *cfg)
{
    memcpy(cfg->vendor_id, p->vendor_id, 16);
    memcpy(cfg->class_id, p->class_id, 16);
    cfg->n_keys = p->n_keys < MOTA_AGENT_MAX_KEYS ? p->n_keys : MOTA_AGENT_MAX_KEYS;
    memcpy(cfg->keys, p->keys, sizeof(cfg->keys[0]) * cfg->n_keys);
    if (p->max_trial_boots != 0)
        cfg->max_trial_boots = p->max_trial_boots;
    memcpy(cfg->device_id, p->device_id, sizeof(cfg->device_id));
    cfg->device_id_len = p->device_id_len;
    cfg->vendor_name = p->vendor_name;
    cfg->class_name = p->class_name;
    /* the keys stay in p: cfg points at them */
    memset(&cfg->enc, 0, sizeof(cfg->enc));
    cfg->enc.keks = p->n_keks > 0 ? p->keks : NULL;
    cfg->enc.n_keks = p->n_keks;
    if (p->has_device_key) {
        cfg->enc.device_d = p->device_d;
        cfg->enc.device_pub = p->device_pub;
        cfg->enc.device_kid = p->device_kid;
        cfg->enc.device_kid_len = MOTA_KEY_ID_LEN;
    }
}

void mota_provision_wipe(struct mota_provision *p)
{
    mota_cipher_wipe(p, sizeof(*p));
}
