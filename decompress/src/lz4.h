/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Streaming decoder of mota's compressed payloads (docs/container-format.md,
 * "Compressed payloads"): one LZ4 frame (lz4 Frame format 1.6) with linked
 * blocks, no checksums and no content size, whose every block holds exactly
 * `block` plain bytes (the last one: the rest of the image).
 *
 * No window in RAM: plain bytes go to a sink, and a match asks the sink to
 * copy bytes it has already written (the device reads them back from the
 * flash it programmed). Fed any number of bytes at a time; the state is this
 * struct. Every length and offset is checked before the sink sees it: the
 * sink is never asked to write past the current block or the declared image
 * size, nor to copy from before the image's first byte.
 *
 * Resuming: between two blocks the state is only the plain offset, so a
 * decoder stopped there (mota_lz4_at_boundary) restarts with
 * mota_lz4_resume() on the bytes that follow.
 */
#ifndef MOTA_LZ4_H
#define MOTA_LZ4_H

#include "mota/decompress.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A new frame of an image of `size` plain bytes in blocks of `block`. */
void mota_lz4_init(struct mota_lz4 *z, uint32_t size, uint32_t block);

/* Continue a frame at a block boundary: `out` plain bytes (a multiple of block, or size) are
 * written; the next input byte is the next block's size field. */
void mota_lz4_resume(struct mota_lz4 *z, uint32_t size, uint32_t block, uint32_t out);

/*
 * Decode from in[0..len): *used bytes are consumed. Stops early right after
 * a block ends (so the caller may note a resume point), and at the end mark.
 * MOTA_OK, a sink's error, or a MOTA_ERR_DECOMP_* code (the state is then
 * unusable).
 */
int mota_lz4_feed(struct mota_lz4 *z, const uint8_t *in, size_t len, const struct mota_decomp_sink *sink, size_t *used);

/* Between blocks (after the header, before a block-size field). */
bool mota_lz4_at_boundary(const struct mota_lz4 *z);

/* The input is over: MOTA_OK when the end mark was read (every plain byte produced), else
 * MOTA_ERR_DECOMP_TRUNCATED. */
int mota_lz4_finish(const struct mota_lz4 *z);

/* The most bytes a frame of an image of `size` bytes can take (each block stored): the limit a
 * manifest's transported size must respect; 0 when that does not fit 32 bits. */
uint32_t mota_lz4_bound(uint32_t size, uint32_t block);

#endif /* MOTA_LZ4_H */
