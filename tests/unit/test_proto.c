/* SPDX-License-Identifier: Apache-2.0 */
/* The link frame codec: the documented example, round trips, resynchronisation. */
#include "mota/err.h"
#include "mota/proto.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

/* docs/protocol.md, "Worked example": HELLO asking for 4096-byte payloads */
static const uint8_t hello_frame[] = {0x04, 0x01, 0x01, 0x01, 0x02, 0x01, 0x02, 0x03, 0x02,
                                      0x01, 0x06, 0x10, 0x66, 0x1a, 0x12, 0xaf, 0x00};

static void test_hello_encodes_to_the_documented_bytes(void **state)
{
    (void)state;
    uint8_t p[3] = {1, 0x00, 0x10}, out[64];
    struct mota_frame f = {.kind = MOTA_KIND_REQUEST, .cmd = MOTA_CMD_HELLO, .seq = 1, .len = 3, .payload = p};
    size_t n = mota_frame_encode(&f, out, sizeof(out));
    assert_int_equal(n, sizeof(hello_frame));
    assert_memory_equal(out, hello_frame, n);
}

/* BEGIN's request and answer: the documented bytes both ways, and lengths checked. */
static void test_begin_and_its_answer_have_the_documented_layout(void **state)
{
    (void)state;
    struct mota_begin req = {0x01020304u, {0}, 0}, back;
    struct mota_begun rsp = {0x0A0B0C0Du, 512, 12}, rback;
    uint8_t b[MOTA_PROTO_BEGIN_FLAGS_LEN], r[MOTA_PROTO_BEGUN_LEN + 1];
    for (unsigned i = 0; i < sizeof(req.digest); i++)
        req.digest[i] = (uint8_t)(0xA0 + i);
    assert_int_equal(mota_begin_encode(&req, b), 36); /* no flags: the request older devices know */
    assert_int_equal(b[0], 0x04);                     /* u32 length, little-endian, then the digest */
    assert_int_equal(b[3], 0x01);
    assert_int_equal(b[4], 0xA0);
    assert_int_equal(b[35], 0xA0 + 31);
    assert_int_equal(mota_begin_decode(b, 36, &back), MOTA_OK);
    assert_int_equal(back.length, req.length);
    assert_int_equal(back.flags, 0);
    assert_memory_equal(back.digest, req.digest, sizeof(req.digest));
    assert_int_equal(mota_begin_decode(b, 35, &back), MOTA_ERR_PROTO_FRAME);
    assert_int_equal(mota_begin_decode(b, 38, &back), MOTA_ERR_PROTO_FRAME);
    req.flags = MOTA_BEGIN_REINSTALL; /* a flag: one more byte */
    assert_int_equal(mota_begin_encode(&req, b), 37);
    assert_int_equal(b[36], MOTA_BEGIN_REINSTALL);
    assert_int_equal(mota_begin_decode(b, 37, &back), MOTA_OK);
    assert_int_equal(back.flags, MOTA_BEGIN_REINSTALL);
    b[36] = 0x80; /* a flag this device does not know: refused, not ignored */
    assert_int_equal(mota_begin_decode(b, 37, &back), MOTA_ERR_PROTO_FLAGS);
    mota_begun_encode(&rsp, r);
    const uint8_t want[7] = {0x0D, 0x0C, 0x0B, 0x0A, 0x00, 0x02, 12}; /* u32 resume, u16 payload, u8 window */
    assert_memory_equal(r, want, sizeof(want));
    assert_int_equal(mota_begun_decode(r, MOTA_PROTO_BEGUN_LEN, &rback), MOTA_OK);
    assert_int_equal(rback.resume, rsp.resume);
    assert_int_equal(rback.max_payload, 512);
    assert_int_equal(rback.window, 12);
    assert_int_equal(mota_begun_decode(r, MOTA_PROTO_BEGUN_LEN - 1, &rback), MOTA_ERR_PROTO_FRAME);
    assert_int_equal(mota_begun_decode(r, sizeof(r), &rback), MOTA_OK); /* a newer device may say more */
}

static void test_frames_survive_garbage_and_every_payload_length(void **state)
{
    (void)state;
    static uint8_t stream[1 << 20], rx[MOTA_PROTO_ENCODED_MAX(MOTA_PROTO_MAX_PAYLOAD)], payload[MOTA_PROTO_MAX_PAYLOAD];
    size_t len = 0;
    uint16_t lens[] = {0, 1, 253, 254, 255, 508, 1000, 2048, 4096};
    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)(i % 7 == 0 ? 0 : i * 13); /* plenty of zero bytes */
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        /* noise, then a frame */
        for (int g = 0; g < 37; g++)
            stream[len++] = (uint8_t)(g * 29 + k);
        stream[len++] = 0;
        struct mota_frame f = {
            .kind = MOTA_KIND_REQUEST, .cmd = MOTA_CMD_DATA, .seq = (uint16_t)k, .len = lens[k], .payload = payload};
        len += mota_frame_encode(&f, stream + len, sizeof(stream) - len);
    }
    struct mota_deframer d;
    mota_deframer_init(&d, rx, sizeof(rx));
    size_t off = 0, got = 0;
    while (off < len) {
        struct mota_frame f;
        size_t used;
        /* delivered in odd-sized pieces, as a UART would */
        size_t piece = len - off < 97 ? len - off : 97;
        size_t at = 0;
        while (at < piece) {
            if (mota_deframer_push(&d, stream + off + at, piece - at, &used, &f)) {
                assert_int_equal(f.seq, got);
                assert_int_equal(f.len, lens[got]);
                assert_memory_equal(f.payload, payload, f.len);
                got++;
            }
            at += used;
        }
        off += piece;
    }
    assert_int_equal(got, sizeof(lens) / sizeof(lens[0]));
    assert_true(d.bad_crc + d.bad_cobs + d.runts > 0); /* the noise was seen and dropped */
}

static void test_damaged_and_oversized_frames_are_dropped(void **state)
{
    (void)state;
    uint8_t buf[64], rx[32], big[200];
    struct mota_deframer d;
    struct mota_frame f;
    size_t used;
    memcpy(buf, hello_frame, sizeof(hello_frame));
    buf[5] ^= 0x10; /* a flipped bit */
    mota_deframer_init(&d, rx, sizeof(rx));
    assert_int_equal(mota_deframer_push(&d, buf, sizeof(hello_frame), &used, &f), 0);
    assert_int_equal(d.bad_crc + d.bad_cobs + d.runts, 1);
    memset(big, 0x42, sizeof(big)); /* longer than the receiver accepts */
    assert_int_equal(mota_deframer_push(&d, big, sizeof(big), &used, &f), 0);
    assert_int_equal(mota_deframer_push(&d, (const uint8_t *)"\0", 1, &used, &f), 0);
    assert_int_equal(d.oversize, 1);
    /* and the next good frame gets through */
    assert_int_equal(mota_deframer_push(&d, hello_frame, sizeof(hello_frame), &used, &f), 1);
    assert_int_equal(f.cmd, MOTA_CMD_HELLO);
    assert_int_equal(mota_get16(f.payload + 1), 4096);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hello_encodes_to_the_documented_bytes),
        cmocka_unit_test(test_begin_and_its_answer_have_the_documented_layout),
        cmocka_unit_test(test_frames_survive_garbage_and_every_payload_length),
        cmocka_unit_test(test_damaged_and_oversized_frames_are_dropped),
    };
    return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
