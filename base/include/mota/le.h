/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Little-endian field access: every multi-byte field mota defines (NBIN
 * words, link payloads, the journal, provisioning) is little-endian.
 * Base layer: any module may include it; it includes nothing but libc.
 */
#ifndef MOTA_LE_H
#define MOTA_LE_H

#include <stdint.h>
#include <string.h>

static inline uint16_t mota_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t mota_get32(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t v; /* one load where the CPU is little-endian: the loader's relocation loop runs on it */
    memcpy(&v, p, sizeof(v));
    return v;
#else
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
#endif
}

static inline void mota_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void mota_put32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, sizeof(v));
#else
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
#endif
}

#endif /* MOTA_LE_H */
