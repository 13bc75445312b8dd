/* SPDX-License-Identifier: Apache-2.0 */
/* status, confirm, rollback, reboot: what a device runs, and its trial decisions. */
#include "client.h"
#include "cmds.h"
#include "device_key.h"
#include "devlink.h"

#include "common/json.h"
#include "common/util.h"
#include "offline/profiles.h"

#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/crypto.h"
#include "mota/err.h"
#include "mota/nbin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING_MAX 8 /* the device's ring of recent errors (ERRORS) */

/* Everything `status` reports, decoded once from HELLO, STATUS and ERRORS, then printed as text or JSON. */
struct report {
    char name[65];
    bool provisioned, has_cause, has_identity;
    char vendor_name[257], class_name[257]; /* what the ids are made from, where the device says it */
    uint64_t cause, protocol, head_cap, max_payload, window, io_buffer, max_boots;
    uint64_t features; /* HELLO key 17: the build's (mota/features.h) */
    bool has_features;
    bool has_uptime;
    uint64_t uptime_ms;
    uint8_t vendor[16], klass[16];
    uint8_t device_id[16]; /* HELLO key 14: which device this is; device_id_len 0: it does not say */
    size_t device_id_len;
    struct dev_dec_keys dec; /* HELLO key 18: the ids of the keys it decrypts with (has_dec: it says) */
    bool has_dec, has_device_pub;
    uint8_t device_pub[MOTA_P256_PUB_LEN]; /* STATUS key 7: its P-256 public point */
    struct dev_profile profile;
    struct dev_model models[DEV_MAX_MODELS];
    unsigned n_models;
    bool has_counters, has_timing;
    uint64_t
        counters[MOTA_STATUS_COUNTER_ITEMS]; /* frames, bad CRC, malformed, oversized, responses, answers sent again */
    int64_t last_result;
    uint64_t timing
        [MOTA_STATUS_TIMING_ITEMS]; /* µs: head check, erase, digests, install, self-test, last byte to verdict; bytes hashed */
    bool has_ring;
    unsigned n_ring;
    struct {
        int code;
        uint64_t model, at_ms;
    } ring[RING_MAX];
};

static const char *const causes[] = {"power-on", "software reset", "watchdog reset", "fault reset"};
static const char *const timing_names[] = {"head_check_us", "erase_us",    "digests_us",
                                           "install_us",    "selftest_us", "verdict_after_last_byte_us",
                                           "bytes_hashed"};

static int clamp_code(int64_t code)
{
    return code < INT32_MIN || code > 0 ? INT32_MIN : (int)code;
}

/* A STATUS array of counters: the first `cap` kept, a newer device's extra ones skipped; true when all came. */
static bool get_counters(struct mota_cbor_dec *d, uint64_t *dst, size_t cap)
{
    size_t k;
    mota_cbor_get_array(d, &k);
    for (size_t j = 0; j < k && d->err == 0; j++) {
        if (j < cap)
            mota_cbor_get_uint(d, &dst[j]);
        else
            mota_cbor_skip(d);
    }
    return d->err == 0 && k >= cap;
}

static void parse_status(const uint8_t *p, size_t len, struct report *r)
{
    struct mota_cbor_dec d;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    devinfo_models(p, len, MOTA_STATUS_MODELS, r->models, &r->n_models);
    r->has_uptime = devinfo_uptime_ms(p, len, &r->uptime_ms);
    mota_cbor_dec_init(&d, p, len);
    mota_cbor_get_map(&d, &n);
    for (size_t i = 0; i < n && d.err == 0; i++) {
        mota_cbor_get_int_key(&d, &key, &prev);
        if (d.err != 0)
            break;
        if (key == MOTA_STATUS_RESULT)
            mota_cbor_get_int(&d, &r->last_result);
        else if (key == MOTA_STATUS_COUNTERS)
            r->has_counters = get_counters(&d, r->counters, MOTA_STATUS_COUNTER_ITEMS);
        else if (key == MOTA_STATUS_TIMING)
            r->has_timing = get_counters(&d, r->timing, MOTA_STATUS_TIMING_ITEMS);
        else
            mota_cbor_skip(&d);
    }
    r->has_device_pub = devinfo_device_key(p, len, r->device_pub);
}

/* ERRORS: [[code, model, ms since boot], ...], oldest first. */
static int parse_ring(const uint8_t *p, size_t len, struct report *r)
{
    struct mota_cbor_dec d;
    size_t count, three;
    mota_cbor_dec_init(&d, p, len);
    if (mota_cbor_get_array(&d, &count) != 0)
        return MOTA_ERR_PROTO_FRAME;
    for (size_t i = 0; i < count; i++) {
        int64_t code;
        uint64_t model, at_ms;
        if (mota_cbor_get_array(&d, &three) != 0 || three != 3 || mota_cbor_get_int(&d, &code) != 0 ||
            mota_cbor_get_uint(&d, &model) != 0 || mota_cbor_get_uint(&d, &at_ms) != 0)
            return MOTA_ERR_PROTO_FRAME;
        if (r->n_ring == RING_MAX) { /* a device keeping more than we show: the newest stay */
            memmove(&r->ring[0], &r->ring[1], sizeof(r->ring[0]) * (RING_MAX - 1));
            r->n_ring--;
        }
        r->ring[r->n_ring].code = clamp_code(code);
        r->ring[r->n_ring].model = model;
        r->ring[r->n_ring++].at_ms = at_ms;
    }
    r->has_ring = true;
    return MOTA_OK;
}

static void parse_info(const uint8_t *info, size_t len, struct report *r)
{
    devinfo_text(info, len, MOTA_INFO_NAME, r->name, sizeof(r->name));
    if (!devinfo_bool(info, len, MOTA_INFO_PROVISIONED, &r->provisioned))
        r->provisioned = true; /* a device that does not say is of a version that refuses unprovisioned uploads */
    r->has_cause = devinfo_uint(info, len, MOTA_INFO_RESET_CAUSE, &r->cause);
    devinfo_uint(info, len, MOTA_INFO_PROTOCOL, &r->protocol);
    devinfo_uint(info, len, MOTA_INFO_HEAD_MAX, &r->head_cap);
    devinfo_uint(info, len, MOTA_INFO_PAYLOAD, &r->max_payload);
    devinfo_uint(info, len, MOTA_INFO_WINDOW, &r->window);
    devinfo_uint(info, len, MOTA_INFO_IO_BUFFER, &r->io_buffer);
    r->has_features = devinfo_uint(info, len, MOTA_INFO_FEATURES, &r->features);
    devinfo_uint(info, len, MOTA_INFO_TRIAL_BOOTS, &r->max_boots);
    r->has_identity = devinfo_identity(info, len, 0, r->vendor) && devinfo_identity(info, len, 1, r->klass);
    devinfo_identity_name(info, len, 0, r->vendor_name, sizeof(r->vendor_name));
    devinfo_identity_name(info, len, 1, r->class_name, sizeof(r->class_name));
    if (!r->has_identity || !devinfo_name_makes_id(r->vendor_name, NULL, r->vendor)) /* shown only where true */
        r->vendor_name[0] = 0;
    if (!r->has_identity || !devinfo_name_makes_id(r->class_name, r->vendor, r->klass))
        r->class_name[0] = 0;
    if (!devinfo_device_id(info, len, r->device_id, &r->device_id_len))
        r->device_id_len = 0;
    r->has_dec = devinfo_dec_keys(info, len, &r->dec);
    devinfo_profile(info, len, &r->profile);
    devinfo_models(info, len, MOTA_INFO_MODELS, r->models, &r->n_models);
}

/* HELLO key 17's bits in order (mota/features.h) */
static const char *const feature_names[] = {"lz4",    "deflate", "legacy", "epochs",  "invoke",
                                            "trap",   "decrypt", "lzma",   "delta",   "details",
                                            "errors", "resume",  "pages",  "history", "retire"};

/* The build has feature bit (HELLO key 17), or does not say (a device from before the bit). */
static bool built_with(const struct report *r, uint64_t bit)
{
    return !r->has_features || (r->features & bit) != 0;
}

/* The id of the device's key: of the point STATUS gives (the same id HELLO gives), else HELLO's. */
static bool device_key_id(const struct report *r, uint8_t kid[MOTA_KEY_ID_LEN])
{
    if (r->has_device_pub)
        mota_key_id(r->device_pub, kid);
    else if (r->dec.has_device_key)
        memcpy(kid, r->dec.device_kid, MOTA_KEY_ID_LEN);
    return r->has_device_pub || r->dec.has_device_key;
}

/* The keys of encrypted payloads, by their ids (the device never sends a key). */
static void print_keys(const struct report *r)
{
    uint8_t kid[MOTA_KEY_ID_LEN];
    char k[2 * 32 + 3];
    if (device_key_id(r, kid)) {
        printf("  device key: id ");
        tool_hex(stdout, kid, sizeof(kid));
        if (r->has_device_pub) {
            printf(", point ");
            tool_hex(stdout, r->device_pub, sizeof(r->device_pub));
        }
        printf("\n");
    }
    if (r->dec.n_keks > 0) {
        printf("  key-encryption keys:");
        for (unsigned i = 0; i < r->dec.n_keks; i++) {
            devprint_kid(r->dec.kek_id[i], r->dec.kek_id_len[i], k, sizeof(k));
            printf("%s %s", i ? "," : "", k);
        }
        printf("\n");
    }
}

/* ---- text ---- */

static void print_report(const struct report *r)
{
    char d[320];
    printf("device %s: %s", r->name[0] ? r->name : "?",
           r->provisioned ? "provisioned" : "NOT PROVISIONED: no identity or trusted key, every update is refused");
    if (r->has_cause)
        printf("; booted after %s", r->cause < 4 ? causes[r->cause] : "an unknown reset");
    if (r->has_uptime)
        printf(", up %.1f s", (double)r->uptime_ms / 1000);
    printf("\n");
    if (r->device_id_len > 0) { /* on its own line, for scripts and eyes alike */
        printf("device id ");
        tool_hex(stdout, r->device_id, r->device_id_len);
        printf("\n");
    }
    if (r->has_identity) {
        char v[320], k[320];
        devprint_named_id(r->vendor_name, NULL, r->vendor, v, sizeof(v));
        devprint_named_id(r->class_name, r->vendor, r->klass, k, sizeof(k));
        printf("  identity: vendor %s, class %s\n", v, k);
    }
    if (r->profile.valid) {
        const struct dev_profile *dp = &r->profile;
        tool_profile_describe(&dp->p, d, sizeof(d));
        printf("  profile %s: %s; installs%s%s\n", dp->name[0] ? dp->name : "(unnamed)", d,
               (dp->p.install_modes & (1u << MOTA_INSTALL_XIP)) ? " xip" : "",
               (dp->p.install_modes & (1u << MOTA_INSTALL_COPY)) ? " copy" : "");
    }
    if (r->has_features) {
        printf("  built with:");
        for (unsigned i = 0; i < sizeof(feature_names) / sizeof(feature_names[0]); i++)
            printf(" %s%s", r->features & (1u << i) ? "" : "no ", feature_names[i]);
        printf("\n");
    }
    print_keys(r);
    devprint_models(r->models, r->n_models, r->has_uptime ? (int64_t)r->uptime_ms : -1, (unsigned)r->max_boots);
    if (r->has_timing && r->timing[0] != 0) { /* 0: no update since boot */
        static const char *const what[] = {"head check (signature, manifest, compatibility)", "erase", "digests",
                                           "install", "self-test run"};
        printf("last update:");
        for (unsigned j = 0; j < 5; j++)
            if (r->timing[j])
                printf("%s %s %.1f ms", j ? "," : "", what[j], (double)r->timing[j] / 1000);
        if (r->timing[5])
            printf("; verdict %.1f ms after the last byte", (double)r->timing[5] / 1000);
        printf("\n");
    }
    if (!built_with(r, MOTA_FEAT_ERRLOG))
        printf("recent errors: not kept (the device's build has no errors ring: a model's last error above)\n");
    else if (r->n_ring > 0)
        printf("recent errors (oldest first, since the device booted):\n");
    for (unsigned i = 0; i < r->n_ring; i++) {
        const char *name = mota_err_name(r->ring[i].code);
        const char *msg = mota_err_str(r->ring[i].code);
        printf("  %9.3f s  %s (%d) model %s: %s\n", (double)r->ring[i].at_ms / 1000.0, name ? name : "?",
               r->ring[i].code, r->ring[i].model < r->n_models ? r->models[r->ring[i].model].name : "?",
               msg ? msg : "a code this host does not know");
    }
}

/* ---- JSON (docs/json.md) ---- */

/* The keys of encrypted payloads, by their ids: the device key's id and point, the KEKs' kids. */
static void json_keys(struct json *j, const struct report *r)
{
    uint8_t kid[MOTA_KEY_ID_LEN];
    char k[2 * 32 + 3];
    if (device_key_id(r, kid))
        json_hex(j, "device_key_id", kid, sizeof(kid));
    else
        json_null(j, "device_key_id");
    if (r->has_device_pub)
        json_hex(j, "device_key", r->device_pub, sizeof(r->device_pub));
    else
        json_null(j, "device_key");
    if (!r->has_dec) {
        json_null(j, "kek_ids");
        return;
    }
    json_arr(j, "kek_ids");
    for (unsigned i = 0; i < r->dec.n_keks; i++) {
        devprint_kid(r->dec.kek_id[i], r->dec.kek_id_len[i], k, sizeof(k));
        json_str(j, NULL, k);
    }
    json_arr_end(j);
}

/* Who the device is and how it talks. */
static void json_device(struct json *j, const struct report *r)
{
    char u[37];
    json_obj(j, "device");
    json_str(j, "name", r->name);
    json_bool(j, "provisioned", r->provisioned);
    if (r->device_id_len > 0)
        json_hex(j, "device_id", r->device_id, r->device_id_len);
    else
        json_null(j, "device_id");
    if (r->has_cause)
        json_str(j, "boot_cause", r->cause < 4 ? causes[r->cause] : "unknown");
    else
        json_null(j, "boot_cause");
    if (r->has_identity) {
        json_str(j, "vendor_id", tool_uuid_str(r->vendor, u));
        json_str(j, "class_id", tool_uuid_str(r->klass, u));
    } else {
        json_null(j, "vendor_id");
        json_null(j, "class_id");
    }
    if (r->vendor_name[0])
        json_str(j, "vendor", r->vendor_name);
    else
        json_null(j, "vendor");
    if (r->class_name[0])
        json_str(j, "class", r->class_name);
    else
        json_null(j, "class");
    json_uint(j, "protocol", r->protocol);
    json_uint(j, "max_head", r->head_cap);
    json_uint(j, "max_payload", r->max_payload);
    json_uint(j, "window", r->window);
    json_uint(j, "io_buffer", r->io_buffer);
    if (r->has_features) { /* the names of the features the build has */
        json_arr(j, "features");
        for (unsigned i = 0; i < sizeof(feature_names) / sizeof(feature_names[0]); i++)
            if (r->features & (1u << i))
                json_str(j, NULL, feature_names[i]);
        json_arr_end(j);
    } else {
        json_null(j, "features");
    }
    json_uint(j, "max_trial_boots", r->max_boots);
    if (r->has_uptime)
        json_uint(j, "uptime_ms", r->uptime_ms);
    else
        json_null(j, "uptime_ms");
    json_keys(j, r);
    json_obj_end(j);
}

/* What compatibility is checked against on this device. */
static void json_profile(struct json *j, const struct report *r)
{
    char v[16];
    if (!r->profile.valid) {
        json_null(j, "profile");
        return;
    }
    const struct dev_profile *dp = &r->profile;
    const struct mota_device_profile *p = &dp->p;
    const char *cpu = mota_nbin_cpu_name((uint16_t)p->cpu_part), *abi = mota_nbin_float_abi_name(p->float_abi);
    json_obj(j, "profile");
    json_str(j, "name", dp->name);
    json_uint(j, "cpu_part", p->cpu_part);
    json_str(j, "cpu", cpu ? cpu : "");
    json_bool(j, "fpu", p->fpu_enabled);
    json_str(j, "float_abi", abi ? abi : "");
    json_bool(j, "secure", p->secure);
    json_arr(j, "families");
    if (p->reloc_families & (1u << MOTA_NBIN_FAMILY_NPU))
        json_str(j, NULL, "npu");
    if (p->reloc_families & (1u << MOTA_NBIN_FAMILY_LEGACY))
        json_str(j, NULL, "legacy");
    json_arr_end(j);
    snprintf(v, sizeof(v), "%u.%u.%u", p->ll_aton_major, p->ll_aton_minor, p->ll_aton_micro);
    if (p->has_ll_aton)
        json_str(j, "ll_aton_version", v);
    else
        json_null(j, "ll_aton_version");
    json_bool(j, "dbg_info", p->dbg_info);
    json_bool(j, "async", p->async);
    json_uint(j, "struct_sizes", p->struct_sizes);
    json_arr(j, "install_modes");
    if (p->install_modes & (1u << MOTA_INSTALL_XIP))
        json_str(j, NULL, "xip");
    if (p->install_modes & (1u << MOTA_INSTALL_COPY))
        json_str(j, NULL, "copy");
    json_arr_end(j);
    json_uint(j, "key_floor", dp->key_floor);
    json_obj_end(j);
}

/* The link's counters, the last result and update, the recent errors. */
/* An object of named counters. */
static void json_counters(struct json *j, const char *name, const char *const *names, const uint64_t *v, unsigned n)
{
    json_obj(j, name);
    for (unsigned i = 0; i < n; i++)
        json_uint(j, names[i], v[i]);
    json_obj_end(j);
}

static void json_history(struct json *j, const struct report *r)
{
    static const char *const link_names[MOTA_STATUS_COUNTER_ITEMS] = {"frames",    "bad_crc",   "malformed",
                                                                      "oversized", "responses", "resent"};
    if (r->has_counters)
        json_counters(j, "link", link_names, r->counters, MOTA_STATUS_COUNTER_ITEMS);
    json_obj(j, "last_result");
    json_reason(j, clamp_code(r->last_result));
    json_obj_end(j);
    if (r->has_timing && r->timing[0] != 0)
        json_counters(j, "last_update", timing_names, r->timing, MOTA_STATUS_TIMING_ITEMS);
    else
        json_null(j, "last_update");
    if (!built_with(r, MOTA_FEAT_ERRLOG)) {
        json_null(j, "recent_errors"); /* the build keeps none */
        return;
    }
    json_arr(j, "recent_errors");
    for (unsigned i = 0; i < r->n_ring; i++) {
        json_obj(j, NULL);
        json_reason(j, r->ring[i].code);
        json_str(j, "model", r->ring[i].model < r->n_models ? r->models[r->ring[i].model].name : "");
        json_uint(j, "at_ms", r->ring[i].at_ms);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void json_report(struct json *j, const struct report *r)
{
    json_device(j, r);
    json_profile(j, r);
    devjson_models(j, r->models, r->n_models, (unsigned)r->max_boots);
    json_history(j, r);
}

/* ---- the commands ---- */

/* --model NAME: its index on the device, or a usage error naming what the device has. */
static int model_arg(const struct link_opts *o, const struct report *r, const char *name, int *idx)
{
    char have[256] = "";
    size_t at = 0;
    *idx = 0;
    if (o->model == NULL || (*idx = devinfo_model_index(r->models, r->n_models, o->model, strlen(o->model))) >= 0)
        return EXIT_OK;
    for (unsigned i = 0; i < r->n_models && at < sizeof(have); i++)
        at += (size_t)snprintf(have + at, sizeof(have) - at, "%s%s", i ? ", " : "", r->models[i].name);
    return tool_usage_err(name, "--model %s: the device has no such model; it has %s", o->model,
                          r->n_models ? have : "none");
}

/* The command, then what the device runs now: after confirm or rollback, the outcome; never after a
 * reboot (it is gone). A link error is returned, the device's status put in *status. */
static int run_command(struct client *c, uint8_t cmd, int idx, struct report *r, int *status)
{
    const uint8_t *body;
    size_t blen;
    int ret = MOTA_OK;
    uint8_t mi = (uint8_t)idx;
    *status = MOTA_OK;
    if (cmd != MOTA_CMD_STATUS) /* one model index for every command: the device ignores it for REBOOT */
        ret = client_call(c, cmd, &mi, 1, status, &body, &blen, 3000, 3);
    if (ret != MOTA_OK || *status != MOTA_OK || cmd == MOTA_CMD_REBOOT)
        return ret;
    ret = client_status(c, status, &body, &blen, 2000, 3);
    if (ret != MOTA_OK || *status != MOTA_OK)
        return ret;
    parse_status(body, blen, r);
    if (cmd != MOTA_CMD_STATUS || !built_with(r, MOTA_FEAT_ERRLOG)) /* no ring to read */
        return MOTA_OK;
    ret = client_call(c, MOTA_CMD_ERRORS, NULL, 0, status, &body, &blen, 2000, 3);
    return ret == MOTA_OK && *status == MOTA_OK ? parse_ring(body, blen, r) : ret;
}

/* The outcome, as JSON or text; the exit code. */
/* skipped: --expect-digest found the command done already (confirm) or nothing to do (rollback): said so, in
 * the text and in the JSON ("done": false), not as if the command had run */
static int report_command(const struct client *c, const struct link_opts *o, uint8_t cmd, const char *name,
                          const struct report *r, int ret, int status, bool skipped)
{
    struct json j;
    bool ok = ret == MOTA_OK && status == MOTA_OK;
    const char *nothing = cmd == MOTA_CMD_CONFIRM ? "the model that runs it is confirmed already"
                                                  : "no model runs it (rolled back already, or never installed)";
    if (o->json) {
        json_doc(&j, stdout, name, false);
        json_reason(&j, ret != MOTA_OK ? ret : status);
        if (ok && o->expect_digest != NULL && cmd != MOTA_CMD_STATUS) {
            json_bool(&j, "done", !skipped); /* false: nothing was sent to do */
            if (skipped)
                json_str(&j, "detail", nothing);
        }
        if (ok && cmd == MOTA_CMD_STATUS)
            json_report(&j, r);
        else if (ok && cmd != MOTA_CMD_REBOOT)
            devjson_models(&j, r->models, r->n_models, (unsigned)r->max_boots);
        else if (ret != MOTA_OK)
            json_str(&j, "detail", c->why);
        json_end(&j);
    } else if (ok && cmd == MOTA_CMD_STATUS) {
        print_report(r);
    } else if (ok && !o->quiet && skipped) {
        printf("%s: nothing to do: %s\n", name, nothing);
        devprint_models(r->models, r->n_models, r->has_uptime ? (int64_t)r->uptime_ms : -1, (unsigned)r->max_boots);
    } else if (ok && !o->quiet) {
        printf("%s: done\n", name);
        if (cmd != MOTA_CMD_REBOOT)
            devprint_models(r->models, r->n_models, r->has_uptime ? (int64_t)r->uptime_ms : -1, (unsigned)r->max_boots);
    }
    if (ret != MOTA_OK) {
        link_fail(ret, c, o);
        return link_exit(ret);
    }
    if (status != MOTA_OK) {
        bool no_retire = cmd == MOTA_CMD_ROLLBACK && status == MOTA_ERR_NOT_TESTING && !built_with(r, MOTA_FEAT_RETIRE);
        tool_fail(status, no_retire ? "the device refused: its build does not retire a confirmed model (mota status: "
                                      "built with no retire)"
                                    : "the device refused");
        return EXIT_INVALID;
    }
    return EXIT_OK;
}

/*
 * --expect-digest D: confirm and rollback about one container, so that running them again does no harm
 * (a Mender state re-run after a gateway reboot). The model that runs D (or --model's, which must):
 * confirm: on trial, confirmed now; confirmed already, done (*skip); not running, MOTA_ERR_NOT_ACTIVE.
 * rollback: running, rolled back; not running (rolled back already, or never installed), done (*skip).
 * A usage error is returned as its exit code (positive).
 */
static int expect_digest(const struct link_opts *o, const struct report *r, uint8_t cmd, int *idx, bool *skip)
{
    uint8_t d[32];
    *skip = false;
    if (!tool_parse_hex(o->expect_digest, d, sizeof(d)))
        return tool_usage_err(cmd == MOTA_CMD_CONFIRM ? "confirm" : "rollback",
                              "--expect-digest: the manifest digest, 64 hex digits (mota inspect: digest)");
    int found = -1;
    for (unsigned i = 0; i < r->n_models; i++)
        if (r->models[i].has && memcmp(r->models[i].digest, d, sizeof(d)) == 0 && (o->model == NULL || (int)i == *idx))
            found = (int)i;
    if (found < 0) {
        *skip = true;
        return cmd == MOTA_CMD_CONFIRM ? MOTA_ERR_NOT_ACTIVE : MOTA_OK;
    }
    *idx = found;
    *skip = cmd == MOTA_CMD_CONFIRM && !r->models[found].testing;
    return MOTA_OK;
}

static int device_call(int argc, char **argv, uint8_t cmd, const char *name, unsigned allowed, const char *usage)
{
    struct link_opts o;
    int rc = link_args(argc, argv, &o, name, allowed, usage, false, NULL, 10);
    if (rc != EXIT_OK)
        return rc;
    static struct client c;
    static struct report r;
    const uint8_t *info;
    size_t info_len;
    int idx = 0, status = MOTA_OK, ret = link_connect_waiting(&c, &o, &info, &info_len);
    bool skip = false;
    memset(&r, 0, sizeof(r));
    if (ret == MOTA_OK) {
        parse_info(info, info_len, &r);
        if ((rc = model_arg(&o, &r, name, &idx)) != EXIT_OK ||
            (o.expect_digest && (rc = expect_digest(&o, &r, cmd, &idx, &skip)) > 0)) {
            client_close(&c);
            return rc;
        }
        if (rc < 0) /* the named container is not running: nothing to confirm */
            status = rc;
        else /* done already (skip): the models as the device has them now */
            ret = run_command(&c, skip ? MOTA_CMD_STATUS : cmd, idx, &r, &status);
        client_close(&c);
    }
    return report_command(&c, &o, cmd, name, &r, ret, status, skip && status == MOTA_OK);
}

int cmd_status(int argc, char **argv)
{
    return device_call(argc, argv, MOTA_CMD_STATUS, "status", LO_JSON | LO_WAIT,
                       "usage: mota status [--json] [--wait S] [--baud N] [--timeout S] PORT\n\n"
                       "The device: its name, its unique id (device id), identity (vendor and class ids),\n"
                       "why it booted, its compatibility profile. Per model: the active model (version,\n"
                       "seq, slot, confirmed or on trial), the previous model a rollback returns to, the\n"
                       "committed sequence number, an upload in progress, the last error and when. Then\n"
                       "where the last update spent its time and the device's recent errors (kept across\n"
                       "reconnects, cleared by a reboot). --json: docs/json.md.\n"
                       "--wait S: keep trying to reach the device for up to S seconds (rebooting, not\n"
                       "listening yet, busy with another client); reports as soon as it answers, else\n"
                       "the last attempt's failure (exit 3, 5 or 6). An attempt begun within the S\n"
                       "seconds may take up to --timeout.\n" LINK_EXITS);
}

int cmd_confirm(int argc, char **argv)
{
    return device_call(
        argc, argv, MOTA_CMD_CONFIRM, "confirm", LO_MODEL | LO_JSON | LO_QUIET | LO_EXPECT,
        "usage: mota confirm [--model NAME] [--expect-digest D] [--json] [-q] [--baud N] [--timeout S] PORT\n\n"
        "Commit the model on trial (of the first model, or NAME); prints the models after.\n"
        "--expect-digest D: the model that runs the container of manifest digest D (mota inspect);\n"
        "confirmed already is done (exit 0), not running any more is refused (MOTA_ERR_NOT_ACTIVE).\n" LINK_EXITS);
}

int cmd_rollback(int argc, char **argv)
{
    return device_call(argc, argv, MOTA_CMD_ROLLBACK, "rollback", LO_MODEL | LO_JSON | LO_QUIET | LO_EXPECT,
                       "usage: mota rollback [--model NAME] [--expect-digest D] [--json] [-q] [--baud N]\n"
                       "                     [--timeout S] PORT\n\n"
                       "Revert the model on trial to the previous confirmed one; a first model on trial\n"
                       "(no previous) is removed. A confirmed model that faulted or overran since the\n"
                       "device booted (`mota status`: faults) can be retired the same way: the previous\n"
                       "model comes back, and the retired one's sequence number stays the anti-rollback\n"
                       "floor (a fix needs a higher one). --expect-digest D: only the model running the\n"
                       "container of manifest digest D; when none runs it (rolled back already, never\n"
                       "installed) there is nothing to do (exit 0).\n" LINK_EXITS);
}

int cmd_reboot(int argc, char **argv)
{
    return device_call(
        argc, argv, MOTA_CMD_REBOOT, "reboot", LO_JSON | LO_QUIET,
        "usage: mota reboot [--json] [-q] [--baud N] [--timeout S] PORT\n\nRestart the device.\n" LINK_EXITS);
}

int link_device_key(const char *port, double timeout_s, uint8_t pub[65])
{
    struct link_opts o = {.port = port, .baud = 115200, .timeout_s = timeout_s};
    static struct client c;
    const uint8_t *info, *body;
    size_t info_len, blen;
    int status = MOTA_OK, ret = link_connect_waiting(&c, &o, &info, &info_len);
    if (ret == MOTA_OK) {
        ret = client_status(&c, &status, &body, &blen, 2000, 3);
        client_close(&c);
    }
    if (ret != MOTA_OK) {
        link_fail(ret, &c, &o);
        return link_exit(ret);
    }
    if (status != MOTA_OK) {
        tool_fail(status, "%s: the device refused STATUS", port);
        return EXIT_INVALID;
    }
    if (!devinfo_device_key(body, blen, pub)) {
        tool_fail(MOTA_ERR_ENC_NO_KEY,
                  "%s: the device has no key of its own (STATUS key 7): a device provisioned before version 3 "
                  "records, or a build older than the key; encrypt to its KEKs instead",
                  port);
        return EXIT_INVALID;
    }
    return EXIT_OK;
}
