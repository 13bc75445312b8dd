/* push, status, confirm, rollback, invoke, reboot: the host side of the update link. */
#include "client.h"
#include "cmds.h"
#include "profiles.h"
#include "util.h"

#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/err.h"
#include "mota/nbin.h"

#include <getopt.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct dev_model {
    char name[65];
    uint64_t slot_size, committed, seq;
    int last_error;
    unsigned up_state;
    uint64_t up_off, up_len;
    bool has;
    char version[65];
    uint8_t digest[32];
    unsigned slot, mode, boots;
    bool testing;
    uint64_t exec_used, faults;
    uint64_t exec_size, ext_size; /* what a model may use here (key 14) */
    bool has_about; /* the model's own description (key 13) */
    char about_name[33], about_compiled[33], about_tool[25];
    uint64_t about_tool_version, about_acts, about_weights;
};

static void copy_str(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

/* A device of another version may send an array of another length: its items are skipped, so the rest of
 * the map still decodes in step. */
static void skip_items(struct mota_cbor_dec *d, size_t n)
{
    for (size_t i = 0; i < n && d->err == 0; i++)
        mota_cbor_skip(d);
}

/* One model entry as put_ref() (agent/src/link.c) writes it. */
static int parse_model(struct mota_cbor_dec *d, struct dev_model *m)
{
    size_t n, na;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    memset(m, 0, sizeof(*m));
    if (mota_cbor_get_map(d, &n) != 0)
        return d->err;
    for (size_t i = 0; i < n; i++) {
        const char *s;
        size_t sl;
        const uint8_t *b;
        int64_t iv;
        uint64_t v;
        bool bv;
        if (mota_cbor_get_int_key(d, &key, &prev) != 0)
            return d->err;
        switch (key) {
        case 1: if (mota_cbor_get_tstr(d, &s, &sl) == 0) copy_str(m->name, sizeof(m->name), s, sl); break;
        case 2: mota_cbor_get_uint(d, &m->slot_size); break;
        case 3: mota_cbor_get_uint(d, &m->committed); break;
        case 4: if (mota_cbor_get_int(d, &iv) == 0) m->last_error = (int)iv; break;
        case 5:
            if (mota_cbor_get_array(d, &na) == 0 && na != 3)
                skip_items(d, na);
            else if (d->err == 0 && mota_cbor_get_uint(d, &v) == 0) {
                m->up_state = (unsigned)v;
                mota_cbor_get_uint(d, &m->up_off);
                mota_cbor_get_uint(d, &m->up_len);
            }
            break;
        case 6: if (mota_cbor_get_bool(d, &bv) == 0) m->has = bv; break;
        case 7: mota_cbor_get_uint(d, &m->seq); break;
        case 8: if (mota_cbor_get_bstr(d, &b, &sl) == 0 && sl == 32) memcpy(m->digest, b, 32); break;
        case 9: if (mota_cbor_get_tstr(d, &s, &sl) == 0) copy_str(m->version, sizeof(m->version), s, sl); break;
        case 10:
            if (mota_cbor_get_array(d, &na) == 0 && na != 4)
                skip_items(d, na);
            else if (d->err == 0 && mota_cbor_get_uint(d, &v) == 0) {
                m->slot = (unsigned)v;
                mota_cbor_get_uint(d, &v);
                m->mode = (unsigned)v;
                mota_cbor_get_bool(d, &m->testing);
                mota_cbor_get_uint(d, &v);
                m->boots = (unsigned)v;
            }
            break;
        case 11: mota_cbor_get_uint(d, &m->exec_used); break;
        case 12: mota_cbor_get_uint(d, &m->faults); break;
        case 13:
            if (mota_cbor_get_array(d, &na) == 0 && na != 6)
                skip_items(d, na);
            else if (d->err == 0) {
                if (mota_cbor_get_tstr(d, &s, &sl) == 0)
                    copy_str(m->about_name, sizeof(m->about_name), s, sl);
                if (mota_cbor_get_tstr(d, &s, &sl) == 0)
                    copy_str(m->about_compiled, sizeof(m->about_compiled), s, sl);
                if (mota_cbor_get_tstr(d, &s, &sl) == 0)
                    copy_str(m->about_tool, sizeof(m->about_tool), s, sl);
                mota_cbor_get_uint(d, &m->about_tool_version);
                mota_cbor_get_uint(d, &m->about_acts);
                m->has_about = mota_cbor_get_uint(d, &m->about_weights) == 0;
            }
            break;
        case 14:
            if (mota_cbor_get_array(d, &na) == 0 && na != 2)
                skip_items(d, na);
            else if (d->err == 0 && mota_cbor_get_uint(d, &m->exec_size) == 0)
                mota_cbor_get_uint(d, &m->ext_size);
            break;
        default: mota_cbor_skip(d); break;
        }
    }
    return d->err;
}

/* The device's compatibility profile (HELLO key 6) and its name (key 11). */
struct dev_profile {
    struct mota_device_profile p;
    uint64_t key_floor;
    char name[48];
    bool valid;
};

static void parse_profile(const uint8_t *info, size_t len, struct dev_profile *out)
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
        uint64_t v[12];
        bool b[4];
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return;
        if (key == 11 && mota_cbor_get_tstr(&d, &s, &sl) == 0) {
            copy_str(out->name, sizeof(out->name), s, sl);
            continue;
        }
        if (key != 6) {
            mota_cbor_skip(&d);
            continue;
        }
        /* [CPU part, FPU, float ABI, secure, dbg-info, async, families, LL_ATON, struct sizes, install modes,
         *  split policy, key floor] */
        if (mota_cbor_get_array(&d, &na) != 0 || na < 12)
            return;
        mota_cbor_get_uint(&d, &v[0]);
        mota_cbor_get_bool(&d, &b[0]);
        mota_cbor_get_uint(&d, &v[2]);
        mota_cbor_get_bool(&d, &b[1]);
        mota_cbor_get_bool(&d, &b[2]);
        mota_cbor_get_bool(&d, &b[3]);
        for (unsigned k = 6; k < 12; k++)
            mota_cbor_get_uint(&d, &v[k]);
        for (size_t k = 12; k < na; k++)
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

static void print_profile(const struct dev_profile *dp)
{
    char d[320];
    if (!dp->valid)
        return;
    tool_profile_describe(&dp->p, d, sizeof(d));
    printf("profile %s: %s; installs%s%s\n", dp->name[0] ? dp->name : "(unnamed)", d,
           (dp->p.install_modes & (1u << MOTA_INSTALL_XIP)) ? " XIP" : "",
           (dp->p.install_modes & (1u << MOTA_INSTALL_COPY)) ? " COPY" : "");
}

static void json_profile(const struct dev_profile *dp)
{
    struct json j = {.f = stdout, .depth = 1, .first = {true, true}};
    const struct mota_device_profile *p = &dp->p;
    char v[16];
    json_obj(&j, NULL);
    json_str(&j, "name", dp->name);
    json_uint(&j, "cpu_part", p->cpu_part);
    json_str(&j, "cpu", mota_nbin_cpu_name((uint16_t)p->cpu_part) ? mota_nbin_cpu_name((uint16_t)p->cpu_part) : "");
    json_bool(&j, "fpu", p->fpu_enabled);
    json_str(&j, "float_abi", mota_nbin_float_abi_name(p->float_abi) ? mota_nbin_float_abi_name(p->float_abi) : "");
    json_bool(&j, "secure", p->secure);
    json_arr(&j, "families");
    if (p->reloc_families & (1u << MOTA_NBIN_FAMILY_NPU))
        json_str(&j, NULL, "npu");
    if (p->reloc_families & (1u << MOTA_NBIN_FAMILY_LEGACY))
        json_str(&j, NULL, "legacy");
    json_arr_end(&j);
    snprintf(v, sizeof(v), "%u.%u.%u", p->ll_aton_major, p->ll_aton_minor, p->ll_aton_micro);
    if (p->has_ll_aton)
        json_str(&j, "ll_aton", v);
    else
        json_null(&j, "ll_aton");
    json_bool(&j, "dbg_info", p->dbg_info);
    json_bool(&j, "async", p->async);
    json_uint(&j, "struct_sizes", p->struct_sizes);
    json_bool(&j, "xip", (p->install_modes & (1u << MOTA_INSTALL_XIP)) != 0);
    json_bool(&j, "copy", (p->install_modes & (1u << MOTA_INSTALL_COPY)) != 0);
    json_uint(&j, "key_floor", dp->key_floor);
    json_obj_end(&j);
}

/* The models array under `want_key` of a device-info or status map. */
static int parse_models(const uint8_t *p, size_t len, int64_t want_key, struct dev_model *out, unsigned *n_out)
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
            if (parse_model(&d, *n_out < 4 ? &out[*n_out] : &tmp) != 0)
                return d.err;
            if (*n_out < 4)
                (*n_out)++;
        }
    }
    return d.err;
}

/* An unsigned field of the device info (HELLO); false when the device does not report it. */
static bool info_uint(const uint8_t *p, size_t len, int64_t want, uint64_t *v)
{
    struct mota_cbor_dec d;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    mota_cbor_dec_init(&d, p, len);
    if (mota_cbor_get_map(&d, &n) != 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return false;
        if (key == want)
            return mota_cbor_get_uint(&d, v) == 0;
        if (mota_cbor_skip(&d) != 0)
            return false;
    }
    return false;
}

/* The device line of `status`: name, provisioning, why it last booted (HELLO keys 1, 8, 9). */
static void print_device(const uint8_t *p, size_t len)
{
    static const char *const causes[] = {"power-on", "software reset", "watchdog reset", "fault reset"};
    struct mota_cbor_dec d;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    char name[64] = "?";
    bool provisioned = true, has_cause = false;
    uint64_t cause = 0;
    mota_cbor_dec_init(&d, p, len);
    if (mota_cbor_get_map(&d, &n) != 0)
        return;
    for (size_t i = 0; i < n && d.err == 0; i++) {
        const char *s;
        size_t sl;
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return;
        if (key == 1 && mota_cbor_get_tstr(&d, &s, &sl) == 0)
            copy_str(name, sizeof(name), s, sl);
        else if (key == 8)
            mota_cbor_get_bool(&d, &provisioned);
        else if (key == 9)
            has_cause = mota_cbor_get_uint(&d, &cause) == 0;
        else
            mota_cbor_skip(&d);
    }
    printf("device %s: %s", name,
           provisioned ? "provisioned" : "NOT PROVISIONED: no identity or trusted key, every update is refused");
    if (has_cause)
        printf("; booted after %s", cause < 4 ? causes[cause] : "an unknown reset");
    printf("\n");
}

/* STATUS key 4: where the device's last update spent its time. */
static void print_timing(const uint8_t *p, size_t len)
{
    static const char *const what[] = {"head check (signature, manifest, compatibility)", "erase", "digests",
                                       "install", "self-test run"};
    struct mota_cbor_dec d;
    size_t n, k;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    uint64_t t[7] = {0};
    mota_cbor_dec_init(&d, p, len);
    if (mota_cbor_get_map(&d, &n) != 0)
        return;
    for (size_t i = 0; i < n && d.err == 0; i++) {
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return;
        if (key != 4) {
            mota_cbor_skip(&d);
            continue;
        }
        if (mota_cbor_get_array(&d, &k) != 0 || k < 7)
            return;
        for (size_t j = 0; j < k; j++)
            if (j >= 7 ? mota_cbor_skip(&d) != 0 : mota_cbor_get_uint(&d, &t[j]) != 0)
                return;
    }
    if (t[0] == 0)
        return; /* no update since boot */
    printf("last update:");
    for (unsigned j = 0; j < 5; j++)
        if (t[j])
            printf("%s %s %.1f ms", j ? "," : "", what[j], (double)t[j] / 1000);
    if (t[5])
        printf("; verdict %.1f ms after the last byte", (double)t[5] / 1000);
    printf("\n");
}

static const char *mode_name(unsigned m)
{
    return m == MOTA_INSTALL_XIP ? "XIP" : m == MOTA_INSTALL_COPY ? "COPY" : "?";
}

static void print_models(const struct dev_model *m, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        printf("model %s: ", m[i].name);
        if (m[i].has)
            printf("seq %llu %s%s, slot %u, %s, exec RAM %llu bytes%s", (unsigned long long)m[i].seq,
                   m[i].version[0] ? "v" : "", m[i].version, m[i].slot, mode_name(m[i].mode),
                   (unsigned long long)m[i].exec_used, m[i].testing ? ", ON TRIAL (confirm or roll back)" : ", confirmed");
        else
            printf("none installed");
        printf("; committed seq %llu; largest container %llu bytes", (unsigned long long)m[i].committed,
               (unsigned long long)m[i].slot_size);
        if (m[i].up_state)
            printf("; upload in progress at %llu of %llu", (unsigned long long)m[i].up_off,
                   (unsigned long long)m[i].up_len);
        if (m[i].last_error)
            printf("; last error %s (%s)", mota_err_name(m[i].last_error) ? mota_err_name(m[i].last_error) : "?",
                   mota_err_str(m[i].last_error));
        if (m[i].faults)
            printf("; %llu fault(s) or overrun(s) since boot", (unsigned long long)m[i].faults);
        if (m[i].exec_size)
            printf("; memory for a model: exec RAM %llu, external RAM %llu bytes", (unsigned long long)m[i].exec_size,
                   (unsigned long long)m[i].ext_size);
        printf("\n");
        if (m[i].has_about) /* what the model's own runtime says of it */
            printf("  model's report: %s, compiled %s, by %s %u.%u.%u; activations %llu, weights %llu bytes\n",
                   m[i].about_name, m[i].about_compiled, m[i].about_tool,
                   (unsigned)(m[i].about_tool_version >> 16) & 0xFF, (unsigned)(m[i].about_tool_version >> 8) & 0xFF,
                   (unsigned)m[i].about_tool_version & 0xFF, (unsigned long long)m[i].about_acts,
                   (unsigned long long)m[i].about_weights);
    }
}

/* The device's ring of recent errors (ERRORS): [[code, model, ms since boot], ...], oldest first. */
static int print_errors(const uint8_t *p, size_t len, const struct dev_model *m, unsigned n, bool json)
{
    struct mota_cbor_dec d;
    struct json j = {.f = stdout, .depth = 0, .first = {true}};
    size_t count, three;
    mota_cbor_dec_init(&d, p, len);
    if (mota_cbor_get_array(&d, &count) != 0)
        return MOTA_ERR_PROTO_FRAME;
    if (json)
        json_arr(&j, NULL);
    else if (count > 0)
        printf("recent errors (oldest first):\n");
    for (size_t i = 0; i < count; i++) {
        int64_t code;
        uint64_t model, at_ms;
        if (mota_cbor_get_array(&d, &three) != 0 || three != 3 || mota_cbor_get_int(&d, &code) != 0 ||
            mota_cbor_get_uint(&d, &model) != 0 || mota_cbor_get_uint(&d, &at_ms) != 0)
            break;
        int c32 = code < INT32_MIN || code > 0 ? INT32_MIN : (int)code;
        const char *name = mota_err_name(c32) ? mota_err_name(c32) : "?";
        const char *msg = mota_err_str(c32) ? mota_err_str(c32) : "a code this host does not know";
        const char *mname = model < n ? m[model].name : "?";
        if (json) {
            json_obj(&j, NULL);
            json_int(&j, "code", code);
            json_str(&j, "name", name);
            json_str(&j, "model", mname);
            json_uint(&j, "at_ms", at_ms);
            json_obj_end(&j);
        } else {
            printf("  %9.3f s  %s (%lld) model %s: %s\n", (double)at_ms / 1000.0, name, (long long)code, mname, msg);
        }
    }
    if (json)
        json_arr_end(&j);
    return d.err ? MOTA_ERR_PROTO_FRAME : MOTA_OK;
}

/* ---- common options ---- */

struct link_opts {
    const char *port;
    unsigned baud;
    bool json, quiet, confirm;
    double timeout_s;
    const char *model;
    const char *input, *output;
    uint64_t out_size;
};

static int link_args(int argc, char **argv, struct link_opts *o, const char *usage, bool want_container,
                     const char **container, double default_timeout)
{
    enum { O_BAUD = 256, O_JSON, O_TIMEOUT, O_MODEL, O_CONFIRM, O_INPUT, O_OUT_SIZE };
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"baud", required_argument, 0, O_BAUD}, {"json", no_argument, 0, O_JSON},
        {"quiet", no_argument, 0, 'q'}, {"timeout", required_argument, 0, O_TIMEOUT},
        {"model", required_argument, 0, O_MODEL}, {"confirm", no_argument, 0, O_CONFIRM},
        {"input", required_argument, 0, O_INPUT}, {"output-size", required_argument, 0, O_OUT_SIZE},
        {"output", required_argument, 0, 'o'}, {0, 0, 0, 0}};
    int c;
    uint64_t v;
    memset(o, 0, sizeof(*o));
    o->baud = 115200;
    o->timeout_s = default_timeout;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqo:", opts, NULL)) != -1) {
        switch (c) {
        case 'h': printf("%s", usage); exit(EXIT_OK);
        case 'q': o->quiet = true; break;
        case O_JSON: o->json = true; break;
        case O_CONFIRM: o->confirm = true; break;
        case O_MODEL: o->model = optarg; break;
        case O_INPUT: o->input = optarg; break;
        case 'o': o->output = optarg; break;
        case O_BAUD:
        case O_TIMEOUT:
        case O_OUT_SIZE:
            if (!tool_parse_u64(optarg, &v) || v == 0 || (c == O_TIMEOUT && v > 86400)) {
                tool_err(c == O_TIMEOUT ? "--timeout %s: seconds, from 1 to 86400" : "'%s' is not a positive number",
                         optarg);
                return EXIT_USAGE;
            }
            if (c == O_BAUD) o->baud = (unsigned)v;
            else if (c == O_TIMEOUT) o->timeout_s = (double)v;
            else o->out_size = v;
            break;
        default: fputs(usage, stderr); return EXIT_USAGE;
        }
    }
    if (argc - optind != (want_container ? 2 : 1)) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    o->port = argv[optind];
    if (want_container)
        *container = argv[optind + 1];
    return EXIT_OK;
}

/*
 * Open the link and say hello before the deadline (every wait inside is bounded by it). A port that
 * cannot be opened at all (no such file, connection refused) is reported at once when `first`;
 * on a reconnect it is tried again, as a device that resets drops off the bus for a moment.
 */
static int connect_device(struct client *c, const struct link_opts *o, double deadline, bool first,
                          const uint8_t **info, size_t *info_len)
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

/* Exit code for a failure to reach or hear the device. */
static int link_exit(int ret)
{
    return ret == MOTA_ERR_BUSY ? EXIT_BUSY : ret == MOTA_ERR_TIMEOUT ? EXIT_TIMEOUT : EXIT_IO;
}

/* Why the device could not be reached, with what the tool found (c->why). */
static void link_fail(int ret, const struct client *c, const struct link_opts *o)
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

static int model_index(const struct dev_model *m, unsigned n, const char *name, size_t len)
{
    for (unsigned i = 0; i < n; i++)
        if (strlen(m[i].name) == len && memcmp(m[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

/* ---- push ---- */

static void event(const struct link_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void event(const struct link_opts *o, const char *fmt, ...)
{
    va_list ap;
    if (!o->json)
        return;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static void progress(const struct link_opts *o, bool tty, uint64_t done, uint64_t total, double t0, bool final)
{
    static int last_decile = -1;
    double el = tool_now() - t0, rate = el > 0 ? (double)done / el : 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    if (o->json) {
        static double last;
        if (final || tool_now() - last > 0.25) {
            last = tool_now();
            event(o, "{\"event\": \"progress\", \"offset\": %llu, \"total\": %llu, \"bytes_per_s\": %.0f}",
                  (unsigned long long)done, (unsigned long long)total, rate);
        }
        return;
    }
    if (o->quiet)
        return;
    if (tty) {
        int width = 30, fill = total ? (int)(width * done / total) : width;
        fprintf(stderr, "\r[%.*s%*s] %3d%% %7.1f KiB/s ETA %4.0fs ", fill, "##############################",
                width - fill, "", total ? (int)(100 * done / total) : 100, rate / 1024, eta);
        if (final)
            fputc('\n', stderr);
    } else {
        int decile = total ? (int)(10 * done / total) : 10;
        if (decile != last_decile) {
            last_decile = decile;
            fprintf(stderr, "progress: %llu of %llu bytes (%d%%), %.1f KiB/s\n", (unsigned long long)done,
                    (unsigned long long)total, total ? (int)(100 * done / total) : 100, rate / 1024);
        }
    }
}

static const char push_usage[] =
    "usage: mota push [options] PORT CONTAINER\n\n"
    "Sends a container to a device (or mota sim) and reports the result. PORT is a\n"
    "serial device (--baud), a pty path, or tcp:HOST:PORT. Survives link drops and device\n"
    "resets by reconnecting and resuming from the offset the device kept.\n"
    "  --baud N       serial speed (default 115200)\n"
    "  --confirm      confirm the new model after it passed its self-test\n"
    "  --timeout S    the longest wait for the device: to connect, to answer HELLO, to acknowledge\n"
    "                 data (each window), to give its verdict after the last byte (default 60)\n"
    "  --json         one JSON event per line on stdout (for CI)\n"
    "  -q, --quiet    no progress output\n"
    "Exit codes: 0 installed (on trial, or confirmed with --confirm); 1 refused by the\n"
    "device (its reason is printed); 2 usage; 3 container unreadable or port unusable\n"
    "(no such device, connection refused); 5 device busy (another client holds it);\n"
    "6 timed out (the device stopped answering for --timeout seconds).\n";

int cmd_push(int argc, char **argv)
{
    struct link_opts o;
    const char *path = NULL;
    int rc = link_args(argc, argv, &o, push_usage, true, &path, 60);
    if (rc != EXIT_OK)
        return rc;
    struct mapped m;
    if (tool_map(path, &m) != MOTA_OK)
        return EXIT_IO;
    static struct mota_verify_result vr;
    struct mota_envelope *env = &vr.env;
    int ret = mota_envelope_decode(m.data, m.len, env);
    if (ret == MOTA_OK)
        ret = mota_manifest_decode(env, &vr.manifest);
    if (ret != MOTA_OK) {
        tool_fail(ret, "%s is not a container", path);
        tool_unmap(&m);
        return EXIT_INVALID;
    }
    signal(SIGPIPE, SIG_IGN);
    bool tty = isatty(STDERR_FILENO) && !o.json;
    static struct client c;
    const uint8_t *info;
    size_t info_len;
    struct dev_model models[4];
    unsigned n_models = 0;
    char detail[320] = "";
    double t0 = tool_now(), last_progress = t0;
    uint64_t total = m.len, acked = 0, send_ptr = 0;
    unsigned reconnects = 0;
    int result = MOTA_ERR_DEVICE_LOST;
    const char *mname = vr.manifest.compat.c_name;
    size_t mname_len = vr.manifest.compat.c_name_len;

    rc = EXIT_IO;
    ret = connect_device(&c, &o, t0 + o.timeout_s, true, &info, &info_len);
    if (ret != MOTA_OK) {
        event(&o, "{\"event\": \"result\", \"status\": \"%s\", \"installed\": false, \"message\": \"%s\", "
                  "\"seconds\": %.3f}",
              mota_err_name(ret) ? mota_err_name(ret) : "?", mota_err_str(ret), tool_now() - t0);
        link_fail(ret, &c, &o);
        rc = link_exit(ret);
        goto out;
    }
    parse_models(info, info_len, 7, models, &n_models);
    if (o.json) { /* the port is the user's text: escaped */
        printf("{\"event\": \"hello\", \"port\": ");
        json_escaped(stdout, o.port, strlen(o.port));
        printf(", \"max_payload\": %u, \"window\": %u}\n", c.max_payload, c.window);
        fflush(stdout);
    }
    if (!o.quiet && !o.json)
        fprintf(stderr, "device on %s: %u model slot(s); frames of %u bytes, window %u\n", o.port, n_models,
                c.max_payload, c.window);
    if (mname && model_index(models, n_models, mname, mname_len) < 0 && n_models > 0 && !o.json)
        fprintf(stderr, "note: the device lists no model named %.*s\n", (int)mname_len, mname);

    /* a head larger than the device's head buffer would be refused at its end: nothing is sent */
    uint64_t head_cap = 0;
    bool head_fits = !info_uint(info, info_len, 10, &head_cap) || env->head_len <= head_cap;
    if (!head_fits) {
        result = MOTA_ERR_ENV_TOO_LARGE;
        snprintf(detail, sizeof(detail), "container head of %zu bytes; the device takes at most %llu",
                 env->head_len, (unsigned long long)head_cap);
    }

    /* windowed transfer, go-back-N on loss, reconnect on link failure */
    while (head_fits) {
        int status;
        const uint8_t *body;
        size_t blen;
        uint8_t begin[36];
        mota_put32(begin, (uint32_t)total);
        memcpy(begin + 4, env->digest, 32);
        int link_err = client_call(&c, MOTA_CMD_BEGIN, begin, sizeof(begin), &status, &body, &blen, 2000, 3);
        if (link_err == MOTA_OK && status == MOTA_OK && blen >= 7) {
            uint32_t resume = mota_get32(body);
            if (resume > 0) {
                event(&o, "{\"event\": \"resume\", \"offset\": %u}", resume);
                if (!o.quiet && !o.json)
                    fprintf(stderr, "the device kept %u bytes of this container: resuming after the head\n", resume);
            }
        } else if (link_err == MOTA_OK) {
            result = status;
            break;
        }
        send_ptr = 0;
        uint16_t stale_below = c.seq + 1; /* answers to frames sent before now are ignored for rewinds */
        unsigned inflight = 0;
        double last_answer = tool_now();
        uint32_t chunk = c.max_payload > 4 ? c.max_payload - 4u : 60u;
        while (link_err == MOTA_OK) {
            while (inflight < c.window && send_ptr < total) {
                uint8_t frame[MOTA_PROTO_MAX_PAYLOAD];
                uint32_t n = total - send_ptr < chunk ? (uint32_t)(total - send_ptr) : chunk;
                mota_put32(frame, (uint32_t)send_ptr);
                memcpy(frame + 4, m.data + send_ptr, n);
                if ((link_err = client_send(&c, MOTA_CMD_DATA, frame, 4u + n, NULL)) != MOTA_OK)
                    break;
                send_ptr += n;
                inflight++;
            }
            if (link_err != MOTA_OK)
                break;
            struct mota_frame f;
            int r = client_recv(&c, &f, 500);
            if (r < 0) {
                link_err = r;
                break;
            }
            if (r == 0) {
                if (tool_now() - last_answer > 3.0) { /* silence: resend from the last acknowledged offset */
                    send_ptr = acked;
                    inflight = 0;
                    stale_below = (uint16_t)(c.seq + 1);
                    last_answer = tool_now();
                }
                if (tool_now() - last_progress > o.timeout_s) {
                    link_err = MOTA_ERR_TIMEOUT;
                    break;
                }
                continue;
            }
            if (f.cmd != MOTA_CMD_DATA || f.len < 2)
                continue;
            last_answer = tool_now();
            if (inflight > 0)
                inflight--;
            status = (int16_t)mota_get16(f.payload);
            const uint8_t *b = f.payload + 2;
            if (status == MOTA_OK && f.len >= 6) {
                uint32_t next = mota_get32(b);
                if (next > acked) {
                    acked = next;
                    last_progress = tool_now();
                    c.deadline = last_progress + o.timeout_s;
                    progress(&o, tty, acked, total, t0, false);
                }
                if (next >= total) {
                    result = MOTA_OK;
                    break;
                }
                if (next > send_ptr) { /* the device jumped ahead (resume) */
                    send_ptr = next;
                    inflight = 0;
                    stale_below = (uint16_t)(c.seq + 1);
                }
            } else if (status == MOTA_ERR_UPLOAD_OFFSET && f.len >= 10) {
                uint32_t expect = mota_get32(b), got = mota_get32(b + 4);
                /* a gap (lost frame): go back, once per gap; a repeat: ignore */
                if (got > expect && (int16_t)(f.seq - stale_below) >= 0) {
                    send_ptr = expect;
                    inflight = 0;
                    stale_below = (uint16_t)(c.seq + 1);
                }
            } else if (status == MOTA_ERR_PROTO_TOO_LARGE || status == MOTA_ERR_PROTO_NO_SESSION) {
                /* the device forgot the session: it was reset behind a line that stayed up (a UART):
                 * negotiate again and resume from what it kept */
                link_err = MOTA_ERR_DEVICE_LOST;
                break;
            } else if (status != MOTA_OK) {
                result = status;
                /* the device may say more than the code: which rule, with its values */
                size_t dl = f.len - 2u < sizeof(detail) - 1 ? f.len - 2u : sizeof(detail) - 1;
                memcpy(detail, b, dl);
                detail[dl] = 0;
                if (strcmp(detail, mota_err_str(status)) == 0)
                    detail[0] = 0;
                break;
            }
        }
        if (result != MOTA_ERR_DEVICE_LOST)
            break;
        /* the link broke (or BEGIN went unanswered): reconnect and resume, while there is progress */
        if (link_err == MOTA_ERR_TIMEOUT || tool_now() - last_progress > o.timeout_s) {
            result = MOTA_ERR_TIMEOUT;
            break;
        }
        client_close(&c);
        reconnects++;
        event(&o, "{\"event\": \"reconnect\", \"count\": %u, \"acked\": %llu}", reconnects, (unsigned long long)acked);
        if (!o.quiet && !o.json)
            fprintf(stderr, "%slink lost (%s); reconnecting\n", tty ? "\n" : "", mota_err_name(link_err));
        ret = connect_device(&c, &o, last_progress + o.timeout_s, false, &info, &info_len);
        if (ret != MOTA_OK) {
            result = ret;
            break;
        }
        acked = 0;
    }
    if (result == MOTA_ERR_TRIAL_PENDING) { /* say which model, and what to do */
        int idx = mname ? model_index(models, n_models, mname, mname_len) : -1;
        if (idx >= 0 && models[idx].testing)
            snprintf(detail, sizeof(detail),
                     "model %s seq %llu%s%s is on trial: confirm it (mota confirm) or roll it back (mota rollback) "
                     "first", models[idx].name, (unsigned long long)models[idx].seq, models[idx].version[0] ? " v" : "",
                     models[idx].version);
    }
    if (result == MOTA_OK)
        progress(&o, tty, total, total, t0, true);
    else if (tty && !o.quiet)
        fputc('\n', stderr);

    double el = tool_now() - t0;
    if (result == MOTA_OK) {
        rc = EXIT_OK;
        int status, confirm_err = MOTA_OK;
        const uint8_t *body;
        size_t blen;
        /* the model is in: a lossy line must not turn that into a failure, so the calls that follow
         * retry (same seq, answered once) for up to the timeout */
        int tries = o.timeout_s / 2 < 3 ? 3 : o.timeout_s / 2 > 15 ? 15 : (int)(o.timeout_s / 2);
        c.deadline = tool_now() + o.timeout_s;
        if (o.confirm) {
            /* the model's index: from a fresh STATUS, else from HELLO's list; never a guess */
            struct dev_model fresh[4];
            unsigned n_fresh = 0;
            if (client_call(&c, MOTA_CMD_STATUS, NULL, 0, &status, &body, &blen, 2000, tries) == MOTA_OK &&
                status == MOTA_OK && parse_models(body, blen, 1, fresh, &n_fresh) == 0 && n_fresh > 0) {
                memcpy(models, fresh, sizeof(fresh[0]) * n_fresh);
                n_models = n_fresh;
            }
            int idx = mname ? model_index(models, n_models, mname, mname_len) : 0;
            uint8_t mi = (uint8_t)(idx < 0 ? 0 : idx);
            if (idx < 0) {
                ret = MOTA_OK;
                status = MOTA_ERR_NO_SLOT; /* the device lists no such model: nothing is confirmed */
            } else {
                ret = client_call(&c, MOTA_CMD_CONFIRM, &mi, 1, &status, &body, &blen, 2000, tries);
            }
            if (ret != MOTA_OK || status != MOTA_OK) {
                confirm_err = ret != MOTA_OK ? ret : status;
                tool_fail(confirm_err, "confirm");
                rc = ret != MOTA_OK ? link_exit(ret) : EXIT_INVALID;
            }
        }
        n_models = 0;
        if (client_call(&c, MOTA_CMD_STATUS, NULL, 0, &status, &body, &blen, 2000, tries) == MOTA_OK)
            parse_models(body, blen, 1, models, &n_models);
        /* installed either way; the status is the confirm's when that failed, so CI sees why */
        event(&o, "{\"event\": \"result\", \"status\": \"%s\", \"installed\": true, \"bytes\": %llu, "
                  "\"seconds\": %.3f, \"reconnects\": %u, \"wire_bytes_out\": %llu, \"confirmed\": %s}",
              mota_err_name(confirm_err) ? mota_err_name(confirm_err) : "?", (unsigned long long)total, el,
              reconnects, (unsigned long long)c.bytes_out, o.confirm && rc == EXIT_OK ? "true" : "false");
        if (!o.json && !o.quiet) {
            printf("installed: %.*s seq %llu in %.1f s (%.1f KiB/s%s)%s\n", (int)mname_len, mname,
                   (unsigned long long)vr.manifest.seq, el, (double)total / 1024 / (el > 0 ? el : 1),
                   reconnects ? ", resumed after a link loss" : "",
                   o.confirm && rc == EXIT_OK ? ", confirmed" : ", on trial: confirm with `mota confirm`");
            print_models(models, n_models);
        }
    } else {
        bool link = result == MOTA_ERR_DEVICE_LOST || result == MOTA_ERR_TRANSPORT || result == MOTA_ERR_TIMEOUT ||
                    result == MOTA_ERR_BUSY;
        rc = link ? link_exit(result) : EXIT_INVALID;
        if (o.json) {
            printf("{\"event\": \"result\", \"status\": \"%s\", \"installed\": false, \"message\": \"%s\", "
                   "\"detail\": ", mota_err_name(result) ? mota_err_name(result) : "?", mota_err_str(result));
            json_escaped(stdout, detail, strlen(detail));
            printf(", \"seconds\": %.3f}\n", el);
            fflush(stdout);
        }
        if (!head_fits)
            tool_fail(result, "not sent: the device would refuse it (%s); its model is unchanged", detail);
        else if (result == MOTA_ERR_TIMEOUT)
            tool_fail(result, "%s: no answer for %g s (--timeout) after the device acknowledged %llu of %llu bytes",
                      o.port, o.timeout_s, (unsigned long long)acked, (unsigned long long)total);
        else if (link)
            link_fail(result, &c, &o);
        else if (detail[0])
            tool_fail(result, "the device refused the update (%s); its model is unchanged", detail);
        else
            tool_fail(result, "the device refused the update; its model is unchanged");
    }
out:
    client_close(&c);
    tool_unmap(&m);
    return rc;
}

/* ---- status, confirm, rollback, reboot, invoke ---- */

#define LINK_EXITS                                                                                     \
    "--timeout S bounds every wait for the device (default 10).\n"                                    \
    "Exit codes: 0 done; 1 refused by the device; 2 usage; 3 port unusable; 5 device busy;\n"           \
    "6 timed out.\n"

static int simple(int argc, char **argv, uint8_t cmd, const char *usage)
{
    struct link_opts o;
    int rc = link_args(argc, argv, &o, usage, false, NULL, 10);
    if (rc != EXIT_OK)
        return rc;
    static struct client c;
    const uint8_t *info, *body;
    size_t info_len, blen;
    struct dev_model models[4];
    unsigned n = 0;
    int status, ret = connect_device(&c, &o, tool_now() + o.timeout_s, true, &info, &info_len);
    if (ret != MOTA_OK) {
        link_fail(ret, &c, &o);
        return link_exit(ret);
    }
    static uint8_t info_copy[MOTA_PROTO_MAX_PAYLOAD]; /* the next response reuses the receive buffer */
    memcpy(info_copy, info, info_len);
    info = info_copy;
    parse_models(info, info_len, 7, models, &n);
    int idx = 0;
    if (o.model && (idx = model_index(models, n, o.model, strlen(o.model))) < 0) {
        tool_err("the device has no model named %s", o.model);
        client_close(&c);
        return EXIT_USAGE;
    }
    if (cmd == MOTA_CMD_STATUS) {
        ret = client_call(&c, MOTA_CMD_STATUS, NULL, 0, &status, &body, &blen, 2000, 3);
        if (ret == MOTA_OK && status == MOTA_OK) {
            struct dev_profile dp;
            parse_profile(info, info_len, &dp);
            if (o.json) {
                printf("{\"device\": ");
                cbor_to_json(stdout, info, info_len);
                printf(", \"profile\": ");
                json_profile(&dp);
                printf(", \"status\": ");
                cbor_to_json(stdout, body, blen);
            } else {
                print_device(info, info_len);
                print_profile(&dp);
                parse_models(body, blen, 1, models, &n);
                print_models(models, n);
                print_timing(body, blen);
            }
            ret = client_call(&c, MOTA_CMD_ERRORS, NULL, 0, &status, &body, &blen, 2000, 3);
            if (ret == MOTA_OK && status == MOTA_OK) {
                if (o.json)
                    printf(", \"errors\": ");
                ret = print_errors(body, blen, models, n, o.json);
            }
            if (o.json)
                printf("}\n");
        }
    } else if (cmd == MOTA_CMD_INVOKE) {
        struct mapped in;
        if (o.input == NULL || o.out_size == 0 || o.out_size > 2048) {
            tool_err("invoke needs --input FILE and --output-size N (at most 2048)");
            client_close(&c);
            return EXIT_USAGE;
        }
        if (tool_map(o.input, &in) != MOTA_OK) {
            client_close(&c);
            return EXIT_IO;
        }
        uint8_t req[MOTA_PROTO_MAX_PAYLOAD];
        if (in.len + 3 > c.max_payload) {
            tool_err("input of %zu bytes does not fit a %u-byte frame", in.len, c.max_payload);
            tool_unmap(&in);
            client_close(&c);
            return EXIT_USAGE;
        }
        req[0] = (uint8_t)idx;
        mota_put16(req + 1, (uint16_t)o.out_size);
        memcpy(req + 3, in.data, in.len);
        /* one try (an inference is not repeated behind the user's back), as long as --timeout allows */
        ret = client_call(&c, MOTA_CMD_INVOKE, req, in.len + 3, &status, &body, &blen,
                          (int)(o.timeout_s * 1000), 1);
        tool_unmap(&in);
        if (ret == MOTA_OK && status == MOTA_OK && blen >= 4) {
            uint32_t us = mota_get32(body);
            if (o.output != NULL) {
                struct outfile of;
                if (tool_out_open(&of, o.output, 0644) != MOTA_OK ||
                    tool_out_write(&of, body + 4, blen - 4) != MOTA_OK || tool_out_commit(&of) != MOTA_OK)
                    ret = MOTA_ERR_IO;
            }
            if (o.json) {
                printf("{\"duration_us\": %u, \"output\": \"", us);
                tool_hex(stdout, body + 4, blen - 4);
                printf("\"}\n");
            } else {
                printf("inference: %u us, %zu output bytes: ", us, blen - 4);
                tool_hex(stdout, body + 4, blen - 4 < 32 ? blen - 4 : 32);
                printf("%s\n", blen - 4 > 32 ? "..." : "");
            }
        }
    } else {
        uint8_t mi = (uint8_t)idx;
        ret = client_call(&c, cmd, &mi, 1, &status, &body, &blen, 3000, 3);
        if (ret == MOTA_OK && status == MOTA_OK && !o.quiet) {
            printf("%s: done\n", cmd == MOTA_CMD_CONFIRM ? "confirm" : cmd == MOTA_CMD_ROLLBACK ? "rollback" : "reboot");
            if (cmd != MOTA_CMD_REBOOT &&
                client_call(&c, MOTA_CMD_STATUS, NULL, 0, &status, &body, &blen, 2000, 3) == MOTA_OK) {
                parse_models(body, blen, 1, models, &n);
                print_models(models, n);
            }
        }
    }
    client_close(&c);
    if (ret != MOTA_OK) {
        link_fail(ret, &c, &o);
        return link_exit(ret);
    }
    if (status != MOTA_OK) {
        tool_fail(status, "the device refused");
        return EXIT_INVALID;
    }
    return EXIT_OK;
}

int cmd_status(int argc, char **argv)
{
    return simple(argc, argv, MOTA_CMD_STATUS,
                  "usage: mota status [--json] [--baud N] [--timeout S] PORT\n\n"
                  "Device identity, compatibility profile and, per model: the active model, its\n"
                  "trial state, the committed sequence number, an upload in progress, the last error;\n"
                  "then the device's recent errors (kept across reconnects, cleared by a reboot).\n" LINK_EXITS);
}

int cmd_confirm(int argc, char **argv)
{
    return simple(argc, argv, MOTA_CMD_CONFIRM,
                  "usage: mota confirm [--model NAME] [--baud N] [--timeout S] PORT\n\nCommit the model on trial.\n" LINK_EXITS);
}

int cmd_rollback(int argc, char **argv)
{
    return simple(argc, argv, MOTA_CMD_ROLLBACK,
                  "usage: mota rollback [--model NAME] [--baud N] [--timeout S] PORT\n\n"
                  "Revert the model on trial to the previous confirmed one. A confirmed model that\n"
                  "faulted or overran since the device booted (`mota status`: faults) can be retired\n"
                  "the same way: the previous model comes back, and the retired one's sequence\n"
                  "number stays the anti-rollback floor (a fix needs a higher one).\n" LINK_EXITS);
}

int cmd_reboot(int argc, char **argv)
{
    return simple(argc, argv, MOTA_CMD_REBOOT, "usage: mota reboot [--baud N] [--timeout S] PORT\n\nRestart the device.\n" LINK_EXITS);
}

int cmd_invoke(int argc, char **argv)
{
    return simple(argc, argv, MOTA_CMD_INVOKE,
                  "usage: mota invoke --input FILE --output-size N [--model NAME] [-o OUT] [--json] [--timeout S] PORT\n\n"
                  "Run the active model on FILE on the device; print the output and the time it took.\n" LINK_EXITS);
}
