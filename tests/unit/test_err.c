/* SPDX-License-Identifier: Apache-2.0 */
/* The reason-code table: negative, unique, named, described. */
#include "mota/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

static void test_codes_are_negative_unique_and_named(void **state)
{
    (void)state;
    int n = mota_err_count();
    assert_true(n > 60);
    for (int i = 0; i < n; i++) {
        int c = mota_err_at(i);
        assert_true(c < 0);
        const char *name = mota_err_name(c);
        assert_non_null(name);
        assert_int_equal(strncmp(name, "MOTA_ERR_", 9), 0);
        assert_true(strlen(mota_err_str(c)) > 5);
        for (int j = 0; j < i; j++) {
            assert_int_not_equal(mota_err_at(j), c);
            assert_string_not_equal(mota_err_name(mota_err_at(j)), name);
        }
    }
}

static void test_unknown_codes_have_no_name_but_a_message(void **state)
{
    (void)state;
    assert_null(mota_err_name(-9999));
    assert_non_null(mota_err_str(-9999));
    assert_string_equal(mota_err_name(MOTA_OK), "MOTA_OK");
    assert_string_equal(mota_err_name(MOTA_ERR_SIGNATURE), "MOTA_ERR_SIGNATURE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codes_are_negative_unique_and_named),
        cmocka_unit_test(test_unknown_codes_have_no_name_but_a_message),
    };
    return cmocka_run_group_tests_name("err", tests, NULL, NULL);
}
