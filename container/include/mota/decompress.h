/*
 * The decoder a compressed payload names (its compression parameter's
 * algorithm), behind one interface: what the agent and the host use.
 */
#ifndef MOTA_DECOMPRESS_H
#define MOTA_DECOMPRESS_H

#include "mota/decomp.h"
#include "mota/inflate.h"
#include "mota/lz4.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mota_decompress {
    uint32_t alg; /* MOTA_DECOMP_LZ4 or MOTA_DECOMP_DEFLATE */
    union {
        struct mota_lz4 lz4;
        struct mota_inflate inflate;
    } u;
};

/* The algorithm is one this build decodes. */
bool mota_decompress_known(uint32_t alg);

/* A new stream, or one resumed at a block boundary after `out` image bytes (0: a new one). MOTA_ERR_ARG for an
 * unknown algorithm, a block of 0, or an `out` past the image or off a block boundary. */
int mota_decompress_start(struct mota_decompress *d, uint32_t alg, uint32_t size, uint32_t block, uint32_t out);

/* As mota_lz4_feed / mota_inflate_feed: stops right after a block boundary. */
int mota_decompress_feed(struct mota_decompress *d, const uint8_t *in, size_t len,
                         const struct mota_decomp_sink *sink, size_t *used);
bool mota_decompress_at_boundary(const struct mota_decompress *d);
int mota_decompress_finish(const struct mota_decompress *d);
uint32_t mota_decompress_out(const struct mota_decompress *d); /* image bytes written */

/* The most bytes a payload of `size` image bytes can take; 0 for an unknown algorithm or an overflow. */
uint32_t mota_decompress_bound(uint32_t alg, uint32_t size, uint32_t block);

/* A whole payload in memory into out[0..size), with d as the decoder's state. */
int mota_decompress_buffer(struct mota_decompress *d, uint32_t alg, const uint8_t *in, size_t len, uint8_t *out,
                           uint32_t size, uint32_t block);

#endif /* MOTA_DECOMPRESS_H */
