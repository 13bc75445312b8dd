/* SPDX-License-Identifier: Apache-2.0 */
/* The host side of the update link: opening a port (serial device, pty, TCP), frames and requests. */
#include "client.h"

#include "common/util.h"
#include "pages.h"

#include "mota/cbor.h"
#include "mota/err.h"
#include "mota/posix_transport.h"
#include "mota/proto_keys.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <termios.h>
#include <unistd.h>

static speed_t baud_const(unsigned baud)
{
    switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    case 230400: return B230400;
    case 460800: return B460800;
    case 921600: return B921600;
    case 1000000: return B1000000;
    case 2000000: return B2000000;
    default: return 0;
    }
}

/* "HOST:PORT" without the tcp: prefix: what a user means when no such file exists */
static bool looks_like_tcp(const char *port)
{
    const char *colon = strrchr(port, ':');
    uint64_t p;
    return colon != NULL && colon != port && strchr(port, '/') == NULL && tool_parse_u64(colon + 1, &p) && p > 0 &&
           p <= 65535;
}

/* Reads and writes go through the posix port's transport, whatever the port is. */
static int client_stream(struct client *c)
{
    mota_posix_transport_fds(&c->pt, c->fd, c->fd);
    mota_posix_transport_hal(&c->pt, &c->tr);
    return MOTA_OK;
}

/* Where HOST begins in tcp:HOST:PORT, or in tcp://HOST:PORT (the same port, as a URL writes it). */
static const char *tcp_host(const char *port)
{
    return strncmp(port, "tcp://", 6) == 0 ? port + 6 : port + 4;
}

/* A scheme other than tcp ("udp://", "serial://"): letters, then "://" */
static bool other_scheme(const char *port)
{
    size_t n = strspn(port, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-");
    return n > 0 && strncmp(port + n, "://", 3) == 0 && strncmp(port, "tcp:", 4) != 0;
}

bool client_port_syntax(const char *port, char *why, size_t cap)
{
    if (port[0] == '\0') {
        snprintf(why, cap, "'' is empty");
        return false;
    }
    if (other_scheme(port)) {
        snprintf(why, cap, "%s: no such kind of port (the network one is tcp:)", port);
        return false;
    }
    if (strncasecmp(port, "tcp:", 4) == 0 && strncmp(port, "tcp:", 4) != 0) {
        snprintf(why, cap, "%s: tcp: is written in lower case", port);
        return false;
    }
    if (strncmp(port, "tcp:", 4) != 0)
        return true; /* a path: whether it is a terminal is found when it is opened */
    const char *host = tcp_host(port), *colon = strrchr(host, ':');
    uint64_t p;
    if (strncmp(host, "tcp:", 4) == 0) { /* a port file's line given after tcp: of its own */
        snprintf(why, cap, "%s: tcp: twice (a port file holds the whole tcp:HOST:PORT)", port);
        return false;
    }
    /* [::1]:P or ::1:P: the transport connects over IPv4 only (AF_INET); other colons (an IPv4 address
     * with two ports, a name with a colon): not HOST:PORT */
    size_t hl = colon != NULL ? (size_t)(colon - host) : strlen(host);
    bool v6 = host[0] == '[' || (hl >= 2 && memmem(host, hl, "::", 2) != NULL) ||
              (memchr(host, ':', hl) != NULL && memchr(host, '.', hl) == NULL &&
               strspn(host, "0123456789abcdefABCDEF:") >= hl);
    if (v6 || (colon != NULL && memchr(host, ':', hl) != NULL)) {
        snprintf(why, cap,
                 v6 ? "%s: an IPv6 address, and the link connects over IPv4 only"
                    : "%s: more than one ':' after the host (tcp:HOST:PORT)",
                 port);
        return false;
    }
    if (hl == 0) {
        snprintf(why, cap, "%s: no host before :PORT", port);
        return false;
    }
    if (colon == NULL) {
        snprintf(why, cap, "%s: no :PORT after the host", port);
        return false;
    }
    if (!tool_parse_u64(colon + 1, &p) || p == 0 || p > 65535) {
        snprintf(why, cap, "%s: '%s' is no TCP port number (1 to 65535)", port, colon + 1);
        return false;
    }
    return true;
}

/* tcp:HOST:PORT, connected within timeout_ms */
static int open_tcp(struct client *c, const char *port, int timeout_ms)
{
    char host[256];
    const char *h = tcp_host(port), *colon = strrchr(h, ':');
    uint64_t p = 0;
    if (!client_port_syntax(port, c->why, sizeof(c->why)))
        return MOTA_ERR_ARG;
    if ((size_t)(colon - h) >= sizeof(host) || !tool_parse_u64(colon + 1, &p)) {
        snprintf(c->why, sizeof(c->why), "%s: expected tcp:HOST:PORT", port);
        return MOTA_ERR_ARG;
    }
    memcpy(host, h, (size_t)(colon - h));
    host[colon - h] = 0;
    char why[200];
    if (!tool_host_resolves(host, why, sizeof(why))) { /* its own cause, not "no route to host" */
        snprintf(c->why, sizeof(c->why), "%s: %s", port, why);
        return MOTA_ERR_TRANSPORT;
    }
    struct mota_posix_transport t;
    int ret = mota_posix_transport_tcp_connect(&t, host, (uint16_t)p, timeout_ms);
    if (ret != MOTA_OK) {
        snprintf(c->why, sizeof(c->why), "%s: %s", port,
                 ret == MOTA_ERR_TIMEOUT ? "no connection within the timeout (a listener that accepts nobody)"
                                         : strerror(errno));
        return ret;
    }
    c->fd = t.rfd;
    return client_stream(c);
}

/* A serial port or a pty: a terminal, held by this client alone, raw, at the baud rate. */
static int open_serial(struct client *c, const char *port, unsigned baud)
{
    c->fd = open(port, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (c->fd < 0) {
        int e = errno;
        if (e == ENOENT && looks_like_tcp(port))
            snprintf(c->why, sizeof(c->why), "%s: %s (a TCP address is written tcp:%s)", port, strerror(e), port);
        else
            snprintf(c->why, sizeof(c->why), "%s: %s", port, strerror(e));
        return MOTA_ERR_TRANSPORT;
    }
    /* a device is a terminal (a UART, a USB CDC port, a pty): a regular file, a FIFO or /dev/null is a
     * mistake (often a container named where the port belongs), and writing HELLO frames would ruin it */
    if (!isatty(c->fd)) {
        snprintf(c->why, sizeof(c->why), "%s: not a serial port or pty (a port is %s)", port, CLIENT_PORT_FORMS);
        client_close(c);
        return MOTA_ERR_TRANSPORT;
    }
    /* one host at a time, as on TCP: two clients on one line would take each other's answers (the lock
     * is released when the descriptor closes, so a crashed client never leaves it held) */
    if (flock(c->fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        snprintf(c->why, sizeof(c->why), "%s: %s", port,
                 e == EWOULDBLOCK ? "another mota client has it open" : strerror(e));
        client_close(c);
        return e == EWOULDBLOCK ? MOTA_ERR_BUSY : MOTA_ERR_TRANSPORT;
    }
    struct termios tio;
    if (tcgetattr(c->fd, &tio) == 0) {
        cfmakeraw(&tio);
        tio.c_cflag |= CLOCAL | CREAD;
        speed_t sp = baud_const(baud);
        if (sp != 0) {
            cfsetispeed(&tio, sp);
            cfsetospeed(&tio, sp);
        }
        tcsetattr(c->fd, TCSANOW, &tio);
    }
    return client_stream(c);
}

int client_open(struct client *c, const char *port, unsigned baud, int timeout_ms)
{
    double deadline = c->deadline;
    void (*on_event)(void *, unsigned, uint32_t) = c->on_event;
    void *event_ctx = c->event_ctx;
    memset(c, 0, sizeof(*c));
    c->deadline = deadline;
    c->on_event = on_event; /* a reconnect keeps the caller's hook */
    c->event_ctx = event_ctx;
    c->fd = -1;
    snprintf(c->port, sizeof(c->port), "%s", port);
    c->baud = baud;
    c->max_payload = 256;
    c->window = 1;
    mota_deframer_init(&c->df, c->rx, sizeof(c->rx));
    return strncmp(port, "tcp:", 4) == 0 ? open_tcp(c, port, timeout_ms) : open_serial(c, port, baud);
}

void client_close(struct client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    mota_posix_transport_fds(&c->pt, -1, -1); /* reads and writes fail from now on */
}

static int send_seq(struct client *c, uint8_t cmd, uint16_t seq, const uint8_t *payload, size_t len)
{
    struct mota_frame f = {.kind = MOTA_KIND_REQUEST, .cmd = cmd, .seq = seq, .len = (uint16_t)len, .payload = payload};
    size_t n = mota_frame_encode(&f, c->tx, sizeof(c->tx));
    if (n == 0)
        return MOTA_ERR_ARG;
    if (c->tr.write == NULL || c->tr.write(c->tr.ctx, c->tx, n) != MOTA_OK) /* NULL: never opened */
        return MOTA_ERR_TRANSPORT;
    c->bytes_out += n;
    return MOTA_OK;
}

int client_send(struct client *c, uint8_t cmd, const uint8_t *payload, size_t len, uint16_t *seq)
{
    uint16_t s = ++c->seq;
    if (seq)
        *seq = s;
    return send_seq(c, cmd, s, payload, len);
}

/* The device is busy for up to ms (a sector erase) and reads nothing meanwhile: silence until then is not
 * a loss (no resend), and --timeout counts from its end. Bounded: a hold of at most CLIENT_HOLD_MAX_MS, and
 * no more than that in all until the upload progresses again (client_progress), so a device that only
 * ever holds still times out. */
static void hold(struct client *c, uint32_t ms)
{
    if (ms > CLIENT_HOLD_MAX_MS)
        ms = CLIENT_HOLD_MAX_MS;
    if (c->held_ms + ms > CLIENT_HOLD_MAX_MS)
        return;
    double now = tool_now(), until = now + ms / 1000.0;
    c->holds++;
    c->hold_ms += ms;
    c->held_ms += ms;
    if (until <= c->busy_until)
        return;
    if (c->deadline > 0)
        c->deadline += until - (c->busy_until > now ? c->busy_until : now);
    c->busy_until = until;
    c->heard = until;
}

int client_recv(struct client *c, struct mota_frame *f, int timeout_ms)
{
    for (;;) {
        while (c->in_off < c->in_len) {
            size_t used = 0;
            int got = mota_deframer_push(&c->df, c->in + c->in_off, c->in_len - c->in_off, &used, f);
            c->in_off += used;
            if (got)
                c->heard = tool_now();
            if (got && f->kind == MOTA_KIND_RESPONSE)
                return 1;
            /* an event is never an answer: the device is at work on a request (a phase after the last byte) */
            /* 5 bytes from a device before flash-busy events: phase and offset */
            if (got && f->kind == MOTA_KIND_EVENT && f->cmd == MOTA_CMD_DATA && f->len >= 5) {
                if (f->payload[0] == MOTA_PROTO_PHASE_FLASH_BUSY && f->len >= MOTA_PROTO_EVENT_LEN)
                    hold(c, mota_get32(f->payload + 5));
                if (c->on_event != NULL)
                    c->on_event(c->event_ctx, f->payload[0], mota_get32(f->payload + 1));
            }
        }
        int wait = timeout_ms;
        if (c->deadline > 0) { /* --timeout bounds every wait */
            double left = c->deadline - tool_now();
            if (left <= 0)
                return MOTA_ERR_TIMEOUT;
            if (left * 1000 < wait)
                wait = (int)(left * 1000) + 1;
        }
        if (c->tr.read == NULL)
            return MOTA_ERR_TRANSPORT; /* never opened */
        int n = c->tr.read(c->tr.ctx, c->in, sizeof(c->in), (uint32_t)wait);
        if (n == 0)
            return 0; /* nothing within the wait */
        if (n < 0)
            return MOTA_ERR_TRANSPORT;
        c->bytes_in += (uint64_t)n;
        c->in_len = (size_t)n;
        c->in_off = 0;
    }
}

int client_call(struct client *c, uint8_t cmd, const uint8_t *payload, size_t len, int *status, const uint8_t **body,
                size_t *body_len, int timeout_ms, int tries)
{
    /* every try has the same seq: the device answers a retry from its kept answer, so a lost
     * answer never makes it confirm or roll back twice */
    uint16_t seq = ++c->seq;
    for (int t = 0; t < tries; t++) {
        int ret = send_seq(c, cmd, seq, payload, len);
        if (ret != MOTA_OK)
            return ret;
        struct mota_frame f;
        for (;;) {
            int r = client_recv(c, &f, timeout_ms);
            if (r < 0)
                return r;
            if (r == 0)
                break; /* timeout: send again */
            if (f.seq != seq || f.cmd != cmd || f.len < 2)
                continue; /* a late answer to something else */
            *status = (int16_t)mota_get16(f.payload);
            *body = f.payload + 2;
            *body_len = f.len - 2u;
            return MOTA_OK;
        }
        if (c->deadline > 0 && tool_now() >= c->deadline)
            return MOTA_ERR_TIMEOUT;
    }
    return MOTA_ERR_DEVICE_LOST;
}

/*
 * HELLO or STATUS from the first model on, then from each model the last answer did not reach: a device with
 * more models than one answer holds says "models-from" [first, total] (docs/protocol.md). An older device
 * ignores the request's last byte and answers with every model at once.
 */
static int call_paged(struct client *c, uint8_t cmd, uint8_t *req, size_t at, int *status, uint8_t *doc,
                      size_t *doc_len, int timeout_ms, int tries)
{
    int64_t models_key = cmd == MOTA_CMD_HELLO ? MOTA_INFO_MODELS : MOTA_STATUS_MODELS;
    int64_t from_key = cmd == MOTA_CMD_HELLO ? MOTA_INFO_MODELS_FROM : MOTA_STATUS_MODELS_FROM;
    uint8_t base[MOTA_PROTO_MAX_PAYLOAD], items[CLIENT_DOC_MAX];
    size_t base_len = 0, items_len = 0, n_items = 0;
    for (uint64_t first = 0;;) {
        const uint8_t *b;
        size_t bl;
        struct answer_page p;
        req[at] = (uint8_t)first;
        int ret = client_call(c, cmd, req, at + 1u, status, &b, &bl, timeout_ms, tries);
        if (ret != MOTA_OK || *status != MOTA_OK || (ret = answer_page(b, bl, models_key, from_key, &p)) != MOTA_OK)
            return ret;
        if (first == 0 && !p.partial) { /* every model in one answer */
            memcpy(doc, b, bl < CLIENT_DOC_MAX ? bl : CLIENT_DOC_MAX);
            *doc_len = bl < CLIENT_DOC_MAX ? bl : CLIENT_DOC_MAX;
            return MOTA_OK;
        }
        if (!p.partial || p.first != first || p.n == 0 || items_len + p.items_len > sizeof(items) || p.total > 255)
            return MOTA_ERR_PROTO_FRAME; /* not the part asked for, or one that would never end */
        if (first == 0) {
            memcpy(base, b, bl);
            base_len = bl;
        }
        memcpy(items + items_len, p.items, p.items_len);
        items_len += p.items_len;
        n_items += p.n;
        if ((first += p.n) >= p.total)
            return answer_merge(base, base_len, models_key, from_key, items, items_len, n_items, doc, CLIENT_DOC_MAX,
                                doc_len);
    }
}

int client_status(struct client *c, int *status, const uint8_t **body, size_t *body_len, int timeout_ms, int tries)
{
    uint8_t req[1];
    size_t n = 0;
    int ret = call_paged(c, MOTA_CMD_STATUS, req, 0, status, c->status_doc, &n, timeout_ms, tries);
    if (ret == MOTA_OK && *status == MOTA_OK) {
        *body = c->status_doc;
        *body_len = n;
    }
    return ret;
}

int client_hello(struct client *c, const uint8_t **body, size_t *body_len)
{
    uint8_t req[4] = {MOTA_PROTO_VERSION, 0, 0, 0};
    int status;
    mota_put16(req + 1, MOTA_PROTO_MAX_PAYLOAD);
    int ret = call_paged(c, MOTA_CMD_HELLO, req, 3, &status, c->info, body_len, 1000, 3);
    *body = c->info;
    if (ret != MOTA_OK)
        return ret;
    if (status != MOTA_OK)
        return status;
    /* the negotiated frame size and window are in the device info */
    struct mota_cbor_dec d;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    mota_cbor_dec_init(&d, *body, *body_len);
    if (mota_cbor_get_map(&d, &n) != 0)
        return MOTA_ERR_PROTO_FRAME;
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return MOTA_ERR_PROTO_FRAME;
        if ((key == MOTA_INFO_PAYLOAD || key == MOTA_INFO_WINDOW) && mota_cbor_get_uint(&d, &v) == 0) {
            if (key == MOTA_INFO_PAYLOAD)
                c->max_payload = (uint16_t)(v < MOTA_PROTO_MAX_PAYLOAD ? v : MOTA_PROTO_MAX_PAYLOAD);
            else
                c->window = v >= 1 && v <= 64 ? (unsigned)v : 1;
        } else if (mota_cbor_skip(&d) != 0) {
            return MOTA_ERR_PROTO_FRAME;
        }
    }
    return MOTA_OK;
}
