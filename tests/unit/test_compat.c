/* SPDX-License-Identifier: Apache-2.0 */
/* Model-versus-device compatibility: each rule, in order, with expected and found values. */
#include "mota/compat.h"
#include "mota/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

static struct mota_device_profile n6(void)
{
    struct mota_device_profile d;
    memset(&d, 0, sizeof(d));
    d.cpu_part = 0xD22;
    d.fpu_enabled = true;
    d.float_abi = 2;
    d.secure = true;
    d.dbg_info = true;
    d.async = true;
    d.reloc_families = 1u << 8;
    d.reloc_minor_max = 0;
    d.has_ll_aton = true;
    d.ll_aton_major = 1;
    d.ll_aton_minor = 1;
    d.ll_aton_micro = 1;
    d.struct_sizes = 0x3038;
    d.exec_ram_size = 600 * 1024;
    d.ext_ram_size = 4u << 20;
    d.install_modes = (1u << MOTA_INSTALL_XIP) | (1u << MOTA_INSTALL_COPY);
    return d;
}

/* The compatibility data of the ST N6 yolov8n fixture (st-reloc-format.md 8). */
static struct mota_compat yolo(void)
{
    struct mota_compat m;
    memset(&m, 0, sizeof(m));
    m.reloc_major = 8;
    m.cpu_part = 0xD22;
    m.fpu = true;
    m.float_abi = 2;
    m.secure = m.dbg_info = m.async = true;
    m.toolchain = 8;
    m.has_runtime_version = true;
    m.rt_major = 1;
    m.rt_minor = 1;
    m.rt_micro = 1;
    m.has_struct_sizes = true;
    m.struct_sizes = 0x3038;
    m.acts_size = 475136;
    m.params_size = 3011681;
    m.ext_ram_size = 3011688;
    m.exec_ram_xip = 249640;
    m.exec_ram_copy = 523728;
    m.install_mode = MOTA_INSTALL_COPY;
    return m;
}

static void test_matching_model_passes_with_its_preferred_mode(void **state)
{
    (void)state;
    struct mota_device_profile d = n6();
    struct mota_compat m = yolo();
    struct mota_compat_result r;
    assert_int_equal(mota_compat_check(&d, &m, false, &r), MOTA_OK);
    assert_int_equal(r.install_mode, MOTA_INSTALL_COPY);
    /* COPY does not fit: XIP is used instead */
    d.exec_ram_size = 300000;
    assert_int_equal(mota_compat_check(&d, &m, false, &r), MOTA_OK);
    assert_int_equal(r.install_mode, MOTA_INSTALL_XIP);
    /* a non-secure model in a secure context is allowed */
    m.secure = false;
    assert_int_equal(mota_compat_check(&d, &m, false, &r), MOTA_OK);
}

static void test_each_rule_reports_expected_and_found(void **state)
{
    (void)state;
    struct {
        const char *what;
        int want;
        const char *field;
        uint64_t expected, found;
    } cases[] = {
        {"family", MOTA_ERR_COMPAT_FAMILY, "reloc_families", 0x100, 0x4},
        {"minor", MOTA_ERR_COMPAT_RELOC_VERSION, "reloc_minor", 0, 1},
        {"cpu", MOTA_ERR_COMPAT_CPU, "cpu_part", 0xD22, 0xD21},
        {"fpu", MOTA_ERR_COMPAT_FPU, "fpu", 0, 1},
        {"abi", MOTA_ERR_COMPAT_FLOAT_ABI, "float_abi", 2, 0},
        {"secure", MOTA_ERR_COMPAT_SECURE, "secure", 0, 1},
        {"dbg", MOTA_ERR_COMPAT_DBG_INFO, "dbg_info", 1, 0},
        {"async", MOTA_ERR_COMPAT_ASYNC, "async", 1, 0},
        {"llaton", MOTA_ERR_COMPAT_LL_ATON, "ll_aton_version", 0x010101, 0x010103},
        {"structs", MOTA_ERR_COMPAT_STRUCT_SIZES, "struct_sizes", 0x3038, 0x3040},
        {"split", MOTA_ERR_COMPAT_SPLIT, "split", MOTA_SPLIT_REQUIRED, 0},
        {"modes", MOTA_ERR_COMPAT_INSTALL_MODE, "install_mode", 0, MOTA_INSTALL_COPY},
        {"exec", MOTA_ERR_COMPAT_EXEC_RAM, "exec_ram", 200000, 249640},
        {"ext", MOTA_ERR_COMPAT_EXT_RAM, "ext_ram", 1u << 20, 3011688},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct mota_device_profile d = n6();
        struct mota_compat m = yolo();
        struct mota_compat_result r;
        switch (i) {
        case 0: m.reloc_major = 2; break;
        case 1: m.reloc_minor = 1; break;
        case 2: m.cpu_part = 0xD21; break;
        case 3: d.fpu_enabled = false; break;
        case 4: m.float_abi = 0; break;
        case 5: d.secure = false; break;
        case 6: m.dbg_info = false; break;
        case 7: m.async = false; break;
        case 8: m.rt_micro = 3; break;
        case 9: m.struct_sizes = 0x3040; break;
        case 10: d.split_policy = MOTA_SPLIT_REQUIRED; break;
        case 11: d.install_modes = 0; break;
        case 12: d.exec_ram_size = 200000; break;
        default: d.ext_ram_size = 1u << 20; break;
        }
        int ret = mota_compat_check(&d, &m, false, &r);
        if (ret != cases[i].want || r.reason != ret || strcmp(r.field, cases[i].field) != 0 ||
            r.expected != cases[i].expected || r.found != cases[i].found)
            fail_msg("%s: got %s %s expected %llu found %llu", cases[i].what, mota_err_name(ret),
                     r.field ? r.field : "-", (unsigned long long)r.expected, (unsigned long long)r.found);
    }
}

static void test_first_failing_rule_wins(void **state)
{
    (void)state;
    struct mota_device_profile d = n6();
    struct mota_compat m = yolo();
    m.cpu_part = 0xC27;  /* rule 3 */
    m.rt_minor = 9;      /* rule 9 */
    d.exec_ram_size = 1; /* rule 13 */
    assert_int_equal(mota_compat_check(&d, &m, false, NULL), MOTA_ERR_COMPAT_CPU);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matching_model_passes_with_its_preferred_mode),
        cmocka_unit_test(test_each_rule_reports_expected_and_found),
        cmocka_unit_test(test_first_failing_rule_wins),
    };
    return cmocka_run_group_tests_name("compat", tests, NULL, NULL);
}
