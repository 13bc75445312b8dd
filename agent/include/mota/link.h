/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device side of the update link: reads frames from a transport,
 * drives the agent, answers. Single-threaded, allocation-free: call
 * mota_link_poll() from the main loop. Protocol: docs/protocol.md.
 */
#ifndef MOTA_LINK_H
#define MOTA_LINK_H

#include "mota/agent.h"
#include "mota/features.h"
#include "mota/port.h"
#include "mota/proto.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * Build-time sizes (a board sets them for its whole build: its board.cmake, e.g. ports/mps/common/sizes.cmake for the MPS boards).
 * The device announces both in HELLO and BEGIN; the host never exceeds them.
 * WINDOW frames of MAX_PAYLOAD must fit what the transport can buffer while the
 * agent erases or hashes (an interrupt-fed RX ring: docs/porting.md).
 */
#ifndef MOTA_LINK_MAX_PAYLOAD
#define MOTA_LINK_MAX_PAYLOAD 2048u /* this device's frame payload limit */
#endif
#ifndef MOTA_LINK_WINDOW
#define MOTA_LINK_WINDOW                                                                                               \
    64u /* frames the host may have in flight, at most (the transport's rx_capacity may say fewer) */
#endif
/* A flash operation that may take this long is announced to the host (a FLASH_BUSY event) */
#ifndef MOTA_LINK_BUSY_EVENT_US
#define MOTA_LINK_BUSY_EVENT_US 200000u
#endif
#define MOTA_LINK_ERRORS 8u     /* recent errors kept */
#define MOTA_LINK_REPLAY_MAX 8u /* bytes of a kept answer (BEGIN, CONFIRM, ROLLBACK, ABORT, REBOOT) */

struct mota_link_error {
    int16_t code;
    uint8_t model;
    uint32_t at_ms;
};

struct mota_link {
    struct mota_agent *agent;
    const struct mota_transport *tr;
    const struct mota_system *sys;
    const char *name; /* device identity, reported by HELLO */
    struct mota_deframer df;
    /* the frame being received; once handled, the encoded answer (one buffer for both) */
    uint8_t rx[MOTA_PROTO_ENCODED_MAX(MOTA_LINK_MAX_PAYLOAD)];
    uint8_t out[MOTA_LINK_MAX_PAYLOAD]; /* the answer's payload: status, then body, built in place */
    uint8_t pending[128];               /* received bytes not yet framed */
    size_t pending_len, pending_off;
    uint16_t max_payload; /* negotiated */
    /* optional, set after mota_link_init: a smaller frame payload than MOTA_LINK_MAX_PAYLOAD (a simulator
     * playing a board's, mota sim --max-payload); 0: the build's */
    uint16_t payload_limit;
    bool session; /* an upload is open */
    bool ended;   /* this peer's upload ended, as last_result says: late DATA gets that answer */
    uint32_t total, expected;
    int last_result;
    bool reboot_requested;
#if MOTA_FEATURE_ERRLOG
    struct mota_link_error errors[MOTA_LINK_ERRORS];
    unsigned n_errors, next_error;
#endif
    uint32_t requests, responses, replays;
    uint8_t last_cmd;    /* the last request handled (for a port's per-phase measurements) */
    uint32_t last_rx_ms; /* when the last byte came in */
    uint16_t last_seq;   /* its seq: an event about it carries it */
    uint8_t ev[MOTA_PROTO_ENCODED_MAX(MOTA_PROTO_EVENT_LEN)]; /* an event frame, encoded (the request is in rx) */
    /* invoke through the I/O buffer (the agent's self-test buffer, free between updates): the input held,
     * and the output of the last RUN at out_at; an upload forgets both (its self-test writes there) */
    uint32_t io_in, io_out, io_out_at;
    /* The last state-changing request and its answer: a host that lost the
     * answer retries with the same seq, and gets it again instead of running
     * BEGIN, CONFIRM, ROLLBACK, ABORT or REBOOT twice. Reads (HELLO, STATUS,
     * ERRORS, RESULT, INVOKE) simply run again; DATA is idempotent by its offset. */
    bool replay_ok;
    uint8_t replay_cmd;
    uint16_t replay_seq;
    uint32_t replay_crc;
    int replay_status;
    uint8_t replay_len;
    uint8_t replay_body[MOTA_LINK_REPLAY_MAX];
};

/*
 * The DATA frames the host may have in flight: MOTA_LINK_WINDOW, fewer if the transport's rx_capacity
 * holds fewer frames of the negotiated size, and 1 where the flash stalls the CPU (MOTA_FLASH_STALLS_CPU:
 * a single-bank part receives nothing while it programs or erases, so the host sends a frame only when
 * the device has answered the last, and the line is quiet during flash work).
 */
unsigned mota_link_window(const struct mota_link *l);

void mota_link_init(struct mota_link *l, struct mota_agent *agent, const struct mota_transport *tr,
                    const struct mota_system *sys, const char *name);

/*
 * A new peer on the same device (a TCP client, a reopened port): forget the
 * byte stream, the negotiated frame size, any open upload (the host resumes
 * with BEGIN) and the kept answer; keep the recent errors and the request
 * counters, so that the next client can still read why the last push failed.
 */
void mota_link_reconnect(struct mota_link *l);

/* No upload open, no frame half received, and no byte for ms: a moment for flash work nobody waits for. */
bool mota_link_quiet(const struct mota_link *l, uint32_t ms);

/*
 * Wait up to timeout_ms for bytes, handle every complete frame. MOTA_OK, or
 * MOTA_ERR_TRANSPORT when the link is gone.
 */
int mota_link_poll(struct mota_link *l, uint32_t timeout_ms);

#endif
