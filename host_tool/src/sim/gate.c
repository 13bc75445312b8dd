/* SPDX-License-Identifier: Apache-2.0 */
/* One client at a time for the simulators' TCP endpoint: the current client, its idle timeout, and
 * MOTA_ERR_BUSY for everyone else (gate.h). */
#include "gate.h"

#include "common/util.h"

#include "mota/err.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void gate_init(struct gate *g, double idle_s)
{
    memset(g, 0, sizeof(*g));
    g->idle_s = idle_s;
    for (unsigned i = 0; i < GATE_WAITING; i++)
        g->refused[i].fd = -1;
}

void gate_connected(struct gate *g)
{
    g->connected = g->active = tool_now();
}

void gate_activity(struct gate *g)
{
    g->active = tool_now();
}

bool gate_idle(const struct gate *g)
{
    return g->idle_s > 0 && tool_now() - g->active > g->idle_s;
}

static void drop(struct gate_refused *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

void gate_refuse(struct gate *g, int fd)
{
    struct gate_refused *r = &g->refused[0];
    for (unsigned i = 0; i < GATE_WAITING; i++) {
        if (g->refused[i].fd < 0) {
            r = &g->refused[i];
            break;
        }
        if (g->refused[i].since < r->since)
            r = &g->refused[i];
    }
    drop(r);
    r->fd = fd;
    r->since = tool_now();
    mota_deframer_init(&r->df, r->buf, sizeof(r->buf));
}

/* The answer a device gives a request it cannot serve: the request's seq and cmd, MOTA_ERR_BUSY, why. */
static void answer_busy(struct gate *g, struct gate_refused *r, const struct mota_frame *req)
{
    uint8_t payload[96], out[MOTA_PROTO_ENCODED_MAX(sizeof(payload))];
    int n = snprintf((char *)payload + 2, sizeof(payload) - 2, "device busy: another client has held it for %.0f s",
                     tool_now() - g->connected);
    mota_put16(payload, (uint16_t)(int16_t)MOTA_ERR_BUSY);
    struct mota_frame f = {.kind = MOTA_KIND_RESPONSE,
                           .cmd = req->cmd,
                           .seq = req->seq,
                           .len = (uint16_t)(2 + (n > 0 ? n : 0)),
                           .payload = payload};
    size_t len = mota_frame_encode(&f, out, sizeof(out));
    /* best effort, never blocking: a client that does not read loses its answer */
    if (len > 0 && write(r->fd, out, len) > 0)
        g->busy_answers++;
}

void gate_poll(struct gate *g)
{
    for (unsigned i = 0; i < GATE_WAITING; i++) {
        struct gate_refused *r = &g->refused[i];
        if (r->fd < 0)
            continue;
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        if (poll(&p, 1, 0) <= 0) {
            if (tool_now() - r->since > GATE_ANSWER_S)
                drop(r); /* asked nothing */
            continue;
        }
        uint8_t in[256];
        ssize_t n = read(r->fd, in, sizeof(in));
        if (n <= 0) {
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            drop(r);
            continue;
        }
        size_t off = 0;
        while (off < (size_t)n && r->fd >= 0) {
            size_t used = 0;
            struct mota_frame f;
            int got = mota_deframer_push(&r->df, in + off, (size_t)n - off, &used, &f);
            off += used;
            if (got && f.kind == MOTA_KIND_REQUEST) {
                answer_busy(g, r, &f);
                drop(r);
            }
        }
        if (r->fd >= 0 && tool_now() - r->since > GATE_ANSWER_S)
            drop(r); /* bytes, but no request in time: garbage */
    }
}

void gate_close(struct gate *g)
{
    for (unsigned i = 0; i < GATE_WAITING; i++)
        drop(&g->refused[i]);
}
