/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The LZMA decoder (decompress/src/lzma.c): pack's blocks are standard raw
 * LZMA1 streams (liblzma decodes each with the image before it as its preset
 * dictionary), and hand-made blocks, written with this file's own range
 * encoder (from the LZMA specification), get their reason codes: distances
 * past the image written so far, matches past the block, end markers, data
 * left over or missing, parameters the decoder has no room for, headers.
 */
#include "mota/decompress.h"
#include "mota/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "encoders.h"

#include "decomp_sink.h" /* after encoders.h: its `alg` is the tests' */

/* ---- a range encoder and LZMA's models, lc = lp = pb = 0 (the specification's encoder side) ---- */

enum { IS_MATCH = 0, IS_REP = 192, IS_REP_G0 = 204, IS_REP0_LONG = 240, POS_SLOT = 432, SPEC_POS = 688 };
enum { ALIGN = 802, LEN = 818, REP_LEN = 1332, LITERAL = 1846 };

struct enc {
    uint64_t low;
    uint32_t range, cache_size;
    uint8_t cache, state;
    uint8_t out[4096];
    size_t n;
    uint32_t pos, rep0;
    uint16_t probs[MOTA_LZMA_PROBS];
    uint8_t img[4096]; /* what the decoder will have written */
};

static void e_init(struct enc *e, uint32_t pos)
{
    memset(e, 0, sizeof(*e));
    e->range = 0xFFFFFFFFu;
    e->cache_size = 1;
    e->pos = pos;
    for (size_t i = 0; i < MOTA_LZMA_PROBS; i++)
        e->probs[i] = 1024;
}

static void e_shift(struct enc *e)
{
    if ((uint32_t)e->low < 0xFF000000u || (e->low >> 32) != 0) {
        uint8_t t = e->cache;
        do {
            e->out[e->n++] = (uint8_t)(t + (uint8_t)(e->low >> 32));
            t = 0xFF;
        } while (--e->cache_size != 0);
        e->cache = (uint8_t)((uint32_t)e->low >> 24);
    }
    e->cache_size++;
    e->low = (uint32_t)e->low << 8;
}

static void e_bit(struct enc *e, uint16_t *p, unsigned bit)
{
    uint32_t bound = (e->range >> 11) * *p;
    if (bit == 0) {
        e->range = bound;
        *p = (uint16_t)(*p + ((2048u - *p) >> 5));
    } else {
        e->low += bound;
        e->range -= bound;
        *p = (uint16_t)(*p - (*p >> 5));
    }
    while (e->range < (1u << 24)) {
        e->range <<= 8;
        e_shift(e);
    }
}

static void e_tree(struct enc *e, uint16_t *p, unsigned n, unsigned v)
{
    unsigned m = 1;
    for (unsigned i = n; i-- > 0;) {
        unsigned b = (v >> i) & 1u;
        e_bit(e, &p[m], b);
        m = (m << 1) | b;
    }
}

static void e_rtree(struct enc *e, uint16_t *p, unsigned n, unsigned v)
{
    unsigned m = 1;
    for (unsigned i = 0; i < n; i++) {
        unsigned b = (v >> i) & 1u;
        e_bit(e, &p[m], b);
        m = (m << 1) | b;
    }
}

static void e_direct(struct enc *e, uint32_t v, unsigned n)
{
    while (n-- > 0) {
        e->range >>= 1;
        e->low += e->range & (0u - ((v >> n) & 1u));
        if (e->range < (1u << 24)) {
            e->range <<= 8;
            e_shift(e);
        }
    }
}

static void e_len(struct enc *e, uint16_t *l, unsigned len) /* len - 2, below 272 */
{
    e_bit(e, &l[0], len >= 8);
    if (len < 8)
        return e_tree(e, l + 2, 3, len);
    e_bit(e, &l[1], len >= 16);
    if (len < 16)
        return e_tree(e, l + 130, 3, len - 8);
    e_tree(e, l + 258, 8, len - 16);
}

static void e_literal(struct enc *e, uint8_t c)
{
    uint16_t *p = e->probs + LITERAL;
    e_bit(e, &e->probs[IS_MATCH + (e->state << 4)], 0);
    if (e->state >= 7) { /* matched: the byte at rep0 as context while the bits agree */
        unsigned mb = e->pos > e->rep0 ? e->img[e->pos - e->rep0 - 1] : 0, sym = 1, same = 1;
        for (unsigned i = 8; i-- > 0;) {
            unsigned b = (c >> i) & 1u, mbit = (mb >> i) & 1u;
            e_bit(e, same ? &p[((1u + mbit) << 8) + sym] : &p[sym], b);
            sym = (sym << 1) | b;
            same = same && b == mbit;
        }
    } else {
        e_tree(e, p, 8, c);
    }
    e->state = e->state < 4 ? 0 : e->state < 10 ? e->state - 3 : e->state - 6;
    e->img[e->pos++] = c;
}

/* A match of len bytes from dist back (dist 0xFFFFFFFF with len 2: the end marker). */
static void e_match(struct enc *e, uint32_t dist, unsigned len)
{
    uint32_t d = dist == 0xFFFFFFFFu ? dist : dist - 1u; /* the end marker's distance is all ones */
    e_bit(e, &e->probs[IS_MATCH + (e->state << 4)], 1);
    e_bit(e, &e->probs[IS_REP + e->state], 0);
    e_len(e, e->probs + LEN, len - 2u);
    unsigned slot = d, top = 31u - (unsigned)__builtin_clz(d | 1u);
    if (d >= 4) /* the highest bit's place, twice, and the bit below it */
        slot = 2u * top + ((d >> (top - 1u)) & 1u);
    e_tree(e, e->probs + POS_SLOT + ((len - 2u < 4 ? len - 2u : 3u) << 6), 6, slot);
    if (slot >= 4) {
        unsigned nd = (slot >> 1) - 1u;
        uint32_t base = (2u | (slot & 1u)) << nd, rest = d - base;
        if (slot < 14) {
            e_rtree(e, e->probs + SPEC_POS + base - slot - 1u, nd, rest);
        } else {
            e_direct(e, rest >> 4, nd - 4u);
            e_rtree(e, e->probs + ALIGN, 4, rest & 15u);
        }
    }
    e->state = e->state < 7 ? 7 : 10;
    e->rep0 = d;
    for (unsigned i = 0; i < len && dist != 0xFFFFFFFFu && e->pos >= dist; i++, e->pos++)
        e->img[e->pos] = e->img[e->pos - dist];
}

/* A short rep (one byte from rep0) or a rep0 match of len bytes. */
static void e_rep0(struct enc *e, unsigned len)
{
    e_bit(e, &e->probs[IS_MATCH + (e->state << 4)], 1);
    e_bit(e, &e->probs[IS_REP + e->state], 1);
    e_bit(e, &e->probs[IS_REP_G0 + e->state], 0);
    e_bit(e, &e->probs[IS_REP0_LONG + (e->state << 4)], len > 1);
    if (len > 1)
        e_len(e, e->probs + REP_LEN, len - 2u);
    e->state = len > 1 ? (e->state < 7 ? 8 : 11) : (e->state < 7 ? 9 : 11);
    for (unsigned i = 0; i < len && e->pos > e->rep0; i++, e->pos++)
        e->img[e->pos] = e->img[e->pos - e->rep0 - 1];
}

/* The block: header (props 0, the data's length), then the coder's bytes, flushed. */
static size_t e_block(struct enc *e, uint8_t *b)
{
    for (int i = 0; i < 5; i++)
        e_shift(e);
    b[0] = 0;
    b[1] = (uint8_t)e->n, b[2] = (uint8_t)(e->n >> 8), b[3] = (uint8_t)(e->n >> 16);
    memcpy(b + 4, e->out, e->n);
    return 4 + e->n;
}

static int decode(const uint8_t *b, size_t n, uint32_t size, uint32_t block)
{
    uint8_t out[8192];
    alg = MOTA_DECOMP_LZMA;
    assert_true(size <= sizeof(out));
    int one = decode_chunked(b, n, out, size, block, 1, 3); /* a byte at a time: through the carry */
    int all = decode_chunked(b, n, out, size, block, 0, 3);
    assert_int_equal(one, all);
    return all;
}

static void test_hand_made_blocks_decode_and_reach_back_into_earlier_blocks(void **state)
{
    (void)state;
    static struct enc e;
    uint8_t b[8192];
    e_init(&e, 0);
    e_literal(&e, 'a'), e_literal(&e, 'b'), e_match(&e, 2, 6), e_literal(&e, 'c'), e_rep0(&e, 1), e_rep0(&e, 3);
    size_t n = e_block(&e, b);
    assert_int_equal(e.pos, 13);
    assert_int_equal(decode(b, n, 13, 256), MOTA_OK);
    /* a first block of 256 stored bytes, a second whose match reaches 200 bytes back into it */
    b[0] = 0xFF;
    for (int i = 0; i < 256; i++)
        b[1 + i] = (uint8_t)(i * 7);
    e_init(&e, 256);
    memcpy(e.img, b + 1, 256);
    e_literal(&e, 'x'), e_match(&e, 200, 40), e_literal(&e, 'y');
    n = 257 + e_block(&e, b + 257);
    assert_int_equal(decode(b, n, 256 + 42, 256), MOTA_OK);
    /* ... and beyond the first byte of the image: refused */
    e_init(&e, 256);
    e_literal(&e, 'x'), e_match(&e, 258, 4);
    n = 257 + e_block(&e, b + 257);
    assert_int_equal(decode(b, n, 256 + 100, 256), MOTA_ERR_DECOMP_OFFSET);
}

static void test_hostile_lzma_symbols_get_their_reason_codes(void **state)
{
    (void)state;
    static struct enc e;
    uint8_t b[8192];
    size_t n;
    /* (images of 200 bytes: a block's data is smaller than its plain bytes, or it would be stored) */
    /* a distance past what is written; a rep match, and a short rep, before any byte */
    e_init(&e, 0), e_literal(&e, 'a'), e_literal(&e, 'b'), e_match(&e, 3, 4), n = e_block(&e, b);
    assert_int_equal(decode(b, n, 200, 256), MOTA_ERR_DECOMP_OFFSET);
    e_init(&e, 0), e_rep0(&e, 5), e_literal(&e, 'a'), n = e_block(&e, b);
    assert_int_equal(decode(b, n, 200, 256), MOTA_ERR_DECOMP_OFFSET);
    e_init(&e, 0), e_rep0(&e, 1), e_literal(&e, 'a'), n = e_block(&e, b);
    assert_int_equal(decode(b, n, 200, 256), MOTA_ERR_DECOMP_OFFSET);
    /* a match past the block's end (a bomb in one symbol), and past the image's */
    e_init(&e, 0), e_literal(&e, 'a'), e_match(&e, 1, 273), n = e_block(&e, b);
    assert_int_equal(decode(b, n, 1000, 256), MOTA_ERR_DECOMP_OVERRUN);
    assert_int_equal(decode(b, n, 200, 256), MOTA_ERR_DECOMP_OVERRUN);
    /* the end marker: mota's blocks end by their size */
    e_init(&e, 0), e_literal(&e, 'a'), e_match(&e, 0xFFFFFFFFu, 2), n = e_block(&e, b);
    assert_int_equal(decode(b, n, 200, 256), MOTA_ERR_DECOMP_BLOCK);
    /* the block's data runs out before its plain bytes */
    e_init(&e, 0), e_literal(&e, 'a'), e_literal(&e, 'b'), e_match(&e, 2, 40), n = e_block(&e, b);
    assert_int_equal(decode(b, n, 42, 256), MOTA_OK);
    assert_int_equal(decode(b, n, 60, 256), MOTA_ERR_DECOMP_BLOCK);
    /* ... or is not all taken when they are written */
    b[1]++, b[n++] = 0x55; /* a byte more in the block than the coder wrote */
    assert_int_equal(decode(b, n, 42, 256), MOTA_ERR_DECOMP_BLOCK);
}

static void test_hostile_lzma_headers_get_their_reason_codes(void **state)
{
    (void)state;
    static struct enc e;
    uint8_t b[8192], c[8192];
    e_init(&e, 0), e_literal(&e, 'a'), e_literal(&e, 'b'), e_match(&e, 2, 20);
    size_t n = e_block(&e, b);
    assert_int_equal(decode(b, n, 22, 256), MOTA_OK);
    /* the coder's first byte is 0; the code starts below the range */
    memcpy(c, b, n), c[4] = 1;
    assert_int_equal(decode(c, n, 22, 256), MOTA_ERR_DECOMP_BLOCK);
    memcpy(c, b, n), memset(c + 5, 0xFF, 4);
    assert_int_equal(decode(c, n, 22, 256), MOTA_ERR_DECOMP_BLOCK);
    /* parameters: lc + lp = 2 (more models than the decoder has room for), pb = 5, 0xFE */
    static const uint8_t bad_props[] = {2, 1 + 9, 9 * 2, 225, 0xFE};
    for (size_t i = 0; i < sizeof(bad_props); i++) {
        memcpy(c, b, n), c[0] = bad_props[i];
        assert_int_equal(decode(c, n, 22, 256), MOTA_ERR_DECOMP_BLOCK);
    }
    /* lengths: below the coder's five bytes; no smaller than the plain bytes (it would be stored) */
    memcpy(c, b, n), c[1] = 4, c[2] = 0, c[3] = 0;
    assert_int_equal(decode(c, 8, 22, 256), MOTA_ERR_DECOMP_BLOCK);
    memcpy(c, b, n), c[1] = 22, c[2] = 0, c[3] = 0;
    memset(c + n, 0, 32);
    assert_int_equal(decode(c, 4 + 22, 22, 256), MOTA_ERR_DECOMP_BLOCK);
    /* stored: exactly the block's plain bytes; then nothing more than the image */
    static const uint8_t stored[] = {0xFF, 'a', 'b', 'c'};
    assert_int_equal(decode(stored, sizeof(stored), 3, 256), MOTA_OK);
    assert_int_equal(decode(stored, sizeof(stored), 4, 256), MOTA_ERR_DECOMP_TRUNCATED);
    assert_int_equal(decode(stored, sizeof(stored), 2, 256), MOTA_ERR_DECOMP_TRAILING);
    /* a second block where the image has ended */
    memcpy(c, stored, sizeof(stored)), memcpy(c + sizeof(stored), b, n);
    assert_int_equal(decode(c, sizeof(stored) + n, 3, 256), MOTA_ERR_DECOMP_TRAILING);
}

/* ---- pack's blocks against liblzma ---- */

/* Each block of pack's stream through liblzma's raw LZMA1 decoder, its preset dictionary the image
 * before it: the same bytes. */
static void test_pack_blocks_are_raw_lzma1_streams_liblzma_decodes(void **state)
{
    (void)state;
    static uint8_t img[300000], back[300000];
    uint32_t x = 5;
    for (size_t i = 0; i < sizeof(img); i++) { /* model-like: small values, repeats, noise */
        x = x * 1103515245u + 12345u;
        img[i] = i % 5000 < 2500 ? (uint8_t)((x >> 27) & 7u) : i >= 70000 ? img[i - 66666] : (uint8_t)(x >> 24);
    }
    size_t zl = 0, p = 0, blocks = 0;
    const uint32_t block = 65536;
    uint8_t *z = test_lzma(img, sizeof(img), block, &zl);
    assert_non_null(z);
    for (size_t at = 0; at < sizeof(img); at += block, blocks++) {
        size_t len = sizeof(img) - at < block ? sizeof(img) - at : block;
        if (z[p] == 0xFF) {
            memcpy(back + at, z + p + 1, len);
            p += 1 + len;
            continue;
        }
        size_t clen = z[p + 1] | (size_t)z[p + 2] << 8 | (size_t)z[p + 3] << 16, in_pos = 0, out_pos = 0;
        lzma_options_lzma o;
        memset(&o, 0, sizeof(o));
        o.dict_size = 1u << 20;
        o.preset_dict = at > 0 ? img : NULL;
        o.preset_dict_size = (uint32_t)at;
        o.lc = z[p] % 9u, o.lp = z[p] / 9u % 5u, o.pb = z[p] / 45u;
        lzma_set_ext_size(o, len);
        const lzma_filter f[2] = {{LZMA_FILTER_LZMA1EXT, &o}, {LZMA_VLI_UNKNOWN, NULL}};
        assert_int_equal(lzma_raw_buffer_decode(f, NULL, z + p + 4, &in_pos, clen, back + at, &out_pos, len), LZMA_OK);
        assert_int_equal(in_pos, clen);
        assert_int_equal(out_pos, len);
        p += 4 + clen;
    }
    assert_int_equal(p, zl);
    assert_memory_equal(back, img, sizeof(img));
    print_message("%zu blocks, %zu -> %zu bytes, each decoded by liblzma alike\n", blocks, sizeof(img), zl);
    free(z);
}

static void test_the_decoder_state_fits_8_kib(void **state)
{
    (void)state;
    print_message("struct mota_lzma: %zu bytes\n", sizeof(struct mota_lzma));
    assert_true(sizeof(struct mota_lzma) <= 8192);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_made_blocks_decode_and_reach_back_into_earlier_blocks),
        cmocka_unit_test(test_hostile_lzma_symbols_get_their_reason_codes),
        cmocka_unit_test(test_hostile_lzma_headers_get_their_reason_codes),
        cmocka_unit_test(test_pack_blocks_are_raw_lzma1_streams_liblzma_decodes),
        cmocka_unit_test(test_the_decoder_state_fits_8_kib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
