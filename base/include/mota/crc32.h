/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRC-32 (reflected, polynomial 0xEDB88320, as zlib): the link's frames, the
 * journal's and provisioning records, and ST's params file checksum.
 * Base layer: any module may include it.
 */
#ifndef MOTA_CRC32_H
#define MOTA_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* crc = mota_crc32(0, p, n) for a fresh sum; pass the previous result to continue it. */
uint32_t mota_crc32(uint32_t crc, const void *p, size_t n);

#endif /* MOTA_CRC32_H */
