/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: what the host reads from a device's answers (host_tool/src/link): HELLO's device info and
 * STATUS's models (devinfo_decode.c, model_io.c), the ids of its decryption keys (HELLO key 18) and its
 * device key (STATUS key 7), an answer in parts and the parts put together (pages.c); and
 * what a board reads from its flash at every boot, the provisioning record (agent/src/provision.c).
 * Input: the first byte picks the reader (0 HELLO, 1 STATUS, 2 the record), the rest is the answer or the
 * sector. Nothing may crash or read out of bounds; what is accepted holds the rules it must. */
#include "link/devlink.h"
#include "link/pages.h"

#include "mota/crypto.h"
#include "mota/err.h"
#include "mota/provision.h"
#include "mota/proto_keys.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_models(const struct dev_model *m, unsigned n)
{
    if (n > DEV_MAX_MODELS)
        abort();
    for (unsigned i = 0; i < n; i++)
        if (strlen(m[i].name) >= sizeof(m[i].name) || strlen(m[i].version) >= sizeof(m[i].version) ||
            (m[i].io.known && (m[i].io.n_in > DEV_IO_MAX || m[i].io.n_out > DEV_IO_MAX)))
            abort();
}

/* an answer in parts: one part, and that part's models put together with the rest of it, as the host does */
static void pages(const uint8_t *b, size_t len, int64_t models_key, int64_t from_key)
{
    static uint8_t doc[CLIENT_DOC_MAX];
    struct answer_page p;
    size_t n = 0;
    if (answer_page(b, len, models_key, from_key, &p) != MOTA_OK)
        return;
    if (p.items_len > len || (p.items != NULL && (p.items < b || p.items + p.items_len > b + len)))
        abort(); /* inside the answer */
    if (answer_merge(b, len, models_key, from_key, p.items, p.items_len, p.n, doc, sizeof(doc), &n) == MOTA_OK &&
        n > sizeof(doc))
        abort();
}

/* HELLO key 18: ids within their bounds */
static void dec_keys(const uint8_t *b, size_t len)
{
    struct dev_dec_keys k;
    char text[2 * 32 + 3];
    if (!devinfo_dec_keys(b, len, &k))
        return;
    if (k.n_keks > MOTA_DECRYPT_KEKS_MAX)
        abort();
    for (unsigned i = 0; i < k.n_keks; i++) {
        if (k.kek_id_len[i] == 0 || k.kek_id_len[i] > sizeof(k.kek_id[i]))
            abort();
        devprint_kid(k.kek_id[i], k.kek_id_len[i], text, sizeof(text));
        if (strlen(text) >= sizeof(text))
            abort();
    }
}

/* a version 3 record's keys: within their bounds, a device key whose id is its point's */
static void record_keys(const struct mota_provision *p)
{
    uint8_t kid[MOTA_KEY_ID_LEN];
    if (p->n_keks > MOTA_PROVISION_KEKS)
        abort();
    for (unsigned i = 0; i < p->n_keks; i++)
        if (p->keks[i].kid_len == 0 || p->keks[i].kid_len > MOTA_ENC_MAX_KID)
            abort();
    mota_key_id(p->device_pub, kid);
    if (p->has_device_key && (p->device_pub[0] != 0x04 || memcmp(kid, p->device_kid, sizeof(kid)) != 0))
        abort();
}

static void record(const uint8_t *b, size_t len)
{
    struct mota_provision p, q;
    uint8_t again[sizeof(struct mota_provision_rec)];
    if (mota_provision_decode(b, len, &p) != MOTA_OK)
        return;
    if (p.n_models == 0 || p.n_models > MOTA_PROVISION_MODELS || p.n_keys > MOTA_PROVISION_KEYS ||
        memchr(p.vendor_name, 0, sizeof(p.vendor_name)) == NULL ||
        memchr(p.class_name, 0, sizeof(p.class_name)) == NULL)
        abort();
    record_keys(&p);
    if (mota_provision_encode(&p, again, sizeof(again)) < 0) /* what decodes encodes again */
        abort();
    if (mota_provision_decode(again, sizeof(again), &q) != MOTA_OK || q.n_keks != p.n_keks ||
        q.has_device_key != p.has_device_key || memcmp(q.keks, p.keks, sizeof(q.keks)) != 0 ||
        memcmp(q.device_d, p.device_d, sizeof(q.device_d)) != 0)
        abort(); /* and reads back with the same keys */
    mota_provision_wipe(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct dev_model models[DEV_MAX_MODELS];
    struct dev_profile prof;
    unsigned n = 0;
    char name[65];
    uint8_t id[16];
    size_t idn;
    uint64_t ms;
    uint8_t pub[65];
    if (size == 0)
        return 0;
    const uint8_t *b = data + 1;
    size_t len = size - 1;
    switch (data[0] % 3) {
    case 0:
        devinfo_models(b, len, MOTA_INFO_MODELS, models, &n);
        check_models(models, n);
        devinfo_profile(b, len, &prof);
        devinfo_identity_name(b, len, 0, name, sizeof(name));
        devinfo_identity_name(b, len, 1, name, sizeof(name));
        devinfo_identity(b, len, 1, id);
        devinfo_device_id(b, len, id, &idn);
        dec_keys(b, len);
        pages(b, len, MOTA_INFO_MODELS, MOTA_INFO_MODELS_FROM);
        break;
    case 1:
        devinfo_models(b, len, MOTA_STATUS_MODELS, models, &n);
        check_models(models, n);
        devinfo_uptime_ms(b, len, &ms);
        devinfo_device_key(b, len, pub);
        pages(b, len, MOTA_STATUS_MODELS, MOTA_STATUS_MODELS_FROM);
        break;
    default: record(b, len); break;
    }
    return 0;
}
