/* The host's encoder of compressed payloads (mota pack --compress): liblz4. */
#ifndef MOTA_TOOL_COMPRESS_H
#define MOTA_TOOL_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

/* Plain bytes per block mota pack writes: one 4 KiB flash sector, a resume point each. */
#define TOOL_COMPRESS_BLOCK 4096u

/*
 * in[0..n) as one LZ4 frame of mota's form (mota/lz4.h: linked blocks of
 * `block` plain bytes, no checksums) at liblz4's highest level, into a
 * malloc'd *out; checked by decoding it back with the device's decoder
 * before it is returned. MOTA_OK, MOTA_ERR_IO (out of memory), or
 * MOTA_ERR_INTERNAL (liblz4 failed, or its frame does not decode to in).
 */
int tool_compress(const uint8_t *in, size_t n, uint32_t block, uint8_t **out, size_t *out_len);

#endif
