/* SPDX-License-Identifier: Apache-2.0 */
/* mota pack --compress: liblz4's frame encoder and zlib's deflate, in mota's forms
 * (docs/container-format.md, "Compressed payloads"). */
#include "compress.h"

#include "mota/decompress.h"
#include "mota/err.h"

#include <lz4frame.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* One block per `block` image bytes: compressUpdate buffers them, flush emits them as a block that
 * may reference the 64 KiB before it (linked). autoFlush would compress straight from the caller's
 * buffer and keep less history: 1.52x instead of 1.63x on yolov8n. */
static size_t lz4(const uint8_t *in, size_t n, uint32_t block, uint8_t *out, size_t cap)
{
    LZ4F_preferences_t prefs;
    LZ4F_cctx *cx = NULL;
    size_t pos = 0, r;
    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockLinked;
    prefs.compressionLevel = LZ4F_compressionLevel_max();
    if (LZ4F_isError(LZ4F_createCompressionContext(&cx, LZ4F_VERSION)))
        return 0;
    r = LZ4F_compressBegin(cx, out, cap, &prefs);
    for (size_t o = 0; !LZ4F_isError(r) && o < n; o += block) {
        pos += r;
        r = LZ4F_compressUpdate(cx, out + pos, cap - pos, in + o, n - o < block ? n - o : block, NULL);
        if (!LZ4F_isError(r)) {
            pos += r;
            r = LZ4F_flush(cx, out + pos, cap - pos, NULL);
        }
    }
    if (!LZ4F_isError(r)) {
        pos += r;
        r = LZ4F_compressEnd(cx, out + pos, cap - pos, NULL);
    }
    LZ4F_freeCompressionContext(cx);
    return LZ4F_isError(r) ? 0 : pos + r;
}

/* A sync flush (an empty stored block) after every `block` image bytes: the dictionary is kept (the
 * device reads matches back from the image it wrote), and each flush is a resume point. */
static size_t deflate_stream(const uint8_t *in, size_t n, uint32_t block, uint8_t *out, size_t cap)
{
    z_stream s;
    size_t o = 0;
    int ret = Z_OK;
    memset(&s, 0, sizeof(s));
    if (deflateInit2(&s, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    s.next_out = out;
    s.avail_out = cap > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uInt)cap;
    do { /* the last piece finishes the stream instead of flushing */
        size_t k = n - o < block ? n - o : block;
        s.next_in = (Bytef *)(uintptr_t)(in + o);
        s.avail_in = (uInt)k;
        o += k;
        ret = deflate(&s, o == n ? Z_FINISH : Z_SYNC_FLUSH);
    } while (o < n && ret == Z_OK && s.avail_in == 0);
    size_t len = ret == Z_STREAM_END ? (size_t)(s.next_out - out) : 0;
    deflateEnd(&s);
    return len;
}

int tool_compress(uint32_t alg, const uint8_t *in, size_t n, uint32_t block, uint8_t **out, size_t *out_len)
{
    static struct mota_decompress d;
    /* room for either encoder's worst case (deflate: zlib's deflateBound, about 1/1000 more than the input,
     * and a flush per block): an output that does not fit is no smaller than the input anyway */
    size_t cap = n + n / 64 + (n / block + 2) * 16 + 1024;
    uint8_t *z = malloc(cap), *back = malloc(n > 0 ? n : 1);
    int ret = MOTA_ERR_IO;
    *out = NULL;
    if (z == NULL || back == NULL || n > 0xFFFFFFFFu)
        goto done;
    ret = MOTA_ERR_INTERNAL;
    size_t len = alg == MOTA_DECOMP_DEFLATE ? deflate_stream(in, n, block, z, cap) : lz4(in, n, block, z, cap);
    /* what a device will decode: never sign a payload the device's decoder would refuse or read otherwise */
    if (len == 0 || mota_decompress_buffer(&d, alg, z, len, back, (uint32_t)n, block) != MOTA_OK ||
        memcmp(back, in, n) != 0)
        goto done;
    *out = z;
    *out_len = len;
    z = NULL;
    ret = MOTA_OK;
done:
    free(z);
    free(back);
    return ret;
}
