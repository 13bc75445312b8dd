/* SPDX-License-Identifier: Apache-2.0 */
/* The host's side of an upload (docs/protocol.md, Upload): BEGIN, then DATA frames in windows, go-back-N. */
#include "client.h"

#include "common/util.h"

#include "mota/err.h"

#include <string.h>

/* Frames sent from now on are the only ones whose offset complaints may rewind the window again. */
static void rewind_to(struct client_upload *u, struct client *c, uint64_t offset)
{
    u->send_ptr = offset;
    u->inflight = 0;
    u->stale_below = (uint16_t)(c->seq + 1);
}

/* BEGIN: the device says how much of this container it kept; a refusal is the verdict already. */
static int begin(struct client *c, struct client_upload *u)
{
    uint8_t req[MOTA_PROTO_BEGIN_FLAGS_LEN];
    struct mota_begin b = {(uint32_t)u->total, {0}, u->begin_flags};
    struct mota_begun begun;
    const uint8_t *body;
    size_t blen;
    int status;
    memcpy(b.digest, u->digest, sizeof(b.digest));
    size_t rlen = mota_begin_encode(&b, req);
    int ret = client_call(c, MOTA_CMD_BEGIN, req, rlen, &status, &body, &blen, 2000, 3);
    if (ret != MOTA_OK)
        return ret;
    if (status == MOTA_OK && mota_begun_decode(body, blen, &begun) == MOTA_OK) {
        /* a resume: the head alone, which the device checks again before it jumps to what it kept; frames
         * past it would only be refused, and on a slow line they would hold the jump back for seconds */
        u->send_limit = begun.resume > 0 && u->head_len > 0 && u->head_len < begun.resume ? u->head_len : 0;
        if (begun.resume > 0 && u->on_resume != NULL)
            u->on_resume(u->ctx, begun.resume);
        return MOTA_OK;
    }
    if (u->begin_flags != 0 && status == MOTA_ERR_PROTO_FRAME) { /* a BEGIN one byte longer than it knows */
        static const char older[] = "the device's agent predates BEGIN's flags (push --reinstall): update its "
                                    "firmware, or push without --reinstall";
        client_upload_verdict(u, MOTA_ERR_PROTO_FLAGS, (const uint8_t *)older, sizeof(older) - 1);
        return MOTA_OK;
    }
    client_upload_verdict(u, status != MOTA_OK ? status : MOTA_ERR_PROTO_FRAME, body, blen);
    return MOTA_OK;
}

/* Fill the window from send_ptr. */
static int send_window(struct client *c, struct client_upload *u)
{
    uint32_t chunk = c->max_payload > 4 ? c->max_payload - 4u : 60u;
    while (u->inflight < c->window && u->send_ptr < u->total && (u->send_limit == 0 || u->send_ptr < u->send_limit)) {
        uint8_t frame[MOTA_PROTO_MAX_PAYLOAD];
        uint32_t n = u->total - u->send_ptr < chunk ? (uint32_t)(u->total - u->send_ptr) : chunk;
        mota_put32(frame, (uint32_t)u->send_ptr);
        memcpy(frame + 4, u->data + u->send_ptr, n);
        int ret = client_send(c, MOTA_CMD_DATA, frame, 4u + n, NULL);
        if (ret != MOTA_OK)
            return ret;
        u->send_ptr += n;
        u->data_sent += n;
        if (!u->sent)
            u->t_first = tool_now();
        u->sent = true;
        u->inflight++;
    }
    if (u->send_ptr >= u->total && !u->all_sent_told) {
        u->all_sent_told = true;
        if (u->on_all_sent != NULL)
            u->on_all_sent(u->ctx);
    }
    return MOTA_OK;
}

/*
 * No answer for a while. On a slow line (a UART at 9600 baud, mota sim --baud) a window takes seconds on
 * the wire, and that is not silence: the pace is taken from this connection's acknowledgements up to the
 * last one (measured up to now it would fall through a silence and push the resend ever further away).
 */
static int quiet(struct client *c, struct client_upload *u, double t_conn, uint64_t acked_conn)
{
    double el = u->last_progress - t_conn;
    double rate = u->acked > acked_conn && el > 0 ? (double)(u->acked - acked_conn) / el : 0;
    double on_wire = rate > 0 && u->send_ptr > u->acked ? (double)(u->send_ptr - u->acked) / rate : 0;
    if (on_wire > 10.0) /* a first acknowledgement slowed by an erase misjudges the pace: bounded */
        on_wire = 10.0;
    if (u->on_quiet != NULL)
        u->on_quiet(u->ctx, u->send_ptr >= u->total && rate > 0, tool_now() - c->heard, on_wire);
    if (tool_now() - c->heard > 3.0 + on_wire) { /* silence: resend from the last acknowledged offset */
        rewind_to(u, c, u->acked);
        c->heard = tool_now();
    }
    double since = u->last_progress > c->busy_until ? u->last_progress : c->busy_until; /* a hold is no silence */
    return tool_now() - since > u->timeout_s ? MOTA_ERR_TIMEOUT : MOTA_OK;
}

/* A DATA answer: progress, a gap to go back for, the session gone, or the verdict. */
static int data_answer(struct client *c, struct client_upload *u, const struct mota_frame *f)
{
    int status = (int16_t)mota_get16(f->payload);
    const uint8_t *b = f->payload + 2;
    if (u->inflight > 0)
        u->inflight--;
    if (status == MOTA_OK && f->len >= 6) {
        uint32_t next = mota_get32(b);
        if (u->send_limit > 0 && next >= u->send_limit)
            u->send_limit = 0; /* the head is in: the device said where it goes on from */
        if (next > u->acked) {
            u->acked = next;
            u->last_progress = tool_now();
            c->held_ms = 0; /* holds are counted between acknowledgements */
            c->deadline = u->last_progress + u->timeout_s;
            if (next < u->total && u->on_progress != NULL)
                u->on_progress(u->ctx, u->acked);
        }
        if (next >= u->total)
            client_upload_verdict(u, MOTA_OK, NULL, 0);
        else if (next > u->send_ptr) /* the device jumped ahead (resume) */
            rewind_to(u, c, next);
    } else if (status == MOTA_ERR_UPLOAD_OFFSET && f->len >= 10) {
        uint32_t expect = mota_get32(b), got = mota_get32(b + 4);
        /* a gap (lost frame): go back, once per gap; a repeat: ignore */
        if (got > expect && (int16_t)(f->seq - u->stale_below) >= 0)
            rewind_to(u, c, expect);
    } else if (status == MOTA_ERR_PROTO_TOO_LARGE || status == MOTA_ERR_PROTO_NO_SESSION) {
        /* the device forgot the session: it was reset behind a line that stayed up (a UART): negotiate
         * again and resume from what it kept */
        return MOTA_ERR_DEVICE_LOST;
    } else if (status != MOTA_OK) {
        client_upload_verdict(u, status, b, f->len - 2u); /* which rule, with its values */
    }
    return MOTA_OK;
}

void client_upload_verdict(struct client_upload *u, int status, const uint8_t *detail, size_t len)
{
    u->done = true;
    u->t_verdict = tool_now();
    u->status = status;
    size_t dl = len < sizeof(u->detail) - 1 ? len : sizeof(u->detail) - 1;
    if (dl > 0)
        memcpy(u->detail, detail, dl);
    u->detail[dl] = 0;
    if (strcmp(u->detail, mota_err_str(status)) == 0) /* the device's message says no more than the code */
        u->detail[0] = 0;
}

int client_upload(struct client *c, struct client_upload *u)
{
    u->acked = 0; /* of this connection: the device says from where */
    int ret = begin(c, u);
    if (ret != MOTA_OK || u->done)
        return ret;
    rewind_to(u, c, 0);
    c->heard = tool_now();
    double t_conn = tool_now();
    uint64_t acked_conn = u->acked;
    while (!u->done) {
        struct mota_frame f;
        if ((ret = send_window(c, u)) != MOTA_OK)
            return ret;
        int r = client_recv(c, &f, 500);
        if (r < 0)
            return r;
        if (r == 0)
            ret = quiet(c, u, t_conn, acked_conn);
        else if (f.cmd == MOTA_CMD_DATA && f.len >= 2)
            ret = data_answer(c, u, &f);
        if (ret != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}
