/* SPDX-License-Identifier: Apache-2.0 */
/* mota pack --compress: liblz4's frame encoder, zlib's deflate and liblzma's LZMA, in mota's forms
 * (docs/container-format.md, "Compressed payloads"). */
#include "compress.h"

#include "mota/decompress.h"
#include "mota/err.h"

#include <lz4frame.h>
#include <lzma.h>
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

/* LZMA (liblzma's raw LZMA1 encoder, no end marker): each block a stream of its own whose search reaches
 * TOOL_LZMA_DICT bytes back into the image (a preset dictionary: the device reads it back from its slot),
 * or stored when that is no smaller. Dictionary and block sizes are multiples of 16, so that the block's
 * positions (lp, pb) are the image's. */
static size_t xz_block(const uint8_t *img, size_t at, size_t len, unsigned props, uint8_t *out, size_t cap)
{
    lzma_options_lzma o;
    size_t pd = at < TOOL_LZMA_DICT ? at : TOOL_LZMA_DICT, pos = 4;
    if (cap < len + 1 || lzma_lzma_preset(&o, 9u | LZMA_PRESET_EXTREME))
        return 0;
    o.dict_size = TOOL_LZMA_DICT;
    o.lc = props % 9u;
    o.lp = props / 9u % 5u;
    o.pb = props / 45u;
    o.preset_dict = pd > 0 ? img + at - pd : NULL;
    o.preset_dict_size = (uint32_t)pd;
    o.ext_flags = 0;
    lzma_set_ext_size(o, len);
    const lzma_filter f[2] = {{LZMA_FILTER_LZMA1EXT, &o}, {LZMA_VLI_UNKNOWN, NULL}};
    lzma_ret r = lzma_raw_buffer_encode(f, NULL, img + at, len, out, &pos, len + 1 < cap ? len + 1 : cap);
    if (r == LZMA_OK && pos - 4 < len && pos - 4 <= 0xFFFFFFu) {
        out[0] = (uint8_t)props;
        out[1] = (uint8_t)(pos - 4);
        out[2] = (uint8_t)((pos - 4) >> 8);
        out[3] = (uint8_t)((pos - 4) >> 16);
        return pos;
    }
    out[0] = 0xFF; /* stored: LZMA would not make it smaller */
    memcpy(out + 1, img + at, len);
    return len + 1;
}

static size_t xz_blocks(const uint8_t *in, size_t n, uint32_t block, unsigned props, uint8_t *out, size_t cap)
{
    size_t pos = 0;
    for (size_t at = 0; at < n; at += block) {
        size_t k = xz_block(in, at, n - at < block ? n - at : block, props, out + pos, cap - pos);
        if (k == 0)
            return 0;
        pos += k;
    }
    return pos;
}

/* The parameters (lc + lp <= 1: the device's model room) that code up to three blocks of the image
 * (first, middle, last) smallest; then the whole image with them. */
static size_t xz_stream(const uint8_t *in, size_t n, uint32_t block, uint8_t *out, size_t cap)
{
    static const uint8_t lclp[3][2] = {{0, 0}, {1, 0}, {0, 1}};
    size_t nb = (n + block - 1) / block, pick[3] = {0, nb / 2, nb - 1}, best = SIZE_MAX;
    unsigned props = 0;
    for (unsigned i = 0; i < 3; i++)
        for (unsigned pb = 0; pb <= 2; pb++) {
            unsigned p = (pb * 5u + lclp[i][1]) * 9u + lclp[i][0];
            size_t total = 0;
            for (unsigned b = 0; b < 3 && nb > 0; b++) {
                size_t at = pick[b] * block, k;
                if (b > 0 && pick[b] == pick[b - 1])
                    continue;
                k = xz_block(in, at, n - at < block ? n - at : block, p, out, cap);
                total += k > 0 ? k : cap;
            }
            if (total < best) {
                best = total;
                props = p;
            }
        }
    return xz_blocks(in, n, block, props, out, cap);
}

const char *tool_compress_name(uint32_t alg)
{
    return alg == MOTA_DECOMP_LZ4 ? "lz4" : alg == MOTA_DECOMP_LZMA ? "lzma" : "deflate";
}

uint32_t tool_compress_alg(const char *name)
{
    return strcmp(name, "lz4") == 0       ? MOTA_DECOMP_LZ4
           : strcmp(name, "lzma") == 0    ? MOTA_DECOMP_LZMA
           : strcmp(name, "deflate") == 0 ? MOTA_DECOMP_DEFLATE
                                          : 0;
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
    size_t len = alg == MOTA_DECOMP_DEFLATE ? deflate_stream(in, n, block, z, cap)
                 : alg == MOTA_DECOMP_LZMA  ? xz_stream(in, n, block, z, cap)
                                            : lz4(in, n, block, z, cap);
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
