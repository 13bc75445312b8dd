/* SPDX-License-Identifier: Apache-2.0 */
/* What the host-side link commands share: options, connecting, and decoding what the device reports. */
#include "devlink.h"
#include "client.h"

#include "common/json.h"
#include "common/util.h"
#include "offline/epochs_report.h"
#include "offline/profiles.h"

#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/err.h"
#include "mota/nbin.h"
#include "mota/proto_keys.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void copy_str(char *dst, size_t cap, const char *s, size_t n)
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
        copy_str(out, cap, s, sl);
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

void parse_profile(const uint8_t *info, size_t len, struct dev_profile *out)
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
            copy_str(out->name, sizeof(out->name), s, sl);
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
int parse_models(const uint8_t *p, size_t len, int64_t want_key, struct dev_model *out, unsigned *n_out)
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

bool dev_identity(const uint8_t *info, size_t len, unsigned which, uint8_t out[16])
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

void dev_identity_name(const uint8_t *info, size_t len, unsigned which, char *out, size_t cap)
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

bool dev_name_makes_id(const char *name, const uint8_t *vendor_id, const uint8_t id[16])
{
    uint8_t made[16];
    if (name == NULL || name[0] == 0)
        return false;
    mota_uuid5(vendor_id != NULL ? vendor_id : mota_uuid_ns_dns, name, strlen(name), made);
    return memcmp(made, id, 16) == 0;
}

void dev_named_id(const char *name, const uint8_t *vendor_id, const uint8_t id[16], char *out, size_t cap)
{
    char u[37];
    tool_uuid_str(id, u);
    if (dev_name_makes_id(name, vendor_id, id))
        snprintf(out, cap, "%s (id %s)", name, u);
    else
        snprintf(out, cap, "id %s", u);
}

bool dev_id(const uint8_t *info, size_t len, uint8_t out[16], size_t *n)
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

void dev_text(const uint8_t *info, size_t len, int64_t key, char *out, size_t cap)
{
    struct mota_cbor_dec d;
    const char *s;
    size_t sl;
    out[0] = 0;
    if (info_find(&d, info, len, key) && mota_cbor_get_tstr(&d, &s, &sl) == 0)
        copy_str(out, cap, s, sl);
}

bool info_bool(const uint8_t *p, size_t len, int64_t want, bool *v)
{
    struct mota_cbor_dec d;
    return info_find(&d, p, len, want) && mota_cbor_get_bool(&d, v) == 0;
}

/* An unsigned field of the device info (HELLO); false when the device does not report it. */
bool info_uint(const uint8_t *p, size_t len, int64_t want, uint64_t *v)
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

bool dev_dec_keys(const uint8_t *info, size_t len, struct dev_dec_keys *out)
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

void dev_kid_str(const uint8_t *kid, size_t n, char *out, size_t cap)
{
    bool text = n > 0;
    for (size_t i = 0; i < n; i++)
        text = text && kid[i] >= 0x20 && kid[i] < 0x7F;
    if (text) {
        snprintf(out, cap, "%.*s", (int)n, (const char *)kid);
        return;
    }
    size_t at = (size_t)snprintf(out, cap, "0x");
    for (size_t i = 0; i < n && at + 2 < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%02x", kid[i]);
}

bool status_device_key(const uint8_t *status, size_t len, uint8_t pub[65])
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

bool status_uptime_ms(const uint8_t *status, size_t len, uint64_t *ms)
{
    return info_uint(status, len, MOTA_STATUS_UPTIME, ms);
}

/* Per model, both slots at a glance (as `mcumgr image list` shows them). */
/* When the last error happened, from the device's own clock: "12.3 s ago", or "before the last boot". */
static void when(char *out, size_t cap, const struct dev_model *x, int64_t uptime_ms)
{
    out[0] = 0;
    if (!x->has_last_error_time)
        return;
    if (!x->last_error_this_boot)
        snprintf(out, cap, ", before the device's last boot");
    else if (uptime_ms >= 0 && (uint64_t)uptime_ms >= x->last_error_ms)
        snprintf(out, cap, ", %.1f s ago", (double)((uint64_t)uptime_ms - x->last_error_ms) / 1000);
    else
        snprintf(out, cap, ", %.1f s after the device booted", (double)x->last_error_ms / 1000);
}

/* "1st", "2nd", "3rd", "4th", "11th", ... */
static const char *ordinal(unsigned n)
{
    unsigned t = n % 100;
    return t >= 11 && t <= 13 ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

/* The active model's state. The device reverts a model on trial at the boot that would be its max_boots + 1st
 * (agent.c): with B boots on trial so far, max_boots - B more reboots keep it on trial and the one after reverts. */
static void print_trial(const struct dev_model *x, unsigned max_boots)
{
    if (!x->testing) {
        printf("confirmed\n");
        return;
    }
    if (max_boots == 0) { /* a device that does not say how many it allows */
        printf("ON TRIAL (rebooted %u time(s) on trial): confirm or roll back\n", x->boots);
        return;
    }
    unsigned left = max_boots > x->boots ? max_boots - x->boots : 0;
    char next[32] = "the next one";
    if (left > 0)
        snprintf(next, sizeof(next), "the %u%s from now", left + 1, ordinal(left + 1));
    printf("ON TRIAL (%u reboot(s) left on trial, %s reverts it; rebooted %u of %u): confirm or roll back\n", left,
           next, x->boots, max_boots);
}

/* what the model takes and gives, where the device says it (what invoke and a self-test must match) */
static void print_io(const struct dev_model *x)
{
    if (!x->io.known)
        return;
    printf("  inputs:    ");
    dev_io_line(stdout, x->io.in, x->io.n_in, x->io.in_bytes);
    printf("\n  outputs:   ");
    dev_io_line(stdout, x->io.out, x->io.n_out, x->io.out_bytes);
    printf("\n");
}

void print_models(const struct dev_model *m, unsigned n, int64_t uptime_ms, unsigned max_boots)
{
    for (unsigned i = 0; i < n; i++) {
        const struct dev_model *x = &m[i];
        printf("model %s: largest container %llu bytes", x->name, (unsigned long long)x->slot_size);
        if (x->exec_size)
            printf("; may use exec RAM %llu, external RAM %llu bytes", (unsigned long long)x->exec_size,
                   (unsigned long long)x->ext_size);
        printf("\n");
        if (x->has) {
            printf("  active:    seq %llu%s%s, slot %u, %s, exec RAM %llu bytes, ", (unsigned long long)x->seq,
                   x->version[0] ? " v" : "", x->version, x->slot, tool_install_mode(x->mode),
                   (unsigned long long)x->exec_used);
            print_trial(x, max_boots);
            if (x->has_epochs) {
                printf("  npu epochs: ");
                epochs_summary_line(stdout, &x->epochs);
                printf("\n");
            }
        } else {
            printf("  active:    none installed\n");
        }
        if (x->has_previous)
            printf("  previous:  seq %llu%s%s, slot %u (what `mota rollback` returns to)\n",
                   (unsigned long long)x->previous_seq, x->previous_version[0] ? " v" : "", x->previous_version,
                   x->previous_slot);
        else if (x->has && x->testing)
            printf("  previous:  none (a rollback removes this model: the device will have none)\n");
        else if (x->has)
            printf("  previous:  none\n");
        printf("  committed: seq %llu (the anti-rollback floor: an update needs a higher one)\n",
               (unsigned long long)x->committed);
        if (x->up_state)
            printf("  upload:    %llu of %llu bytes kept; pushing the same container resumes\n",
                   (unsigned long long)x->up_off, (unsigned long long)x->up_len);
        if (x->last_error) {
            const char *name = mota_err_name(x->last_error), *msg = mota_err_str(x->last_error);
            char w[64];
            when(w, sizeof(w), x, uptime_ms);
            printf("  last error: %s (%s)%s\n", name ? name : "?", msg ? msg : "a code this host does not know", w);
        }
        if (x->faults)
            printf("  faults:    %llu fault(s) or overrun(s) since boot\n", (unsigned long long)x->faults);
        if (x->has_about) /* what the model's own runtime says of it */
            printf("  model's report: %s, compiled %s, by %s%s%u.%u.%u; activations %llu, weights %llu bytes\n",
                   x->about_name, x->about_compiled, x->about_tool, x->about_tool[0] ? " " : "",
                   (unsigned)(x->about_tool_version >> 16) & 0xFF, (unsigned)(x->about_tool_version >> 8) & 0xFF,
                   (unsigned)x->about_tool_version & 0xFF, (unsigned long long)x->about_acts,
                   (unsigned long long)x->about_weights);
        print_io(x);
    }
}

/* The model the device runs: "active", or null. */
static void json_active(struct json *j, const struct dev_model *x, unsigned max_boots)
{
    if (!x->has) {
        json_null(j, "active");
        return;
    }
    json_obj(j, "active");
    json_uint(j, "seq", x->seq);
    json_str(j, "version", x->version);
    json_hex(j, "digest", x->digest, sizeof(x->digest));
    json_uint(j, "slot", x->slot);
    json_str(j, "install_mode", tool_install_mode(x->mode));
    json_str(j, "state", x->testing ? "trial" : "confirmed");
    json_uint(j, "trial_boots", x->boots);
    if (x->testing && max_boots > 0)
        json_uint(j, "trial_boots_left", max_boots > x->boots ? max_boots - x->boots : 0);
    else
        json_null(j, "trial_boots_left");
    json_uint(j, "exec_ram_used", x->exec_used);
    epochs_summary_json(j, "npu_epochs", x->has_epochs ? &x->epochs : NULL);
    json_obj_end(j);
}

/* What a rollback brings back, and an upload in progress: objects, or null. */
static void json_previous_and_upload(struct json *j, const struct dev_model *x)
{
    static const char *const up_states[] = {"none", "receiving", "erased", "verified"};
    if (x->has_previous) {
        json_obj(j, "previous");
        json_uint(j, "seq", x->previous_seq);
        json_str(j, "version", x->previous_version);
        json_hex(j, "digest", x->previous_digest, sizeof(x->previous_digest));
        json_uint(j, "slot", x->previous_slot);
        json_obj_end(j);
    } else {
        json_null(j, "previous");
    }
    if (x->up_state) {
        json_obj(j, "upload");
        json_str(j, "state", x->up_state < 4 ? up_states[x->up_state] : "unknown");
        json_uint(j, "offset", x->up_off);
        json_uint(j, "length", x->up_len);
        json_obj_end(j);
    } else {
        json_null(j, "upload");
    }
}

static void json_last_error(struct json *j, const struct dev_model *x)
{
    if (!x->last_error) {
        json_null(j, "last_error");
        return;
    }
    json_obj(j, "last_error");
    json_reason(j, x->last_error);
    if (x->has_last_error_time) /* unknown when the device left the time out (a full answer) */
        json_bool(j, "this_boot", x->last_error_this_boot);
    else
        json_null(j, "this_boot");
    if (x->has_last_error_time && x->last_error_this_boot)
        json_uint(j, "at_ms", x->last_error_ms);
    else
        json_null(j, "at_ms");
    json_obj_end(j);
}

/* The model's own description, when the port gives one: "report", or null. */
static void json_about(struct json *j, const struct dev_model *x)
{
    char v[16];
    if (!x->has_about) {
        json_null(j, "report");
        return;
    }
    json_obj(j, "report");
    json_str(j, "name", x->about_name);
    json_str(j, "compiled", x->about_compiled);
    json_str(j, "tool", x->about_tool);
    snprintf(v, sizeof(v), "%u.%u.%u", (unsigned)(x->about_tool_version >> 16) & 0xFF,
             (unsigned)(x->about_tool_version >> 8) & 0xFF, (unsigned)x->about_tool_version & 0xFF);
    json_str(j, "tool_version", v);
    json_uint(j, "activations", x->about_acts);
    json_uint(j, "weights", x->about_weights);
    json_obj_end(j);
}

void json_models(struct json *j, const struct dev_model *m, unsigned n, unsigned max_boots)
{
    json_arr(j, "models");
    for (unsigned i = 0; i < n; i++) {
        const struct dev_model *x = &m[i];
        json_obj(j, NULL);
        json_str(j, "name", x->name);
        json_uint(j, "max_container", x->slot_size);
        json_uint(j, "committed_seq", x->committed);
        json_active(j, x, max_boots);
        json_previous_and_upload(j, x);
        json_last_error(j, x);
        json_uint(j, "faults", x->faults);
        json_obj(j, "memory");
        json_uint(j, "exec_ram", x->exec_size);
        json_uint(j, "ext_ram", x->ext_size);
        json_obj_end(j);
        json_about(j, x);
        dev_io_json(j, &x->io);
        json_obj_end(j);
    }
    json_arr_end(j);
}

enum { O_BAUD = 256, O_JSON, O_TIMEOUT, O_MODEL, O_CONFIRM, O_INPUT, O_OUT_SIZE, O_EXPECT, O_WAIT, O_REINSTALL };

/* The LO_ bit a link option needs (every link command shares one table); 0: every command takes it. */
static unsigned link_option_need(int c)
{
    switch (c) {
    case 'q': return LO_QUIET;
    case O_JSON: return LO_JSON;
    case O_CONFIRM: return LO_CONFIRM;
    case O_REINSTALL: return LO_REINSTALL;
    case O_MODEL: return LO_MODEL;
    case O_EXPECT: return LO_EXPECT;
    case O_WAIT: return LO_WAIT;
    case O_INPUT:
    case 'o':
    case O_OUT_SIZE: return LO_INVOKE;
    default: return 0;
    }
}

/* --baud, --timeout, --wait or --output-size from optarg. */
static int link_number(int c, struct link_opts *o, const char *cmd)
{
    uint64_t v;
    bool seconds = c == O_TIMEOUT || c == O_WAIT;
    if (!tool_parse_u64(optarg, &v) || v == 0 || (seconds && v > 86400)) {
        const char *name = c == O_TIMEOUT ? "--timeout"
                           : c == O_WAIT  ? "--wait"
                           : c == O_BAUD  ? "--baud"
                                          : "--output-size";
        return tool_usage_err(cmd, "%s %s: %s", name, optarg,
                              seconds ? "seconds, from 1 to 86400" : "a positive number");
    }
    if (c == O_BAUD)
        o->baud = (unsigned)v;
    else if (c == O_TIMEOUT)
        o->timeout_s = (double)v;
    else if (c == O_WAIT)
        o->wait_s = (double)v;
    else
        o->out_size = v;
    return EXIT_OK;
}

/* The long name of option c in opts. */
static const char *link_option_name(const struct option *opts, int c)
{
    for (; opts->name != NULL; opts++)
        if (opts->val == c)
            return opts->name;
    return "?";
}

/* Written as a port rather than a file: tcp:..., a path under /dev, or something that exists and is neither a
 * regular file nor a directory (a terminal, a device node). */
static bool port_like(const char *s)
{
    struct stat st;
    if (strncmp(s, "tcp:", 4) == 0 || strncmp(s, "/dev/", 5) == 0)
        return true;
    return stat(s, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

static bool regular_file(const char *s)
{
    struct stat st;
    return stat(s, &st) == 0 && S_ISREG(st.st_mode);
}

/* A port written as the link takes it; else a usage error that shows the forms. from: where it came from. */
static int port_checked(const char *cmd, const char *port, const char *from)
{
    char why[PATH_MAX + 64];
    if (client_port_syntax(port, why, sizeof(why)))
        return EXIT_OK;
    return tool_usage_err(cmd, "%s%s; a port is %s", from, why, CLIENT_PORT_FORMS);
}

int link_default_port(const char *cmd, const char **port)
{
    static char names[8][PATH_MAX];
    const char *env = getenv("MOTA_PORT");
    if (env != NULL && env[0] != '\0') {
        *port = env;
        return port_checked(cmd, env, "MOTA_PORT ");
    }
    size_t n = ports_devices(names, 8);
    if (n == 1) {
        *port = names[0];
        fprintf(stderr, "mota: using %s (the one device mota ports finds; MOTA_PORT to choose)\n", names[0]);
        return EXIT_OK;
    }
    if (n == 0)
        return tool_usage_err(cmd,
                              "no PORT given, MOTA_PORT unset, and mota ports finds no device: give PORT or set "
                              "MOTA_PORT; a port is %s",
                              CLIENT_PORT_FORMS);
    static char list[8 * (PATH_MAX + 2)];
    list[0] = '\0';
    for (size_t i = 0; i < n && i < 8; i++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", names[i]);
    return tool_usage_err(cmd,
                          "no PORT given, MOTA_PORT unset, and mota ports finds %zu devices (%s%s): give the "
                          "one you mean as PORT or in MOTA_PORT",
                          n, list, n > 8 ? ", ..." : "");
}

/* PORT (optional) and, for push, CONTAINER: told apart by how many there are and by what each one is. */
static int link_positionals(int n, char **arg, struct link_opts *o, const char *cmd, bool want_container,
                            const char **container)
{
    int most = want_container ? 2 : 1;
    if (n > most)
        return tool_usage_err(cmd, "unexpected argument '%s'", arg[most]);
    if (want_container && n == 0)
        return tool_usage_err(cmd, "needs CONTAINER: mota %s [PORT] CONTAINER", cmd);
    if (want_container && n == 1 && port_like(arg[0]) && !regular_file(arg[0]))
        return tool_usage_err(cmd, "needs CONTAINER after the port %s: mota %s [PORT] CONTAINER", arg[0], cmd);
    if (want_container && n == 2 && regular_file(arg[0]) && port_like(arg[1]) && !regular_file(arg[1]))
        return tool_usage_err(cmd,
                              "arguments swapped: %s is a file, %s a port; mota %s [PORT] CONTAINER, a port being %s",
                              arg[0], arg[1], cmd, CLIENT_PORT_FORMS);
    if (want_container)
        *container = arg[n - 1];
    if (n < most)
        return link_default_port(cmd, &o->port);
    o->port = arg[0];
    return port_checked(cmd, arg[0], "PORT ");
}

int link_args(int argc, char **argv, struct link_opts *o, const char *cmd, unsigned allowed, const char *usage,
              bool want_container, const char **container, double default_timeout)
{
    /* clang-format off */ /* a table packed by hand */
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"baud", required_argument, 0, O_BAUD}, {"json", no_argument, 0, O_JSON},
        {"quiet", no_argument, 0, 'q'}, {"timeout", required_argument, 0, O_TIMEOUT},
        {"model", required_argument, 0, O_MODEL}, {"confirm", no_argument, 0, O_CONFIRM},
        {"reinstall", no_argument, 0, O_REINSTALL},
        {"input", required_argument, 0, O_INPUT}, {"output-size", required_argument, 0, O_OUT_SIZE},
        {"output", required_argument, 0, 'o'}, {"expect-digest", required_argument, 0, O_EXPECT},
        {"wait", required_argument, 0, O_WAIT}, {0, 0, 0, 0}};
    /* clang-format on */
    int c, rc;
    memset(o, 0, sizeof(*o));
    o->baud = 115200;
    o->timeout_s = default_timeout;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "hqo:", opts, cmd)) != -1) {
        /* every link command shares one option table; the ones a command does not take are refused */
        unsigned need = link_option_need(c);
        if (need != 0 && !(allowed & need)) /* named from the table: argv[optind - 1] may be its value */
            return tool_usage_err(cmd, "unknown option --%s", link_option_name(opts, c));
        switch (c) {
        case 'h': printf("%s%s", usage, LINK_PORT_HELP); exit(EXIT_OK);
        case 'q': o->quiet = true; break;
        case O_JSON: o->json = true; break;
        case O_CONFIRM: o->confirm = true; break;
        case O_REINSTALL: o->reinstall = true; break;
        case O_MODEL: o->model = optarg; break;
        case O_EXPECT: o->expect_digest = optarg; break;
        case O_INPUT: o->input = optarg; break;
        case 'o': o->output = optarg; break;
        case O_BAUD:
        case O_TIMEOUT:
        case O_WAIT:
        case O_OUT_SIZE:
            if ((rc = link_number(c, o, cmd)) != EXIT_OK)
                return rc;
            break;
        default: return EXIT_USAGE;
        }
    }
    return link_positionals(argc - optind, argv + optind, o, cmd, want_container, container);
}

/*
 * Open the link and say hello before the deadline (every wait inside is bounded by it). A port that
 * cannot be opened at all (no such file, connection refused) is reported at once when `first`;
 * on a reconnect it is tried again, as a device that resets drops off the bus for a moment.
 */
int connect_device(struct client *c, const struct link_opts *o, double deadline, bool first, const uint8_t **info,
                   size_t *info_len)
{
    for (;;) {
        double left = deadline - tool_now();
        c->deadline = deadline;
        int ret = client_open(c, o->port, o->baud, left > 0 ? (int)(left * 1000) + 1 : 1);
        if (ret == MOTA_OK) {
            ret = client_hello(c, info, info_len);
            if (ret == MOTA_OK)
                return MOTA_OK;
            client_close(c);
            /* the device answered and said no (busy, protocol version); on a reconnect, busy may be our
             * own earlier connection, not yet seen gone: try again */
            if (ret != MOTA_ERR_DEVICE_LOST && ret != MOTA_ERR_TRANSPORT && ret != MOTA_ERR_TIMEOUT &&
                (first || ret != MOTA_ERR_BUSY))
                return ret;
            snprintf(c->why, sizeof(c->why), "connected, but no answer to HELLO");
        } else if (first && ret != MOTA_ERR_TIMEOUT) {
            return ret;
        }
        if (tool_now() >= deadline)
            return MOTA_ERR_TIMEOUT;
        usleep(200 * 1000);
    }
}

/* A failure that may pass: the port not there yet or refusing (a device rebooting, a simulator not yet
 * listening, a USB port re-enumerating), another client holding the device, no answer. */
static bool transient(int ret)
{
    return ret == MOTA_ERR_TRANSPORT || ret == MOTA_ERR_BUSY || ret == MOTA_ERR_TIMEOUT || ret == MOTA_ERR_DEVICE_LOST;
}

/*
 * Each attempt as without --wait (bounded by --timeout, a port that cannot be opened reported at once), and
 * another one 200 ms later while the wait lasts: an attempt that began within it may run on to its own
 * --timeout, so a device that answers late is still heard.
 */
int connect_waiting(struct client *c, const struct link_opts *o, const uint8_t **info, size_t *info_len)
{
    double end = tool_now() + o->wait_s;
    for (;;) {
        int ret = connect_device(c, o, tool_now() + o->timeout_s, true, info, info_len);
        if (ret == MOTA_OK || !transient(ret) || tool_now() + 0.2 > end)
            return ret;
        usleep(200 * 1000);
    }
}

/* Exit code for a failure to reach or hear the device. */
int link_exit(int ret)
{
    return ret == MOTA_ERR_BUSY ? EXIT_BUSY : ret == MOTA_ERR_TIMEOUT ? EXIT_TIMEOUT : EXIT_IO;
}

/* Why the device could not be reached, with what the tool found (c->why). */
void link_fail(int ret, const struct client *c, const struct link_opts *o)
{
    if (ret == MOTA_ERR_BUSY)
        tool_fail(ret, "%s: another client holds the device; try again when it is done", o->port);
    else if (ret == MOTA_ERR_TIMEOUT)
        tool_fail(ret, "%s: no answer within %g s (--timeout)%s%s", o->port, o->timeout_s, c->why[0] ? ": " : "",
                  c->why);
    else if (c->why[0])
        tool_fail(ret, "%s", c->why);
    else
        tool_fail(ret, "%s", o->port);
}

int model_index(const struct dev_model *m, unsigned n, const char *name, size_t len)
{
    for (unsigned i = 0; i < n; i++)
        if (strlen(m[i].name) == len && memcmp(m[i].name, name, len) == 0)
            return (int)i;
    return -1;
}
