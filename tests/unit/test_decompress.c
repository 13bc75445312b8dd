/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compressed-payload decoders (decompress/src/lz4.c, inflate.c and lzma.c,
 * behind mota/decompress.h): liblz4's frames, zlib's deflate streams and pack's LZMA blocks decode to
 * the same bytes in any chunking and across resumes; hostile streams get
 * their reason codes and never make the sink write past its block or the
 * image, nor copy from before the image.
 */
#include "mota/decompress.h"
#include "mota/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "encoders.h"

#include "decomp_sink.h" /* after encoders.h: its `alg` is the tests' */
#include "fixture_yolo.h"

static uint8_t *lz4_frame(const uint8_t *in, size_t n, uint32_t block, size_t *out_len)
{
    uint8_t *z = test_lz4_compress(in, n, block, out_len);
    assert_non_null(z);
    return z;
}

static uint8_t *deflated(const uint8_t *in, size_t n, uint32_t block, size_t *out_len)
{
    uint8_t *z = test_deflate(in, n, block, out_len);
    assert_non_null(z);
    return z;
}

/* Each shared test runs once per algorithm. */
#define FOR_EACH_ALG for (alg = MOTA_DECOMP_LZ4; alg <= MOTA_DECOMP_LZMA; alg++)

static const char *alg_name(void)
{
    return alg == MOTA_DECOMP_LZ4 ? "lz4" : alg == MOTA_DECOMP_LZMA ? "lzma" : "deflate";
}

static uint8_t *lzma_blocks(const uint8_t *in, size_t n, uint32_t block, size_t *out_len)
{
    uint8_t *z = test_lzma(in, n, block, out_len);
    assert_non_null(z);
    return z;
}

static uint8_t *encode(const uint8_t *in, size_t n, uint32_t block, size_t *out_len)
{
    return alg == MOTA_DECOMP_DEFLATE ? deflated(in, n, block, out_len)
           : alg == MOTA_DECOMP_LZMA  ? lzma_blocks(in, n, block, out_len)
                                      : lz4_frame(in, n, block, out_len);
}

/* A whole payload in memory, as the host decodes it. */
static int decode_all(uint32_t which, const uint8_t *in, size_t len, uint8_t *out, uint32_t size, uint32_t block)
{
    static struct mota_decompress d;
    return mota_decompress_buffer(&d, which, in, len, out, size, block);
}

/* Model-like bytes: runs, repeats from far back, small integers, and noise. */
static void fill(uint8_t *b, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        uint32_t kind = (uint32_t)(i / 777u) % 4u;
        b[i] = kind == 0                ? (uint8_t)(x >> 24)
               : kind == 1              ? (uint8_t)(i / 13u)
               : kind == 2 && i >= 5000 ? b[i - 4999]
                                        : (uint8_t)((x >> 28) & 3u);
    }
}

static void round_trip(const uint8_t *img, size_t n, uint32_t block, size_t max)
{
    size_t zl;
    uint8_t *zb = encode(img, n, block, &zl), *out = malloc(n + 1);
    assert_true(zl <= mota_decompress_bound(alg, (uint32_t)n, block));
    assert_int_equal(decode_chunked(zb, zl, out, (uint32_t)n, block, max, 7), MOTA_OK);
    assert_memory_equal(out, img, n);
    assert_int_equal(decode_all(alg, zb, zl, out, (uint32_t)n, block), MOTA_OK);
    assert_memory_equal(out, img, n);
    free(zb);
    free(out);
}

static void test_each_encoders_streams_decode_to_the_image_in_any_chunking(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {1, 255, 4096, 4097, 70000, 300000};
    static const uint32_t blocks[] = {256, 4096, 65536};
    FOR_EACH_ALG
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint8_t *img = malloc(sizes[i]);
        fill(img, sizes[i], (uint32_t)i);
        for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
            if (alg == MOTA_DECOMP_LZMA && blocks[b] == 256 && sizes[i] > 5000)
                continue; /* LZMA in 256-byte blocks of a large image: seconds of encoding, nothing new */
            round_trip(img, sizes[i], blocks[b], 0);
            round_trip(img, sizes[i], blocks[b], 1);
            round_trip(img, sizes[i], blocks[b], 333);
        }
        free(img);
    }
}

static void test_incompressible_blocks_are_stored_and_decode(void **state)
{
    (void)state;
    uint8_t *img = malloc(20000);
    uint32_t x = 99;
    for (size_t i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        img[i] = (uint8_t)x;
    }
    size_t zl;
    uint8_t *zb = lz4_frame(img, 20000, 4096, &zl);
    assert_true((zb[MOTA_LZ4_HEADER_LEN + 3] & 0x80u) != 0); /* the first block is stored */
    free(zb);
    FOR_EACH_ALG /* zlib stores them too */
        round_trip(img, 20000, 4096, 100);
    free(img);
}

/* Overlapping copies: a match longer than its distance repeats the bytes it is writing. */
static void test_overlapping_match_repeats_its_own_output(void **state)
{
    (void)state;
    uint8_t img[1000];
    for (size_t i = 0; i < sizeof(img); i++)
        img[i] = (uint8_t) "abc"[i % 3];
    FOR_EACH_ALG
    round_trip(img, sizeof(img), 4096, 5);
}

/* The real N6 model: every block boundary is a resume point that gives the same image. */
static void yolo_resumes(void)
{
    size_t zl = 0;
    uint32_t block = tool_compress_block(alg); /* as pack writes it */
    uint8_t *zb = encode(yolo, yolo_len, block, &zl), *out = malloc(yolo_len);
    print_message("yolov8n: %zu -> %zu bytes (%.3fx) %s, %u-byte blocks\n", yolo_len, zl, (double)yolo_len / (double)zl,
                  alg_name(), (unsigned)block);
    struct sink s = {out, 0, (uint32_t)yolo_len, 0};
    struct mota_decomp_sink k = {s_write, s_copy, &s, s_peek};
    static struct mota_decompress z;
    mota_decompress_start(&z, alg, (uint32_t)yolo_len, block, 0);
    size_t p = 0;
    unsigned resumes = 0, every = block == 4096u ? 37u : 3u;
    while (mota_decompress_finish(&z) != MOTA_OK) {
        size_t used = 0;
        assert_int_equal(mota_decompress_feed(&z, zb + p, zl - p, &k, &used), MOTA_OK);
        p += used;
        uint32_t out_at = mota_decompress_out(&z);
        if (mota_decompress_at_boundary(&z) && (out_at / block) % every == 2u) { /* a power cut: state lost */
            assert_int_equal(out_at % block, 0);
            mota_decompress_start(&z, alg, (uint32_t)yolo_len, block, out_at);
            resumes++;
        }
    }
    assert_int_equal(p, zl);
    assert_memory_equal(out, yolo, yolo_len);
    assert_true(resumes >= (block == 4096u ? 10u : 4u));
    free(zb);
    free(out);
}

static void test_yolo_resumes_at_block_boundaries_to_the_same_image(void **state)
{
    (void)state;
    NEED_YOLO();
    FOR_EACH_ALG
    yolo_resumes();
}

/* ---- hostile frames ---- */

static const uint8_t hdr[MOTA_LZ4_HEADER_LEN] = {0x04, 0x22, 0x4D, 0x18, 0x40, 0x40, 0xC0};

/* A frame: mota's header, then the given bytes. */
static size_t frame(uint8_t *b, const uint8_t *body, size_t n)
{
    memcpy(b, hdr, sizeof(hdr));
    memcpy(b + sizeof(hdr), body, n);
    return sizeof(hdr) + n;
}

static int decode_body(const uint8_t *body, size_t n, uint32_t size, uint32_t block)
{
    uint8_t f[512], out[8192];
    size_t len = frame(f, body, n);
    assert_true(size <= sizeof(out));
    return decode_chunked(f, len, out, size, block, 1, 3);
}

static void test_hostile_lz4_frames_get_their_reason_codes(void **state)
{
    (void)state;
    alg = MOTA_DECOMP_LZ4;
    /* 20 plain bytes: literal 'a', a match of 18 at distance 1 (overlapping), final literal 'b' */
    static const uint8_t ok20[] = {0x06, 0, 0, 0, 0x1E, 'a', 0x01, 0x00, 0x10, 'b', 0, 0, 0, 0};
    assert_int_equal(decode_body(ok20, sizeof(ok20), 20, 256), MOTA_OK);
    /* a block that ends with a match */
    static const uint8_t ends_in_match[] = {0x04, 0, 0, 0, 0x1E, 'a', 0x01, 0x00, 0, 0, 0, 0};
    assert_int_equal(decode_body(ends_in_match, sizeof(ends_in_match), 19, 256), MOTA_ERR_DECOMP_BLOCK);
    /* back-references before the start: distance 2 after 1 byte; distance 0 */
    static const uint8_t before[] = {0x06, 0, 0, 0, 0x1E, 'a', 0x02, 0x00, 0x10, 'b', 0, 0, 0, 0};
    assert_int_equal(decode_body(before, sizeof(before), 20, 256), MOTA_ERR_DECOMP_OFFSET);
    static const uint8_t zero[] = {0x06, 0, 0, 0, 0x1E, 'a', 0x00, 0x00, 0x10, 'b', 0, 0, 0, 0};
    assert_int_equal(decode_body(zero, sizeof(zero), 20, 256), MOTA_ERR_DECOMP_OFFSET);
    /* a match longer than its block (a bomb in one sequence): 19 + 3 * 255 bytes in a 256-byte block */
    static const uint8_t long_match[] = {0x0A, 0,    0,    0,    0x1F, 'a', 0x01, 0x00, 0xFF,
                                         0xFF, 0xFF, 0x00, 0x10, 'x',  0,   0,    0,    0};
    assert_int_equal(decode_body(long_match, sizeof(long_match), 256, 256), MOTA_ERR_DECOMP_OVERRUN);
    /* literals longer than the block */
    static const uint8_t long_lit[] = {0x04, 0, 0, 0, 0xF0, 0xFF, 0xFF, 0x00, 0, 0, 0, 0};
    assert_int_equal(decode_body(long_lit, sizeof(long_lit), 256, 256), MOTA_ERR_DECOMP_OVERRUN);
    /* a second block after the image's declared size: a bomb */
    static const uint8_t extra[] = {0x06, 0, 0, 0,    0x1E, 'a', 0x01, 0x00, 0x10, 'b',
                                    0x02, 0, 0, 0x80, 'e',  'f', 0,    0,    0,    0};
    assert_int_equal(decode_body(extra, sizeof(extra), 20, 256), MOTA_ERR_DECOMP_OVERRUN);
    /* a whole 256-byte block, then the end mark where 300 bytes were declared */
    static const uint8_t full[] = {0x07, 0, 0, 0, 0x1F, 'a', 0x01, 0x00, 0xEB, 0x10, 'b', 0, 0, 0, 0};
    assert_int_equal(decode_body(full, sizeof(full), 256, 256), MOTA_OK);
    assert_int_equal(decode_body(full, sizeof(full), 300, 256), MOTA_ERR_DECOMP_SHORT);
    /* a block whose data ends before its plain bytes */
    assert_int_equal(decode_body(ok20, sizeof(ok20), 21, 256), MOTA_ERR_DECOMP_BLOCK);
    /* a compressed block no smaller than its plain bytes; a stored block of the wrong size; size 0 */
    static const uint8_t fat[] = {0x09, 0, 0, 0, 0x80, 'a', 'b', 'c', 'd', 'a', 'b', 'c', 'd', 0, 0, 0, 0};
    assert_int_equal(decode_body(fat, sizeof(fat), 8, 256), MOTA_ERR_DECOMP_BLOCK);
    static const uint8_t stored_short[] = {0x03, 0, 0, 0x80, 'a', 'b', 'c', 0, 0, 0, 0};
    assert_int_equal(decode_body(stored_short, sizeof(stored_short), 4, 256), MOTA_ERR_DECOMP_BLOCK);
    assert_int_equal(decode_body(stored_short, sizeof(stored_short), 3, 256), MOTA_OK);
    static const uint8_t zero_block[] = {0x00, 0, 0, 0x80, 0, 0, 0, 0};
    assert_int_equal(decode_body(zero_block, sizeof(zero_block), 3, 256), MOTA_ERR_DECOMP_BLOCK);
    /* literals running past the block's data */
    static const uint8_t lit_past[] = {0x03, 0, 0, 0, 0x50, 'a', 'b', 0, 0, 0, 0};
    assert_int_equal(decode_body(lit_past, sizeof(lit_past), 5, 256), MOTA_ERR_DECOMP_BLOCK);
    /* trailing bytes after the end mark */
    static const uint8_t trail[] = {0x03, 0, 0, 0x80, 'a', 'b', 'c', 0, 0, 0, 0, 0x00};
    assert_int_equal(decode_body(trail, sizeof(trail), 3, 256), MOTA_ERR_DECOMP_TRAILING);
}

static void test_other_lz4_headers_are_refused(void **state)
{
    (void)state;
    alg = MOTA_DECOMP_LZ4;
    uint8_t out[16];
    static const uint8_t body[] = {0x03, 0, 0, 0x80, 'a', 'b', 'c', 0, 0, 0, 0};
    for (size_t i = 0; i < MOTA_LZ4_HEADER_LEN; i++) {
        uint8_t f[64];
        size_t n = frame(f, body, sizeof(body));
        f[i] ^= i == 4 ? 0x20u : 0x01u; /* byte 4: the independent-blocks flag */
        assert_int_equal(decode_all(MOTA_DECOMP_LZ4, f, n, out, 3, 256), MOTA_ERR_DECOMP_FRAME);
    }
}

/* Every prefix of a valid frame is refused (truncated), never accepted, and never overruns. */
static void test_every_truncation_is_refused(void **state)
{
    (void)state;
    uint8_t img[9000], out[9000];
    fill(img, sizeof(img), 5);
    size_t zl;
    FOR_EACH_ALG
    {
        uint8_t *zb = encode(img, sizeof(img), 4096, &zl);
        for (size_t n = 0; n < zl; n++)
            assert_int_equal(decode_chunked(zb, n, out, sizeof(img), 4096, 0, 1), MOTA_ERR_DECOMP_TRUNCATED);
        assert_int_equal(decode_chunked(zb, zl, out, sizeof(img), 4096, 0, 1), MOTA_OK);
        free(zb);
    }
}

/* Random corruptions: a reason code or the wrong image (which the signed image digest catches); the
 * checking sink fails the test on any request outside the image. */
static void test_corrupt_frames_never_reach_outside_the_image(void **state)
{
    (void)state;
    uint8_t img[12000], out[12000];
    fill(img, sizeof(img), 11);
    size_t zl;
    FOR_EACH_ALG
    {
        uint8_t *zb = encode(img, sizeof(img), 4096, &zl);
        uint32_t x = 1, refused = 0;
        for (int t = 0; t < 3000; t++) {
            uint8_t *c = malloc(zl);
            memcpy(c, zb, zl);
            x = x * 1103515245u + 12345u;
            c[(x >> 8) % zl] ^= (uint8_t)(1u << ((x >> 4) & 7u));
            refused += decode_chunked(c, zl, out, sizeof(img), 4096, 64, x) != MOTA_OK;
            free(c);
        }
        print_message("%s: 3000 single-bit corruptions: %u refused by the decoder, the rest left to the digest\n",
                      alg_name(), refused);
        assert_true(refused > 0);
        free(zb);
    }
}

static void test_a_sink_error_stops_the_decoder(void **state)
{
    (void)state;
    uint8_t img[5000], out[5000];
    fill(img, sizeof(img), 2);
    size_t zl;
    FOR_EACH_ALG
    {
        uint8_t *zb = encode(img, sizeof(img), 256, &zl);
        struct sink s = {out, 0, sizeof(out), 3};
        struct mota_decomp_sink k = {s_write, s_copy, &s, s_peek};
        static struct mota_decompress z;
        mota_decompress_start(&z, alg, sizeof(img), 256, 0);
        int ret = MOTA_OK;
        for (size_t p = 0, used = 0; p < zl && ret == MOTA_OK; p += used)
            ret = mota_decompress_feed(&z, zb + p, zl - p, &k, &used);
        assert_int_equal(ret, MOTA_ERR_FLASH_IO);
        free(zb);
    }
}

static void test_bound_covers_stored_blocks_and_refuses_overflow(void **state)
{
    (void)state;
    assert_int_equal(mota_decompress_bound(MOTA_DECOMP_LZ4, 4096, 4096), 7 + 4 + 4096 + 4);
    assert_int_equal(mota_decompress_bound(MOTA_DECOMP_LZ4, 4097, 4096), 7 + 8 + 4097 + 4);
    assert_int_equal(mota_decompress_bound(MOTA_DECOMP_LZ4, 0xFFFFFFFFu, 256), 0);
    assert_int_equal(mota_decompress_bound(MOTA_DECOMP_LZ4, 100, 0), 0);
    assert_int_equal(mota_decompress_bound(4, 100, 4096), 0);
    assert_int_equal(mota_decompress_bound(MOTA_DECOMP_LZMA, 4097, 4096), 4097 + 2 * 4);
    assert_int_equal(mota_decompress_bound(MOTA_DECOMP_LZMA, 0xFFFFFFF0u, 256), 0);
    /* a resume only at a block boundary of the image, or at its end */
    static struct mota_decompress d;
    assert_int_equal(mota_decompress_start(&d, MOTA_DECOMP_DEFLATE, 10000, 4096, 8192), MOTA_OK);
    assert_int_equal(mota_decompress_start(&d, MOTA_DECOMP_LZ4, 10000, 4096, 10000), MOTA_OK);
    assert_int_equal(mota_decompress_start(&d, MOTA_DECOMP_DEFLATE, 10000, 4096, 4097), MOTA_ERR_ARG);
    assert_int_equal(mota_decompress_start(&d, MOTA_DECOMP_LZ4, 10000, 4096, 12288), MOTA_ERR_ARG);
    assert_int_equal(mota_decompress_start(&d, 4, 10000, 4096, 0), MOTA_ERR_ARG);
    assert_int_equal(mota_decompress_start(&d, MOTA_DECOMP_LZMA, 10000, 4096, 8192), MOTA_OK);
    assert_int_equal(mota_decompress_start(&d, MOTA_DECOMP_LZMA, 10000, 4096, 100), MOTA_ERR_ARG);
    assert_int_equal(mota_decompress_start(&d, MOTA_DECOMP_LZ4, 10000, 0, 0), MOTA_ERR_ARG);
    assert_true(mota_decompress_bound(MOTA_DECOMP_DEFLATE, 4096, 4096) >= 4096 + 10);
    assert_int_equal(mota_decompress_bound(MOTA_DECOMP_DEFLATE, 0xFFFFFFF0u, 256), 0);
}

/* ---- hostile deflate streams ---- */

/* A bit writer: fields LSB first, Huffman codes MSB first (RFC 1951 3.1.1). */
struct bw {
    uint8_t b[256];
    size_t bit;
};

static void put(struct bw *w, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++, w->bit++)
        if ((v >> i) & 1u)
            w->b[w->bit / 8] |= (uint8_t)(1u << (w->bit % 8));
}

static void put_code(struct bw *w, uint32_t code, unsigned n)
{
    for (unsigned i = n; i-- > 0; w->bit++)
        if ((code >> i) & 1u)
            w->b[w->bit / 8] |= (uint8_t)(1u << (w->bit % 8));
}

/* Fixed-code literal c (RFC 1951 3.2.6). */
static void lit(struct bw *w, unsigned c)
{
    if (c < 144)
        put_code(w, 0x30 + c, 8);
    else
        put_code(w, 0x190 + c - 144, 9);
}

static size_t bytes_of(const struct bw *w)
{
    return (w->bit + 7) / 8;
}

static int inflate_bytes(const uint8_t *b, size_t n, uint32_t size, uint32_t block)
{
    uint8_t out[8192];
    alg = MOTA_DECOMP_DEFLATE;
    assert_true(size <= sizeof(out));
    return decode_chunked(b, n, out, size, block, 1, 5);
}

static void test_hostile_deflate_streams_get_their_reason_codes(void **state)
{
    (void)state;
    /* 'a' then a match of 3 at distance 2 (one byte written): before the start */
    struct bw w = {{0}, 0};
    put(&w, 1, 1), put(&w, 1, 2), lit(&w, 'a'), put_code(&w, 1, 7) /* length 3 */, put_code(&w, 1, 5) /* dist 2 */;
    put_code(&w, 0, 7); /* end of block */
    assert_int_equal(inflate_bytes(w.b, bytes_of(&w), 4, 256), MOTA_ERR_DECOMP_OFFSET);
    /* the same at distance 1: "aaaa", valid (an overlapping copy) */
    memset(&w, 0, sizeof(w));
    put(&w, 1, 1), put(&w, 1, 2), lit(&w, 'a'), put_code(&w, 1, 7), put_code(&w, 0, 5), put_code(&w, 0, 7);
    assert_int_equal(inflate_bytes(w.b, bytes_of(&w), 4, 256), MOTA_OK);
    /* ... with a declared image of 3 bytes: the match runs past it (a bomb) */
    assert_int_equal(inflate_bytes(w.b, bytes_of(&w), 3, 256), MOTA_ERR_DECOMP_OVERRUN);
    /* ... or of 5: the stream ends short of it */
    assert_int_equal(inflate_bytes(w.b, bytes_of(&w), 5, 256), MOTA_ERR_DECOMP_SHORT);
    /* a byte after the final block */
    uint8_t more[64];
    memcpy(more, w.b, bytes_of(&w));
    more[bytes_of(&w)] = 0;
    assert_int_equal(inflate_bytes(more, bytes_of(&w) + 1, 4, 256), MOTA_ERR_DECOMP_TRAILING);
    /* block type 3 */
    memset(&w, 0, sizeof(w));
    put(&w, 1, 1), put(&w, 3, 2), put(&w, 0, 5);
    assert_int_equal(inflate_bytes(w.b, 1, 4, 256), MOTA_ERR_DECOMP_BLOCK);
    /* a stored block whose NLEN is not LEN's complement; one longer than the image */
    static const uint8_t bad_nlen[] = {0x01, 0x03, 0x00, 0xFC, 0xFE, 'a', 'b', 'c'};
    assert_int_equal(inflate_bytes(bad_nlen, sizeof(bad_nlen), 3, 256), MOTA_ERR_DECOMP_BLOCK);
    static const uint8_t stored3[] = {0x01, 0x03, 0x00, 0xFC, 0xFF, 'a', 'b', 'c'};
    assert_int_equal(inflate_bytes(stored3, sizeof(stored3), 3, 256), MOTA_OK);
    assert_int_equal(inflate_bytes(stored3, sizeof(stored3), 2, 256), MOTA_ERR_DECOMP_OVERRUN);
    /* length symbol 286 (fixed code 11000110): not a length */
    memset(&w, 0, sizeof(w));
    put(&w, 1, 1), put(&w, 1, 2), lit(&w, 'a'), put_code(&w, 0xC6, 8);
    assert_int_equal(inflate_bytes(w.b, bytes_of(&w), 4, 256), MOTA_ERR_DECOMP_BLOCK);
    /* a dynamic header of 19 code-length codes of length 1: over-subscribed */
    memset(&w, 0, sizeof(w));
    put(&w, 1, 1), put(&w, 2, 2), put(&w, 0, 5), put(&w, 0, 5), put(&w, 15, 4);
    for (int i = 0; i < 19; i++)
        put(&w, 1, 3);
    assert_int_equal(inflate_bytes(w.b, bytes_of(&w), 4, 256), MOTA_ERR_DECOMP_BLOCK);
}

/* Flushes where the block size says: a stream flushed every 8 KiB is refused for 4 KiB blocks (a block
 * too long: no resume point where the agent records one), one flushed every 2 KiB too (too short). */
static void test_deflate_flushes_must_match_the_block_size(void **state)
{
    (void)state;
    uint8_t img[20000], out[20000];
    fill(img, sizeof(img), 8);
    size_t zl;
    alg = MOTA_DECOMP_DEFLATE;
    uint8_t *z8 = deflated(img, sizeof(img), 8192, &zl);
    assert_int_equal(decode_chunked(z8, zl, out, sizeof(img), 4096, 0, 1), MOTA_ERR_DECOMP_OVERRUN);
    free(z8);
    uint8_t *z2 = deflated(img, sizeof(img), 2048, &zl);
    assert_int_equal(decode_chunked(z2, zl, out, sizeof(img), 4096, 0, 1), MOTA_ERR_DECOMP_BLOCK);
    free(z2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_encoders_streams_decode_to_the_image_in_any_chunking),
        cmocka_unit_test(test_incompressible_blocks_are_stored_and_decode),
        cmocka_unit_test(test_overlapping_match_repeats_its_own_output),
        cmocka_unit_test_setup_teardown(test_yolo_resumes_at_block_boundaries_to_the_same_image, yolo_setup,
                                        yolo_teardown),
        cmocka_unit_test(test_hostile_lz4_frames_get_their_reason_codes),
        cmocka_unit_test(test_hostile_deflate_streams_get_their_reason_codes),
        cmocka_unit_test(test_deflate_flushes_must_match_the_block_size),
        cmocka_unit_test(test_other_lz4_headers_are_refused),
        cmocka_unit_test(test_every_truncation_is_refused),
        cmocka_unit_test(test_corrupt_frames_never_reach_outside_the_image),
        cmocka_unit_test(test_a_sink_error_stops_the_decoder),
        cmocka_unit_test(test_bound_covers_stored_blocks_and_refuses_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
