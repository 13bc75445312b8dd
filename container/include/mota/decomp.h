/*
 * Compressed payloads (docs/container-format.md, "Compressed payloads"): the
 * decoders of the algorithms a manifest's compression parameter may name,
 * behind one interface. Both decode a stream fed in any chunks into a sink,
 * with no window in RAM (matches are copied by the sink from what it wrote),
 * in fixed blocks of image bytes, and can resume at a block boundary knowing
 * only the image bytes written.
 */
#ifndef MOTA_DECOMP_H
#define MOTA_DECOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* compression-info algorithm numbers */
#define MOTA_DECOMP_LZ4 1u     /* LZ4 frame, mota's form (mota/lz4.h) */
#define MOTA_DECOMP_DEFLATE 2u /* raw deflate (RFC 1951), a sync flush every block (mota/inflate.h) */

#define MOTA_DECOMP_MIN_BLOCK 256u /* image bytes per block: a power of two in this range */
#define MOTA_DECOMP_MAX_BLOCK 65536u

struct mota_decomp_sink {
    /* append n image bytes */
    int (*write)(void *ctx, const uint8_t *p, size_t n);
    /* append n bytes, each a copy of the byte dist before it (1 <= dist <= bytes written; the
     * source may overlap what is being written: byte by byte) */
    int (*copy)(void *ctx, uint32_t dist, uint32_t n);
    void *ctx;
};

#endif /* MOTA_DECOMP_H */
