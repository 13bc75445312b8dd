/* push: send a container to a device and report its verdict. */
#include "client.h"
#include "cmds.h"
#include "devlink.h"
#include "profiles.h"
#include "util.h"

#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/err.h"
#include "mota/nbin.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* One push: what the progress display and the JSON events need. */
struct push {
    const struct link_opts *o;
    bool tty;          /* a progress bar on stderr */
    double t0;
    uint64_t total;
    uint64_t shown;    /* bytes the display last showed */
    int last_decile;   /* non-TTY progress lines: one per 10% */
    double last_event; /* JSON progress events: at most 4 a second */
    const char *phase; /* what the device is doing after the last byte, as it said */
    double phase_t;
    double heard;      /* when the device last said anything (an answer or an event) */
};

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
    double el = tool_now() - p->t0, rate = el > 0 ? (double)done / el : 0;
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
    double el = tool_now() - p->t0, rate = el > 0 ? (double)done / el : 0;
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
static int precheck(const struct mapped *m, struct mota_verify_result *vr, char *why, size_t cap)
{
    int ret = mota_envelope_decode(m->data, m->len, &vr->env);
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
        snprintf(why, cap, "the file holds %zu bytes, its envelope declares %llu: %llu extra byte(s) after it",
                 m->len, (unsigned long long)declared, (unsigned long long)(m->len - declared));
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
    "  --timeout S    the longest wait for the device: to connect, to answer HELLO, to acknowledge\n"
    "                 data (each window), to give its verdict after the last byte (default 60)\n"
    "  --json         one JSON event per line on stdout (for CI)\n"
    "  -q, --quiet    no progress output\n"
    "Exit codes: 0 installed (on trial, or confirmed with --confirm); 1 refused by the\n"
    "device (its reason is printed); 2 usage; 3 container unreadable or port unusable\n"
    "(no such device, connection refused); 5 device busy (another client holds it);\n"
    "6 timed out (the device stopped answering for --timeout seconds).\n";

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

/* Facts the host holds when the device's refusal carries none: what the device has and expects. */
static void host_detail(int result, const struct mota_verify_result *vr, const uint8_t *info, size_t info_len,
                        const struct dev_model *models, unsigned n, char *detail, size_t cap)
{
    const struct mota_manifest *man = &vr->manifest;
    int idx = man->compat.c_name ? model_index(models, n, man->compat.c_name, man->compat.c_name_len) : -1;
    size_t at = 0;
    if (result == MOTA_ERR_NO_SLOT) {
        at += (size_t)snprintf(detail, cap, "the container's model is %.*s; the device has", (int)man->compat.c_name_len,
                               man->compat.c_name ? man->compat.c_name : "");
        for (unsigned i = 0; i < n && at < cap; i++)
            at += (size_t)snprintf(detail + at, cap - at, "%s %s", i ? "," : ":", models[i].name);
        if (n == 0 && at < cap)
            snprintf(detail + at, cap - at, " no model slot");
    } else if ((result == MOTA_ERR_ROLLBACK || result == MOTA_ERR_ROLLBACK_SAME_SEQ) && idx >= 0) {
        snprintf(detail, cap, "seq: committed %llu on the device, offered %llu; pack with --seq above %llu",
                 (unsigned long long)models[idx].committed, (unsigned long long)man->seq,
                 (unsigned long long)models[idx].committed);
    } else if (result == MOTA_ERR_VENDOR_MISMATCH || result == MOTA_ERR_CLASS_MISMATCH) {
        uint8_t want[16];
        bool vendor = result == MOTA_ERR_VENDOR_MISMATCH;
        if (!dev_identity(info, info_len, vendor ? 0 : 1, want))
            return;
        for (size_t i = 0; i < man->n_components; i++) {
            const struct mota_component *c = &man->comp[i];
            if (vendor ? !c->has_vendor : !c->has_class)
                continue;
            char w[40], g[40];
            tool_uuid_str(want, w);
            tool_uuid_str(vendor ? c->vendor_id : c->class_id, g);
            snprintf(detail, cap, "%s id: device %s, container %s (pack --%s NAME with the device's name)",
                     vendor ? "vendor" : "class", w, g, vendor ? "vendor" : "class");
            return;
        }
    }
}

static void on_event(void *ctx, unsigned phase, uint32_t offset)
{
    struct push *p = ctx;
    (void)offset;
    p->heard = tool_now(); /* the device is working on the verdict: not silence */
    show_phase(p, phase_name(phase));
}

int cmd_push(int argc, char **argv)
{
    struct link_opts o;
    const char *path = NULL;
    int rc = link_args(argc, argv, &o, "push", LO_JSON | LO_QUIET | LO_CONFIRM, push_usage, true, &path, 60);
    if (rc != EXIT_OK)
        return rc;
    struct mapped m;
    if (tool_map(path, &m) != MOTA_OK)
        return EXIT_IO;
    static struct mota_verify_result vr;
    struct mota_envelope *env = &vr.env;
    struct push p = {.o = &o, .tty = isatty(STDERR_FILENO) && !o.json, .t0 = tool_now(), .total = m.len,
                     .last_decile = -1};
    struct json j;
    char detail[320] = "";
    int ret = precheck(&m, &vr, detail, sizeof(detail));
    if (ret != MOTA_OK) {
        if (event_begin(&p, &j, "result")) {
            json_reason(&j, ret);
            json_bool(&j, "installed", false);
            json_bool(&j, "sent", false);
            json_str(&j, "detail", detail);
            json_end(&j);
        }
        tool_fail(ret, "%s: %s; nothing was sent", path, detail);
        tool_unmap(&m);
        return EXIT_INVALID;
    }
    signal(SIGPIPE, SIG_IGN);
    static struct client c;
    const uint8_t *info;
    size_t info_len;
    static uint8_t info_copy[MOTA_PROTO_MAX_PAYLOAD]; /* the device info outlives the receive buffer */
    struct dev_model models[DEV_MAX_MODELS];
    unsigned n_models = 0;
    double last_progress = p.t0;
    uint64_t total = m.len, acked = 0, send_ptr = 0;
    unsigned reconnects = 0;
    int result = MOTA_ERR_DEVICE_LOST;
    const char *mname = vr.manifest.compat.c_name;
    size_t mname_len = vr.manifest.compat.c_name_len;
    bool sent = false;

    c.on_event = on_event;
    c.event_ctx = &p;
    rc = EXIT_IO;
    if (p.tty && !o.quiet)
        fprintf(stderr, "connecting to %s ...", o.port);
    ret = connect_device(&c, &o, p.t0 + o.timeout_s, true, &info, &info_len);
    if (p.tty && !o.quiet)
        fprintf(stderr, "\r\033[K");
    if (ret != MOTA_OK) {
        if (event_begin(&p, &j, "result")) {
            json_reason(&j, ret);
            json_bool(&j, "installed", false);
            json_bool(&j, "sent", false);
            json_str(&j, "detail", c.why);
            json_real(&j, "seconds", tool_now() - p.t0, 3);
            json_end(&j);
        }
        link_fail(ret, &c, &o);
        rc = link_exit(ret);
        goto out;
    }
    memcpy(info_copy, info, info_len);
    info = info_copy;
    parse_models(info, info_len, 7, models, &n_models);
    char dev_name[65] = "";
    dev_text(info, info_len, 1, dev_name, sizeof(dev_name));
    if (event_begin(&p, &j, "hello")) {
        json_str(&j, "port", o.port);
        json_str(&j, "device", dev_name);
        json_uint(&j, "max_payload", c.max_payload);
        json_uint(&j, "window", c.window);
        json_container(&j, &vr, total);
        json_end(&j);
    }
    if (!o.quiet && !o.json)
        fprintf(stderr, "%s on %s: %u model slot(s); frames of %u bytes, window %u\n", dev_name[0] ? dev_name : "device",
                o.port, n_models, c.max_payload, c.window);

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
                if (event_begin(&p, &j, "resume")) {
                    json_uint(&j, "offset", resume);
                    json_end(&j);
                }
                if (!o.quiet && !o.json)
                    fprintf(stderr, "the device kept %u bytes of this container: resuming after the head\n", resume);
            }
        } else if (link_err == MOTA_OK) {
            result = status;
            size_t dl = blen < sizeof(detail) - 1 ? blen : sizeof(detail) - 1;
            memcpy(detail, body, dl);
            detail[dl] = 0;
            if (strcmp(detail, mota_err_str(status)) == 0)
                detail[0] = 0;
            break;
        }
        send_ptr = 0;
        uint16_t stale_below = c.seq + 1; /* answers to frames sent before now are ignored for rewinds */
        unsigned inflight = 0;
        p.heard = tool_now();
        /* the line's pace, from the acknowledgements of this connection: on a slow line (a UART at 9600
         * baud, mota sim --baud) a window takes seconds on the wire, and that is not silence */
        double t_conn = tool_now();
        uint64_t acked_conn = acked;
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
                sent = true;
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
                /* the pace up to the last acknowledgement, never up to now: measured to now it would fall
                 * through a silence and push the resend ever further away */
                double el = last_progress - t_conn;
                double rate = acked > acked_conn && el > 0 ? (double)(acked - acked_conn) / el : 0;
                double on_wire = rate > 0 && send_ptr > acked ? (double)(send_ptr - acked) / rate : 0;
                if (on_wire > 10.0) /* a first acknowledgement slowed by an erase misjudges the pace: bounded */
                    on_wire = 10.0;
                if (send_ptr >= total && rate > 0 && tool_now() - p.heard > 1.0 + on_wire && p.phase == NULL)
                    show_phase(&p, "verdict pending"); /* a device that does not tell its phases */
                else if (p.phase != NULL && p.tty && !o.quiet)
                    draw_bar(&p, total); /* the phase's clock */
                if (tool_now() - p.heard > 3.0 + on_wire) { /* silence: resend from the last acknowledged offset */
                    send_ptr = acked;
                    inflight = 0;
                    stale_below = (uint16_t)(c.seq + 1);
                    p.heard = tool_now();
                }
                if (tool_now() - last_progress > o.timeout_s) {
                    link_err = MOTA_ERR_TIMEOUT;
                    break;
                }
                continue;
            }
            if (f.cmd != MOTA_CMD_DATA || f.len < 2)
                continue;
            p.heard = tool_now();
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
                    if (next < total)
                        progress(&p, acked, false);
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
        if (event_begin(&p, &j, "reconnect")) {
            json_uint(&j, "count", reconnects);
            json_uint(&j, "acked", acked);
            json_end(&j);
        }
        if (!o.quiet && !o.json)
            fprintf(stderr, "%slink lost (%s); reconnecting\n", p.tty ? "\n" : "", mota_err_name(link_err));
        p.phase = NULL;
        ret = connect_device(&c, &o, last_progress + o.timeout_s, false, &info, &info_len);
        if (ret != MOTA_OK) {
            result = ret;
            break;
        }
        memcpy(info_copy, info, info_len);
        info = info_copy;
        acked = 0;
    }
    if (result == MOTA_ERR_TRIAL_PENDING) { /* say which model, and what to do */
        int idx = mname ? model_index(models, n_models, mname, mname_len) : -1;
        if (idx >= 0 && models[idx].testing)
            snprintf(detail, sizeof(detail),
                     "model %s seq %llu%s%s is on trial: confirm it (mota confirm) or roll it back (mota rollback) "
                     "first", models[idx].name, (unsigned long long)models[idx].seq, models[idx].version[0] ? " v" : "",
                     models[idx].version);
    } else if (result != MOTA_OK && detail[0] == 0) {
        host_detail(result, &vr, info_copy, info_len, models, n_models, detail, sizeof(detail));
    }
    if (result == MOTA_OK && (p.tty || p.shown < total))
        progress(&p, total, true);
    else if (p.tty && !o.quiet && p.shown > 0)
        fputc('\n', stderr);

    double el = tool_now() - p.t0;
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
            struct dev_model fresh[DEV_MAX_MODELS];
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
        /* the device's verdict said installed; its status must show this very container as the active model */
        n_models = 0;
        uint64_t uptime = 0, max_boots = 0;
        bool checked = client_call(&c, MOTA_CMD_STATUS, NULL, 0, &status, &body, &blen, 2000, tries) == MOTA_OK &&
                       status == MOTA_OK && parse_models(body, blen, 1, models, &n_models) == 0;
        bool has_uptime = checked && status_uptime_ms(body, blen, &uptime);
        info_uint(info_copy, info_len, 13, &max_boots);
        int idx = mname ? model_index(models, n_models, mname, mname_len) : -1;
        bool active = checked && idx >= 0 && models[idx].has && memcmp(models[idx].digest, env->digest, 32) == 0;
        if (checked && !active) {
            result = MOTA_ERR_INTERNAL;
            snprintf(detail, sizeof(detail), "the device answered installed, but its status does not show %.*s seq %llu "
                     "active", (int)mname_len, mname ? mname : "", (unsigned long long)vr.manifest.seq);
            rc = EXIT_INVALID;
        }
        bool confirmed = active && !models[idx].testing;
        if (event_begin(&p, &j, "result")) {
            /* installed either way; the status is the confirm's when that failed, so CI sees why */
            json_reason(&j, result != MOTA_OK ? result : confirm_err);
            json_bool(&j, "installed", result == MOTA_OK);
            json_bool(&j, "confirmed", confirmed);
            json_bool(&j, "sent", true);
            json_bool(&j, "status_checked", checked);
            json_str(&j, "detail", detail);
            json_container(&j, &vr, total);
            json_real(&j, "seconds", el, 3);
            json_uint(&j, "reconnects", reconnects);
            json_uint(&j, "wire_bytes_out", c.bytes_out);
            json_end(&j);
        }
        if (result != MOTA_OK) {
            tool_fail(result, "%s", detail);
        } else if (!o.json && !o.quiet) {
            printf("installed: %.*s seq %llu in %.1f s (%.1f KiB/s%s)%s\n", (int)mname_len, mname,
                   (unsigned long long)vr.manifest.seq, el, (double)total / 1024 / (el > 0 ? el : 1),
                   reconnects ? ", resumed after a link loss" : "",
                   confirmed ? ", confirmed" : ", on trial: confirm with `mota confirm`");
            print_models(models, n_models, has_uptime ? (int64_t)uptime : -1, (unsigned)max_boots);
        }
    } else {
        bool link = result == MOTA_ERR_DEVICE_LOST || result == MOTA_ERR_TRANSPORT || result == MOTA_ERR_TIMEOUT ||
                    result == MOTA_ERR_BUSY;
        rc = link ? link_exit(result) : EXIT_INVALID;
        if (event_begin(&p, &j, "result")) {
            json_reason(&j, result);
            json_bool(&j, "installed", false);
            json_bool(&j, "sent", sent);
            json_str(&j, "detail", detail);
            json_container(&j, &vr, total);
            json_uint(&j, "acked", acked);
            json_real(&j, "seconds", el, 3);
            json_uint(&j, "reconnects", reconnects);
            json_end(&j);
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
