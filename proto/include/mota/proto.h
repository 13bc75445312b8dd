/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The update-link protocol (docs/protocol.md): frames over any byte stream.
 *
 * A frame is an 8-byte header, a payload and a CRC-32, COBS-encoded and
 * ended by a 0x00 byte, so a receiver resynchronises on the next 0x00
 * after garbage, and a damaged frame fails its CRC and is dropped. Pure
 * code (no I/O, no heap): the device's link server and the host tool share it.
 */
#ifndef MOTA_PROTO_H
#define MOTA_PROTO_H

#include "mota/crypto.h" /* MOTA_SHA256_LEN: BEGIN names a manifest digest */
#include "mota/le.h"     /* payload fields */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOTA_PROTO_VERSION 1u
#define MOTA_PROTO_HEADER 8u
#define MOTA_PROTO_CRC 4u
#define MOTA_PROTO_MAX_PAYLOAD 4096u /* the largest any side may negotiate */
/* encoded size of a frame with n payload bytes: COBS adds one byte per 254, plus the delimiter */
#define MOTA_PROTO_ENCODED_MAX(n) ((n) + MOTA_PROTO_HEADER + MOTA_PROTO_CRC + ((n) + 12u) / 254u + 2u)

/* An event is unsolicited (device to host) and never an answer: it carries the seq and cmd of the request
 * it is about (a DATA whose verdict is being worked out), and a host matching answers skips it. */
enum mota_proto_kind { MOTA_KIND_REQUEST = 1, MOTA_KIND_RESPONSE = 2, MOTA_KIND_EVENT = 3 };

enum mota_proto_cmd {
    MOTA_CMD_HELLO = 1, /* req: u8 version, u16 max payload | rsp: CBOR device info */
    MOTA_CMD_BEGIN =
        2, /* req: u32 length, 32-byte manifest digest[, u8 flags] | rsp: u32 resume offset, u16 max payload,
            * u8 window */
    MOTA_CMD_DATA = 3,   /* req: u32 offset, bytes | rsp: u32 next offset (or the final result) */
    MOTA_CMD_STATUS = 4, /* rsp: CBOR state of every model and of the upload */
    MOTA_CMD_ABORT = 5,
    MOTA_CMD_RESULT = 6,   /* rsp: the last upload's result (code, text) */
    MOTA_CMD_CONFIRM = 7,  /* req: u8 model */
    MOTA_CMD_ROLLBACK = 8, /* req: u8 model */
    MOTA_CMD_REBOOT = 9,
    MOTA_CMD_ERRORS = 10, /* rsp: recent errors, CBOR */
    MOTA_CMD_INVOKE = 11, /* req: u8 model, u16 output size, input bytes | rsp: u32 duration us, output bytes */
    /* invoke with an input or output larger than a frame, through the device's I/O buffer (HELLO key 12) */
    MOTA_CMD_INPUT = 12,  /* req: u32 offset, input bytes | rsp: u32 bytes of input held */
    MOTA_CMD_RUN = 13,    /* req: u8 model, u32 output size | rsp: u32 duration us, u32 output size */
    MOTA_CMD_OUTPUT = 14, /* req: u32 offset, u16 length | rsp: output bytes from offset */
};

/* Event payload (kind 3, cmd DATA): u8 phase (enum mota_agent_phase: 1 verify, 2 install, 3 self-test,
 * 4 commit), u32 the upload's offset (the container's length). */
#define MOTA_PROTO_EVENT_LEN 9u /* u8 phase, u32 offset, u32 milliseconds (a busy period; 0 otherwise) */
#define MOTA_PROTO_PHASE_FLASH_BUSY                                                                                    \
    5u /* the flash busy for the event's milliseconds: the host holds (agent.h MOTA_PHASE_FLASH_BUSY) */

/* BEGIN's request and answer, laid out once for both sides (docs/protocol.md). */
#define MOTA_PROTO_BEGIN_LEN (4u + MOTA_SHA256_LEN)
#define MOTA_PROTO_BEGIN_FLAGS_LEN (MOTA_PROTO_BEGIN_LEN + 1u) /* with the flags byte (a non-zero one only) */
#define MOTA_PROTO_BEGUN_LEN 7u
#define MOTA_BEGIN_REINSTALL 0x01u /* install even the container the model runs already (mota push --reinstall) */
struct mota_begin {
    uint32_t length;                 /* of the whole container */
    uint8_t digest[MOTA_SHA256_LEN]; /* of its manifest: a resume is for this container only */
    uint8_t flags;                   /* MOTA_BEGIN_*; sent only when not 0, so older devices see no change */
};
struct mota_begun {
    uint32_t resume;      /* the offset the device kept of this container (0: none) */
    uint16_t max_payload; /* the DATA payload it takes */
    uint8_t window;       /* the DATA frames the host may have in flight */
};
/* the request's length: MOTA_PROTO_BEGIN_LEN, or _FLAGS_LEN with flags */
size_t mota_begin_encode(const struct mota_begin *b, uint8_t out[MOTA_PROTO_BEGIN_FLAGS_LEN]);
/* MOTA_ERR_PROTO_FRAME: bad length; MOTA_ERR_PROTO_FLAGS: a flag this device does not know */
int mota_begin_decode(const uint8_t *p, size_t len, struct mota_begin *b);
void mota_begun_encode(const struct mota_begun *b, uint8_t out[MOTA_PROTO_BEGUN_LEN]);
int mota_begun_decode(const uint8_t *p, size_t len, struct mota_begun *b); /* longer answers: newer devices */

/* Response payloads start with the status: int16 reason code (0: OK), then the body; on
 * failure the body is the reason's one-line message. */

struct mota_frame {
    uint8_t kind;
    uint8_t cmd;
    uint8_t flags;
    uint16_t seq;
    uint16_t len;
    const uint8_t *payload; /* into the decoder's buffer (valid until the next byte is pushed) */
};

/* Encode a frame into out (cap bytes, at least MOTA_PROTO_ENCODED_MAX(len)): returns the bytes written, 0 if it does not fit. */
size_t mota_frame_encode(const struct mota_frame *f, uint8_t *out, size_t cap);

/* Frame receiver: bytes in, whole checked frames out. Caller owns buf. */
struct mota_deframer {
    uint8_t *buf;
    size_t cap; /* largest encoded frame accepted (bigger ones are dropped whole) */
    size_t fill;
    bool skipping; /* an oversized frame is being skipped up to its delimiter */
    uint32_t frames, bad_crc, bad_cobs, oversize, runts;
};

void mota_deframer_init(struct mota_deframer *d, uint8_t *buf, size_t cap);

/*
 * Feed bytes; stops after the first complete, valid frame (*used tells how
 * many bytes were consumed) and returns 1 with *f filled, or returns 0 when
 * all bytes were consumed without one. Damaged frames are counted and dropped.
 */
int mota_deframer_push(struct mota_deframer *d, const uint8_t *data, size_t len, size_t *used, struct mota_frame *f);

#endif /* MOTA_PROTO_H */
