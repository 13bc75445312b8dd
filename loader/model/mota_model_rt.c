/* SPDX-License-Identifier: Apache-2.0 */
/* Support code linked into every CPU model: a reserved-entry stub and the
 * libc functions GCC may call even with -ffreestanding. Position independent
 * like the model itself. */
#include "mota_model.h"

#if !defined(MOTA_MODEL_LEGACY)
uint32_t mota_model_reserved_(void)
{
    return 0;
}
#endif

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
void *memmove(void *dst, const void *src, size_t n);

void *memcpy(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (d < s) {
        while (n--)
            *d++ = *s++;
    } else {
        while (n--)
            d[n] = s[n];
    }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    uint8_t *d = dst;
    while (n--)
        *d++ = (uint8_t)c;
    return dst;
}
