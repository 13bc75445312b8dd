/* SPDX-License-Identifier: Apache-2.0 */
/* invoke: run the device's active model on an input. */
#include "client.h"
#include "cmds.h"
#include "devlink.h"

#include "common/files.h"
#include "common/json.h"
#include "common/util.h"
#include "offline/profiles.h"

#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/err.h"
#include "mota/nbin.h"

#include <stdlib.h>
#include <string.h>

static const char invoke_usage[] =
    "usage: mota invoke --input FILE [--output-size N] [--model NAME] [-o OUT] [--json] [--timeout S] PORT\n\n"
    "Run the active model on FILE on the device; print the output and the time it took; -o OUT\n"
    "writes the output (a self-test's --selftest-output made on the board itself).\n"
    "Where the device says the model's inputs and outputs (mota status), --output-size may be\n"
    "left out, and an input or output of another size is refused before anything is sent, with\n"
    "the model's sizes.\n"
    "An input or output larger than one frame goes through the device's I/O buffer (its size is in\n"
    "`mota status --json`, HELLO key 12), in pieces.\n"
    "--model NAME the device does not have is refused (MOTA_ERR_NO_SLOT, exit 1) with the names it has.\n" LINK_EXITS;

#define INVOKE_MAX_OUTPUT (16u << 20) /* the host's own bound: a device's I/O buffer is far smaller */

/*
 * Through the device's I/O buffer: the input in pieces (INPUT), one run (RUN), the output in windows
 * (OUTPUT). Pieces and windows are idempotent by their offset and are retried; the run is not.
 */
static int invoke_staged(struct client *c, unsigned idx, const uint8_t *in, size_t in_len, uint8_t *out,
                         size_t out_size, double timeout_s, uint32_t *us, int *status, const uint8_t **last,
                         size_t *last_len)
{
    uint8_t req[MOTA_PROTO_MAX_PAYLOAD];
    const uint8_t *body;
    size_t blen, piece = c->max_payload - 4u, window = c->max_payload - 2u;
    int ret = MOTA_OK;
    for (size_t off = 0; off < in_len || off == 0; off += piece) {
        size_t n = in_len - off < piece ? in_len - off : piece;
        mota_put32(req, (uint32_t)off);
        memcpy(req + 4, in + off, n);
        ret = client_call(c, MOTA_CMD_INPUT, req, 4 + n, status, &body, &blen, 2000, 3);
        if (ret != MOTA_OK || *status != MOTA_OK)
            return ret;
        if (blen < 4 || mota_get32(body) != off + n)
            return MOTA_ERR_PROTO_FRAME;
        if (in_len == 0)
            break;
    }
    req[0] = (uint8_t)idx;
    mota_put32(req + 1, (uint32_t)out_size);
    /* one try (an inference is not repeated behind the user's back), as long as the timeout allows */
    ret = client_call(c, MOTA_CMD_RUN, req, 5, status, &body, &blen, (int)(timeout_s * 1000), 1);
    if (ret == MOTA_OK && *status != MOTA_OK) { /* the run's refusal: its words say where */
        *last = body;
        *last_len = blen;
    }
    if (ret != MOTA_OK || *status != MOTA_OK)
        return ret;
    if (blen < 8 || mota_get32(body + 4) != out_size)
        return MOTA_ERR_PROTO_FRAME;
    *us = mota_get32(body);
    for (size_t off = 0; off < out_size;) {
        size_t want = out_size - off < window ? out_size - off : window;
        mota_put32(req, (uint32_t)off);
        mota_put16(req + 4, (uint16_t)(want < 0xFFFFu ? want : 0xFFFFu));
        ret = client_call(c, MOTA_CMD_OUTPUT, req, 6, status, &body, &blen, 2000, 3);
        if (ret != MOTA_OK || *status != MOTA_OK)
            return ret;
        if (blen == 0 || blen > want)
            return MOTA_ERR_PROTO_FRAME;
        memcpy(out + off, body, blen);
        off += blen;
    }
    return MOTA_OK;
}

int dev_invoke(struct client *c, uint64_t io_buffer, unsigned idx, const uint8_t *in, size_t in_len, uint8_t *out,
               size_t out_size, double timeout_s, uint32_t *us, int *status, char *detail, size_t cap)
{
    const uint8_t *body;
    size_t blen;
    int ret;
    detail[0] = 0;
    *status = MOTA_OK;
    if (in_len + 3 <= c->max_payload && out_size + 6 <= c->max_payload) {
        /* it all fits one frame each way: one request (what every device version takes) */
        uint8_t req[MOTA_PROTO_MAX_PAYLOAD];
        req[0] = (uint8_t)idx;
        mota_put16(req + 1, (uint16_t)out_size);
        memcpy(req + 3, in, in_len);
        ret = client_call(c, MOTA_CMD_INVOKE, req, in_len + 3, status, &body, &blen, (int)(timeout_s * 1000), 1);
        if (ret == MOTA_OK && *status == MOTA_OK) {
            if (blen != 4 + out_size)
                return MOTA_ERR_PROTO_FRAME;
            *us = mota_get32(body);
            memcpy(out, body + 4, out_size);
        }
    } else if (((in_len + 31u) & ~(size_t)31u) + out_size > io_buffer) {
        *status = MOTA_ERR_PROTO_IO_SIZE;
        snprintf(detail, cap,
                 "an input of %zu and an output of %zu bytes do not fit the device's I/O buffer of "
                 "%llu bytes (nor one %u-byte frame)",
                 in_len, out_size, (unsigned long long)io_buffer, c->max_payload);
        return MOTA_OK;
    } else {
        body = NULL;
        blen = 0;
        ret = invoke_staged(c, idx, in, in_len, out, out_size, timeout_s, us, status, &body, &blen);
    }
    if (ret == MOTA_OK && *status != MOTA_OK && blen > 0 && blen < cap) { /* a guarding port's words: where */
        memcpy(detail, body, blen);
        detail[blen] = 0;
        if (strcmp(detail, mota_err_str(*status)) == 0)
            detail[0] = 0;
    }
    return ret;
}

/* One run on the device: the model chosen, how the link and the device answered. */
struct invoke_result {
    struct dev_model models[DEV_MAX_MODELS];
    unsigned n_models;
    int idx;           /* the model run; -1: none (the device has no model --model names, or was not asked) */
    int ret;           /* the link's result */
    int status;        /* the device's, or the host's refusal (MOTA_ERR_IO: --input, MOTA_ERR_NO_SLOT: --model) */
    uint32_t us;       /* how long the run took, on the device's clock */
    char detail[600];  /* the device's words, or why it could not be reached, or the host's facts */
    uint64_t out_size; /* --output-size, or the model's output as the device says it */
    bool out_given;    /* --output-size was given */
    uint8_t *out;      /* the output (out_size bytes), once run */
};

/* --model NAME the device does not have: refused, with the names it has. */
static void no_such_model(const char *name, struct invoke_result *r)
{
    size_t at = (size_t)snprintf(r->detail, sizeof(r->detail), "--model %s: the device has", name);
    for (unsigned i = 0; i < r->n_models && at < sizeof(r->detail); i++)
        at += (size_t)snprintf(r->detail + at, sizeof(r->detail) - at, "%s %s", i ? "," : ":", r->models[i].name);
    if (r->n_models == 0 && at < sizeof(r->detail))
        snprintf(r->detail + at, sizeof(r->detail) - at, " no model");
    r->status = MOTA_ERR_NO_SLOT;
    r->idx = -1;
}

/* The model did not run on this input (a device says only that): the sizes given, and the model's where the
 * device says them, else where they are found. */
static void sizes_detail(size_t in_len, struct invoke_result *r)
{
    const struct dev_model *m = r->idx >= 0 && r->idx < (int)r->n_models ? &r->models[r->idx] : NULL;
    if (r->ret != MOTA_OK || r->status != MOTA_ERR_SELFTEST_RUN || r->detail[0] != 0)
        return;
    if (m != NULL && m->io.known) {
        snprintf(r->detail, sizeof(r->detail),
                 "model %s takes %llu input bytes and gives %llu output bytes (mota status); given %zu input bytes "
                 "and %s %llu",
                 m->name, (unsigned long long)m->io.in_bytes, (unsigned long long)m->io.out_bytes, in_len,
                 r->out_given ? "--output-size" : "an output size of", (unsigned long long)r->out_size);
        return;
    }
    snprintf(r->detail, sizeof(r->detail),
             "model %s did not run on an input of %zu bytes with an output of %llu bytes (--output-size); the "
             "device does not report the sizes it expects: the model's are its input and output buffers in `mota "
             "info MODEL.bin` (the container's self-test: its selftest component's size and "
             "compat.selftest.output_size in `mota inspect`)",
             m != NULL ? m->name : "?", in_len, (unsigned long long)r->out_size);
}

/* The output's size (--output-size, else the model's) and its buffer; sizes the model would refuse are refused
 * here, before anything is sent: false, with the reason in r. */
static bool sizes_settled(const struct link_opts *o, size_t in_len, struct invoke_result *r)
{
    const struct dev_model *m = &r->models[r->idx];
    r->out_size = o->out_size;
    r->out_given = o->out_size != 0;
    if (!m->has) { /* what the device would answer, said before anything else is asked of the user */
        r->status = MOTA_ERR_NO_MODEL;
        snprintf(r->detail, sizeof(r->detail), "model %s: nothing installed (mota status)", m->name);
        return false;
    }
    if (r->out_size == 0 && m->io.known)
        r->out_size = m->io.out_bytes;
    if (m->io.known && (m->io.out_bytes == 0 || m->io.out_bytes > INVOKE_MAX_OUTPUT)) {
        r->status = MOTA_ERR_SELFTEST_RUN;
        snprintf(r->detail, sizeof(r->detail), "model %s says it gives %llu output bytes (mota status): %s", m->name,
                 (unsigned long long)m->io.out_bytes,
                 m->io.out_bytes == 0 ? "no output to run it for" : "more than this host takes (16 MiB)");
        return false;
    }
    if (r->out_size == 0 || r->out_size > INVOKE_MAX_OUTPUT) {
        r->status = MOTA_ERR_ARG;
        snprintf(r->detail, sizeof(r->detail),
                 "the device does not say model %s's output size: give --output-size N (at most %u)", m->name,
                 INVOKE_MAX_OUTPUT);
        return false;
    }
    if (m->io.known && (in_len != m->io.in_bytes || r->out_size != m->io.out_bytes)) {
        r->status = MOTA_ERR_SELFTEST_RUN; /* what the device would answer, with the sizes */
        sizes_detail(in_len, r);
        return false;
    }
    if ((r->out = malloc(r->out_size)) == NULL) {
        r->status = MOTA_ERR_NOSPC;
        snprintf(r->detail, sizeof(r->detail), "%llu bytes for the output", (unsigned long long)r->out_size);
        return false;
    }
    return true;
}

/* The input run on the device's model (--model, or the first), the output into out; r says how it went
 * (the device not reached, a refusal, a --model it does not have). */
static void invoke_on_device(struct client *c, const struct link_opts *o, const struct mapped *in,
                             struct invoke_result *r)
{
    const uint8_t *info;
    size_t info_len;
    uint64_t io = 0;
    r->ret = link_connect(c, o, tool_now() + o->timeout_s, true, &info, &info_len);
    if (r->ret != MOTA_OK) {
        snprintf(r->detail, sizeof(r->detail), "%s", c->why);
        return;
    }
    devinfo_models(info, info_len, MOTA_INFO_MODELS, r->models, &r->n_models);
    devinfo_uint(info, info_len, MOTA_INFO_IO_BUFFER, &io);
    if (o->model && (r->idx = devinfo_model_index(r->models, r->n_models, o->model, strlen(o->model))) < 0) {
        no_such_model(o->model, r);
        return;
    }
    if (r->n_models == 0) {
        no_such_model("(the first)", r);
        return;
    }
    if (!sizes_settled(o, in->len, r))
        return;
    r->ret = dev_invoke(c, io, (unsigned)r->idx, in->data, in->len, r->out, (size_t)r->out_size, o->timeout_s, &r->us,
                        &r->status, r->detail, sizeof(r->detail));
    sizes_detail(in->len, r);
}

static void report(const struct link_opts *o, const struct invoke_result *r, bool ok)
{
    if (o->json) {
        struct json j;
        json_doc(&j, stdout, "invoke", false);
        json_reason(&j, r->ret != MOTA_OK ? r->ret : r->status);
        json_str(&j, "model", r->idx >= 0 && r->idx < (int)r->n_models ? r->models[r->idx].name : NULL);
        json_str(&j, "detail", r->detail);
        if (ok) {
            json_uint(&j, "duration_us", r->us);
            json_uint(&j, "output_size", r->out_size);
            json_hex(&j, "output", r->out, (size_t)r->out_size);
        } else { /* no output: every field still there (docs/json.md) */
            json_null(&j, "duration_us");
            json_null(&j, "output_size");
            json_null(&j, "output");
        }
        json_end(&j);
    } else if (ok) {
        printf("inference: %u us, %llu output bytes: ", r->us, (unsigned long long)r->out_size);
        tool_hex(stdout, r->out, r->out_size < 32 ? (size_t)r->out_size : 32);
        printf("%s\n", r->out_size > 32 ? "..." : "");
    }
}

/* The output saved (-o) and reported; the verdict said: the exit code. */
static int conclude(const struct client *c, const struct link_opts *o, const struct invoke_result *r)
{
    bool ok = r->ret == MOTA_OK && r->status == MOTA_OK;
    if (ok && o->output != NULL) {
        struct outfile of;
        if (tool_out_open(&of, o->output, 0644) != MOTA_OK || tool_out_write(&of, r->out, r->out_size) != MOTA_OK ||
            tool_out_commit(&of) != MOTA_OK)
            return EXIT_IO;
    }
    report(o, r, ok);
    if (r->ret != MOTA_OK) {
        link_fail(r->ret, c, o);
        return link_exit(r->ret);
    }
    if (r->status == MOTA_ERR_IO) /* --input: tool_map has said why */
        return EXIT_IO;
    if (r->status == MOTA_ERR_ARG) { /* no output size to be had: the command line's to give */
        tool_fail(r->status, "%s", r->detail);
        return EXIT_USAGE;
    }
    if (r->status != MOTA_OK) {
        tool_fail(r->status, "%s", r->detail[0] ? r->detail : "the device refused");
        return EXIT_INVALID;
    }
    return EXIT_OK;
}

int cmd_invoke(int argc, char **argv)
{
    struct link_opts o;
    int rc = link_args(argc, argv, &o, "invoke", LO_MODEL | LO_INVOKE | LO_JSON, invoke_usage, false, NULL, 10);
    if (rc != EXIT_OK)
        return rc;
    if (o.input == NULL || o.out_size > INVOKE_MAX_OUTPUT)
        return tool_usage_err("invoke", "needs --input FILE, and --output-size N at most %u", INVOKE_MAX_OUTPUT);
    static struct client c;
    static struct invoke_result r;
    r = (struct invoke_result){.idx = 0, .status = MOTA_OK};
    struct mapped in;
    if (tool_map(o.input, &in) != MOTA_OK) { /* nothing asked of the device */
        char why[560];
        json_file_why(o.input, why, sizeof(why));
        snprintf(r.detail, sizeof(r.detail), "--input %s", why);
        r.status = MOTA_ERR_IO;
        r.idx = -1;
    } else {
        invoke_on_device(&c, &o, &in, &r);
        tool_unmap(&in);
        client_close(&c);
    }
    rc = conclude(&c, &o, &r);
    free(r.out);
    return rc;
}
