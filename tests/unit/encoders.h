/* SPDX-License-Identifier: Apache-2.0 */
/* Tests' encoders of compressed payloads, as mota pack writes them (host_tool/src/offline/compress.c): liblz4's
 * frame API in mota's form (linked blocks of `block` image bytes, no checksums, level 12), zlib's raw
 * deflate with a sync flush every `block` image bytes (level 9), and pack's own LZMA encoder. */
#ifndef MOTA_TEST_ENCODERS_H
#define MOTA_TEST_ENCODERS_H

#include <lz4frame.h>
#include <zlib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A malloc'd frame of in[0..n); NULL if liblz4 fails. */
static inline uint8_t *test_lz4_compress(const uint8_t *in, size_t n, uint32_t block, size_t *out_len)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockLinked;
    prefs.compressionLevel = 12;
    size_t cap = LZ4F_HEADER_SIZE_MAX + (n / block + 1) * LZ4F_compressBound(block, &prefs) + 16, pos, r;
    uint8_t *out = malloc(cap);
    LZ4F_cctx *cx = NULL;
    if (out == NULL || LZ4F_isError(LZ4F_createCompressionContext(&cx, LZ4F_VERSION)))
        goto fail;
    pos = LZ4F_compressBegin(cx, out, cap, &prefs);
    if (LZ4F_isError(pos))
        goto fail;
    for (size_t o = 0; o < n; o += block) { /* one block per `block` bytes: update, then flush */
        r = LZ4F_compressUpdate(cx, out + pos, cap - pos, in + o, n - o < block ? n - o : block, NULL);
        if (LZ4F_isError(r))
            goto fail;
        pos += r;
        r = LZ4F_flush(cx, out + pos, cap - pos, NULL);
        if (LZ4F_isError(r))
            goto fail;
        pos += r;
    }
    r = LZ4F_compressEnd(cx, out + pos, cap - pos, NULL);
    if (LZ4F_isError(r))
        goto fail;
    LZ4F_freeCompressionContext(cx);
    *out_len = pos + r;
    return out;
fail:
    LZ4F_freeCompressionContext(cx);
    free(out);
    return NULL;
}

/* A malloc'd raw deflate stream of in[0..n), a sync flush after every `block` bytes; NULL if zlib fails. */
static inline uint8_t *test_deflate(const uint8_t *in, size_t n, uint32_t block, size_t *out_len)
{
    z_stream s;
    memset(&s, 0, sizeof(s));
    if (deflateInit2(&s, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&s, (uLong)n) + (n / block + 2) * 8 + 64;
    uint8_t *out = malloc(cap);
    s.next_out = out;
    s.avail_out = (uInt)cap;
    size_t o = 0;
    do { /* the last piece finishes the stream instead of flushing */
        size_t k = n - o < block ? n - o : block;
        s.next_in = (Bytef *)(uintptr_t)(in + o);
        s.avail_in = (uInt)k;
        o += k;
        if (deflate(&s, o == n ? Z_FINISH : Z_SYNC_FLUSH) == Z_STREAM_ERROR || s.avail_in != 0) {
            deflateEnd(&s);
            free(out);
            return NULL;
        }
    } while (o < n);
    *out_len = cap - s.avail_out;
    deflateEnd(&s);
    return out;
}

#if MOTA_TEST_LZMA
#include "compress.h"
#include "delta_diff.h"

#include "mota/err.h"

/* A malloc'd LZMA stream of in[0..n), as mota pack writes it (its encoder, linked in: mota_test_compress). */
static inline uint8_t *test_lzma(const uint8_t *in, size_t n, uint32_t block, size_t *out_len)
{
    uint8_t *z = NULL;
    return tool_compress(MOTA_DECOMP_LZMA, in, n, block, &z, out_len) == MOTA_OK ? z : NULL;
}
#endif

#endif
