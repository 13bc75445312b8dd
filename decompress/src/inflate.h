/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Streaming decoder of deflate-compressed payloads (algorithm 2,
 * docs/container-format.md "Compressed payloads"): a raw deflate stream
 * (RFC 1951) with a sync flush (an empty stored block) after every `block`
 * image bytes, the last block marked final. Decoded bit by bit, so it can be
 * fed any number of bytes and never reads a byte it does not need: after a
 * flush its state is only the image bytes written (mota_inflate_resume).
 * Its Huffman tables are in this struct (1,584 bytes); matches (up to 32
 * KiB back) are copied by the sink from what it wrote.
 */
#ifndef MOTA_INFLATE_H
#define MOTA_INFLATE_H

#include "mota/decompress.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void mota_inflate_init(struct mota_inflate *z, uint32_t size, uint32_t block);

/* Continue at a block boundary (right after a flush): `out` image bytes (a multiple of block) are written. */
void mota_inflate_resume(struct mota_inflate *z, uint32_t size, uint32_t block, uint32_t out);

/* Decode from in[0..len): *used bytes consumed; stops right after a flush (a resume point). MOTA_OK, a
 * sink's error or a MOTA_ERR_DECOMP_* code (the state is then unusable). */
int mota_inflate_feed(struct mota_inflate *z, const uint8_t *in, size_t len, const struct mota_decomp_sink *sink,
                      size_t *used);

/* Right after a flush: the next byte starts a block. */
bool mota_inflate_at_boundary(const struct mota_inflate *z);

/* The input is over: MOTA_OK once the final block ended with every image byte, else MOTA_ERR_DECOMP_TRUNCATED. */
int mota_inflate_finish(const struct mota_inflate *z);

/* The most bytes a stream of an image of `size` bytes may take (a sanity limit with room for an encoder's
 * worst case: 1/64 of the image and 16 bytes per block); 0 when that does not fit 32 bits. */
uint32_t mota_inflate_bound(uint32_t size, uint32_t block);

#endif /* MOTA_INFLATE_H */
