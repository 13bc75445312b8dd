/* SPDX-License-Identifier: Apache-2.0 */
/* Device side of the update link: frames in, agent calls, frames out. */
#include "mota/link.h"

#include "link_replies.h"
#include "mota/err.h"
#include "mota/features.h"
#include "mota/crc32.h"

#include <stdint.h>
#include <string.h>

void mota_link_init(struct mota_link *l, struct mota_agent *agent, const struct mota_transport *tr,
                    const struct mota_system *sys, const char *name)
{
    memset(l, 0, sizeof(*l));
    l->agent = agent;
    l->tr = tr;
    l->sys = sys;
    l->name = name ? name : "mota-device";
    l->max_payload = 256; /* until HELLO negotiates more */
    mota_deframer_init(&l->df, l->rx, sizeof(l->rx));
}

/* the largest frame payload this device takes and sends */
static uint16_t payload_most(const struct mota_link *l)
{
    return l->payload_limit >= 64u && l->payload_limit < MOTA_LINK_MAX_PAYLOAD ? l->payload_limit
                                                                               : (uint16_t)MOTA_LINK_MAX_PAYLOAD;
}

unsigned mota_link_window(const struct mota_link *l)
{
    const struct mota_flash *f = l->agent->cfg->port->flash;
    if (f->flags & MOTA_FLASH_STALLS_CPU)
        return 1u;
    /* whole frames of the negotiated size, and the answer's worth of slack */
    uint32_t frame = (uint32_t)MOTA_PROTO_ENCODED_MAX(l->max_payload), w = MOTA_LINK_WINDOW;
    if (l->tr->rx_capacity != 0 && l->tr->rx_capacity / frame < w)
        w = l->tr->rx_capacity / frame;
    return w > 0 ? w : 1u;
}

void mota_link_reconnect(struct mota_link *l)
{
    l->max_payload = 256;
    l->pending_len = l->pending_off = 0;
    l->session = l->ended = false;
    l->total = l->expected = 0;
    l->replay_ok = false;
    l->io_in = l->io_out = 0;
    mota_deframer_init(&l->df, l->rx, sizeof(l->rx));
}

static void note_error(struct mota_link *l, int code, unsigned model)
{
#if !MOTA_FEATURE_ERRLOG /* a build without the ring: STATUS's last result and a model's last error say it */
    (void)l, (void)code, (void)model;
#else
    struct mota_link_error *e = &l->errors[l->next_error];
    e->code = (int16_t)code;
    e->model = (uint8_t)model;
    e->at_ms = mota_link_now_ms(l);
    l->next_error = (l->next_error + 1) % MOTA_LINK_ERRORS;
    if (l->n_errors < MOTA_LINK_ERRORS)
        l->n_errors++;
#endif
}

#define BODY(l) ((l)->out + 2)
#define BODY_CAP(l) (sizeof((l)->out) - 2)

static bool keeps_answer(uint8_t cmd)
{
    return cmd == MOTA_CMD_BEGIN || cmd == MOTA_CMD_CONFIRM || cmd == MOTA_CMD_ROLLBACK || cmd == MOTA_CMD_ABORT ||
           cmd == MOTA_CMD_REBOOT;
}

/*
 * Send a response: status, then the body (built at BODY(l), or copied there),
 * or the status message on failure when the build has messages. The request
 * is dead once this runs: its frame buffer holds the encoded answer.
 */
static int respond(struct mota_link *l, const struct mota_frame *req, int status, const uint8_t *body, size_t n)
{
    if (status != MOTA_OK && n == 0) {
        const char *msg = mota_err_str(status);
        body = (const uint8_t *)msg;
        n = strlen(msg);
    }
    if (n > BODY_CAP(l))
        n = BODY_CAP(l);
    if (n > 0 && body != BODY(l))
        memmove(BODY(l), body, n);
    mota_put16(l->out, (uint16_t)(int16_t)status);
    l->replay_ok = keeps_answer(req->cmd) && (n <= MOTA_LINK_REPLAY_MAX || status != MOTA_OK);
    if (l->replay_ok) {
        l->replay_cmd = req->cmd;
        l->replay_seq = req->seq;
        l->replay_crc = mota_crc32(0, req->payload, req->len);
        l->replay_status = status;
        l->replay_len = n <= MOTA_LINK_REPLAY_MAX ? (uint8_t)n : 0; /* a long one is the message: made again */
        memcpy(l->replay_body, BODY(l), l->replay_len);
    }
    struct mota_frame f = {
        .kind = MOTA_KIND_RESPONSE, .cmd = req->cmd, .seq = req->seq, .len = (uint16_t)(n + 2), .payload = l->out};
    size_t len = mota_frame_encode(&f, l->rx, sizeof(l->rx));
    if (len == 0)
        return MOTA_ERR_INTERNAL;
    l->responses++;
    return l->tr->write(l->tr->ctx, l->rx, len);
}

/* A retry of the request answered last: the same answer, not a second run. */
static bool is_retry(const struct mota_link *l, const struct mota_frame *f)
{
    return l->replay_ok && f->seq == l->replay_seq && f->cmd == l->replay_cmd &&
           mota_crc32(0, f->payload, f->len) == l->replay_crc;
}

/*
 * HELLO and STATUS must always have an answer, whatever text the installed
 * manifests carry (version texts may be 256 bytes each). A host that pages
 * (asks from a model on) gets as many models whole as fit, and asks again
 * for the rest. For one model, or an older host that wants every model in
 * one answer, what does not fit goes: the versions are cut short, then left
 * out, then the previous models and the errors' times too. A device that
 * cannot say HELLO could never be updated again.
 */
typedef size_t (*info_fn)(struct mota_link *, uint8_t *, size_t, const struct mota_link_page *);

static size_t info_fitted(struct mota_link *l, info_fn build, bool paged, unsigned first, size_t cap)
{
    static const size_t vcaps[] = {SIZE_MAX, 32, 0, 0};
    unsigned total = l->agent->cfg->n_models, count = total - first;
    /* a host that asks from a model on gets as many models whole as fit, at least one; an older host, all */
    for (;; count--) {
        bool last = !paged || count <= 1;
        for (unsigned i = 0; i < (last ? sizeof(vcaps) / sizeof(vcaps[0]) : 1u); i++) {
            struct mota_link_page pg = {first, count, paged, vcaps[i], i < 3};
            size_t n = build(l, BODY(l), cap, &pg);
            if (n > 0)
                return n;
        }
        if (last)
            return 0;
    }
}

/* Where a guarded model call stopped, from the port: the body of a fault or time verdict. */
static size_t fault_detail(struct mota_link *l, int status)
{
    const struct mota_port *p = l->agent->cfg->port;
    if ((status != MOTA_ERR_SELFTEST_FAULT && status != MOTA_ERR_SELFTEST_TIMEOUT) || p->infer_detail == NULL)
        return 0;
    return p->infer_detail(p->infer_ctx, (char *)BODY(l), BODY_CAP(l) < 128 ? BODY_CAP(l) : 128);
}

/* The body of a refused upload's answer: the facts behind it, or where a guarded model stopped. */
static size_t verdict_detail(struct mota_link *l, int status)
{
#if MOTA_FEATURE_DETAIL
    size_t n = mota_link_refusal_detail(l->agent, status, BODY(l), BODY_CAP(l) < 224 ? BODY_CAP(l) : 224);
    if (n > 0)
        return n;
#endif
    return fault_detail(l, status); /* a build without refusal details still says where a model stopped */
}

/* Before each step after the last byte, the host hears which one starts: an event about the DATA request
 * being answered (kind 3: never taken for the answer). Best effort: the verdict follows either way. */
static void event(struct mota_link *l, enum mota_agent_phase phase, uint32_t offset, uint32_t ms)
{
    uint8_t p[MOTA_PROTO_EVENT_LEN];
    p[0] = (uint8_t)phase;
    mota_put32(p + 1, offset);
    mota_put32(p + 5, ms);
    struct mota_frame f = {
        .kind = MOTA_KIND_EVENT, .cmd = MOTA_CMD_DATA, .seq = l->last_seq, .len = sizeof(p), .payload = p};
    size_t len = mota_frame_encode(&f, l->ev, sizeof(l->ev));
    if (len > 0)
        (void)l->tr->write(l->tr->ctx, l->ev, len);
}

static void send_event(void *ctx, enum mota_agent_phase phase, uint32_t offset)
{
    event(ctx, phase, offset, 0);
}

/* A flash operation the host would take for silence (its timer is 3 s) or that the device cannot receive
 * through: the host is told to hold, for the operation's longest time. */
static void send_busy(void *ctx, uint32_t max_us)
{
    struct mota_link *l = ctx;
    if (max_us >= MOTA_LINK_BUSY_EVENT_US || (max_us > 0 && mota_link_window(l) == 1))
        event(l, MOTA_PHASE_FLASH_BUSY, l->expected, (max_us + 999u) / 1000u);
}

#if MOTA_FEATURE_INVOKE
/* Run model m once. A guarding port's fault or time verdict is counted as the model's fault. */
static int run_model(struct mota_link *l, unsigned m, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                     uint64_t *us)
{
    struct mota_agent_model_info info;
    const struct mota_agent_config *c = l->agent->cfg;
    int ret = mota_agent_model_info(l->agent, m, &info);
    if (ret != MOTA_OK)
        return ret;
    if (c->port->infer == NULL)
        return MOTA_ERR_UNSUPPORTED;
    *us = 0; /* the budget: the device's own */
    ret = c->port->infer(c->port->infer_ctx, info.instance, in, in_len, out, out_len, us);
    if (ret != MOTA_OK) {
        ret = ret == MOTA_ERR_SELFTEST_FAULT || ret == MOTA_ERR_SELFTEST_TIMEOUT ? ret : MOTA_ERR_SELFTEST_RUN;
        note_error(l, ret, m);
        if (ret != MOTA_ERR_SELFTEST_RUN)
            (void)mota_agent_model_fault(l->agent, m, ret);
    }
    return ret;
}
#endif

static int upload_model(const struct mota_link *l)
{
    for (unsigned m = 0; m < l->agent->cfg->n_models; m++)
        if (l->agent->st[m].upload_state != MOTA_UPLOAD_NONE)
            return (int)m;
    return 0;
}

/* One function per command: the request's frame in, the answer out (through respond). */
typedef int (*command_fn)(struct mota_link *l, const struct mota_frame *f);

static int answer_u32(struct mota_link *l, const struct mota_frame *f, int status, uint32_t v)
{
    uint8_t b[4];
    mota_put32(b, v);
    return respond(l, f, status, b, sizeof(b));
}

/* An offset out of step: where the device is, and which offset it got. */
static int answer_offset(struct mota_link *l, const struct mota_frame *f, uint32_t expected, uint32_t got)
{
    uint8_t b[8];
    mota_put32(b, expected);
    mota_put32(b + 4, got);
    return respond(l, f, MOTA_ERR_UPLOAD_OFFSET, b, sizeof(b));
}

/* HELLO and STATUS may end with the model to start from (a host that pages: "models-from"). */
static int answer_info(struct mota_link *l, const struct mota_frame *f, size_t at, info_fn build)
{
    if (f->len > at + 1u)
        return respond(l, f, MOTA_ERR_PROTO_FRAME, NULL, 0);
    /* a build without answers in parts ignores the byte, as a device before them did: every model, cut to fit */
    bool paged = MOTA_FEATURE_PAGES && f->len > at;
    unsigned first = paged ? f->payload[at] : 0;
    if (paged && first >= l->agent->cfg->n_models && first > 0)
        return respond(l, f, MOTA_ERR_ARG, NULL, 0);
    /* a host that pages gets no more than it negotiated, an older one no more than this device's frame (as
     * it did), unless even one model cannot be said in that: an answer in any case */
    size_t most = payload_most(l) - 2u < BODY_CAP(l) ? payload_most(l) - 2u : BODY_CAP(l);
    size_t cap = paged && l->max_payload - 2u < most ? l->max_payload - 2u : most;
    size_t n = info_fitted(l, build, paged, first, cap);
    if (n == 0 && cap < BODY_CAP(l))
        n = info_fitted(l, build, paged, first, BODY_CAP(l));
    return respond(l, f, n ? MOTA_OK : MOTA_ERR_INTERNAL, BODY(l), n);
}

static int cmd_hello(struct mota_link *l, const struct mota_frame *f)
{
    if (f->len < 3)
        return respond(l, f, MOTA_ERR_PROTO_FRAME, NULL, 0);
    if (f->payload[0] != MOTA_PROTO_VERSION)
        return respond(l, f, MOTA_ERR_PROTO_VERSION, NULL, 0);
    uint16_t want = mota_get16(f->payload + 1), most = payload_most(l);
    l->max_payload = want < most ? want : most;
    if (l->max_payload < 64)
        l->max_payload = 64;
    return answer_info(l, f, 3, mota_link_device_info);
}

static int cmd_begin(struct mota_link *l, const struct mota_frame *f)
{
    struct mota_begin req;
    int ret = mota_begin_decode(f->payload, f->len, &req);
    if (ret != MOTA_OK)
        return respond(l, f, ret, NULL, 0);
    l->agent->reinstall = (req.flags & MOTA_BEGIN_REINSTALL) != 0;
    l->total = req.length;
    l->expected = 0;
    l->io_in = l->io_out = 0; /* the self-test writes the I/O buffer */
    l->session = true;
    l->ended = false;
    l->last_result = MOTA_OK;
    /* an interrupted upload of the same container: where it stands (the head is sent again) */
    struct mota_begun rsp = {0, l->max_payload, (uint8_t)mota_link_window(l)};
    const struct mota_agent_model_state *s = &l->agent->st[upload_model(l)];
    /* an upload kept of what the model runs already is a reinstall's: only another reinstall resumes it, a
     * plain push of it is answered "already active" at the head */
    bool runs = s->active.slot != MOTA_AGENT_NO_SLOT && memcmp(s->active.digest, req.digest, sizeof(req.digest)) == 0;
    if (MOTA_FEATURE_RESUME && s->upload_state != MOTA_UPLOAD_NONE &&
        memcmp(s->upload.digest, req.digest, sizeof(req.digest)) == 0 && (!runs || l->agent->reinstall))
        rsp.resume = s->upload_offset;
    uint8_t b[MOTA_PROTO_BEGUN_LEN];
    mota_begun_encode(&rsp, b);
    return respond(l, f, MOTA_OK, b, sizeof(b));
}

/* The upload's verdict is in: later DATA of this session gets it again. */
static int end_upload(struct mota_link *l, const struct mota_frame *f, int result, size_t detail_len)
{
    l->session = false;
    l->ended = true;
    l->last_result = result;
    if (result == MOTA_OK)
        return answer_u32(l, f, MOTA_OK, l->expected);
    if (result != MOTA_ERR_ALREADY_ACTIVE) /* nothing went wrong: the container runs already */
        note_error(l, result, (unsigned)(l->agent->verdict_model >= 0 ? l->agent->verdict_model : upload_model(l)));
    return respond(l, f, result, BODY(l), detail_len);
}

static int cmd_data(struct mota_link *l, const struct mota_frame *f)
{
    if (f->len < 4)
        return respond(l, f, MOTA_ERR_PROTO_FRAME, NULL, 0);
    uint32_t off = mota_get32(f->payload);
    if (!l->session && l->ended) {
        /* a repeat or a late copy after the end (its answer may have been lost): the same verdict */
        if (l->last_result != MOTA_OK)
            return respond(l, f, l->last_result, BODY(l), verdict_detail(l, l->last_result));
        return answer_u32(l, f, MOTA_OK, l->expected);
    }
    if (!l->session)
        return respond(l, f, MOTA_ERR_PROTO_NO_SESSION, NULL, 0);
    if (off != l->expected) /* a lost, repeated or reordered frame (a late copy of offset 0 too: only BEGIN restarts) */
        return answer_offset(l, f, l->expected, off);
    l->io_in = l->io_out = 0; /* the self-test writes the I/O buffer */
    l->agent->on_phase = send_event;
    l->agent->on_busy = send_busy;
    l->agent->phase_ctx = l;
    int ret = mota_agent_write(l->agent, off, f->payload + 4, f->len - 4u);
    if (ret < 0)
        return end_upload(l, f, ret, verdict_detail(l, ret));
    l->expected = (uint32_t)ret;
    if ((uint32_t)ret >= l->total && mota_agent_receiving(l->agent)) {
        /* every byte the host has, and the container wants more: a truncated file */
        (void)mota_agent_abort(l->agent); /* the verdict is the truncation, whatever the abort met */
        return end_upload(l, f, MOTA_ERR_UPLOAD_TRUNCATED, 0);
    }
    if ((uint32_t)ret >= l->total)
        return end_upload(l, f, MOTA_OK, 0);
    return answer_u32(l, f, MOTA_OK, (uint32_t)ret);
}

static int cmd_status(struct mota_link *l, const struct mota_frame *f)
{
    return answer_info(l, f, 0, mota_link_status_info);
}

static int cmd_abort(struct mota_link *l, const struct mota_frame *f)
{
    l->session = l->ended = false;
    return respond(l, f, mota_agent_abort(l->agent), NULL, 0);
}

static int cmd_result(struct mota_link *l, const struct mota_frame *f)
{
    const char *msg = mota_err_str(l->last_result);
    return respond(l, f, l->last_result, (const uint8_t *)msg, strlen(msg));
}

static int cmd_confirm_or_rollback(struct mota_link *l, const struct mota_frame *f)
{
    unsigned m = f->len >= 1 ? f->payload[0] : 0;
    int ret = f->cmd == MOTA_CMD_CONFIRM ? mota_agent_confirm(l->agent, m) : mota_agent_rollback(l->agent, m);
    if (ret != MOTA_OK)
        note_error(l, ret, m);
    return respond(l, f, ret, NULL, 0);
}

static int cmd_reboot(struct mota_link *l, const struct mota_frame *f)
{
    l->reboot_requested = true; /* after the answer is out */
    return respond(l, f, MOTA_OK, NULL, 0);
}

static int cmd_errors(struct mota_link *l, const struct mota_frame *f)
{
#if MOTA_FEATURE_ERRLOG
    size_t n = 0;
    int status = mota_link_errors_body(l, BODY(l), BODY_CAP(l), &n);
    return respond(l, f, status, BODY(l), n);
#else
    return respond(l, f, MOTA_ERR_UNSUPPORTED, NULL, 0); /* HELLO's features say: no ring */
#endif
}

#if MOTA_FEATURE_INVOKE
static uint32_t clamp_us(uint64_t us)
{
    return us > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)us;
}

static int cmd_invoke(struct mota_link *l, const struct mota_frame *f)
{
    uint64_t us = 0;
    if (f->len < 3)
        return respond(l, f, MOTA_ERR_PROTO_FRAME, NULL, 0);
    uint16_t out_len = mota_get16(f->payload + 1);
    if (out_len + 4u > BODY_CAP(l) || out_len + 6u > l->max_payload)
        return respond(l, f, MOTA_ERR_PROTO_TOO_LARGE, NULL, 0);
    /* a port may lend its model I/O area as the I/O buffer (the MPS boards): this inference's input and output
     * pass through it, so what INPUT held or RUN left is gone */
    l->io_in = l->io_out = 0;
    int ret = run_model(l, f->payload[0], f->payload + 3, f->len - 3u, BODY(l) + 4, out_len, &us);
    if (ret != MOTA_OK)
        return respond(l, f, ret, BODY(l), fault_detail(l, ret));
    mota_put32(BODY(l), clamp_us(us));
    return respond(l, f, MOTA_OK, BODY(l), 4u + out_len);
}

/* an input larger than a frame, in pieces: a retry writes the same bytes again */
static int cmd_input(struct mota_link *l, const struct mota_frame *f)
{
    const struct mota_agent_config *c = l->agent->cfg;
    if (f->len < 4)
        return respond(l, f, MOTA_ERR_PROTO_FRAME, NULL, 0);
    uint32_t off = mota_get32(f->payload), len = f->len - 4u;
    if (off > l->io_in)
        return answer_offset(l, f, l->io_in, off);
    if (c->selftest_buf == NULL || (uint64_t)off + len > c->selftest_buf_size)
        return respond(l, f, MOTA_ERR_PROTO_IO_SIZE, NULL, 0);
    memcpy(c->selftest_buf + off, f->payload + 4, len);
    l->io_in = off + len;
    l->io_out = 0;
    return answer_u32(l, f, MOTA_OK, l->io_in);
}

/* the model on the input held; its output stays for OUTPUT */
static int cmd_run(struct mota_link *l, const struct mota_frame *f)
{
    const struct mota_agent_config *c = l->agent->cfg;
    uint64_t us = 0;
    uint8_t out[8];
    if (f->len < 5)
        return respond(l, f, MOTA_ERR_PROTO_FRAME, NULL, 0);
    uint32_t out_len = mota_get32(f->payload + 1), at = (l->io_in + 31u) & ~31u; /* aligned as a model's I/O is */
    l->io_out = 0;
    if (c->selftest_buf == NULL || (uint64_t)at + out_len > c->selftest_buf_size)
        return respond(l, f, MOTA_ERR_PROTO_IO_SIZE, NULL, 0);
    int ret = run_model(l, f->payload[0], c->selftest_buf, l->io_in, c->selftest_buf + at, out_len, &us);
    if (ret != MOTA_OK)
        return respond(l, f, ret, BODY(l), fault_detail(l, ret));
    l->io_out = out_len;
    l->io_out_at = at;
    mota_put32(out, clamp_us(us));
    mota_put32(out + 4, out_len);
    return respond(l, f, MOTA_OK, out, sizeof(out));
}

/* a window of the last RUN's output */
static int cmd_output(struct mota_link *l, const struct mota_frame *f)
{
    if (f->len < 6)
        return respond(l, f, MOTA_ERR_PROTO_FRAME, NULL, 0);
    uint32_t off = mota_get32(f->payload);
    size_t len = mota_get16(f->payload + 4),
           cap = l->max_payload - 2u < BODY_CAP(l) ? l->max_payload - 2u : BODY_CAP(l);
    if (l->io_out == 0)
        return respond(l, f, MOTA_ERR_PROTO_NO_OUTPUT, NULL, 0);
    if (off > l->io_out)
        return respond(l, f, MOTA_ERR_ARG, NULL, 0);
    len = len < l->io_out - off ? len : l->io_out - off;
    return respond(l, f, MOTA_OK, l->agent->cfg->selftest_buf + l->io_out_at + off, len < cap ? len : cap);
}
#else
/* a build without running models over the link (MOTA_FEATURE_INVOKE 0): HELLO's I/O buffer is 0 */
static int cmd_no_invoke(struct mota_link *l, const struct mota_frame *f)
{
    return respond(l, f, MOTA_ERR_UNSUPPORTED, NULL, 0);
}
#define cmd_invoke cmd_no_invoke
#define cmd_input cmd_no_invoke
#define cmd_run cmd_no_invoke
#define cmd_output cmd_no_invoke
#endif

static const command_fn commands[] = {
    [MOTA_CMD_HELLO] = cmd_hello,
    [MOTA_CMD_BEGIN] = cmd_begin,
    [MOTA_CMD_DATA] = cmd_data,
    [MOTA_CMD_STATUS] = cmd_status,
    [MOTA_CMD_ABORT] = cmd_abort,
    [MOTA_CMD_RESULT] = cmd_result,
    [MOTA_CMD_CONFIRM] = cmd_confirm_or_rollback,
    [MOTA_CMD_ROLLBACK] = cmd_confirm_or_rollback,
    [MOTA_CMD_REBOOT] = cmd_reboot,
    [MOTA_CMD_ERRORS] = cmd_errors,
    [MOTA_CMD_INVOKE] = cmd_invoke,
    [MOTA_CMD_INPUT] = cmd_input,
    [MOTA_CMD_RUN] = cmd_run,
    [MOTA_CMD_OUTPUT] = cmd_output,
};

static int handle(struct mota_link *l, const struct mota_frame *f)
{
    l->requests++;
    l->last_cmd = f->cmd;
    l->last_seq = f->seq;
    if (f->kind != MOTA_KIND_REQUEST)
        return MOTA_OK; /* the device ignores stray responses */
    if (is_retry(l, f)) {
        l->replays++;
        l->responses--; /* counted once */
        return respond(l, f, l->replay_status, l->replay_body, l->replay_len);
    }
    if (f->cmd >= sizeof(commands) / sizeof(commands[0]) || commands[f->cmd] == NULL)
        return respond(l, f, MOTA_ERR_PROTO_COMMAND, NULL, 0);
    return commands[f->cmd](l, f);
}

bool mota_link_quiet(const struct mota_link *l, uint32_t ms)
{
    return !l->session && l->df.fill == 0 && l->pending_off >= l->pending_len &&
           mota_link_now_ms(l) - l->last_rx_ms >= ms;
}

int mota_link_poll(struct mota_link *l, uint32_t timeout_ms)
{
    if (l->pending_off >= l->pending_len) {
        int n = l->tr->read(l->tr->ctx, l->pending, sizeof(l->pending), timeout_ms);
        if (n < 0)
            return n;
        if (n > 0)
            l->last_rx_ms = mota_link_now_ms(l);
        l->pending_len = (size_t)n;
        l->pending_off = 0;
    }
    while (l->pending_off < l->pending_len) {
        struct mota_frame f;
        size_t used = 0;
        int got = mota_deframer_push(&l->df, l->pending + l->pending_off, l->pending_len - l->pending_off, &used, &f);
        l->pending_off += used;
        if (got) {
            if (f.len > l->max_payload + 64u) { /* beyond what was negotiated (slack for headers) */
                int r = respond(l, &f, MOTA_ERR_PROTO_TOO_LARGE, NULL, 0);
                if (r != MOTA_OK)
                    return r;
                continue;
            }
            int ret = handle(l, &f);
            if (ret != MOTA_OK)
                return ret;
        }
    }
    return MOTA_OK;
}
