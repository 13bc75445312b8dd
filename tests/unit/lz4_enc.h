/* Tests' encoder of compressed payloads: liblz4's frame API in mota's form (as mota pack writes it,
 * host_tool/src/compress.c): linked blocks of `block` plain bytes, no checksums, level 12. */
#ifndef MOTA_TEST_LZ4_ENC_H
#define MOTA_TEST_LZ4_ENC_H

#include <lz4frame.h>
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

#endif
