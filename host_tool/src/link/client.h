/* SPDX-License-Identifier: Apache-2.0 */
/* Host side of the update link: transports and request/response. */
#ifndef MOTA_TOOL_CLIENT_H
#define MOTA_TOOL_CLIENT_H

#include "mota/posix_transport.h"
#include "mota/proto.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CLIENT_DOC_MAX 8192u /* HELLO's or STATUS's answer, its parts together: 4 models of 256-byte versions */

struct client {
    char port[512];
    unsigned baud;
    int fd;                         /* the port's descriptor, -1 when closed */
    struct mota_posix_transport pt; /* the byte stream over fd: the same code the simulated device uses */
    struct mota_transport tr;
    struct mota_deframer df;
    uint8_t rx[MOTA_PROTO_ENCODED_MAX(MOTA_PROTO_MAX_PAYLOAD)];
    uint8_t tx[MOTA_PROTO_ENCODED_MAX(MOTA_PROTO_MAX_PAYLOAD)];
    uint8_t in[4096];
    size_t in_len, in_off;
    uint16_t seq;
    uint16_t max_payload;
    unsigned window;
    uint64_t bytes_out, bytes_in;
    double deadline; /* CLOCK_MONOTONIC seconds: no wait goes past it (MOTA_ERR_TIMEOUT); 0: none */
    char why[320];   /* what client_open found: "PATH: No such file or directory" */
    /* Optional: the device's event frames (kind 3), never returned as an answer. After the last DATA byte
     * the device announces each step before it runs it: phase 1 verify (digests from flash), 2 install,
     * 3 self-test, 4 commit; offset is the upload's (the container length). During the upload, phase 5
     * (flash busy) holds the host: client_recv moves heard, busy_until and the deadline past it first.
     * Kept by client_open. */
    void (*on_event)(void *ctx, unsigned phase, uint32_t offset);
    void *event_ctx;
    double heard;      /* when the device last said anything (an answer or an event); during a busy period, its end */
    double busy_until; /* the end of the last FLASH_BUSY period the device announced (phase 5) */
    unsigned holds;    /* FLASH_BUSY periods announced, and their announced milliseconds */
    uint64_t hold_ms;
    uint32_t held_ms; /* announced since the upload last progressed (the transfer resets it) */
    /* the last HELLO's and STATUS's answers, every part in one document (client_hello, client_status) */
    uint8_t info[CLIENT_DOC_MAX], status_doc[CLIENT_DOC_MAX];
};

/* The longest hold a FLASH_BUSY event buys, and all the holds between two acknowledgements together. */
#define CLIENT_HOLD_MAX_MS 60000u

/* The ports the link takes, as a message shows them. */
#define CLIENT_PORT_FORMS                                                                                              \
    "tcp:HOST:PORT (an IPv4 address or host name; tcp://HOST:PORT the same), or a serial device or pty path "          \
    "(/dev/ttyACM0)"

/* Whether port is written as client_open takes it: tcp:HOST:PORT (or tcp://HOST:PORT) with no IPv6 address and a
 * port from 1 to 65535, or a path. Else false, and why (with the port) in why. Whether HOST resolves, and whether
 * a path is a terminal, is found when the port is opened. */
bool client_port_syntax(const char *port, char *why, size_t cap);

/* PORT: tcp:HOST:PORT, or a serial device or pty path (baud applies to serial devices). A TCP
 * connection is given timeout_ms. On failure c->why says what happened (errno text, with the port);
 * c->deadline survives the call. */
int client_open(struct client *c, const char *port, unsigned baud, int timeout_ms);
void client_close(struct client *c);
/* Send a request; returns its sequence number in *seq. */
int client_send(struct client *c, uint8_t cmd, const uint8_t *payload, size_t len, uint16_t *seq);
/* Next response frame within timeout_ms: 1 got one, 0 timeout, <0 link error (MOTA_ERR_TIMEOUT past c->deadline).
 * Event frames read on the way go to c->on_event, and do not end the wait. */
int client_recv(struct client *c, struct mota_frame *f, int timeout_ms);
/* A request and its response (matched by sequence number); retries on timeout.
 * *status is the device's status; body/len the rest of the response. */
int client_call(struct client *c, uint8_t cmd, const uint8_t *payload, size_t len, int *status, const uint8_t **body,
                size_t *body_len, int timeout_ms, int tries);
/* HELLO: negotiate the frame size; the device-info CBOR is returned in body (c->info: every model, however
 * many answers the device gave them in). */
int client_hello(struct client *c, const uint8_t **body, size_t *body_len);
/* STATUS, as client_call, its models from every answer in one document (c->status_doc); *status the device's. */
int client_status(struct client *c, int *status, const uint8_t **body, size_t *body_len, int timeout_ms, int tries);

/*
 * One container to one device, over as many connections as it takes (transfer.c): the caller sets the
 * first block (and last_progress to when it started), then calls client_upload on each connection until
 * `done` (the device's verdict in status: MOTA_OK installed, or its refusal with the facts in detail).
 */
struct client_upload {
    const uint8_t *data;
    uint64_t total;
    uint8_t digest[MOTA_SHA256_LEN]; /* the manifest's: a resume is for this container only */
    uint8_t begin_flags;             /* MOTA_BEGIN_*: BEGIN's flags */
    uint64_t head_len;               /* the container's head (0: not known): a resume sends it alone first */
    double timeout_s;                /* no acknowledged progress for this long: MOTA_ERR_TIMEOUT */
    double last_progress;            /* when the device last acknowledged more */
    /* optional: told as it goes */
    void (*on_progress)(void *ctx, uint64_t acked);
    void (*on_resume)(void *ctx, uint32_t offset);
    /* no answer for a while: all_sent (every byte on the wire, the line's pace known), how long the
     * device has been quiet, and how long the bytes in flight take on the wire at that pace */
    void (*on_quiet)(void *ctx, bool all_sent, double quiet_for, double on_wire);
    /* every byte of the container is on the wire (sent now, or kept by the device from before): from here on
     * the device may install it; told once */
    void (*on_all_sent)(void *ctx);
    bool all_sent_told;
    void *ctx;
    /* the transfer's state */
    uint64_t acked, send_ptr; /* of the current connection */
    uint64_t send_limit;      /* nothing sent from here until the device answers past it (0: no limit) */
    unsigned inflight;
    uint16_t stale_below;      /* offset complaints about frames sent before a rewind are ignored */
    bool sent;                 /* any DATA went out */
    uint64_t data_sent;        /* container bytes sent in DATA frames, over every connection (resends count again) */
    double t_first, t_verdict; /* when the first DATA byte went out, and when the verdict came */
    bool done;
    int status;
    char detail[320];
};

/* The transfer on this connection: MOTA_OK once the verdict is in (u->done), or the link error that ended
 * it (MOTA_ERR_TIMEOUT: no progress for timeout_s; another: reconnect and call again, it resumes). */
int client_upload(struct client *c, struct client_upload *u);
/* The verdict, with the device's detail unless it only repeats the reason's message. */
void client_upload_verdict(struct client_upload *u, int status, const uint8_t *detail, size_t len);


#endif
