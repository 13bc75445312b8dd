/* SPDX-License-Identifier: Apache-2.0 */
/* mota_ms_of_us, the device's 64-bit microseconds to milliseconds by 32-bit divisions: the 64-bit division's
 * quotient at the edges of each 32-bit half and over a spread of random counts. */
#include "mota/ms.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static uint64_t next(uint64_t *x) /* xorshift64: the same counts each run */
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void test_ms_of_us_is_the_64_bit_quotient_by_1000(void **state)
{
    (void)state;
    static const uint64_t edges[] = {0,
                                     1,
                                     999,
                                     1000,
                                     1001,
                                     0xFFFFFFFFu,
                                     0x100000000u,
                                     0x1000003E7u,
                                     999ull << 32,
                                     (1000ull << 32) - 1,
                                     1000ull << 32,
                                     UINT64_MAX,
                                     UINT64_MAX - 999};
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
        assert_true(mota_ms_of_us(edges[i]) == edges[i] / 1000u);
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 1000000; i++) {
        uint64_t us = next(&x) >> (i % 64); /* every magnitude */
        assert_true(mota_ms_of_us(us) == us / 1000u);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ms_of_us_is_the_64_bit_quotient_by_1000)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
