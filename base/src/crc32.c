/* SPDX-License-Identifier: Apache-2.0 */
/* CRC-32 (IEEE 802.3, as zlib): the link's frames and the journal's records. zlib's on the host, a
 * small table on the device. */
#include "mota/crc32.h"

#ifdef MOTA_CRC32_SMALL
/* Device builds: a 64-byte nibble table in flash. Frames are small, so speed matters less than size. */
uint32_t mota_crc32(uint32_t crc, const void *p, size_t n)
{
    static const uint32_t t[16] = {
        0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
        0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
    };
    const uint8_t *b = p;
    crc = ~crc;
    while (n--) {
        crc ^= *b++;
        crc = t[crc & 0xf] ^ (crc >> 4);
        crc = t[crc & 0xf] ^ (crc >> 4);
    }
    return ~crc;
}
#else
/* Host builds: zlib's CRC-32 (Debian's zlib computes several words at a time: 5 GB/s here, 2.7x a
 * slicing-by-8 table), so checking a large params file costs little next to hashing it. */
#include <zlib.h>

uint32_t mota_crc32(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) { /* zlib takes an unsigned length */
        unsigned k = n > 0x40000000u ? 0x40000000u : (unsigned)n;
        crc = (uint32_t)crc32((uLong)crc, b, k);
        b += k;
        n -= k;
    }
    return crc;
}
#endif
