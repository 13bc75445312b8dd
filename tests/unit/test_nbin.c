/* NBIN header reader: the real ST N6 model, a legacy model, split params. */
#include "mota/err.h"
#include "mota/nbin.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *yolo;
static size_t yolo_len;

static int setup(void **state)
{
    (void)state;
    FILE *f = fopen(MOTA_FIXTURES_DIR "/st-n6/yolov8n_network_rel.bin", "rb");
    if (f == NULL)
        return 0;
    yolo = malloc(4u << 20);
    yolo_len = fread(yolo, 1, 4u << 20, f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(yolo);
    return 0;
}

#define NEED_YOLO()                                                                 \
    do {                                                                            \
        if (yolo == NULL) {                                                         \
            print_message("SKIPPED: ../shared/fixtures/st-n6 is absent\n");         \
            skip();                                                                 \
        }                                                                           \
    } while (0)

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void test_st_n6_yolov8n_decodes_to_the_documented_values(void **state)
{
    (void)state;
    struct mota_nbin_info in;
    NEED_YOLO();
    assert_int_equal(yolo_len, 3292096);
    assert_int_equal(mota_nbin_parse(yolo, yolo_len, &in), MOTA_OK);
    assert_int_equal(in.family, MOTA_NBIN_FAMILY_NPU);
    assert_int_equal(in.header_words, 24);
    assert_int_equal(in.rtctx_words, 17);
    assert_int_equal(in.flags, 0x80785D22u);
    assert_int_equal(in.cpu_part, 0xD22);
    assert_true(in.fpu && in.secure && in.dbg_info && in.async);
    assert_int_equal(in.float_abi, 2);
    assert_int_equal(in.toolchain, 8);
    assert_int_equal(in.ro_size, 274088);
    assert_int_equal(in.data_copy, 5464);
    assert_int_equal(in.rw_size, 249640);
    assert_int_equal((in.got_end - in.got_off) / 4, 63);
    assert_int_equal(in.rel_off, 279552);
    assert_int_equal(in.rel_count, 213);
    assert_int_equal(in.rtctx_file_off, 279148);
    assert_int_equal(in.params_offset, 280408);
    assert_int_equal(in.c_name_len, 7);
    assert_memory_equal(in.c_name, "network", 7);
    assert_int_equal(in.rt_desc_len, strlen("atonn-v1.1.1-14-ge619e8606 (RELOC.GCC)"));
    assert_memory_equal(in.rt_desc, "atonn-v1.1.1-14-ge619e8606 (RELOC.GCC)", in.rt_desc_len);
    assert_int_equal(in.rt_version, 0x01010100u);
    assert_int_equal(in.rt_version_extra, 14);
    assert_int_equal(in.acts_size, 475136);
    assert_int_equal(in.params_size, 3011681);
    assert_int_equal(in.ext_ram_size, 3011688); /* round8(3011681) as get_info reports */
    assert_int_equal(in.params_bin_size, 3011688);
    assert_int_equal(in.params_bin_crc32, 0xCF83F522u);
    assert_int_equal(in.struct_sizes, 0x3038);
    assert_int_equal(in.exec_ram_xip, 249640);
    assert_int_equal(in.exec_ram_copy, 523728);
    assert_false(in.split);
    assert_int_equal(in.n_pools, 3);
    assert_memory_equal(in.pools[0].name, "xSPI1", 5);
    assert_int_equal(in.pools[0].flags, 0x01030601u);
    assert_int_equal(in.pools[0].size, 3011681);
    assert_memory_equal(in.pools[1].name, "AXISRAM4", 8);
    assert_int_equal(in.pools[1].dst, 0x34270000u);
    assert_int_equal(in.pools[2].dst, 0x34200000u);
    assert_int_equal(in.pools[2].size, 458752);
    /* the appended blob is the mem-pool blob: its CRC is the header's */
    assert_int_equal(mota_crc32(0, yolo + in.params_offset, yolo_len - in.params_offset), 0xCF83F522u);
}

static void test_split_params_must_match_size_and_crc(void **state)
{
    (void)state;
    struct mota_nbin_info in;
    NEED_YOLO();
    uint8_t *img = malloc(280408);
    memcpy(img, yolo, 280408);
    wr32(img + 48, 0); /* params_offset = 0: a split build */
    assert_int_equal(mota_nbin_parse(img, 280408, &in), MOTA_OK);
    assert_true(in.split);
    const uint8_t *blob = yolo + 280408;
    size_t blob_len = yolo_len - 280408;
    assert_int_equal(mota_nbin_check_params(&in, blob, blob_len), MOTA_OK);
    assert_int_equal(mota_nbin_check_params(&in, blob, blob_len - 8), MOTA_ERR_NBIN_PARAMS_SIZE);
    uint8_t *bad = malloc(blob_len);
    memcpy(bad, blob, blob_len);
    bad[blob_len / 2] ^= 1;
    assert_int_equal(mota_nbin_check_params(&in, bad, blob_len), MOTA_ERR_NBIN_PARAMS_CRC);
    free(bad);
    assert_int_equal(mota_nbin_parse(yolo, yolo_len, &in), MOTA_OK);
    assert_int_equal(mota_nbin_check_params(&in, blob, blob_len), MOTA_ERR_NBIN_SPLIT);
    free(img);
}

static void test_header_corruptions_get_their_own_reasons(void **state)
{
    (void)state;
    struct mota_nbin_info in;
    NEED_YOLO();
    static uint8_t img[3292096];
    struct {
        unsigned word;
        uint32_t value;
        int want;
    } cases[] = {
        {0, 0x4E49424Fu, MOTA_ERR_NBIN_MAGIC},
        {1, 0x90785D22u, MOTA_ERR_NBIN_VERSION},
        {1, 0x80F85D22u, MOTA_ERR_NBIN_FLAGS},     /* reserved flag bit 23 */
        {2, 0x40000004u, MOTA_ERR_NBIN_DATA_START}, /* data_start not the RAM base */
        {4, 0x20042EACu, MOTA_ERR_NBIN_ALIGN},     /* RO size not 8-aligned */
        {4, 0x2FFFFFF8u, MOTA_ERR_NBIN_HEADER},    /* RO beyond the file */
        {6, 0x40001000u, MOTA_ERR_NBIN_OVERLAP},   /* bss_end before bss_start */
        {7, 0x50001458u, MOTA_ERR_NBIN_TAG},       /* got_start with tag 5 */
        {10, 0x2FFFFFF0u, MOTA_ERR_NBIN_TRUNCATED}, /* REL table past the end */
        {11, 0x40001409u, MOTA_ERR_NBIN_ALIGN},    /* descriptor table misaligned */
        {13, 0x20000094u, MOTA_ERR_NBIN_ENTRY},    /* entry without the Thumb bit */
        {23, 0x30000000u, MOTA_ERR_NBIN_VARIANT},  /* neither 24- nor 26-word layout */
        {23, 0x4FFFFFC4u, MOTA_ERR_NBIN_RTCTX},    /* rt_ctx outside the data image */
        {12, 0x00044759u, MOTA_ERR_NBIN_ALIGN},    /* params offset misaligned */
        {12, 0x00044000u, MOTA_ERR_NBIN_OVERLAP},  /* params blob over the REL table */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memcpy(img, yolo, yolo_len);
        wr32(img + 4 * cases[i].word, cases[i].value);
        int ret = mota_nbin_parse(img, yolo_len, &in);
        if (ret != cases[i].want)
            fail_msg("case %zu (word %u = 0x%08x): got %s, want %s", i, cases[i].word, cases[i].value,
                     mota_err_name(ret), mota_err_name(cases[i].want));
    }
    /* c_name pointer outside the RO image, rt_version of another major */
    memcpy(img, yolo, yolo_len);
    wr32(img + 279148 + 20, 0x2FFFFF00u);
    assert_int_equal(mota_nbin_parse(img, yolo_len, &in), MOTA_ERR_NBIN_STRING);
    memcpy(img, yolo, yolo_len);
    wr32(img + 279148 + 40, 0x02000000u);
    assert_int_equal(mota_nbin_parse(img, yolo_len, &in), MOTA_ERR_NBIN_RTCTX);
    /* every prefix of the header region is refused, never read past */
    for (size_t n = 0; n < 280408; n += (n < 256 ? 1 : 4093))
        assert_int_not_equal(mota_nbin_parse(yolo, n, &in), MOTA_OK);
}

/* A minimal legacy (X-CUBE-AI reloc v2.0) split model built by hand. */
static size_t make_legacy(uint8_t *f)
{
    memset(f, 0, 212);
    wr32(f + 0, MOTA_NBIN_MAGIC);
    wr32(f + 4, 0x20085D21u);  /* v2.0, GCC, hard, FPU, M33 */
    wr32(f + 8, 0x80000000u);  /* data_start */
    wr32(f + 12, 0x80000020u); /* data_end: the 8-word rt_ctx */
    wr32(f + 16, 0x200000A0u); /* data_data = RO size 160 */
    wr32(f + 20, 0x8000002Cu); /* bss_start */
    wr32(f + 24, 0x80000064u); /* bss_end: RW 100 */
    wr32(f + 28, 0x80000020u); /* got_start */
    wr32(f + 32, 0x8000002Cu); /* got_end: 3 words */
    wr32(f + 36, 0x200000CCu); /* rel_start = 160 + 44 */
    wr32(f + 40, 0x200000D4u); /* rel_end: 2 entries */
    for (unsigned w = 13; w < 24; w++)
        wr32(f + 4 * w, 0x20000065u);
    wr32(f + 96, 0x80000000u); /* ctx */
    memcpy(f + 120, "legacy", 7);
    wr32(f + 160 + 20, 0x20000078u); /* rt_ctx.c_name */
    wr32(f + 160 + 24, 736);         /* activations */
    wr32(f + 160 + 28, 16);          /* weights (split) */
    wr32(f + 204, 0x80000004u);
    wr32(f + 208, 0x80000008u);
    return 212;
}

static void test_legacy_family_is_detected_from_the_data(void **state)
{
    (void)state;
    uint8_t f[212], w[16] = {0};
    struct mota_nbin_info in;
    size_t n = make_legacy(f);
    assert_int_equal(mota_nbin_parse(f, n, &in), MOTA_OK);
    assert_int_equal(in.family, MOTA_NBIN_FAMILY_LEGACY);
    assert_int_equal(in.header_words, 25);
    assert_int_equal(in.cpu_part, 0xD21);
    assert_memory_equal(in.c_name, "legacy", 6);
    assert_int_equal(in.acts_size, 736);
    assert_int_equal(in.exec_ram_xip, 100);
    assert_int_equal(in.exec_ram_copy, 260);
    assert_true(in.split);
    assert_int_equal(mota_nbin_check_params(&in, w, sizeof(w)), MOTA_OK);
    assert_int_equal(mota_nbin_check_params(&in, w, 12), MOTA_ERR_NBIN_PARAMS_SIZE);
    wr32(f + 96, 0x40000000u); /* NPU RAM tag in a legacy header */
    assert_int_equal(mota_nbin_parse(f, n, &in), MOTA_ERR_NBIN_VARIANT);
}

static void test_crc32_check_value(void **state)
{
    (void)state;
    assert_int_equal(mota_crc32(0, "123456789", 9), 0xCBF43926u);
    uint32_t c = mota_crc32(0, "1234", 4);
    assert_int_equal(mota_crc32(c, "56789", 5), 0xCBF43926u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_st_n6_yolov8n_decodes_to_the_documented_values),
        cmocka_unit_test(test_split_params_must_match_size_and_crc),
        cmocka_unit_test(test_header_corruptions_get_their_own_reasons),
        cmocka_unit_test(test_legacy_family_is_detected_from_the_data),
        cmocka_unit_test(test_crc32_check_value),
    };
    return cmocka_run_group_tests_name("nbin", tests, setup, teardown);
}
