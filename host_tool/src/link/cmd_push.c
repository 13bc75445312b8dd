/* SPDX-License-Identifier: Apache-2.0 */
/* push: send a container to a device and report its verdict. */
#include "client.h"
#include "cmds.h"
#include "devlink.h"

#include "common/files.h"
#include "common/json.h"
#include "common/util.h"
#include "offline/profiles.h"

#include "mota/cbor.h"
#include "mota/compat.h"
#include "mota/container.h"
#include "mota/err.h"
#include "mota/features.h"
#include "mota/decompress.h"
#include "mota/encinfo.h"
#include "mota/nbin.h"

#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* One push: what the progress display and the JSON events need. */
struct push {
    const struct link_opts *o;
    bool tty; /* a progress bar on stderr */
    double t0;
    uint64_t total;
    uint64_t shown;    /* bytes the display last showed */
    int last_decile;   /* non-TTY progress lines: one per 10% */
    double last_event; /* JSON progress events: at most 4 a second */
    const char *phase; /* what the device is doing after the last byte, as it said */
    bool already;      /* the device runs this container already (MOTA_ERR_ALREADY_ACTIVE): nothing installed */
    double phase_t;
    /* the run */
    const struct mota_verify_result *vr;
    struct client *c;
    struct client_upload u;
    const uint8_t *info; /* the device info of the last HELLO (a copy: it outlives the receive buffer) */
    size_t info_len;
    struct dev_model models[DEV_MAX_MODELS];
    unsigned n_models, reconnects;
    int result;
    bool connected; /* the device answered HELLO once: acked is its */
    bool container; /* the file is a container: vr says what it holds */
    char detail[1024];
    uint64_t wire_before; /* bytes written on the connections before this one (a reconnect starts at 0) */
    uint64_t kept;        /* bytes an earlier push left on the device (a resume): not this push's, not in its rate */
};

/*
 * SIGINT and SIGTERM during a push: the first ends it with a result event (MOTA_ERR_TRANSPORT: no reason
 * of its own; the device keeps the upload as after a cable pull, and the next push resumes there) and exit
 * code 128 + the signal; a second one ends the process as without this. Waits for the device give up at
 * once (the client's deadline is put in the past: each wait returns MOTA_ERR_TIMEOUT, and the transfer's
 * callbacks keep it there); a connect, which tries again until its own deadline, is left by a jump.
 */
static volatile sig_atomic_t push_signal, connect_jump_ok;
static struct client *volatile signal_client;
static sigjmp_buf connect_jmp;

#define PUSH_INTERRUPTED MOTA_ERR_TRANSPORT /* the reason an interrupted push reports */

static void on_signal(int sig)
{
    if (push_signal != 0) { /* the second: as without a handler */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    push_signal = sig;
    if (signal_client != NULL)
        signal_client->deadline = 1e-9; /* > 0: a deadline, long past */
    if (connect_jump_ok) {
        connect_jump_ok = 0;
        siglongjmp(connect_jmp, 1);
    }
}

/* After a signal: every wait for the device ends now (a transfer that made progress moved the deadline). */
static void keep_interrupted(const struct push *p)
{
    if (push_signal != 0)
        p->c->deadline = 1e-9;
}

/* A JSON event line of push: {"schema", "command": "push", "event": name, ...}. */
static bool event_begin(const struct push *p, struct json *j, const char *name)
{
    if (!p->o->json)
        return false;
    json_doc(j, stdout, "push", true);
    json_str(j, "event", name);
    return true;
}

static int term_cols(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}

/* 3.3 MiB, 912.0 KiB, 640 B */
static const char *human(char *buf, size_t cap, double v)
{
    if (v >= 1024 * 1024)
        snprintf(buf, cap, "%.1f MiB", v / (1024 * 1024));
    else if (v >= 1024)
        snprintf(buf, cap, "%.1f KiB", v / 1024);
    else
        snprintf(buf, cap, "%.0f B", v);
    return buf;
}

/* The bar, as wide as the terminal: [####....] 42%  1.4 MiB of 3.3 MiB  24.1 KiB/s  ETA 1m22s, then after the
 * last byte the device's phase until its verdict. */
static void draw_bar(const struct push *p, uint64_t done)
{
    char line[512], tail[160], a[24], b[24], r[24];
    double el = tool_now() - p->t0, rate = el > 0 && done > p->kept ? (double)(done - p->kept) / el : 0;
    unsigned pct = p->total ? (unsigned)(100 * done / p->total) : 100;
    if (p->phase != NULL) {
        snprintf(tail, sizeof(tail), " 100%%  %s sent; device: %s (%.1f s)", human(a, sizeof(a), (double)p->total),
                 p->phase, tool_now() - p->phase_t);
    } else {
        double eta = rate > 0 ? (double)(p->total - done) / rate : 0;
        snprintf(tail, sizeof(tail), " %3u%%  %s of %s  %s/s  ETA %um%02us", pct, human(a, sizeof(a), (double)done),
                 human(b, sizeof(b), (double)p->total), human(r, sizeof(r), rate), (unsigned)eta / 60,
                 (unsigned)eta % 60);
    }
    int cols = term_cols(), tl = (int)strlen(tail);
    int width = cols - tl - 3; /* brackets, and the cursor's column */
    if (width > 60)
        width = 60;
    if (width < 5) { /* too narrow for a bar: the numbers alone */
        fprintf(stderr, "\r%.*s\033[K", cols - 1, tail + 1);
        return;
    }
    int fill = p->phase != NULL ? width : (int)((uint64_t)width * pct / 100);
    memset(line, '#', (size_t)fill);
    memset(line + fill, '.', (size_t)(width - fill));
    line[width] = 0;
    fprintf(stderr, "\r[%s]%s\033[K", line, tail);
}

static void progress(struct push *p, uint64_t done, bool final)
{
    struct json j;
    double el = tool_now() - p->t0, rate = el > 0 && done > p->kept ? (double)(done - p->kept) / el : 0;
    p->shown = done;
    if (p->o->json) {
        if ((final || tool_now() - p->last_event > 0.25) && event_begin(p, &j, "progress")) {
            p->last_event = tool_now();
            json_uint(&j, "offset", done);
            json_uint(&j, "total", p->total);
            json_real(&j, "bytes_per_s", rate, 0);
            json_end(&j);
        }
        return;
    }
    if (p->o->quiet)
        return;
    if (p->tty) {
        draw_bar(p, done);
        if (final)
            fputc('\n', stderr);
        return;
    }
    int decile = p->total ? (int)(10 * done / p->total) : 10;
    if (decile != p->last_decile) {
        p->last_decile = decile;
        fprintf(stderr, "progress: %llu of %llu bytes (%d%%), %.1f KiB/s\n", (unsigned long long)done,
                (unsigned long long)p->total, p->total ? (int)(100 * done / p->total) : 100, rate / 1024);
    }
}

/* The phases the device announces after the last byte (event frames, docs/protocol.md). */
static const char *phase_name(unsigned phase)
{
    static const char *const names[] = {"?", "verify", "install", "selftest", "commit"};
    return phase < 5 ? names[phase] : "?";
}

/* The device said what it is doing after the last byte (or went quiet with everything sent). */
static void show_phase(struct push *p, const char *phase)
{
    struct json j;
    if (p->phase != NULL && strcmp(p->phase, phase) == 0)
        return;
    /* the device names a phase once it has every byte: lines and events say 100% first (the bar shows it in
     * its tail); "verdict pending" is the host's guess, and says nothing of what arrived */
    if (p->shown < p->total && strcmp(phase, "verdict pending") != 0 && (p->o->json || !p->tty))
        progress(p, p->total, true);
    p->phase = phase;
    p->phase_t = tool_now();
    if (event_begin(p, &j, "phase")) {
        json_str(&j, "phase", phase);
        json_real(&j, "seconds", tool_now() - p->t0, 3);
        json_end(&j);
    } else if (!p->o->quiet && p->tty) {
        draw_bar(p, p->total);
    } else if (!p->o->quiet) {
        fprintf(stderr, "device: %s\n", phase);
    }
}

/*
 * Before anything is sent: the file must be a container, and hold exactly what its envelope declares
 * (head, then each integrated payload the manifest lists, nothing after). A truncated copy or one with
 * bytes appended is refused here with both lengths, not left to the device.
 */
static int precheck(const struct mapped *m, struct mota_verify_result *vr, bool *decoded, char *why, size_t cap)
{
    int ret = mota_envelope_decode(m->data, m->len, &vr->env);
    *decoded = false;
    if (ret == MOTA_ERR_CBOR_TRUNCATED) {
        snprintf(why, cap, "the file (%zu bytes) ends inside the container's head", m->len);
        return ret;
    }
    if (ret == MOTA_OK)
        ret = mota_manifest_decode(&vr->env, &vr->manifest);
    if (ret != MOTA_OK) {
        snprintf(why, cap, "not a container");
        return ret;
    }
    *decoded = true; /* the manifest says what the container is, whatever its payloads */
    /* what the manifest declares: the head, then each integrated payload with its own small head */
    uint64_t declared = vr->env.head_len;
    for (size_t i = 0; i < vr->manifest.n_components; i++) {
        const struct mota_component *c = &vr->manifest.comp[i];
        if (c->has_uri)
            declared += mota_payload_head_size(c->role, c->size) + c->size;
    }
    /* the walk ends exactly at the file's end or says why; declared is for the message */
    ret = mota_container_check_payloads(m->data, m->len, vr);
    if (ret == MOTA_ERR_CBOR_TRUNCATED || ret == MOTA_ERR_PAYLOAD_MISSING)
        snprintf(why, cap, "the file holds %zu bytes, its envelope declares %llu: truncated", m->len,
                 (unsigned long long)declared);
    else if (ret == MOTA_ERR_CBOR_TRAILING)
        snprintf(why, cap, "the file holds %zu bytes, its envelope declares %llu: %llu extra byte(s) after it", m->len,
                 (unsigned long long)declared, (unsigned long long)(m->len - declared));
    else if (ret != MOTA_OK)
        snprintf(why, cap, "its payloads do not match its manifest");
    return ret;
}

static const char push_usage[] =
    "usage: mota push [options] PORT CONTAINER\n\n"
    "Sends a container to a device (or mota sim) and reports the result. PORT is a\n"
    "serial device (--baud), a pty path, or tcp:HOST:PORT. Survives link drops and device\n"
    "resets by reconnecting and resuming from the offset the device kept.\n"
    "  --baud N       serial speed (default 115200)\n"
    "  --confirm      confirm the new model after it passed its self-test\n"
    "  --reinstall    install the container even when the device runs it already (into the other\n"
    "                 slot, on trial); without it that push installs nothing: \"already active\"\n"
    "  --timeout S    the longest wait for the device: to connect, to answer HELLO, to acknowledge\n"
    "                 data (each window), to give its verdict after the last byte (default 60)\n"
    "  --json         one JSON event per line on stdout (for CI)\n"
    "  -q, --quiet    no progress output\n"
    "Exit codes: 0 installed (on trial, or confirmed with --confirm); 1 refused by the\n"
    "device (its reason is printed); 2 usage; 3 container unreadable or port unusable\n"
    "(no such device, connection refused); 5 device busy (another client holds it);\n"
    "6 timed out (the device stopped answering for --timeout seconds); 130 (SIGINT, Ctrl-C)\n"
    "or 143 (SIGTERM): interrupted (the device keeps the upload: push again resumes).\n"
    "With --json every outcome, these included, ends with a `result` event.\n";

/* The model a push is about: from the container, for the result line and the JSON. */
static void json_container(struct json *j, const struct mota_verify_result *vr, uint64_t bytes)
{
    const struct mota_manifest *man = &vr->manifest;
    json_obj(j, "container");
    json_strn(j, "model", man->compat.c_name ? man->compat.c_name : "", man->compat.c_name_len);
    json_uint(j, "seq", man->seq);
    if (man->text.version)
        json_strn(j, "version", man->text.version, man->text.version_len);
    else
        json_null(j, "version");
    json_hex(j, "digest", vr->env.digest, sizeof(vr->env.digest));
    json_uint(j, "bytes", bytes);
    json_obj_end(j);
}

/* A compatibility refusal without the device's facts (a build without refusal details): the rule, found again
 * from HELLO's profile and the model's memories against the container's compatibility data, in the device's
 * form "FIELD: device VALUE, model VALUE". False when the host finds no such rule. */
static bool compat_detail(int result, const struct mota_manifest *man, const uint8_t *info, size_t info_len,
                          const struct dev_model *dm, char *detail, size_t cap)
{
    struct dev_profile dp;
    struct mota_compat_result cr;
    devinfo_profile(info, info_len, &dp);
    if (!dp.valid)
        return false;
    if (dm != NULL) {
        dp.p.exec_ram_size = dm->exec_size;
        dp.p.ext_ram_size = dm->ext_size;
    }
    bool split = false;
    for (size_t i = 0; i < man->n_components; i++)
        split |= man->comp[i].role == MOTA_COMPONENT_PARAMS;
    if (mota_compat_check(&dp.p, &man->compat, split, &cr) != result || cr.field == NULL)
        return false;
    snprintf(detail, cap, "%s: device 0x%llx, model 0x%llx", cr.field, (unsigned long long)cr.expected,
             (unsigned long long)cr.found);
    return true;
}

/* Facts the host holds when the device's refusal carries none: what the device has and expects. */
static void host_detail(int result, const struct mota_verify_result *vr, const uint8_t *info, size_t info_len,
                        const struct dev_model *models, unsigned n, char *detail, size_t cap)
{
    const struct mota_manifest *man = &vr->manifest;
    int idx = man->compat.c_name ? devinfo_model_index(models, n, man->compat.c_name, man->compat.c_name_len) : -1;
    size_t at = 0;
    if (result == MOTA_ERR_NO_SLOT) {
        at += (size_t)snprintf(detail, cap, "the container's model is %.*s; the device has",
                               (int)man->compat.c_name_len, man->compat.c_name ? man->compat.c_name : "");
        for (unsigned i = 0; i < n && at < cap; i++)
            at += (size_t)snprintf(detail + at, cap - at, "%s %s", i ? "," : ":", models[i].name);
        if (n == 0 && at < cap)
            snprintf(detail + at, cap - at, " no model slot");
    } else if ((result == MOTA_ERR_ROLLBACK || result == MOTA_ERR_ROLLBACK_SAME_SEQ) && idx >= 0) {
        snprintf(detail, cap, "seq: committed %llu on the device, offered %llu; pack with --seq above %llu",
                 (unsigned long long)models[idx].committed, (unsigned long long)man->seq,
                 (unsigned long long)models[idx].committed);
    } else if (compat_detail(result, man, info, info_len, idx >= 0 ? &models[idx] : NULL, detail, cap)) {
        return;
    } else if (result == MOTA_ERR_VENDOR_MISMATCH || result == MOTA_ERR_CLASS_MISMATCH) {
        uint8_t want[16];
        bool vendor = result == MOTA_ERR_VENDOR_MISMATCH;
        if (!devinfo_identity(info, info_len, vendor ? 0 : 1, want))
            return;
        for (size_t i = 0; i < man->n_components; i++) {
            const struct mota_component *c = &man->comp[i];
            if (vendor ? !c->has_vendor : !c->has_class)
                continue;
            char dn[257], cn[257], w[320], g[320];
            uint8_t dev_vendor[16];
            const char *ctext = vendor ? man->text.vendor_name : man->text.class_name;
            size_t clen = vendor ? man->text.vendor_name_len : man->text.class_name_len;
            const uint8_t *dns = vendor || !devinfo_identity(info, info_len, 0, dev_vendor) ? NULL : dev_vendor;
            devinfo_identity_name(info, info_len, vendor ? 0 : 1, dn, sizeof(dn));
            devinfo_copy_str(cn, sizeof(cn), ctext != NULL ? ctext : "", ctext != NULL ? clen : 0);
            devprint_named_id(dn, dns, want, w, sizeof(w));
            devprint_named_id(cn, vendor ? NULL : c->vendor_id, vendor ? c->vendor_id : c->class_id, g, sizeof(g));
            snprintf(detail, cap, "%s: device %s, container %s; pack --%s %s", vendor ? "vendor" : "class", w, g,
                     vendor ? "vendor" : "class",
                     devinfo_name_makes_id(dn, dns, want) ? dn : "NAME, with the device's name");
            return;
        }
    }
}

static void on_event(void *ctx, unsigned phase, uint32_t offset)
{
    (void)offset;
    keep_interrupted(ctx);
    if (phase == MOTA_PROTO_PHASE_FLASH_BUSY)
        return; /* the device erases while it receives: a hold, counted, not a step */
    show_phase(ctx, phase_name(phase));
}

static void on_progress(void *ctx, uint64_t acked)
{
    keep_interrupted(ctx);
    progress(ctx, acked, false);
}

static void on_resume(void *ctx, uint32_t offset)
{
    struct push *p = ctx;
    struct json j;
    if (p->reconnects == 0) /* kept from an earlier push: this one's rate counts what it sends */
        p->kept = offset;
    if (event_begin(p, &j, "resume")) {
        json_uint(&j, "offset", offset);
        json_end(&j);
    }
    if (!p->o->quiet && !p->o->json)
        fprintf(stderr, "the device kept %u bytes of this container: resuming after the head\n", offset);
}

static void on_quiet(void *ctx, bool all_sent, double quiet_for, double on_wire)
{
    struct push *p = ctx;
    keep_interrupted(p);
    if (all_sent && quiet_for > 1.0 + on_wire && p->phase == NULL)
        show_phase(p, "verdict pending"); /* a device that does not tell its phases */
    else if (p->phase != NULL && p->tty && !p->o->quiet)
        draw_bar(p, p->total); /* the phase's clock */
}

/* Connect and say HELLO before the deadline; the first time, say to whom. */
static int push_connect(struct push *p, double deadline, bool first)
{
    static uint8_t info_copy[CLIENT_DOC_MAX];
    const uint8_t *info;
    struct json j;
    if (sigsetjmp(connect_jmp, 1) != 0) { /* a signal: the connection is not used */
        client_close(p->c);
        return PUSH_INTERRUPTED;
    }
    connect_jump_ok = 1;
    p->wire_before += p->c->bytes_out; /* the last connection's, before a new one counts from 0 */
    p->c->bytes_out = 0;
    int ret = push_signal ? PUSH_INTERRUPTED : link_connect(p->c, p->o, deadline, first, &info, &p->info_len);
    connect_jump_ok = 0;
    if (ret != MOTA_OK)
        return ret;
    p->connected = true;
    memcpy(info_copy, info, p->info_len);
    p->info = info_copy;
    if (!first)
        return MOTA_OK;
    char dev_name[65] = "";
    devinfo_models(p->info, p->info_len, MOTA_INFO_MODELS, p->models, &p->n_models);
    devinfo_text(p->info, p->info_len, MOTA_INFO_NAME, dev_name, sizeof(dev_name));
    if (event_begin(p, &j, "hello")) {
        json_str(&j, "port", p->o->port);
        json_str(&j, "device", dev_name);
        json_uint(&j, "max_payload", p->c->max_payload);
        json_uint(&j, "window", p->c->window);
        json_container(&j, p->vr, p->total);
        json_end(&j);
    }
    if (!p->o->quiet && !p->o->json) /* on a terminal, over the "connecting to" line */
        fprintf(stderr, "%s%s on %s: %u model slot(s); frames of %u bytes, window %u\n", p->tty ? "\r\033[K" : "",
                dev_name[0] ? dev_name : "device", p->o->port, p->n_models, p->c->max_payload, p->c->window);
    return MOTA_OK;
}

/* The device's build resumes an upload (HELLO key 17), or does not say (a device from before the bit). */
static bool device_resumes(const struct push *p)
{
    uint64_t feats;
    return !devinfo_uint(p->info, p->info_len, MOTA_INFO_FEATURES, &feats) || (feats & MOTA_FEAT_RESUME) != 0;
}

/* The link broke (or BEGIN went unanswered): reconnect, while the device still makes progress. */
static int push_reconnect(struct push *p, int link_err)
{
    struct json j;
    if (push_signal != 0)
        return PUSH_INTERRUPTED;
    if (link_err == MOTA_ERR_TIMEOUT || tool_now() - p->u.last_progress > p->o->timeout_s)
        return MOTA_ERR_TIMEOUT;
    client_close(p->c);
    p->reconnects++;
    if (event_begin(p, &j, "reconnect")) {
        json_uint(&j, "count", p->reconnects);
        json_uint(&j, "acked", p->u.acked);
        json_end(&j);
    }
    if (!p->o->quiet && !p->o->json)
        fprintf(stderr, "%slink lost (%s); reconnecting%s\n", p->tty ? "\n" : "", mota_err_name(link_err),
                device_resumes(p) ? "" : " (the device's build does not resume uploads: from the start)");
    p->phase = NULL;
    return push_connect(p, p->u.last_progress + p->o->timeout_s, false);
}

static void (*all_sent_hook)(void *ctx);
static void *all_sent_ctx;

void push_on_all_sent(void (*fn)(void *ctx), void *ctx)
{
    all_sent_hook = fn;
    all_sent_ctx = ctx;
}

static void on_all_sent(void *ctx)
{
    (void)ctx;
    if (all_sent_hook != NULL)
        all_sent_hook(all_sent_ctx);
}

/* The --compress the device's build decodes, the best first. */
static const char *decoder_hint(uint64_t feats)
{
    return feats & MOTA_FEAT_LZMA      ? ", or with --compress=lzma"
           : feats & MOTA_FEAT_DEFLATE ? ", or with --compress=deflate"
           : feats & MOTA_FEAT_LZ4     ? ", or with --compress=lz4"
                                       : "";
}

/* A compressed payload whose decoder the device's build leaves out, or a delta without its patcher (HELLO key
 * 17): refused before anything is sent, as the device would refuse it at the head. MOTA_OK where it has them,
 * or does not say. */
static int decoders_present(struct push *p)
{
    uint64_t feats;
    const struct mota_manifest *man = &p->vr->manifest;
    if (!devinfo_uint(p->info, p->info_len, MOTA_INFO_FEATURES, &feats))
        return MOTA_OK;
    for (size_t c = 0; c < man->n_components; c++) {
        uint32_t alg = man->comp[c].z_alg, need = alg == MOTA_DECOMP_LZ4    ? MOTA_FEAT_LZ4
                                                  : alg == MOTA_DECOMP_LZMA ? MOTA_FEAT_LZMA
                                                                            : MOTA_FEAT_DEFLATE;
        if (man->comp[c].compressed && mota_decompress_known(alg) && !(feats & need)) {
            snprintf(p->detail, sizeof(p->detail),
                     "the device's build has no %s decoder (HELLO features 0x%llx): pack without --compress%s",
                     alg == MOTA_DECOMP_LZ4    ? "LZ4"
                     : alg == MOTA_DECOMP_LZMA ? "LZMA"
                                               : "deflate",
                     (unsigned long long)feats, decoder_hint(feats));
            return MOTA_ERR_DECOMP_OFF;
        }
        if (man->comp[c].delta && !(feats & MOTA_FEAT_DELTA)) {
            snprintf(p->detail, sizeof(p->detail),
                     "the device's build has no patcher for delta payloads (HELLO features 0x%llx): push the full "
                     "container (pack without --delta-from)",
                     (unsigned long long)feats);
            return MOTA_ERR_DELTA_OFF;
        }
    }
    return MOTA_OK;
}

/* A recipient the device may hold the key of: its kid names one of the device's KEKs or its device key; one
 * without a kid may be any (the device tries its keys). */
static bool recipient_served(const struct mota_enc_recipient *r, const struct dev_dec_keys *k)
{
    if (r->kid == NULL)
        return true;
    for (unsigned i = 0; i < k->n_keks; i++)
        if (k->kek_id_len[i] == r->kid_len && memcmp(k->kek_id[i], r->kid, r->kid_len) == 0)
            return true;
    return k->has_device_key && r->kid_len == sizeof(k->device_kid) && memcmp(k->device_kid, r->kid, r->kid_len) == 0;
}

/* "kid: device A B, container C D": the key ids each side names (docs/protocol.md, "Refusal details"). */
static void kid_detail(const struct mota_enc_info *ei, const struct dev_dec_keys *k, char *out, size_t cap)
{
    char id[2 * MOTA_ENC_MAX_KID + 3];
    size_t at = (size_t)snprintf(out, cap, "kid: device");
    for (unsigned i = 0; i < k->n_keks && at < cap; i++) {
        devprint_kid(k->kek_id[i], k->kek_id_len[i], id, sizeof(id));
        at += (size_t)snprintf(out + at, cap - at, " %s", id);
    }
    if (k->has_device_key && at < cap) {
        devprint_kid(k->device_kid, sizeof(k->device_kid), id, sizeof(id));
        at += (size_t)snprintf(out + at, cap - at, " %s", id);
    }
    if (k->n_keks == 0 && !k->has_device_key && at < cap)
        at += (size_t)snprintf(out + at, cap - at, " none");
    for (size_t i = 0; i < ei->n_recipients && at < cap; i++) {
        devprint_kid(ei->r[i].kid, ei->r[i].kid_len, id, sizeof(id));
        at += (size_t)snprintf(out + at, cap - at, "%s %s", i ? "" : ", container", id);
    }
    if (at < cap)
        snprintf(out + at, cap - at, "; encrypt to a key the device holds (mota status: its key ids)");
}

/* An encrypted payload the device cannot decrypt (HELLO keys 17 and 18), refused before anything is sent, as
 * the device would refuse it at the head: a build without decryption, or recipients that all name keys the
 * device does not hold. MOTA_OK where it may, or does not say. */
static int keys_present(struct push *p)
{
    uint64_t feats;
    const struct mota_manifest *man = &p->vr->manifest;
    const struct mota_component *enc = NULL;
    for (size_t c = 0; c < man->n_components && enc == NULL; c++)
        enc = man->comp[c].encrypted ? &man->comp[c] : NULL;
    if (enc == NULL || !devinfo_uint(p->info, p->info_len, MOTA_INFO_FEATURES, &feats))
        return MOTA_OK;
    if (!(feats & MOTA_FEAT_DECRYPT)) {
        snprintf(p->detail, sizeof(p->detail),
                 "the device's build does not decrypt (HELLO features 0x%llx): pack without encryption",
                 (unsigned long long)feats);
        return MOTA_ERR_DECRYPT_OFF;
    }
    static struct mota_enc_info ei;
    struct dev_dec_keys k;
    if (mota_enc_info_decode(enc->enc_info, enc->enc_len, &ei) != MOTA_OK)
        return MOTA_OK;                         /* the device says what is wrong with it */
    devinfo_dec_keys(p->info, p->info_len, &k); /* none said: the device holds no key */
    for (size_t i = 0; i < ei.n_recipients; i++)
        if (recipient_served(&ei.r[i], &k))
            return MOTA_OK;
    kid_detail(&ei, &k, p->detail, sizeof(p->detail));
    return MOTA_ERR_ENC_NO_KEY;
}

/* The container, over as many connections as it takes: the device's verdict, or why there is none. */
static int push_send(struct push *p, const struct mapped *m)
{
    const struct mota_envelope *env = &p->vr->env;
    uint64_t head_cap = 0;
    /* a head larger than the device's head buffer would be refused at its end: nothing is sent */
    if (devinfo_uint(p->info, p->info_len, MOTA_INFO_HEAD_MAX, &head_cap) && env->head_len > head_cap) {
        snprintf(p->detail, sizeof(p->detail), "container head of %zu bytes; the device takes at most %llu",
                 env->head_len, (unsigned long long)head_cap);
        return MOTA_ERR_ENV_TOO_LARGE;
    }
    int ret = decoders_present(p);
    if (ret != MOTA_OK || (ret = keys_present(p)) != MOTA_OK)
        return ret;
    struct client_upload *u = &p->u;
    u->data = m->data;
    u->total = m->len;
    memcpy(u->digest, env->digest, sizeof(u->digest));
    u->begin_flags = p->o->reinstall ? MOTA_BEGIN_REINSTALL : 0;
    u->head_len = env->head_len;
    u->timeout_s = p->o->timeout_s;
    u->last_progress = p->t0;
    u->on_progress = on_progress;
    u->on_resume = on_resume;
    u->on_quiet = on_quiet;
    u->on_all_sent = on_all_sent;
    u->ctx = p;
    for (;;) {
        ret = client_upload(p->c, u);
        if (ret == MOTA_OK) {
            snprintf(p->detail, sizeof(p->detail), "%s", u->detail);
            return u->status;
        }
        if ((ret = push_reconnect(p, ret)) != MOTA_OK)
            return ret;
    }
}

/* The index of the container's model in the device's list (p->models): -1 when it lists none such, or
 * unnamed when the container names no model. */
static int container_model(const struct push *p, int unnamed)
{
    const struct mota_manifest *man = &p->vr->manifest;
    if (man->compat.c_name == NULL)
        return unnamed;
    return devinfo_model_index(p->models, p->n_models, man->compat.c_name, man->compat.c_name_len);
}

/* A refusal with no facts from the device: what the host knows. */
static void explain(struct push *p)
{
    int idx = container_model(p, -1);
    const struct dev_model *dm = idx >= 0 ? &p->models[idx] : NULL; /* the model as HELLO said it */
    if (p->result == MOTA_ERR_TRIAL_PENDING) {                      /* say which model, and what to do */
        if (dm != NULL && dm->testing)
            snprintf(p->detail, sizeof(p->detail),
                     "model %s seq %llu%s%s is on trial: confirm it (mota confirm) or roll it back (mota rollback) "
                     "first",
                     dm->name, (unsigned long long)dm->seq, dm->version[0] ? " v" : "", dm->version);
    } else if (p->result == MOTA_ERR_DELTA_SOURCE) { /* what it runs, and what to send instead */
        if (dm != NULL && dm->has)
            snprintf(p->detail, sizeof(p->detail),
                     "this is a delta from another model than the device's %s seq %llu%s%s: push the full container "
                     "(mota pack without --delta-from)",
                     dm->name, (unsigned long long)dm->seq, dm->version[0] ? " v" : "", dm->version);
        else
            snprintf(p->detail, sizeof(p->detail),
                     "this is a delta, and the device runs no model to apply it to: push the full container (mota "
                     "pack without --delta-from)");
    } else if (p->result != MOTA_OK &&
               (p->detail[0] == 0 || p->result == MOTA_ERR_VENDOR_MISMATCH || p->result == MOTA_ERR_CLASS_MISMATCH)) {
        /* the device's facts, or for an identity the same ids with the names beside them */
        host_detail(p->result, p->vr, p->info, p->info_len, p->models, p->n_models, p->detail, sizeof(p->detail));
    }
}

/* --confirm: the model's index from a fresh STATUS, else from HELLO's list; never a guess. */
static int push_confirm(struct push *p, int tries)
{
    struct dev_model fresh[DEV_MAX_MODELS];
    unsigned n_fresh = 0;
    const uint8_t *body;
    size_t blen;
    int status;
    if (client_status(p->c, &status, &body, &blen, 2000, tries) == MOTA_OK && status == MOTA_OK &&
        devinfo_models(body, blen, MOTA_STATUS_MODELS, fresh, &n_fresh) == 0 && n_fresh > 0) {
        memcpy(p->models, fresh, sizeof(fresh[0]) * n_fresh);
        p->n_models = n_fresh;
    }
    int idx = container_model(p, 0);
    uint8_t mi = (uint8_t)(idx < 0 ? 0 : idx);
    if (idx < 0)
        return MOTA_ERR_NO_SLOT; /* the device lists no such model: nothing is confirmed */
    int ret = client_call(p->c, MOTA_CMD_CONFIRM, &mi, 1, &status, &body, &blen, 2000, tries);
    return ret != MOTA_OK ? ret : status;
}

/* What the device's status says after "installed": it must show this very container as the active model. */
struct installed {
    bool checked, active, confirmed, has_uptime;
    uint64_t uptime, max_boots;
};

static void check_installed(struct push *p, int tries, struct installed *in)
{
    const struct mota_manifest *man = &p->vr->manifest;
    const uint8_t *body;
    size_t blen;
    int status;
    memset(in, 0, sizeof(*in));
    p->n_models = 0;
    in->checked = client_status(p->c, &status, &body, &blen, 2000, tries) == MOTA_OK && status == MOTA_OK &&
                  devinfo_models(body, blen, MOTA_STATUS_MODELS, p->models, &p->n_models) == 0;
    in->has_uptime = in->checked && devinfo_uptime_ms(body, blen, &in->uptime);
    devinfo_uint(p->info, p->info_len, MOTA_INFO_TRIAL_BOOTS, &in->max_boots);
    int idx = container_model(p, -1);
    in->active = in->checked && idx >= 0 && p->models[idx].has &&
                 memcmp(p->models[idx].digest, p->vr->env.digest, MOTA_SHA256_LEN) == 0;
    in->confirmed = in->active && !p->models[idx].testing;
    if (in->checked && !in->active) {
        p->result = MOTA_ERR_INTERNAL;
        snprintf(p->detail, sizeof(p->detail),
                 "the device answered installed, but its status does not show %.*s seq %llu "
                 "active",
                 (int)man->compat.c_name_len, man->compat.c_name ? man->compat.c_name : "",
                 (unsigned long long)man->seq);
    }
}

static bool is_link_error(int result)
{
    return result == MOTA_ERR_DEVICE_LOST || result == MOTA_ERR_TRANSPORT || result == MOTA_ERR_TIMEOUT ||
           result == MOTA_ERR_BUSY;
}

/* What a result event says besides the push's facts (docs/json.md, every field in every result). */
struct outcome {
    int reason;
    bool installed, confirmed, status_checked;
    double seconds;
};

/* The result event: every field, null where the push does not know it. */
static void result_event(const struct push *p, const struct outcome *r)
{
    struct json j;
    if (!event_begin(p, &j, "result"))
        return;
    json_reason(&j, r->reason);
    json_bool(&j, "installed", r->installed);
    if (p->u.done) /* the device gave a verdict: it says whether it ran this container already */
        json_bool(&j, "already_active", p->already);
    else
        json_null(&j, "already_active");
    json_bool(&j, "confirmed", r->confirmed);
    json_bool(&j, "sent", p->u.sent);
    json_bool(&j, "status_checked", r->status_checked);
    json_str(&j, "detail", p->detail);
    if (p->container)
        json_container(&j, p->vr, p->total);
    else
        json_null(&j, "container");
    if (p->connected)
        json_uint(&j, "acked", p->u.acked);
    else
        json_null(&j, "acked"); /* the device was not asked: it may hold bytes of an earlier push */
    json_real(&j, "seconds", r->seconds, 3);
    json_uint(&j, "reconnects", p->reconnects);
    json_uint(&j, "wire_bytes_out", p->wire_before + p->c->bytes_out);
    if (p->u.sent && p->u.done)
        json_real(&j, "transfer_seconds", p->u.t_verdict - p->u.t_first, 3);
    else
        json_null(&j, "transfer_seconds");
    json_uint(&j, "data_bytes_sent", p->u.data_sent);
    json_uint(&j, "flash_holds", p->c->holds);
    json_uint(&j, "flash_hold_ms", p->c->hold_ms);
    json_end(&j);
}

/* A signal ended the push: what the device kept, in the detail; the exit code. */
static int interrupted(struct push *p, const char *after)
{
    const char *name = push_signal == SIGINT ? "SIGINT" : push_signal == SIGTERM ? "SIGTERM" : "a signal";
    if (!p->u.sent)
        snprintf(p->detail, sizeof(p->detail), "interrupted by %s %s; nothing was sent", name, after);
    else if (!device_resumes(p))
        snprintf(p->detail, sizeof(p->detail),
                 "interrupted by %s %s; the device acknowledged %llu of %llu bytes, and its build does not resume "
                 "uploads: pushing again sends the container from the start",
                 name, after, (unsigned long long)p->u.acked, (unsigned long long)p->total);
    else
        snprintf(p->detail, sizeof(p->detail),
                 "interrupted by %s %s; the device acknowledged %llu of %llu bytes: push the same container "
                 "again to resume where it kept the upload",
                 name, after, (unsigned long long)p->u.acked, (unsigned long long)p->total);
    return 128 + push_signal;
}

/* Installed: confirm if asked, check the device's status; *rc the exit code. */
static int confirm_and_check(struct push *p, struct installed *in, int *rc)
{
    int confirm_err = MOTA_OK;
    /* the model is in: a lossy line must not turn that into a failure, so the calls that follow retry
     * (same seq, answered once) for up to the timeout */
    int tries = p->o->timeout_s / 2 < 3 ? 3 : p->o->timeout_s / 2 > 15 ? 15 : (int)(p->o->timeout_s / 2);
    p->c->deadline = tool_now() + p->o->timeout_s;
    keep_interrupted(p);
    if (p->o->confirm && (confirm_err = push_confirm(p, tries)) == MOTA_ERR_NOT_TESTING && p->already)
        confirm_err = MOTA_OK; /* confirmed before */
    if (push_signal != 0) {    /* installed; neither confirmed nor checked */
        memset(in, 0, sizeof(*in));
        *rc = interrupted(p, "after the device installed the container (not confirmed, status not read)");
        return PUSH_INTERRUPTED;
    }
    if (p->o->confirm && confirm_err != MOTA_OK) {
        tool_fail(confirm_err, "confirm");
        *rc = is_link_error(confirm_err) ? link_exit(confirm_err) : EXIT_INVALID;
    }
    check_installed(p, tries, in);
    if (p->result != MOTA_OK)
        *rc = EXIT_INVALID;
    return confirm_err;
}

/* Installed: confirm if asked, check the device's status, report. */
static int push_installed(struct push *p)
{
    const struct mota_manifest *man = &p->vr->manifest;
    struct installed in;
    int rc = EXIT_OK;
    double el = tool_now() - p->t0;
    int confirm_err = confirm_and_check(p, &in, &rc);
    /* installed either way; the status is the confirm's when that failed, so CI sees why */
    struct outcome r = {p->result != MOTA_OK ? p->result : confirm_err, p->result == MOTA_OK, in.confirmed, in.checked,
                        el};
    result_event(p, &r);
    if (p->result != MOTA_OK) {
        tool_fail(p->result, "%s", p->detail);
    } else if (confirm_err == PUSH_INTERRUPTED && push_signal != 0) {
        tool_fail(confirm_err, "%s", p->detail);
    } else if (!p->o->json && !p->o->quiet) {
        /* the model's name is the container's text: escaped */
        fputs(p->already ? "already active: " : "installed: ", stdout);
        tool_put_text(stdout, man->compat.c_name, man->compat.c_name_len);
        if (p->already)
            printf(" seq %llu, nothing installed%s\n", (unsigned long long)man->seq,
                   in.confirmed ? ", confirmed" : ", on trial: confirm with `mota confirm`");
        else
            printf(" seq %llu in %.1f s (%.1f KiB/s%s)%s\n", (unsigned long long)man->seq, el,
                   (double)(p->total - p->kept) / 1024 / (el > 0 ? el : 1),
                   p->reconnects ? ", resumed after a link loss" : "",
                   in.confirmed ? ", confirmed" : ", on trial: confirm with `mota confirm`");
        devprint_models(p->models, p->n_models, in.has_uptime ? (int64_t)in.uptime : -1, (unsigned)in.max_boots);
    }
    return rc;
}

/* Not installed: why, in the JSON result and on stderr. */
static int push_failed(struct push *p)
{
    bool link = is_link_error(p->result);
    int rc = push_signal != 0 ? interrupted(p, "before the device's verdict") : 0;
    if (rc != 0)
        p->result = PUSH_INTERRUPTED;
    if (rc == 0 && p->detail[0] == 0 && p->result == MOTA_ERR_TIMEOUT) /* the facts stderr gets, in the JSON too */
        snprintf(p->detail, sizeof(p->detail),
                 "%s: no answer for %g s (--timeout) after the device acknowledged %llu of %llu bytes", p->o->port,
                 p->o->timeout_s, (unsigned long long)p->u.acked, (unsigned long long)p->total);
    else if (rc == 0 && p->detail[0] == 0 && link)
        snprintf(p->detail, sizeof(p->detail), "%s; the device acknowledged %llu of %llu bytes", p->c->why,
                 (unsigned long long)p->u.acked, (unsigned long long)p->total);
    struct outcome r = {p->result, false, false, false, tool_now() - p->t0};
    result_event(p, &r);
    if (rc != 0)
        tool_fail(p->result, "%s", p->detail);
    else if ((p->result == MOTA_ERR_ENV_TOO_LARGE || p->result == MOTA_ERR_DECRYPT_OFF ||
              p->result == MOTA_ERR_ENC_NO_KEY) &&
             !p->u.sent)
        tool_fail(p->result, "not sent: the device would refuse it (%s); its model is unchanged", p->detail);
    else if (p->result == MOTA_ERR_TIMEOUT)
        tool_fail(p->result, "%s: no answer for %g s (--timeout) after the device acknowledged %llu of %llu bytes",
                  p->o->port, p->o->timeout_s, (unsigned long long)p->u.acked, (unsigned long long)p->total);
    else if (link)
        link_fail(p->result, p->c, p->o);
    else if (p->detail[0])
        tool_fail(p->result, "the device refused the update (%s); its model is unchanged", p->detail);
    else
        tool_fail(p->result, "the device refused the update; its model is unchanged");
    return rc != 0 ? rc : link ? link_exit(p->result) : EXIT_INVALID;
}

/* Nothing sent: the file is unreadable or not what it claims (path: said on stderr unless said), or the
 * device could not be reached. */
static int push_not_sent(struct push *p, int ret, const char *detail, const char *path)
{
    int rc = 0;
    if (detail != p->detail)
        snprintf(p->detail, sizeof(p->detail), "%s", detail);
    if (path == NULL && push_signal != 0) {
        rc = interrupted(p, "before the device answered");
        ret = PUSH_INTERRUPTED;
    }
    struct outcome r = {ret, false, false, false, tool_now() - p->t0};
    result_event(p, &r);
    if (path != NULL && ret == MOTA_ERR_IO)
        return EXIT_IO; /* tool_map has said why */
    if (path != NULL) {
        tool_fail(ret, "%s: %s; nothing was sent", path, detail);
        return EXIT_INVALID;
    }
    if (rc != 0) {
        tool_fail(ret, "%s", p->detail);
        return rc;
    }
    link_fail(ret, p->c, p->o);
    return link_exit(ret);
}

/* Connected: the container sent, the verdict told. The exit code. */
static int push_run(struct push *p, const struct mapped *m)
{
    p->result = push_send(p, m);
    if (p->result == MOTA_ERR_ALREADY_ACTIVE) { /* a retry of a push that made it: success, nothing to do */
        p->already = true;
        p->result = MOTA_OK;
        p->detail[0] = 0;
    }
    explain(p);
    if (p->result == MOTA_OK && !p->already && (p->tty || p->shown < p->total))
        progress(p, p->total, true); /* every byte in (already active: only the head went, and said so) */
    else if (p->tty && !p->o->quiet && p->shown > 0)
        fputc('\n', stderr);
    return p->result == MOTA_OK ? push_installed(p) : push_failed(p);
}

/* The push, from the file mapped on: *p set up, the container checked, the device reached. */
static int push_file(struct push *p, const char *path, const struct mapped *m, struct mota_verify_result *vr)
{
    const struct link_opts *o = p->o;
    p->total = m->len;
    int ret = precheck(m, vr, &p->container, p->detail, sizeof(p->detail));
    if (ret != MOTA_OK)
        return push_not_sent(p, ret, p->detail, path);
    p->c->on_event = on_event;
    p->c->event_ctx = p;
    if (p->tty && !o->quiet)
        fprintf(stderr, "connecting to %s ...", o->port);
    ret = push_connect(p, p->t0 + o->timeout_s, true);
    if (p->tty && !o->quiet)
        fprintf(stderr, "\r\033[K");
    if (ret != MOTA_OK)
        return push_not_sent(p, ret, p->c->why, NULL);
    return push_run(p, m);
}

/* A usage error of push --json: its result event, every field (docs/json.md), nothing done. */
static void usage_result(const char *cmd, const char *detail)
{
    struct json j;
    json_doc(&j, stdout, cmd, true);
    json_str(&j, "event", "result");
    json_reason(&j, MOTA_ERR_ARG);
    json_bool(&j, "installed", false);
    json_null(&j, "already_active");
    json_bool(&j, "confirmed", false);
    json_bool(&j, "sent", false);
    json_bool(&j, "status_checked", false);
    json_str(&j, "detail", detail);
    json_null(&j, "container");
    json_null(&j, "acked");
    json_real(&j, "seconds", 0, 3);
    json_uint(&j, "reconnects", 0);
    json_uint(&j, "wire_bytes_out", 0);
    json_null(&j, "transfer_seconds");
    json_uint(&j, "data_bytes_sent", 0);
    json_uint(&j, "flash_holds", 0);
    json_uint(&j, "flash_hold_ms", 0);
    json_end(&j);
}

int cmd_push(int argc, char **argv)
{
    struct link_opts o;
    const char *path = NULL;
    tool_usage_json = usage_result;
    int rc =
        link_args(argc, argv, &o, "push", LO_JSON | LO_QUIET | LO_CONFIRM | LO_REINSTALL, push_usage, true, &path, 60);
    if (rc != EXIT_OK)
        return rc;
    static struct mota_verify_result vr;
    static struct client c;
    static struct push p;
    memset(&p, 0, sizeof(p));
    memset(&vr, 0, sizeof(vr));
    memset(&c, 0, sizeof(c));
    c.fd = -1;
    p.o = &o;
    p.tty = isatty(STDERR_FILENO) && !o.json;
    p.t0 = tool_now();
    p.last_decile = -1;
    p.vr = &vr;
    p.c = &c;
    /* SIGINT, SIGTERM: a result event and 128 + the signal (the caller's handlers come back after) */
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask); /* no SA_RESTART: a wait for the device returns at once */
    push_signal = 0;
    signal_client = &c;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    signal(SIGPIPE, SIG_IGN);
    struct mapped m;
    if (tool_map(path, &m) != MOTA_OK) {
        json_file_why(path, p.detail, sizeof(p.detail));
        rc = push_not_sent(&p, MOTA_ERR_IO, p.detail, path);
    } else {
        rc = push_file(&p, path, &m, &vr);
        tool_unmap(&m);
    }
    client_close(&c);
    signal_client = NULL;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}
