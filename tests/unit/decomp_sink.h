/* SPDX-License-Identifier: Apache-2.0 */
/* The decoder tests' sink: it checks every request against the image it builds (never past it, never from
 * before it), and a chunked feed of a whole stream through mota/decompress.h. */
#ifndef MOTA_TEST_DECOMP_SINK_H
#define MOTA_TEST_DECOMP_SINK_H

#include "mota/decompress.h"
#include "mota/err.h"

/* The algorithm the shared tests run with. */
static uint32_t alg = MOTA_DECOMP_LZ4;

struct sink {
    uint8_t *buf;
    uint32_t pos, cap;
    int fail_after; /* > 0: the n-th call fails with MOTA_ERR_FLASH_IO */
};

static int s_write(void *ctx, const uint8_t *p, size_t n)
{
    struct sink *s = ctx;
    assert_true(n > 0 && n <= s->cap - s->pos);
    if (s->fail_after > 0 && --s->fail_after == 0)
        return MOTA_ERR_FLASH_IO;
    memcpy(s->buf + s->pos, p, n);
    s->pos += (uint32_t)n;
    return MOTA_OK;
}

static int s_peek(void *ctx, uint32_t dist, uint8_t *b)
{
    struct sink *s = ctx;
    assert_true(dist >= 1 && dist <= s->pos);
    *b = s->buf[s->pos - dist];
    return MOTA_OK;
}

static int s_copy(void *ctx, uint32_t dist, uint32_t n)
{
    struct sink *s = ctx;
    assert_true(dist >= 1 && dist <= s->pos && n <= s->cap - s->pos);
    if (s->fail_after > 0 && --s->fail_after == 0)
        return MOTA_ERR_FLASH_IO;
    for (uint32_t k = 0; k < n; k++, s->pos++)
        s->buf[s->pos] = s->buf[s->pos - dist];
    return MOTA_OK;
}

/* Feed in chunks of 1..max bytes (max 0: all at once); MOTA_OK and the image, or the first error. */
static int decode_chunked(const uint8_t *in, size_t len, uint8_t *out, uint32_t size, uint32_t block, size_t max,
                          uint32_t seed)
{
    struct sink s = {out, 0, size, 0};
    struct mota_decomp_sink k = {s_write, s_copy, &s, s_peek};
    static struct mota_decompress z;
    mota_decompress_start(&z, alg, size, block, 0);
    size_t p = 0;
    while (p < len) {
        seed = seed * 1103515245u + 12345u;
        size_t n = max == 0 ? len - p : 1 + (seed >> 8) % max;
        if (n > len - p)
            n = len - p;
        while (n > 0) {
            size_t used = 0;
            uint32_t before = mota_decompress_out(&z);
            int ret = mota_decompress_feed(&z, in + p, n, &k, &used);
            if (ret != MOTA_OK)
                return ret;
            /* LZMA may finish a symbol from bytes it holds, and stop at a block's end, taking none */
            assert_true(used <= n && (used > 0 || mota_decompress_out(&z) > before));
            assert_true(mota_decompress_out(&z) == s.pos);
            p += used;
            n -= used;
        }
    }
    return mota_decompress_finish(&z);
}

#endif
