/* SPDX-License-Identifier: Apache-2.0 */
/* The bounded CBOR decoder: profile rules, limits, and every short input. */
#include "mota/cbor.h"
#include "mota/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

static int decode_one(const uint8_t *b, size_t n, struct mota_cbor_item *it)
{
    struct mota_cbor_dec d;
    mota_cbor_dec_init(&d, b, n);
    return mota_cbor_next(&d, it);
}

static void test_shortest_heads_decode_to_their_values(void **state)
{
    (void)state;
    struct mota_cbor_item it;
    const uint8_t a[] = {0x17}, b[] = {0x18, 0x18}, c[] = {0x19, 0x01, 0x00}, d[] = {0x38, 0x63};
    assert_int_equal(decode_one(a, 1, &it), 0);
    assert_int_equal(it.type, MOTA_CBOR_UINT);
    assert_int_equal(it.val, 23);
    assert_int_equal(decode_one(b, 2, &it), 0);
    assert_int_equal(it.val, 24);
    assert_int_equal(decode_one(c, 3, &it), 0);
    assert_int_equal(it.val, 256);
    assert_int_equal(decode_one(d, 2, &it), 0);
    assert_int_equal(it.type, MOTA_CBOR_NINT);
    assert_int_equal(it.val, 99); /* -100 */
}

static void test_non_shortest_heads_are_rejected(void **state)
{
    (void)state;
    struct mota_cbor_item it;
    const uint8_t a[] = {0x18, 0x17}, b[] = {0x19, 0x00, 0xff}, c[] = {0x5a, 0x00, 0x00, 0x00, 0x01, 0xaa},
                  d[] = {0x1b, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(decode_one(a, 2, &it), MOTA_ERR_CBOR_NONMINIMAL);
    assert_int_equal(decode_one(b, 3, &it), MOTA_ERR_CBOR_NONMINIMAL);
    assert_int_equal(decode_one(c, 6, &it), MOTA_ERR_CBOR_NONMINIMAL);
    assert_int_equal(decode_one(d, 9, &it), MOTA_ERR_CBOR_NONMINIMAL);
}

static void test_indefinite_lengths_floats_and_undefined_are_rejected(void **state)
{
    (void)state;
    struct mota_cbor_item it;
    const uint8_t ia[] = {0x9f, 0xff}, ib[] = {0x5f, 0x41, 0x00, 0xff}, im[] = {0xbf, 0xff};
    const uint8_t f[] = {0xf9, 0x3c, 0x00}, u[] = {0xf7}, s[] = {0xf0}, brk[] = {0xff};
    assert_int_equal(decode_one(ia, 2, &it), MOTA_ERR_CBOR_INDEFINITE);
    assert_int_equal(decode_one(ib, 4, &it), MOTA_ERR_CBOR_INDEFINITE);
    assert_int_equal(decode_one(im, 2, &it), MOTA_ERR_CBOR_INDEFINITE);
    assert_int_equal(decode_one(f, 3, &it), MOTA_ERR_CBOR_SIMPLE);
    assert_int_equal(decode_one(u, 1, &it), MOTA_ERR_CBOR_SIMPLE);
    assert_int_equal(decode_one(s, 1, &it), MOTA_ERR_CBOR_SIMPLE);
    assert_true(decode_one(brk, 1, &it) < 0);
}

static void test_lengths_beyond_the_buffer_are_truncation(void **state)
{
    (void)state;
    struct mota_cbor_item it;
    /* a byte string claiming 2^63 bytes, an array claiming 1000 items in 3 bytes */
    const uint8_t big[] = {0x5b, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xaa};
    const uint8_t arr[] = {0x99, 0x03, 0xe8, 0x01, 0x02};
    const uint8_t map[] = {0xa2, 0x01, 0x02};
    assert_int_equal(decode_one(big, sizeof(big), &it), MOTA_ERR_CBOR_TRUNCATED);
    assert_int_equal(decode_one(arr, sizeof(arr), &it), MOTA_ERR_CBOR_TRUNCATED);
    assert_int_equal(decode_one(map, sizeof(map), &it), MOTA_ERR_CBOR_TRUNCATED);
    assert_int_equal(decode_one(big, 0, &it), MOTA_ERR_CBOR_TRUNCATED);
}

static void test_errors_are_sticky_and_failed_reads_yield_zero_values(void **state)
{
    (void)state;
    const uint8_t b[] = {0x18, 0x01, 0x01};
    struct mota_cbor_dec d;
    uint64_t v = 77;
    int64_t i = 77;
    bool t = true;
    size_t n = 77;
    const uint8_t *p = b;
    const char *str = "x";
    struct mota_cbor_item it;
    mota_cbor_dec_init(&d, b, sizeof(b));
    assert_int_equal(mota_cbor_get_uint(&d, &v), MOTA_ERR_CBOR_NONMINIMAL);
    v = 77;
    assert_int_equal(mota_cbor_get_uint(&d, &v), MOTA_ERR_CBOR_NONMINIMAL);
    assert_int_equal(v, 0);
    assert_int_equal(mota_cbor_get_int(&d, &i), MOTA_ERR_CBOR_NONMINIMAL);
    assert_int_equal(i, 0);
    assert_int_equal(mota_cbor_get_bool(&d, &t), MOTA_ERR_CBOR_NONMINIMAL);
    assert_false(t);
    assert_int_equal(mota_cbor_get_map(&d, &n), MOTA_ERR_CBOR_NONMINIMAL);
    assert_int_equal(n, 0);
    assert_int_equal(mota_cbor_get_bstr(&d, &p, &n), MOTA_ERR_CBOR_NONMINIMAL);
    assert_null(p);
    n = 77;
    assert_int_equal(mota_cbor_get_tstr(&d, &str, &n), MOTA_ERR_CBOR_NONMINIMAL);
    assert_null(str);
    assert_int_equal(n, 0);
    assert_int_equal(mota_cbor_peek(&d, &it), MOTA_ERR_CBOR_NONMINIMAL);
    assert_int_equal(it.size, 0);
    assert_int_equal(d.pos, 0); /* nothing consumed after the failure */
    assert_int_equal(mota_cbor_fail(&d, MOTA_ERR_CBOR_TYPE), MOTA_ERR_CBOR_NONMINIMAL); /* the first one stays */
    assert_int_equal(mota_cbor_finish(&d), MOTA_ERR_CBOR_NONMINIMAL);
    /* a wrong type yields zero too, and sticks */
    const uint8_t s5[] = {0x65, 'h', 'e', 'l', 'l', 'o'};
    mota_cbor_dec_init(&d, s5, sizeof(s5));
    v = 77;
    assert_int_equal(mota_cbor_get_uint(&d, &v), MOTA_ERR_CBOR_TYPE);
    assert_int_equal(v, 0);
    assert_int_equal(mota_cbor_get_tstr(&d, &str, &n), MOTA_ERR_CBOR_TYPE);
    assert_null(str);
}

static void test_map_keys_must_ascend_canonically(void **state)
{
    (void)state;
    struct mota_cbor_dec d;
    int64_t k, prev = MOTA_CBOR_KEY_NONE;
    /* 1, 23, 24, -1, -25: canonical order; then 3 again is out of order */
    const uint8_t keys[] = {0x01, 0x17, 0x18, 0x18, 0x20, 0x38, 0x18, 0x03};
    mota_cbor_dec_init(&d, keys, sizeof(keys));
    for (int i = 0; i < 5; i++)
        assert_int_equal(mota_cbor_get_int_key(&d, &k, &prev), 0);
    assert_int_equal(k, -25);
    assert_int_equal(mota_cbor_get_int_key(&d, &k, &prev), MOTA_ERR_CBOR_KEY_ORDER);

    const uint8_t dup[] = {0x02, 0x02};
    prev = MOTA_CBOR_KEY_NONE;
    mota_cbor_dec_init(&d, dup, sizeof(dup));
    assert_int_equal(mota_cbor_get_int_key(&d, &k, &prev), 0);
    assert_int_equal(mota_cbor_get_int_key(&d, &k, &prev), MOTA_ERR_CBOR_DUP_KEY);
}

static void test_skip_stops_at_the_depth_limit(void **state)
{
    (void)state;
    uint8_t deep[64];
    struct mota_cbor_dec d;
    memset(deep, 0x81, sizeof(deep)); /* [[[[...]]]] */
    deep[sizeof(deep) - 1] = 0x00;
    mota_cbor_dec_init(&d, deep, sizeof(deep));
    assert_int_equal(mota_cbor_skip(&d), MOTA_ERR_CBOR_DEPTH);

    const uint8_t ok[] = {0xa2, 0x01, 0x82, 0x41, 0x00, 0xc1, 0x00, 0x02, 0x63, 'a', 'b', 'c', 0x07};
    mota_cbor_dec_init(&d, ok, sizeof(ok));
    assert_int_equal(mota_cbor_skip(&d), 0);
    assert_int_equal(d.pos, sizeof(ok) - 1);
    assert_int_equal(mota_cbor_finish(&d), MOTA_ERR_CBOR_TRAILING);
}

static void test_text_must_be_utf8(void **state)
{
    (void)state;
    const char *s;
    size_t n;
    struct mota_cbor_dec d;
    const uint8_t good[] = {0x63, 0xe2, 0x82, 0xac};      /* euro sign */
    const uint8_t overlong[] = {0x62, 0xc0, 0xaf};        /* overlong '/' */
    const uint8_t surrogate[] = {0x63, 0xed, 0xa0, 0x80}; /* U+D800 */
    mota_cbor_dec_init(&d, good, sizeof(good));
    assert_int_equal(mota_cbor_get_tstr(&d, &s, &n), 0);
    mota_cbor_dec_init(&d, overlong, sizeof(overlong));
    assert_int_equal(mota_cbor_get_tstr(&d, &s, &n), MOTA_ERR_CBOR_UTF8);
    mota_cbor_dec_init(&d, surrogate, sizeof(surrogate));
    assert_int_equal(mota_cbor_get_tstr(&d, &s, &n), MOTA_ERR_CBOR_UTF8);
}

static void test_every_input_up_to_two_bytes_terminates(void **state)
{
    (void)state;
    uint8_t b[2];
    struct mota_cbor_dec d;
    for (unsigned v = 0; v < 0x10000; v++) {
        b[0] = (uint8_t)(v >> 8);
        b[1] = (uint8_t)v;
        for (size_t n = 1; n <= 2; n++) {
            mota_cbor_dec_init(&d, b, n);
            int r = mota_cbor_skip(&d);
            assert_true(r <= 0);
            assert_true(d.pos <= n);
        }
    }
}

static void test_encoder_writes_shortest_forms_and_wraps_in_place(void **state)
{
    (void)state;
    uint8_t buf[64];
    struct mota_cbor_enc e;
    mota_cbor_enc_init(&e, buf, sizeof(buf));
    mota_cbor_put_int(&e, -77);
    size_t o = mota_cbor_bstr_open(&e);
    mota_cbor_put_array(&e, 2);
    mota_cbor_put_uint(&e, 24);
    mota_cbor_put_tstr(&e, "#code");
    mota_cbor_bstr_close(&e, o);
    const uint8_t want[] = {0x38, 0x4c, 0x49, 0x82, 0x18, 0x18, 0x65, '#', 'c', 'o', 'd', 'e'};
    assert_int_equal(e.err, 0);
    assert_int_equal(e.len, sizeof(want));
    assert_memory_equal(buf, want, sizeof(want));

    mota_cbor_enc_init(&e, buf, 3);
    mota_cbor_put_tstr(&e, "#code");
    assert_int_equal(e.err, MOTA_ERR_NOSPC);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shortest_heads_decode_to_their_values),
        cmocka_unit_test(test_non_shortest_heads_are_rejected),
        cmocka_unit_test(test_indefinite_lengths_floats_and_undefined_are_rejected),
        cmocka_unit_test(test_lengths_beyond_the_buffer_are_truncation),
        cmocka_unit_test(test_errors_are_sticky_and_failed_reads_yield_zero_values),
        cmocka_unit_test(test_map_keys_must_ascend_canonically),
        cmocka_unit_test(test_skip_stops_at_the_depth_limit),
        cmocka_unit_test(test_text_must_be_utf8),
        cmocka_unit_test(test_every_input_up_to_two_bytes_terminates),
        cmocka_unit_test(test_encoder_writes_shortest_forms_and_wraps_in_place),
    };
    return cmocka_run_group_tests_name("cbor", tests, NULL, NULL);
}
