/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Streaming decoder of mota's LZMA payloads (docs/container-format.md,
 * "Compressed payloads"): the image in blocks of `block` plain bytes, each
 * one LZMA stream (the LZMA specification's range coder, literal and match
 * models) whose probabilities, state and distances start afresh, or stored.
 * A block is `p n0 n1 n2` and n (little-endian) bytes of range-coded data,
 * p = (pb * 5 + lp) * 9 + lc with lc + lp <= 1; or 0xFF and its plain bytes.
 *
 * No dictionary in RAM: every byte the image has so far is the dictionary,
 * read back through the sink (a match's copy, a matched literal's byte), so
 * a distance may reach the image's first byte. Fed any number of bytes at a
 * time; a symbol is decoded when its bytes are all there (MOTA_LZMA_AHEAD,
 * or the rest of the block), from a small carry buffer when they come in
 * pieces. Resuming: between blocks the state is only the plain offset.
 */
#ifndef MOTA_LZMA_H
#define MOTA_LZMA_H

#include "mota/decompress.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void mota_lzma_init(struct mota_lzma *z, uint32_t size, uint32_t block);

/* Continue at a block boundary: `out` plain bytes (a multiple of block, or size) are written. */
void mota_lzma_resume(struct mota_lzma *z, uint32_t size, uint32_t block, uint32_t out);

/* Decode from in[0..len): *used bytes are consumed. Stops right after a block ends. MOTA_OK, a sink's
 * error, or a MOTA_ERR_DECOMP_* code (the state is then unusable). */
int mota_lzma_feed(struct mota_lzma *z, const uint8_t *in, size_t len, const struct mota_decomp_sink *sink,
                   size_t *used);

bool mota_lzma_at_boundary(const struct mota_lzma *z);

/* MOTA_OK when every block was decoded, else MOTA_ERR_DECOMP_TRUNCATED. */
int mota_lzma_finish(const struct mota_lzma *z);

/* Every block stored, with its header byte; 0 when that does not fit 32 bits. */
uint32_t mota_lzma_bound(uint32_t size, uint32_t block);

#endif /* MOTA_LZMA_H */
