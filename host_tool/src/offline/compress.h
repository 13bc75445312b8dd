/* SPDX-License-Identifier: Apache-2.0 */
/* The host's encoders of compressed payloads (mota pack --compress): liblz4, zlib and liblzma. */
#ifndef MOTA_TOOL_COMPRESS_H
#define MOTA_TOOL_COMPRESS_H

#include "mota/decompress.h"

#include <stddef.h>
#include <stdint.h>

/* Image bytes per block mota pack writes: one 4 KiB flash sector, a resume point each. */
#define TOOL_COMPRESS_BLOCK 4096u

/* LZMA's: each block starts its models afresh (about 2.5 KiB of output on yolov8n), so larger: a resume
 * point each 256 KiB. Its search reaches 256 KiB back (further found no more on yolov8n). */
#define TOOL_COMPRESS_BLOCK_LZMA 262144u
#define TOOL_LZMA_DICT 262144u

/*
 * in[0..n) compressed with alg (MOTA_DECOMP_LZ4: one LZ4 frame of mota's
 * form, liblz4 at its highest level; MOTA_DECOMP_DEFLATE: raw deflate, zlib
 * level 9, a sync flush every block; MOTA_DECOMP_LZMA: liblzma, each block
 * a raw LZMA stream of its own, parameters chosen on a sample) into a malloc'd *out, checked by
 * decoding it back with the device's decoder before it is returned.
 * MOTA_OK, MOTA_ERR_IO (out of memory), or MOTA_ERR_INTERNAL (the library
 * failed, or its output does not decode to in).
 */
/* "deflate", "lzma" or "lz4" (pack --compress, its output) and back (0 for another name). */
const char *tool_compress_name(uint32_t alg);
uint32_t tool_compress_alg(const char *name);

/* The block mota pack writes with alg. */
static inline uint32_t tool_compress_block(uint32_t alg)
{
    return alg == MOTA_DECOMP_LZMA ? TOOL_COMPRESS_BLOCK_LZMA : TOOL_COMPRESS_BLOCK;
}

int tool_compress(uint32_t alg, const uint8_t *in, size_t n, uint32_t block, uint8_t **out, size_t *out_len);

#endif
