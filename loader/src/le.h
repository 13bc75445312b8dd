/* Little-endian 32-bit access to image bytes (all NBIN words are LE);
 * a single load or store on little-endian targets. Private to loader/. */
#ifndef MOTA_LOADER_LE_H
#define MOTA_LOADER_LE_H

#include <stdint.h>
#include <string.h>

static inline uint32_t rd32(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
#else
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
#endif
}

static inline uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline void wr32(uint8_t *p, uint32_t v)
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

#define TAG(x) ((uint32_t)(x) >> 28)
#define OFF(x) ((uint32_t)(x)&0x0FFFFFFFu)

#endif
