/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the compressed-payload decoders (mota/decompress.h: LZ4 frames, deflate streams, LZMA),
 * fed in chunks the input chooses and resumed at block boundaries when it says so. Its sink aborts on any
 * request outside the image: a write past the declared size or a copy from before the first byte (and
 * ASan watches the buffer; a matched literal's peek too). Input: algorithm and block exponent (bit 7: deflate,
 * else bit 6: LZMA, else LZ4; 8 + the low bits % 9, LZMA's % 13), image
 * size (3 bytes, little-endian, modulo 256 KiB + 1), chunking seed, then the stream. */
#include "mota/decompress.h"
#include "mota/err.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sink {
    uint8_t *buf;
    uint32_t pos, cap, block;
};

/* n more bytes stay in the image and in the block being written (a resume point is never crossed) */
static void in_block(const struct sink *s, size_t n)
{
    if (n > s->cap - s->pos || s->pos + n > (s->pos / s->block + 1u) * (uint64_t)s->block)
        abort();
}

static int s_write(void *ctx, const uint8_t *p, size_t n)
{
    struct sink *s = ctx;
    if (n == 0)
        abort();
    in_block(s, n);
    memcpy(s->buf + s->pos, p, n);
    s->pos += (uint32_t)n;
    return MOTA_OK;
}

static int s_peek(void *ctx, uint32_t dist, uint8_t *b)
{
    struct sink *s = ctx;
    if (dist == 0 || dist > s->pos)
        abort();
    *b = s->buf[s->pos - dist];
    return MOTA_OK;
}

static int s_copy(void *ctx, uint32_t dist, uint32_t n)
{
    struct sink *s = ctx;
    if (dist == 0 || dist > s->pos)
        abort();
    in_block(s, n);
    for (uint32_t k = 0; k < n; k++, s->pos++)
        s->buf[s->pos] = s->buf[s->pos - dist];
    return MOTA_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    uint32_t alg = (data[0] & 0x80u) ? MOTA_DECOMP_DEFLATE : (data[0] & 0x40u) ? MOTA_DECOMP_LZMA : MOTA_DECOMP_LZ4;
    uint32_t block = 1u << (8u + (data[0] & 0x3Fu) % (alg == MOTA_DECOMP_LZMA ? 13u : 9u));
    /* up to 256 KiB of image: a larger one only costs the harness's buffer (the decoders check every write
     * against the size they are given, whatever it is) */
    uint32_t plain = ((uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16) % ((1u << 18) + 1u);
    uint32_t seed = data[4];
    data += 5;
    size -= 5;
    struct sink s = {malloc(plain ? plain : 1), 0, plain, block};
    const struct mota_decomp_sink k = {s_write, s_copy, &s, s_peek};
    static struct mota_decompress z;
    mota_decompress_start(&z, alg, plain, block, 0);
    int ret = MOTA_OK;
    for (size_t p = 0; p < size && ret == MOTA_OK;) {
        seed = seed * 1103515245u + 12345u;
        size_t n = 1 + (seed >> 16) % 97u, used = 0;
        n = n < size - p ? n : size - p;
        uint32_t before = mota_decompress_out(&z);
        ret = mota_decompress_feed(&z, data + p, n, &k, &used);
        uint32_t out = mota_decompress_out(&z);
        if (used > n || out != s.pos || out > plain)
            abort();
        if (ret == MOTA_OK && used == 0 && out == before && !mota_decompress_at_boundary(&z))
            abort(); /* no progress: a caller feeding it again would loop for ever */
        p += used;
        if (ret == MOTA_OK && mota_decompress_at_boundary(&z) && out > 0 && (seed & 0x100u) != 0)
            mota_decompress_start(&z, alg, plain, block, out); /* a power cut: only the image offset survives */
    }
    if (ret == MOTA_OK && mota_decompress_finish(&z) == MOTA_OK && s.pos != plain)
        abort(); /* a finished frame produced exactly the declared image */
    free(s.buf);
    return 0;
}
