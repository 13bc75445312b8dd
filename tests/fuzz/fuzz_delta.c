/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the patcher of delta payloads (mota/delta.h). A manifest's regions, checked
 * (mota_delta_check): when accepted, every region must lie inside both images (this harness checks it
 * again with its own arithmetic), and the patcher, applied in chunks the input chooses from a mapped or a
 * read source, must give what a plain loop over the regions gives, and turn it back into the stream.
 * Input: image size, source size (2 bytes each, little-endian, modulo 4097), regions' length (2 bytes,
 * modulo 800), a seed, the regions, then the source's and the stream's bytes (zeros past the input).
 */
#include "mota/delta.h"
#include "mota/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t src[4096], stream[4096], image[4096], want[4096];
static uint32_t src_n;

static int src_read(void *ctx, uint32_t off, uint8_t *buf, size_t n)
{
    (void)ctx;
    if (off > src_n || n > src_n - off)
        abort(); /* the patcher reads outside the source */
    memcpy(buf, src + off, n);
    return MOTA_OK;
}

static uint32_t le(const uint8_t *p, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The prediction of each image byte, region by region, checked against both images. */
static void reference(const uint8_t *r, size_t len, uint32_t n)
{
    memcpy(want, stream, n);
    for (size_t i = 0; i < len; i += 12) {
        uint64_t start = le(r + i, 4), rl = le(r + i + 4, 4), s = le(r + i + 8, 4);
        if (start + rl > n || s + rl > src_n)
            abort(); /* accepted, yet outside an image */
        for (uint64_t k = 0; k < rl; k++)
            want[start + k] = (uint8_t)(want[start + k] + src[s + k]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct mota_delta d;
    if (size < 7)
        return 0;
    uint32_t n = le(data, 2) % 4097u, len = le(data + 4, 2) % 800u, seed = data[6];
    src_n = le(data + 2, 2) % 4097u;
    data += 7, size -= 7;
    const uint8_t *regions = data;
    len = len < size ? len : (uint32_t)size;
    data += len, size -= len;
    memset(src, 0, sizeof(src)), memset(stream, 0, sizeof(stream));
    memcpy(src, data, size < src_n ? size : src_n);
    if (size > src_n)
        memcpy(stream, data + src_n, size - src_n < n ? size - src_n : n);
    int checked = mota_delta_check(regions, len, n, src_n);
    if ((checked == MOTA_OK) != (mota_delta_load(&d, regions, len, n, src_n) == MOTA_OK))
        abort(); /* load accepts what check accepts, and only that */
    if (checked != MOTA_OK)
        return 0;
    reference(regions, len, n);
    const struct mota_delta_source s = {(seed & 1u) ? src : NULL, src_read, NULL};
    memcpy(image, stream, n);
    for (uint32_t at = 0; at < n;) { /* the sink's pieces, forwards */
        seed = seed * 1103515245u + 12345u;
        uint32_t k = 1u + (seed >> 16) % 300u;
        k = k < n - at ? k : n - at;
        if (mota_delta_apply(&d, at, image + at, k, true, &s) != MOTA_OK)
            abort();
        at += k;
    }
    if (memcmp(image, want, n) != 0)
        abort();
    for (int t = 0; t < 8 && n > 0; t++) { /* read back anywhere: the stream's bytes again */
        seed = seed * 1103515245u + 12345u;
        uint32_t at = (seed >> 8) % n, k = 1u + (seed >> 20) % (n - at);
        uint8_t back[4096];
        memcpy(back, image + at, k);
        if (mota_delta_apply(&d, at, back, k, false, &s) != MOTA_OK || memcmp(back, stream + at, k) != 0)
            abort();
    }
    return 0;
}
