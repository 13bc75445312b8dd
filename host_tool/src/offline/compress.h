/* SPDX-License-Identifier: Apache-2.0 */
/* The host's encoders of compressed payloads (mota pack --compress): liblz4 and zlib. */
#ifndef MOTA_TOOL_COMPRESS_H
#define MOTA_TOOL_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

/* Image bytes per block mota pack writes: one 4 KiB flash sector, a resume point each. */
#define TOOL_COMPRESS_BLOCK 4096u

/*
 * in[0..n) compressed with alg (MOTA_DECOMP_LZ4: one LZ4 frame of mota's
 * form, liblz4 at its highest level; MOTA_DECOMP_DEFLATE: raw deflate, zlib
 * level 9, a sync flush every block) into a malloc'd *out, checked by
 * decoding it back with the device's decoder before it is returned.
 * MOTA_OK, MOTA_ERR_IO (out of memory), or MOTA_ERR_INTERNAL (the library
 * failed, or its output does not decode to in).
 */
int tool_compress(uint32_t alg, const uint8_t *in, size_t n, uint32_t block, uint8_t **out, size_t *out_len);

#endif
