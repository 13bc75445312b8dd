/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the device's link server (frame decoder, requests, the agent behind it).
 *
 * Input: [fix] [n] [n op bytes] [u16 LE length of A] [container A] [container B]
 *   fix   which of fuzz_sign.h's fixes A and B get (bits 0-2); fix bit 7: the bytes after the
 *         first two are a raw byte stream instead, in chunks of 1..64 bytes, as a UART would
 *         deliver anything;
 *   ops   a host's sessions, as frames mota_frame_encode makes, each fed in chunks of varying size:
 *         uploads of A or B (BEGIN, DATA frames in a window of 1 or 4, the device's answers
 *         followed, or dropped halfway), HELLO with a frame size, STATUS, CONFIRM, ROLLBACK, ABORT,
 *         RESULT, ERRORS, REBOOT (the device then boots again), INVOKE, INPUT/RUN/OUTPUT, a new peer,
 *         a repeated request, a stray command, and power cuts at a chosen flash operation.
 *
 * Nothing may crash or touch memory out of bounds (ASan); every answer is a response or an event
 * whose status is a reason code; the device boots after any power cut, runs its active models and
 * never lowers its anti-rollback floor. */
#include "fuzz_device.h"
#include "mota/le.h"
#include "mota/link.h"

#include <setjmp.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PAYLOAD 2048u

enum op {
    OP_UPLOAD_A,
    OP_UPLOAD_B,
    OP_HELLO,
    OP_STATUS,
    OP_CONFIRM,
    OP_ROLLBACK,
    OP_ABORT,
    OP_RESULT,
    OP_ERRORS,
    OP_REBOOT,
    OP_INVOKE,
    OP_IO,
    OP_RECONNECT,
    OP_REPEAT,
    OP_STRAY,
    OP_CUT,
};

struct feed {
    const uint8_t *p;
    size_t len, off;
    unsigned shape; /* chunk sizes */
};

static struct mota_posix_device d;
static struct mota_link link;
static struct mota_transport tr;
static struct feed feed;
static jmp_buf powered_off;
static struct fuzz_script sc;
static uint8_t tx[8 * MOTA_PROTO_ENCODED_MAX(MAX_PAYLOAD)]; /* the host's frames in flight */
static size_t tx_len;
static uint8_t last_req[MOTA_PROTO_ENCODED_MAX(MAX_PAYLOAD)];
static size_t last_req_len;
static uint8_t rx_buf[MOTA_PROTO_ENCODED_MAX(MOTA_PROTO_MAX_PAYLOAD)];
static struct mota_deframer rx; /* the host's receiver */
static uint16_t seq;
static uint16_t max_payload;
/* the last answer: status and up to 8 bytes of body */
static int ans_status;
static uint8_t ans_body[8];
static size_t ans_len;
static unsigned n_answers;
static uint64_t floor_seq[FUZZ_MODELS]; /* each model's anti-rollback floor so far */

static bool trace; /* MOTA_FUZZ_TRACE=1: each operation and answer on stderr (replaying a finding) */

static void power_cut(void *ctx)
{
    (void)ctx;
    longjmp(powered_off, 1);
}

static int feed_read(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms)
{
    struct feed *f = ctx;
    (void)timeout_ms;
    if (f->off >= f->len)
        return MOTA_ERR_TRANSPORT;
    size_t n = f->shape == 0 ? (size_t)(f->p[f->off] % 64) + 1 : 1u + 40u * f->shape; /* 41, 81, 121 */
    if (n > len)
        n = len;
    if (n > f->len - f->off)
        n = f->len - f->off;
    memcpy(buf, f->p + f->off, n);
    f->off += n;
    return (int)n;
}

/* What the device sends: whole frames, each a response or an event with a known status. */
static int sink_write(void *ctx, const uint8_t *buf, size_t len)
{
    struct mota_frame f;
    size_t used;
    (void)ctx;
    while (len > 0) {
        int got = mota_deframer_push(&rx, buf, len, &used, &f);
        buf += used;
        len -= used;
        if (got != 1)
            continue;
        if (f.kind == MOTA_KIND_EVENT)
            continue;
        if (f.kind != MOTA_KIND_RESPONSE || f.len < 2)
            abort();
        int status = (int16_t)mota_get16(f.payload);
        if (status != MOTA_OK && mota_err_name(status) == NULL)
            abort(); /* every status is a reason code */
        ans_status = status;
        if (trace)
            fprintf(stderr, "  answer cmd %u seq %u: %s (%u bytes)\n", f.cmd, f.seq,
                    status ? mota_err_name(status) : "OK", f.len - 2u);
        ans_len = f.len - 2u < sizeof(ans_body) ? f.len - 2u : sizeof(ans_body);
        memcpy(ans_body, f.payload + 2, ans_len);
        n_answers++;
    }
    return MOTA_OK;
}

/* Queue one request frame. */
static void request(uint8_t cmd, const uint8_t *payload, size_t len)
{
    struct mota_frame f = {
        .kind = MOTA_KIND_REQUEST, .cmd = cmd, .seq = ++seq, .len = (uint16_t)len, .payload = payload};
    size_t n = mota_frame_encode(&f, tx + tx_len, sizeof(tx) - tx_len);
    if (n > 0 && n <= sizeof(last_req)) {
        memcpy(last_req, tx + tx_len, n);
        last_req_len = n;
    }
    tx_len += n;
}

/* The queued frames to the device, and the device at work on them until it has read every byte. */
static void flush(unsigned shape)
{
    feed = (struct feed){tx, tx_len, 0, shape};
    n_answers = 0;
    ans_status = MOTA_ERR_TRANSPORT;
    for (int i = 0; i < 100000; i++) {
        int ret = mota_link_poll(&link, 0);
        if (ret == MOTA_ERR_TRANSPORT)
            break;
        if (ret != MOTA_OK && mota_err_name(ret) == NULL)
            abort();
    }
    tx_len = 0;
}

static void boot(void)
{
    int ret = mota_agent_init(&d.device.agent, &d.cfg);
    if (ret != MOTA_OK)
        abort(); /* the harness never damages the flash: the device always boots */
    mota_link_init(&link, &d.device.agent, &tr, &d.sys, "fuzz");
    mota_deframer_init(&rx, rx_buf, sizeof(rx_buf));
    max_payload = 256;
}

/* A host's upload: BEGIN, then DATA from the answered offsets in windows, until the verdict
 * (arg & 3: frame size, arg & 4: a window of 4, arg & 8: the host goes away halfway). */
static void upload(unsigned c, unsigned arg)
{
    struct mota_envelope env;
    struct mota_begin b = {.length = (uint32_t)sc.cont_len[c]};
    uint8_t p[MAX_PAYLOAD];
    if (mota_envelope_decode(sc.cont[c], sc.cont_len[c], &env) == MOTA_OK)
        memcpy(b.digest, env.digest, sizeof(b.digest));
    request(MOTA_CMD_BEGIN, p, mota_begin_encode(&b, p));
    flush(0);
    if (ans_status != MOTA_OK)
        return;
    static const uint16_t sizes[4] = {60, 250, 1000, 2040};
    uint32_t chunk = sizes[arg & 3] < max_payload - 4u ? sizes[arg & 3] : max_payload - 4u;
    unsigned window = (arg & 4) ? 4 : 1;
    uint32_t next = 0, stop = (arg & 8) ? b.length / 2 : b.length;
    for (uint32_t round = 0; round < b.length / chunk + 16u && next < stop; round++) {
        uint32_t off = next;
        for (unsigned w = 0; w < window && off < b.length; w++) {
            uint32_t n = b.length - off < chunk ? b.length - off : chunk;
            mota_put32(p, off);
            memcpy(p + 4, sc.cont[c] + off, n);
            request(MOTA_CMD_DATA, p, 4u + n);
            off += n;
        }
        flush((arg >> 2) & 3);
        if ((ans_status != MOTA_OK && ans_status != MOTA_ERR_UPLOAD_OFFSET) || ans_len < 4)
            return;                          /* the verdict, or the session was lost */
        uint32_t got = mota_get32(ans_body); /* next offset; out of step (a resume in a window): where it is */
        if (got >= b.length || got == next)
            return;
        next = got;
    }
}

static void simple(uint8_t cmd, const uint8_t *p, size_t len)
{
    request(cmd, p, len);
    flush(0);
}

static void run_op(unsigned op, unsigned arg)
{
    uint8_t p[32];
    uint8_t m = arg & 1u;
    switch (op) {
    case OP_UPLOAD_A:
    case OP_UPLOAD_B: upload(op - OP_UPLOAD_A, arg); break;
    case OP_HELLO:
        p[0] = MOTA_PROTO_VERSION;
        max_payload = (uint16_t)(64u << (arg & 7u));
        mota_put16(p + 1, max_payload);
        simple(MOTA_CMD_HELLO, p, 3);
        if (max_payload > MOTA_LINK_MAX_PAYLOAD)
            max_payload = MOTA_LINK_MAX_PAYLOAD;
        break;
    case OP_STATUS: simple(MOTA_CMD_STATUS, NULL, 0); break;
    case OP_CONFIRM: simple(MOTA_CMD_CONFIRM, &m, 1); break;
    case OP_ROLLBACK: simple(MOTA_CMD_ROLLBACK, &m, 1); break;
    case OP_ABORT: simple(MOTA_CMD_ABORT, NULL, 0); break;
    case OP_RESULT: simple(MOTA_CMD_RESULT, NULL, 0); break;
    case OP_ERRORS: simple(MOTA_CMD_ERRORS, NULL, 0); break;
    case OP_REBOOT:
        simple(MOTA_CMD_REBOOT, NULL, 0);
        if (link.reboot_requested) {
            d.cause = MOTA_RESET_SOFTWARE;
            boot();
        }
        break;
    case OP_INVOKE:
        p[0] = m;
        mota_put16(p + 1, (uint16_t)(arg * 4u));
        memcpy(p + 3, sc.cont[0], sc.cont_len[0] < 16 ? sc.cont_len[0] : 16);
        simple(MOTA_CMD_INVOKE, p, 3u + (sc.cont_len[0] < 16 ? sc.cont_len[0] : 16));
        break;
    case OP_IO:
        mota_put32(p, 0);
        memcpy(p + 4, sc.cont[1], sc.cont_len[1] < 16 ? sc.cont_len[1] : 16);
        simple(MOTA_CMD_INPUT, p, 4u + (sc.cont_len[1] < 16 ? sc.cont_len[1] : 16));
        p[0] = m;
        mota_put32(p + 1, arg * 8u);
        simple(MOTA_CMD_RUN, p, 5);
        mota_put32(p, arg);
        mota_put16(p + 4, 64);
        simple(MOTA_CMD_OUTPUT, p, 6);
        break;
    case OP_RECONNECT:
        mota_link_reconnect(&link);
        max_payload = 256;
        break;
    case OP_REPEAT: /* the last request again, same seq: a host that lost the answer */
        if (last_req_len > 0) {
            memcpy(tx, last_req, last_req_len);
            tx_len = last_req_len;
            flush(0);
        }
        break;
    case OP_STRAY: /* a command with a payload cut from A: lengths and numbers the device must check */
        simple((uint8_t)arg, sc.cont[0], sc.cont_len[0] < 40 ? sc.cont_len[0] : (size_t)(arg * 3u) % 40u);
        break;
    default: mota_posix_flash_cut(&d.pf, fuzz_cut_op(arg), arg & 1u); break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_device_setup(&d);
    fuzz_device_reset(&d);
    trace = getenv("MOTA_FUZZ_TRACE") != NULL;
    mota_posix_flash_on_cut(&d.pf, power_cut, NULL);
    tr = (struct mota_transport){.read = feed_read, .write = sink_write, .ctx = &feed};
    seq = 0;
    tx_len = last_req_len = 0;
    memset(floor_seq, 0, sizeof(floor_seq));
    boot(); /* a blank flash always boots */
    if (size < 2)
        return 0;
    if (data[0] & 0x80) { /* a raw byte stream */
        memcpy(tx, data + 2, size - 2 < sizeof(tx) ? size - 2 : sizeof(tx));
        tx_len = size - 2 < sizeof(tx) ? size - 2 : sizeof(tx);
        flush(0);
        return 0;
    }
    if (!fuzz_script_read(&sc, data, size))
        return 0;
    fuzz_resign(sc.cont[0], sc.cont_len[0], sc.fix & FUZZ_FIX_ALL);
    fuzz_resign(sc.cont[1], sc.cont_len[1], sc.fix & FUZZ_FIX_ALL);

    volatile unsigned i = 0;
    if (setjmp(powered_off) != 0) {
        /* the power came back: the device boots, a new peer connects, the script goes on */
        mota_posix_flash_cut(&d.pf, 0, false);
        mota_posix_flash_power_on(&d.pf);
        d.cause = MOTA_RESET_POWER_ON;
        tx_len = 0;
        if (trace)
            fprintf(stderr, "power cut: boot\n");
        boot();
        fuzz_device_check(&d.device.agent, floor_seq);
        i++;
    }
    for (; i < sc.n_ops; i++) {
        if (trace)
            fprintf(stderr, "op %u: %u arg %u\n", (unsigned)i, sc.ops[i] & 15u, sc.ops[i] >> 4);
        run_op(sc.ops[i] & 15u, sc.ops[i] >> 4);
        fuzz_device_check(&d.device.agent, floor_seq);
    }
    return 0;
}
