/* mota pack --compress: liblz4's frame encoder, in mota's form (docs/container-format.md). */
#include "compress.h"

#include "mota/err.h"
#include "mota/lz4.h"

#include <lz4frame.h>
#include <stdlib.h>
#include <string.h>

/* One block per `block` plain bytes: compressUpdate buffers them, flush emits them as a block that
 * may reference the 64 KiB before it (linked). autoFlush would compress straight from the caller's
 * buffer and keep less history: 1.52x instead of 1.63x on yolov8n. */
static size_t encode(LZ4F_cctx *cx, const uint8_t *in, size_t n, uint32_t block, uint8_t *out, size_t cap)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockLinked;
    prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
    prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
    prefs.compressionLevel = LZ4F_compressionLevel_max();
    size_t pos = LZ4F_compressBegin(cx, out, cap, &prefs), r;
    if (LZ4F_isError(pos))
        return 0;
    for (size_t o = 0; o < n; o += block) {
        size_t k = n - o < block ? n - o : block;
        r = LZ4F_compressUpdate(cx, out + pos, cap - pos, in + o, k, NULL);
        if (LZ4F_isError(r))
            return 0;
        pos += r;
        r = LZ4F_flush(cx, out + pos, cap - pos, NULL);
        if (LZ4F_isError(r))
            return 0;
        pos += r;
    }
    r = LZ4F_compressEnd(cx, out + pos, cap - pos, NULL);
    return LZ4F_isError(r) ? 0 : pos + r;
}

int tool_compress(const uint8_t *in, size_t n, uint32_t block, uint8_t **out, size_t *out_len)
{
    LZ4F_preferences_t prefs;
    LZ4F_cctx *cx = NULL;
    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    size_t cap = LZ4F_HEADER_SIZE_MAX + (n / block + 1) * LZ4F_compressBound(block, &prefs) + 16;
    uint8_t *z = malloc(cap), *back = malloc(n > 0 ? n : 1);
    int ret = MOTA_ERR_IO;
    *out = NULL;
    if (z == NULL || back == NULL || n > 0xFFFFFFFFu)
        goto done;
    ret = MOTA_ERR_INTERNAL;
    if (LZ4F_isError(LZ4F_createCompressionContext(&cx, LZ4F_VERSION)))
        goto done;
    size_t len = encode(cx, in, n, block, z, cap);
    /* what a device will decode: never sign a frame the device's decoder would refuse or read otherwise */
    if (len == 0 || mota_lz4_decode(z, len, back, (uint32_t)n, block) != MOTA_OK || memcmp(back, in, n) != 0)
        goto done;
    *out = z;
    *out_len = len;
    z = NULL;
    ret = MOTA_OK;
done:
    LZ4F_freeCompressionContext(cx);
    free(z);
    free(back);
    return ret;
}
