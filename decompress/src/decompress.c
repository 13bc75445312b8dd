/* SPDX-License-Identifier: Apache-2.0 */
/* The decoders of compressed payloads behind one interface (mota/decompress.h). */
#include "mota/decompress.h"

#include "inflate.h"
#include "lz4.h"
#include "lzma.h"

#include "mota/err.h"

#include <string.h>

bool mota_decompress_known(uint32_t alg)
{
    return alg == MOTA_DECOMP_LZ4 || alg == MOTA_DECOMP_DEFLATE || alg == MOTA_DECOMP_LZMA;
}

bool mota_decompress_built(uint32_t alg)
{
    return (alg == MOTA_DECOMP_LZ4 && MOTA_FEATURE_LZ4) || (alg == MOTA_DECOMP_DEFLATE && MOTA_FEATURE_DEFLATE) ||
           (alg == MOTA_DECOMP_LZMA && MOTA_FEATURE_LZMA);
}

int mota_decompress_start(struct mota_decompress *d, uint32_t alg, uint32_t size, uint32_t block, uint32_t out)
{
    if (!mota_decompress_known(alg) || block == 0 || out > size || (out % block != 0 && out != size))
        return MOTA_ERR_ARG;
    if (!mota_decompress_built(alg))
        return MOTA_ERR_DECOMP_OFF;
    d->alg = alg;
#if MOTA_FEATURE_LZMA
    if (alg == MOTA_DECOMP_LZMA) {
        mota_lzma_resume(&d->u.lzma, size, block, out);
        return MOTA_OK;
    }
#endif
#if MOTA_FEATURE_DEFLATE
    if (alg == MOTA_DECOMP_DEFLATE) {
        if (out == 0)
            mota_inflate_init(&d->u.inflate, size, block);
        else
            mota_inflate_resume(&d->u.inflate, size, block, out);
        return MOTA_OK;
    }
#endif
#if MOTA_FEATURE_LZ4
    if (out == 0)
        mota_lz4_init(&d->u.lz4, size, block);
    else
        mota_lz4_resume(&d->u.lz4, size, block, out);
#endif
    return MOTA_OK;
}

/* Each call goes to the decoder of d->alg; a build without it never starts one (mota_decompress_start). */
int mota_decompress_feed(struct mota_decompress *d, const uint8_t *in, size_t len, const struct mota_decomp_sink *sink,
                         size_t *used)
{
#if MOTA_FEATURE_LZMA
    if (d->alg == MOTA_DECOMP_LZMA)
        return mota_lzma_feed(&d->u.lzma, in, len, sink, used);
#endif
#if MOTA_FEATURE_DEFLATE
    if (d->alg == MOTA_DECOMP_DEFLATE)
        return mota_inflate_feed(&d->u.inflate, in, len, sink, used);
#endif
#if MOTA_FEATURE_LZ4
    if (d->alg == MOTA_DECOMP_LZ4)
        return mota_lz4_feed(&d->u.lz4, in, len, sink, used);
#endif
    (void)d, (void)in, (void)len, (void)sink, (void)used;
    return MOTA_ERR_DECOMP_OFF;
}

bool mota_decompress_at_boundary(const struct mota_decompress *d)
{
#if MOTA_FEATURE_LZMA
    if (d->alg == MOTA_DECOMP_LZMA)
        return mota_lzma_at_boundary(&d->u.lzma);
#endif
#if MOTA_FEATURE_DEFLATE
    if (d->alg == MOTA_DECOMP_DEFLATE)
        return mota_inflate_at_boundary(&d->u.inflate);
#endif
#if MOTA_FEATURE_LZ4
    if (d->alg == MOTA_DECOMP_LZ4)
        return mota_lz4_at_boundary(&d->u.lz4);
#endif
    (void)d;
    return false;
}

int mota_decompress_finish(const struct mota_decompress *d)
{
#if MOTA_FEATURE_LZMA
    if (d->alg == MOTA_DECOMP_LZMA)
        return mota_lzma_finish(&d->u.lzma);
#endif
#if MOTA_FEATURE_DEFLATE
    if (d->alg == MOTA_DECOMP_DEFLATE)
        return mota_inflate_finish(&d->u.inflate);
#endif
#if MOTA_FEATURE_LZ4
    if (d->alg == MOTA_DECOMP_LZ4)
        return mota_lz4_finish(&d->u.lz4);
#endif
    (void)d;
    return MOTA_ERR_DECOMP_OFF;
}

uint32_t mota_decompress_out(const struct mota_decompress *d)
{
#if MOTA_FEATURE_LZMA
    if (d->alg == MOTA_DECOMP_LZMA)
        return d->u.lzma.out;
#endif
#if MOTA_FEATURE_DEFLATE
    if (d->alg == MOTA_DECOMP_DEFLATE)
        return d->u.inflate.out;
#endif
#if MOTA_FEATURE_LZ4
    if (d->alg == MOTA_DECOMP_LZ4)
        return d->u.lz4.out;
#endif
    (void)d;
    return 0;
}

uint32_t mota_decompress_bound(uint32_t alg, uint32_t size, uint32_t block)
{
    /* of the format, whatever this build decodes: the manifest's checks are the same everywhere */
    return alg == MOTA_DECOMP_DEFLATE ? mota_inflate_bound(size, block)
           : alg == MOTA_DECOMP_LZMA  ? mota_lzma_bound(size, block)
           : alg == MOTA_DECOMP_LZ4   ? mota_lz4_bound(size, block)
                                      : 0;
}

/* ---- a whole payload in memory ---- */

struct mem_sink {
    uint8_t *out;
    uint32_t pos, cap;
};

static int mem_write(void *ctx, const uint8_t *p, size_t n)
{
    struct mem_sink *m = ctx;
    if (n > m->cap - m->pos)
        return MOTA_ERR_DECOMP_OVERRUN; /* the decoders never ask: a second guard */
    memcpy(m->out + m->pos, p, n);
    m->pos += (uint32_t)n;
    return MOTA_OK;
}

static int mem_copy(void *ctx, uint32_t dist, uint32_t n)
{
    struct mem_sink *m = ctx;
    if (dist == 0 || dist > m->pos || n > m->cap - m->pos)
        return MOTA_ERR_DECOMP_OFFSET;
    for (uint32_t k = 0; k < n; k++, m->pos++) /* byte by byte: the source may overlap */
        m->out[m->pos] = m->out[m->pos - dist];
    return MOTA_OK;
}

static int mem_peek(void *ctx, uint32_t dist, uint8_t *b)
{
    struct mem_sink *m = ctx;
    if (dist == 0 || dist > m->pos)
        return MOTA_ERR_DECOMP_OFFSET;
    *b = m->out[m->pos - dist];
    return MOTA_OK;
}

int mota_decompress_buffer(struct mota_decompress *d, uint32_t alg, const uint8_t *in, size_t len, uint8_t *out,
                           uint32_t size, uint32_t block)
{
    struct mem_sink m = {out, 0, size};
    const struct mota_decomp_sink sink = {mem_write, mem_copy, &m, mem_peek};
    if ((in == NULL && len > 0) || (out == NULL && size > 0) || block == 0 || !mota_decompress_known(alg))
        return MOTA_ERR_ARG;
    int ret = mota_decompress_start(d, alg, size, block, 0);
    while (ret == MOTA_OK && len > 0) {
        size_t used = 0;
        ret = mota_decompress_feed(d, in, len, &sink, &used);
        in += used;
        len -= used;
    }
    return ret != MOTA_OK ? ret : mota_decompress_finish(d);
}
