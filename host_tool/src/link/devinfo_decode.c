/* SPDX-License-Identifier: Apache-2.0 */
/* Reading what a device reports: its HELLO and STATUS answers (CBOR maps, docs/protocol.md) into C structs. */
#include "devinfo.h"

#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/proto_keys.h"

#include <string.h>

void devinfo_copy_str(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
    for (size_t i = 0; i < n; i++) /* a device's text reaches a terminal: no escape sequences, no forged lines */
        if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7F)
            dst[i] = '?';
}

/* A device of another version may send an array of another length: its items are skipped, so the rest of
 * the map still decodes in step. */
static void skip_items(struct mota_cbor_dec *d, size_t n)
{
    for (size_t i = 0; i < n && d->err == 0; i++)
        mota_cbor_skip(d);
}

/* An array whose length this host knows: false (its items skipped) when a device of another version sent
 * another length. */
static bool get_tuple(struct mota_cbor_dec *d, size_t want)
{
    size_t na;
    if (mota_cbor_get_array(d, &na) != 0)
        return false;
    if (na == want)
        return true;
    skip_items(d, na);
    return false;
}

static void get_str(struct mota_cbor_dec *d, char *out, size_t cap)
{
    const char *s;
    size_t sl;
    if (mota_cbor_get_tstr(d, &s, &sl) == 0)
        devinfo_copy_str(out, cap, s, sl);
}

static unsigned get_small(struct mota_cbor_dec *d)
{
    uint64_t v;
    mota_cbor_get_uint(d, &v);
    return (unsigned)v;
}

/* [name, compiled, tool, tool version, activations, weights]: the model's own description */
static void parse_about(struct mota_cbor_dec *d, struct dev_model *m)
{
    if (!get_tuple(d, MOTA_MINFO_ABOUT_ITEMS))
        return;
    get_str(d, m->about_name, sizeof(m->about_name));
    get_str(d, m->about_compiled, sizeof(m->about_compiled));
    get_str(d, m->about_tool, sizeof(m->about_tool));
    mota_cbor_get_uint(d, &m->about_tool_version);
    mota_cbor_get_uint(d, &m->about_acts);
    m->has_about = mota_cbor_get_uint(d, &m->about_weights) == 0;
}

/* [seq, version, manifest digest, slot]: the model a rollback would bring back */
static void parse_previous(struct mota_cbor_dec *d, struct dev_model *m)
{
    const uint8_t *b;
    size_t bl;
    if (!get_tuple(d, 4))
        return;
    mota_cbor_get_uint(d, &m->previous_seq);
    get_str(d, m->previous_version, sizeof(m->previous_version));
    bool digest = mota_cbor_get_bstr(d, &b, &bl) == 0 && bl == MOTA_SHA256_LEN;
    if (digest)
        memcpy(m->previous_digest, b, MOTA_SHA256_LEN);
    m->previous_slot = get_small(d);
    m->has_previous = d->err == 0 && digest;
}

static void parse_model_field(struct mota_cbor_dec *d, int64_t key, struct dev_model *m)
{
    const uint8_t *b;
    size_t bl;
    int64_t iv;
    switch (key) {
    case MOTA_MINFO_C_NAME: get_str(d, m->name, sizeof(m->name)); break;
    case MOTA_MINFO_SLOT_SIZE: mota_cbor_get_uint(d, &m->slot_size); break;
    case MOTA_MINFO_COMMITTED: mota_cbor_get_uint(d, &m->committed); break;
    case MOTA_MINFO_LAST_ERROR:
        mota_cbor_get_int(d, &iv);
        m->last_error = (int)iv;
        break;
    case MOTA_MINFO_UPLOAD: /* [state, offset, length] */
        if (get_tuple(d, 3)) {
            m->up_state = get_small(d);
            mota_cbor_get_uint(d, &m->up_off);
            mota_cbor_get_uint(d, &m->up_len);
        }
        break;
    case MOTA_MINFO_HAS_MODEL: mota_cbor_get_bool(d, &m->has); break;
    case MOTA_MINFO_SEQ: mota_cbor_get_uint(d, &m->seq); break;
    case MOTA_MINFO_DIGEST:
        if (mota_cbor_get_bstr(d, &b, &bl) == 0 && bl == MOTA_SHA256_LEN)
            memcpy(m->digest, b, MOTA_SHA256_LEN);
        break;
    case MOTA_MINFO_VERSION: get_str(d, m->version, sizeof(m->version)); break;
    case MOTA_MINFO_PLACEMENT: /* [slot, install mode, on trial, trial boots] */
        if (get_tuple(d, 4)) {
            m->slot = get_small(d);
            m->mode = get_small(d);
            mota_cbor_get_bool(d, &m->testing);
            m->boots = get_small(d);
        }
        break;
    case MOTA_MINFO_EXEC_USED: mota_cbor_get_uint(d, &m->exec_used); break;
    case MOTA_MINFO_FAULTS: mota_cbor_get_uint(d, &m->faults); break;
    case MOTA_MINFO_ABOUT: parse_about(d, m); break;
    case MOTA_MINFO_MEMORY: /* [exec RAM, external RAM] */
        if (get_tuple(d, 2)) {
            mota_cbor_get_uint(d, &m->exec_size);
            mota_cbor_get_uint(d, &m->ext_size);
        }
        break;
    case MOTA_MINFO_PREVIOUS: parse_previous(d, m); break;
    case MOTA_MINFO_IO: dev_io_parse(d, &m->io); break;
    case MOTA_MINFO_EPOCHS:
        mota_epoch_summary_get(d, &m->epochs);
        m->has_epochs = d->err == 0;
        break;
    case MOTA_MINFO_ERROR_WHEN: /* [this boot, ms since boot] */
        if (get_tuple(d, 2)) {
            mota_cbor_get_bool(d, &m->last_error_this_boot);
            m->has_last_error_time = mota_cbor_get_uint(d, &m->last_error_ms) == 0;
        }
        break;
    default: mota_cbor_skip(d); break; /* a newer device's key */
    }
}

/* One model entry as put_ref() (agent/src/link_replies.c) writes it. */
static int parse_model(struct mota_cbor_dec *d, struct dev_model *m)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    memset(m, 0, sizeof(*m));
    mota_cbor_get_map(d, &n);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        if (mota_cbor_get_int_key(d, &key, &prev) == 0)
            parse_model_field(d, key, m);
    }
    return d->err;
}

void devinfo_profile(const uint8_t *info, size_t len, struct dev_profile *out)
{
    struct mota_cbor_dec d;
    size_t n, na;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    memset(out, 0, sizeof(*out));
    mota_cbor_dec_init(&d, info, len);
    if (mota_cbor_get_map(&d, &n) != 0)
        return;
    for (size_t i = 0; i < n && d.err == 0; i++) {
        const char *s;
        size_t sl;
        uint64_t v[MOTA_INFO_PROFILE_ITEMS];
        bool b[4];
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return;
        if (key == MOTA_INFO_PROFILE_NAME && mota_cbor_get_tstr(&d, &s, &sl) == 0) {
            devinfo_copy_str(out->name, sizeof(out->name), s, sl);
            continue;
        }
        if (key != MOTA_INFO_PROFILE) {
            mota_cbor_skip(&d);
            continue;
        }
        /* [CPU part, FPU, float ABI, secure, dbg-info, async, families, LL_ATON, struct sizes, install modes,
         *  split policy, key floor] */
        if (mota_cbor_get_array(&d, &na) != 0 || na < MOTA_INFO_PROFILE_ITEMS)
            return;
        mota_cbor_get_uint(&d, &v[0]);
        mota_cbor_get_bool(&d, &b[0]);
        mota_cbor_get_uint(&d, &v[2]);
        mota_cbor_get_bool(&d, &b[1]);
        mota_cbor_get_bool(&d, &b[2]);
        mota_cbor_get_bool(&d, &b[3]);
        for (unsigned k = 6; k < MOTA_INFO_PROFILE_ITEMS; k++)
            mota_cbor_get_uint(&d, &v[k]);
        for (size_t k = MOTA_INFO_PROFILE_ITEMS; k < na; k++)
            mota_cbor_skip(&d);
        if (d.err)
            return;
        struct mota_device_profile *p = &out->p;
        p->cpu_part = (uint32_t)v[0];
        p->fpu_enabled = b[0];
        p->float_abi = (uint32_t)v[2];
        p->secure = b[1];
        p->dbg_info = b[2];
        p->async = b[3];
        p->reloc_families = (uint32_t)v[6];
        p->has_ll_aton = v[7] != 0;
        p->ll_aton_major = (uint32_t)(v[7] >> 16) & 0xFF;
        p->ll_aton_minor = (uint32_t)(v[7] >> 8) & 0xFF;
        p->ll_aton_micro = (uint32_t)v[7] & 0xFF;
        p->struct_sizes = (uint32_t)v[8];
        p->install_modes = (uint32_t)v[9];
        p->split_policy = (uint32_t)v[10];
        out->key_floor = v[11];
        out->valid = true;
    }
}

/* The models array under `want_key` of a device-info or status map. */
int devinfo_models(const uint8_t *p, size_t len, int64_t want_key, struct dev_model *out, unsigned *n_out)
{
    struct mota_cbor_dec d;
    size_t n, na;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    *n_out = 0;
    mota_cbor_dec_init(&d, p, len);
    if (mota_cbor_get_map(&d, &n) != 0)
        return d.err;
    for (size_t i = 0; i < n; i++) {
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return d.err;
        if (key != want_key) {
            mota_cbor_skip(&d);
            continue;
        }
        if (mota_cbor_get_array(&d, &na) != 0)
            return d.err;
        for (size_t k = 0; k < na; k++) {
            struct dev_model tmp;
            if (parse_model(&d, *n_out < DEV_MAX_MODELS ? &out[*n_out] : &tmp) != 0)
                return d.err;
            if (*n_out < DEV_MAX_MODELS)
                (*n_out)++;
        }
    }
    return d.err;
}

/* Position d at the value of `want` in the device-info map; false when it has none. */
static bool info_find(struct mota_cbor_dec *d, const uint8_t *p, size_t len, int64_t want)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    mota_cbor_dec_init(d, p, len);
    if (mota_cbor_get_map(d, &n) != 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (mota_cbor_get_int_key(d, &key, &prev) != 0)
            return false;
        if (key == want)
            return true;
        if (mota_cbor_skip(d) != 0)
            return false;
    }
    return false;
}

bool devinfo_identity(const uint8_t *info, size_t len, unsigned which, uint8_t out[16])
{
    struct mota_cbor_dec d;
    size_t n, bl;
    const uint8_t *b = NULL;
    if (!info_find(&d, info, len, MOTA_INFO_IDENTITY) || mota_cbor_get_array(&d, &n) != 0 || n != 2)
        return false;
    if (which == 1 && mota_cbor_skip(&d) != 0)
        return false;
    if (mota_cbor_get_bstr(&d, &b, &bl) != 0 || bl != 16)
        return false;
    memcpy(out, b, 16);
    return true;
}

void devinfo_identity_name(const uint8_t *info, size_t len, unsigned which, char *out, size_t cap)
{
    struct mota_cbor_dec d;
    size_t n;
    out[0] = 0;
    if (!info_find(&d, info, len, MOTA_INFO_IDENTITY_NAMES) || mota_cbor_get_array(&d, &n) != 0 || n != 2)
        return;
    if (which == 1)
        mota_cbor_skip(&d);
    get_str(&d, out, cap);
    if (d.err != 0)
        out[0] = 0;
}

bool devinfo_name_makes_id(const char *name, const uint8_t *vendor_id, const uint8_t id[16])
{
    uint8_t made[16];
    if (name == NULL || name[0] == 0)
        return false;
    mota_uuid5(vendor_id != NULL ? vendor_id : mota_uuid_ns_dns, name, strlen(name), made);
    return memcmp(made, id, 16) == 0;
}

bool devinfo_device_id(const uint8_t *info, size_t len, uint8_t out[16], size_t *n)
{
    struct mota_cbor_dec d;
    const uint8_t *b = NULL;
    size_t bl = 0;
    if (!info_find(&d, info, len, MOTA_INFO_DEVICE_ID) || mota_cbor_get_bstr(&d, &b, &bl) != 0 || bl == 0 || bl > 16)
        return false;
    memcpy(out, b, bl);
    *n = bl;
    return true;
}

void devinfo_text(const uint8_t *info, size_t len, int64_t key, char *out, size_t cap)
{
    struct mota_cbor_dec d;
    const char *s;
    size_t sl;
    out[0] = 0;
    if (info_find(&d, info, len, key) && mota_cbor_get_tstr(&d, &s, &sl) == 0)
        devinfo_copy_str(out, cap, s, sl);
}

bool devinfo_bool(const uint8_t *p, size_t len, int64_t want, bool *v)
{
    struct mota_cbor_dec d;
    return info_find(&d, p, len, want) && mota_cbor_get_bool(&d, v) == 0;
}

/* An unsigned field of the device info (HELLO); false when the device does not report it. */
bool devinfo_uint(const uint8_t *p, size_t len, int64_t want, uint64_t *v)
{
    struct mota_cbor_dec d;
    return info_find(&d, p, len, want) && mota_cbor_get_uint(&d, v) == 0;
}

/* Key 18's kek-ids: 0 to MOTA_DECRYPT_KEKS_MAX kids of 1 to 32 bytes. */
static bool get_kek_ids(struct mota_cbor_dec *d, struct dev_dec_keys *out)
{
    size_t n, bl;
    const uint8_t *b = NULL;
    if (mota_cbor_get_array(d, &n) != 0 || n > MOTA_DECRYPT_KEKS_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (mota_cbor_get_bstr(d, &b, &bl) != 0 || bl == 0 || bl > sizeof(out->kek_id[0]))
            return false;
        memcpy(out->kek_id[i], b, bl);
        out->kek_id_len[i] = bl;
    }
    out->n_keks = (unsigned)n;
    return true;
}

bool devinfo_dec_keys(const uint8_t *info, size_t len, struct dev_dec_keys *out)
{
    struct mota_cbor_dec d;
    size_t n, bl;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    const uint8_t *b = NULL;
    bool ok = info_find(&d, info, len, MOTA_INFO_DECRYPT) && mota_cbor_get_map(&d, &n) == 0;
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; ok && i < n; i++) {
        ok = mota_cbor_get_int_key(&d, &key, &prev) == 0;
        if (ok && key == MOTA_DECRYPT_KEK_IDS) {
            ok = get_kek_ids(&d, out);
        } else if (ok && key == MOTA_DECRYPT_DEVICE_KEY_ID) {
            ok = mota_cbor_get_bstr(&d, &b, &bl) == 0 && bl == sizeof(out->device_kid);
            if (ok)
                memcpy(out->device_kid, b, bl);
            out->has_device_key = ok;
        } else if (ok) {
            ok = mota_cbor_skip(&d) == 0; /* a newer device's: not this host's */
        }
    }
    if (!ok)
        memset(out, 0, sizeof(*out));
    return ok;
}

bool devinfo_device_key(const uint8_t *status, size_t len, uint8_t pub[65])
{
    struct mota_cbor_dec d;
    const uint8_t *b = NULL;
    size_t bl = 0;
    if (!info_find(&d, status, len, MOTA_STATUS_DEVICE_KEY) || mota_cbor_get_bstr(&d, &b, &bl) != 0 || bl != 65 ||
        b[0] != 0x04)
        return false;
    memcpy(pub, b, 65);
    return true;
}

bool devinfo_uptime_ms(const uint8_t *status, size_t len, uint64_t *ms)
{
    return devinfo_uint(status, len, MOTA_STATUS_UPTIME, ms);
}

int devinfo_model_index(const struct dev_model *m, unsigned n, const char *name, size_t len)
{
    for (unsigned i = 0; i < n; i++)
        if (strlen(m[i].name) == len && memcmp(m[i].name, name, len) == 0)
            return (int)i;
    return -1;
}
