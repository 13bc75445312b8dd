/* SPDX-License-Identifier: Apache-2.0 */
/* The provisioning record (see mota/provision.h): decoded, encoded, applied to the agent's configuration. */
#include "mota/provision.h"

#include "mota/crc32.h"
#include "mota/crypto.h"
#include "mota/err.h"
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

/* The record's own size by its version (version 1 has no names), 0 for neither; its crc is its last word. */
static size_t record_size(const uint8_t *buf, size_t len)
{
    struct mota_provision_rec r;
    memcpy(&r, buf, MOTA_PROVISION_V1_SIZE);
    size_t size = r.version == 1 ? MOTA_PROVISION_V1_SIZE : r.version == 2 ? sizeof(r) : 0;
    if (r.magic != MOTA_PROVISION_MAGIC || size == 0 || r.size != size || len < size ||
        mota_get32(buf + size - 4u) != mota_crc32(0, buf, size - 4u))
        return 0;
    return size;
}

int mota_provision_decode(const uint8_t *buf, size_t len, struct mota_provision *p)
{
    struct mota_provision_rec r;
    if (buf == NULL || p == NULL || len < MOTA_PROVISION_V1_SIZE)
        return MOTA_ERR_ARG;
    memset(p, 0, sizeof(*p));
    bool erased = true;
    for (size_t i = 0; i < MOTA_PROVISION_V1_SIZE && erased; i++)
        erased = buf[i] == 0xFF;
    if (erased)
        return MOTA_ERR_NOT_PROVISIONED;
    size_t size = record_size(buf, len);
    memset(&r, 0, sizeof(r));
    memcpy(&r, buf, size); /* a version 1 record: no names, its crc where they begin (zeroed below) */
    if (size == MOTA_PROVISION_V1_SIZE)
        memset(r.vendor_name, 0, 4);
    if (size == 0 || r.n_keys > MOTA_PROVISION_KEYS || r.n_models == 0 || r.n_models > MOTA_PROVISION_MODELS ||
        !terminated(r.name, sizeof(r.name)) || r.device_id_len > MOTA_AGENT_DEVICE_ID_MAX ||
        !terminated(r.vendor_name, sizeof(r.vendor_name)) || !terminated(r.class_name, sizeof(r.class_name)))
        return MOTA_ERR_PROVISION;
    memcpy(p->vendor_id, r.vendor_id, 16);
    memcpy(p->class_id, r.class_id, 16);
    memcpy(p->name, r.name, sizeof(p->name));
    p->n_keys = r.n_keys;
    for (unsigned k = 0; k < r.n_keys; k++) {
        if (r.keys[k].pub[0] != 0x04)
            return MOTA_ERR_PROVISION;
        p->keys[k].index = r.keys[k].index;
        memcpy(p->keys[k].pub, r.keys[k].pub, MOTA_P256_PUB_LEN);
    }
    p->n_models = r.n_models;
    for (unsigned m = 0; m < r.n_models; m++) {
        if (!terminated(r.models[m], sizeof(r.models[m])) || r.models[m][0] == 0)
            return MOTA_ERR_PROVISION;
        memcpy(p->models[m], r.models[m], sizeof(p->models[m]));
    }
    p->max_trial_boots = r.max_trial_boots;
    memcpy(p->vendor_name, r.vendor_name, sizeof(p->vendor_name));
    memcpy(p->class_name, r.class_name, sizeof(p->class_name));
    device_id(&r, buf, size, p);
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
            return MOTA_ERR_ARG;
        memcpy(r.models[m], p->models[m], sizeof(r.models[m]));
    }
    memcpy(out, &r, sizeof(r));
    r.crc = mota_crc32(0, out, offsetof(struct mota_provision_rec, crc));
    memcpy(out, &r, sizeof(r));
    return (int)sizeof(r);
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
}
