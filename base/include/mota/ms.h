/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Milliseconds of a microsecond count (a port's now_us), by 32-bit divisions only: a 64-bit one would pull
 * libgcc's __udivmoddi4 (0.7 KB) into the device. With us = hi * 2^32 + lo and 2^32 = 1000 * 4294967 + 296,
 * us / 1000 = (hi / 1000) * 2^32 + (hi % 1000) * 4294967 + lo / 1000 + ((hi % 1000) * 296 + lo % 1000) / 1000.
 */
#ifndef MOTA_MS_H
#define MOTA_MS_H

#include <stdint.h>

static inline uint64_t mota_ms_of_us(uint64_t us)
{
    uint32_t hi = (uint32_t)(us >> 32), lo = (uint32_t)us, rh = hi % 1000u;
    return ((uint64_t)(hi / 1000u) << 32) + (uint64_t)rh * 4294967u + lo / 1000u + (rh * 296u + lo % 1000u) / 1000u;
}

#endif /* MOTA_MS_H */
