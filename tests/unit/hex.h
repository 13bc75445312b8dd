/* SPDX-License-Identifier: Apache-2.0 */
/* Test vectors written as hex text, into bytes: the unit tests' one reader of them. */
#ifndef MOTA_TEST_HEX_H
#define MOTA_TEST_HEX_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The bytes of the hex digits h (an even number of them) into out; returns how many. */
static inline size_t unhex(const char *h, uint8_t *out)
{
    size_t n = strlen(h) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
    return n;
}

#endif /* MOTA_TEST_HEX_H */
