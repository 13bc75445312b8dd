/* SPDX-License-Identifier: Apache-2.0 */
/* NBIN header reader: the real ST N6 model, a legacy model, split params. */
#include "mota/crc32.h"
#include "mota/err.h"
#include "mota/nbin.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture_yolo.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
    assert_int_equal(mota_nbin_check_params(&in, yolo, yolo_len), MOTA_OK); /* the appended blob */
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
        {0, 0x4E49424Fu, MOTA_ERR_NBIN_MAGIC},      {1, 0x90785D22u, MOTA_ERR_NBIN_VERSION},
        {1, 0x80F85D22u, MOTA_ERR_NBIN_FLAGS},      /* reserved flag bit 23 */
        {2, 0x40000004u, MOTA_ERR_NBIN_DATA_START}, /* data_start not the RAM base */
        {4, 0x20042EACu, MOTA_ERR_NBIN_ALIGN},      /* RO size not 8-aligned */
        {4, 0x2FFFFFF8u, MOTA_ERR_NBIN_HEADER},     /* RO beyond the file */
        {6, 0x40001000u, MOTA_ERR_NBIN_OVERLAP},    /* bss_end before bss_start */
        {7, 0x50001458u, MOTA_ERR_NBIN_TAG},        /* got_start with tag 5 */
        {10, 0x2FFFFFF0u, MOTA_ERR_NBIN_TRUNCATED}, /* REL table past the end */
        {11, 0x40001409u, MOTA_ERR_NBIN_ALIGN},     /* descriptor table misaligned */
        {13, 0x20000094u, MOTA_ERR_NBIN_ENTRY},     /* entry without the Thumb bit */
        {23, 0x30000000u, MOTA_ERR_NBIN_VARIANT},   /* neither 24- nor 26-word layout */
        {23, 0x4FFFFFC4u, MOTA_ERR_NBIN_RTCTX},     /* rt_ctx outside the data image */
        {12, 0x00044759u, MOTA_ERR_NBIN_ALIGN},     /* params offset misaligned */
        {12, 0x00044000u, MOTA_ERR_NBIN_OVERLAP},   /* params blob over the REL table */
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
    assert_int_equal(in.exec_ram_xip, 104 + 736); /* RW and activations, each rounded to 8 */
    assert_int_equal(in.exec_ram_copy, 104 + 736 + 160);
    assert_true(in.split);
    assert_int_equal(mota_nbin_check_params(&in, w, sizeof(w)), MOTA_OK);
    assert_int_equal(mota_nbin_check_params(&in, w, 12), MOTA_ERR_NBIN_PARAMS_SIZE);
    wr32(f + 96, 0x40000000u); /* NPU RAM tag in a legacy header */
    assert_int_equal(mota_nbin_parse(f, n, &in), MOTA_ERR_NBIN_VARIANT);
}

/* ST's U585 model (X-CUBE-AI 7.2): its 60-byte rt_ctx ends .data with the CRC callback words NULL. */
#define U585_FILE "st-legacy/u585_network_rel.bin"
#define U585_CTX (11500u + 0x76Cu)

static void test_legacy_crc_callback_words_are_found_only_in_a_60_byte_rt_ctx_with_null_slots(void **state)
{
    (void)state;
    size_t n = 0;
    uint8_t *f = fixture_load(U585_FILE, &n), small[212];
    FIXTURE_NEEDED(f, U585_FILE);
    struct mota_nbin_info in;
    assert_int_equal(mota_nbin_parse(f, n, &in), MOTA_OK);
    assert_true(in.crc_callbacks);
    wr32(f + 12, 0x800007A0u); /* data_end 8 bytes earlier: a 52-byte rt_ctx, as older runtimes have */
    assert_int_equal(mota_nbin_parse(f, n, &in), MOTA_OK);
    assert_false(in.crc_callbacks);
    wr32(f + 12, 0x800007A8u);
    wr32(f + U585_CTX + 56, 0x20000065u); /* a word the model set itself: not a slot for the port */
    assert_int_equal(mota_nbin_parse(f, n, &in), MOTA_OK);
    assert_false(in.crc_callbacks);
    free(f);
    assert_int_equal(mota_nbin_parse(small, make_legacy(small), &in), MOTA_OK); /* an 8-word rt_ctx */
    assert_false(in.crc_callbacks);
}

/* ---- the corrupted-model catalogue ---- */

enum { RO = 274088, GOT = RO + 5208, REL = 279552, DESC = RO + 5128, CTX = 279148, DATA_COPY = 5464 };

static uint8_t cat[3292096 + 16];
static size_t cat_len;

static uint32_t get32(size_t off)
{
    return (uint32_t)cat[off] | (uint32_t)cat[off + 1] << 8 | (uint32_t)cat[off + 2] << 16 |
           (uint32_t)cat[off + 3] << 24;
}

static void put32(size_t off, uint32_t v)
{
    wr32(cat + off, v);
}

static void m_magic(void)
{
    put32(0, 0x4E49424Fu);
}
static void m_short(void)
{
    cat_len = 7;
}
static void m_version(void)
{
    put32(4, 0x90785D22u);
}
static void m_reserved_flag(void)
{
    put32(4, 0x80F85D22u);
}
static void m_float_abi(void)
{
    put32(4, 0x80787D22u);
}
static void m_data_start(void)
{
    put32(8, 0x40000004u);
}
static void m_ro_misaligned(void)
{
    put32(16, 0x20042EACu);
}
static void m_ro_beyond_file(void)
{
    put32(16, 0x2FFFFFF8u);
}
static void m_bss_backwards(void)
{
    put32(24, 0x40001000u);
}
static void m_got_tag(void)
{
    put32(28, 0x50001458u);
}
static void m_rel_past_end(void)
{
    put32(40, 0x2FFFFFF0u);
}
static void m_desc_misaligned(void)
{
    put32(44, 0x40001409u);
}
static void m_entry_not_thumb(void)
{
    put32(52, 0x20000094u);
}
static void m_entry_outside_code(void)
{
    put32(56, 0x20FFFF01u);
}
static void m_variant(void)
{
    put32(92, 0x30000000u);
}
static void m_ctx_outside_data(void)
{
    put32(92, 0x4FFFFFC4u);
}
static void m_params_misaligned(void)
{
    put32(48, 0x00044759u);
}
static void m_params_over_rel(void)
{
    put32(48, 0x00044000u);
}
static void m_trailing(void)
{
    cat_len += 8;
}
static void m_cname_outside(void)
{
    put32(CTX + 20, 0x2FFFFF00u);
}
static void m_cname_unterminated(void)
{
    put32(CTX + 20, 0x20000000u | (RO - 3));
    memset(cat + RO - 3, 'x', 3);
}
static void m_rt_major(void)
{
    put32(CTX + 40, 0x02000000u);
}
static void m_got_tag_a(void)
{
    put32(GOT, 0xA0000010u);
}
static void m_got_beyond_code(void)
{
    put32(GOT, 0x20000000u | (RO + 4));
}
static void m_got_beyond_ext(void)
{
    put32(GOT, 0x90000000u | (3011688 + 8));
}
static void m_got_plt(void)
{
    put32(GOT + 4 * 62, 0x40000000u);
}
static void m_rel_outside_rw(void)
{
    put32(REL, 0x40000000u | DATA_COPY);
}
static void m_rel_misaligned(void)
{
    put32(REL, get32(REL) + 2);
}
static void m_rel_repeated(void)
{
    put32(REL + 4, get32(REL));
}
static void m_rel_into_got(void)
{
    put32(REL + 4 * 212, 0x40000000u | 5208);
}
static void m_rel_tag_8(void)
{
    put32(REL, (get32(REL) & 0x0FFFFFFFu) | 0x80000000u);
}
static void m_rel_target_tag_a(void)
{
    put32(RO + (get32(REL) & 0x0FFFFFFFu), 0xA0000000u);
}
/* the table ends .data proper (data_end = DESC + 80): a fourth pool over the terminator runs out of it */
static void m_desc_unterminated(void)
{
    memcpy(cat + DESC + 60, cat + DESC + 20, 20);
}
static void m_desc_too_many(void)
{
    /* room for ten records: .data proper up to the GOT's end, the GOT emptied */
    put32(12, 0x40000000u | 5460);
    put32(28, 0x40000000u | 5460);
    for (int i = 0; i < 10; i++)
        memcpy(cat + DESC + 20 * i, cat + DESC + 20, 20); /* ten copies of AXISRAM4 */
}
static void m_desc_type(void)
{
    put32(DESC + 20 + 4, 0x07020200u);
}
static void m_desc_reloc_id(void)
{
    put32(DESC + 4, 0x01030602u);
}
static void m_desc_reloc_twice(void)
{
    memcpy(cat + DESC + 20, cat + DESC, 20);
}
/* a RELOC PARAM pool 16 bytes into the blob (tag-8 values start there), and a GOT word 8 bytes before the
 * blob's end: 8 bytes past it from that base */
static void m_got_past_params(void)
{
    put32(DESC + 24, 0x01010100u);
    put32(DESC + 28, 16);
    put32(DESC + 36, 8);
    put32(GOT, 0x80000000u | (3011688 - 8));
}
static void m_desc_name(void)
{
    put32(DESC + 20, 0x2FFFFFF0u);
}
static void m_desc_beyond_blob(void)
{
    put32(DESC + 16, 3011689u);
}
static void m_blob_short(void)
{
    put32(CTX + 48, 3011688u + 8);
}
static void m_split_trailing(void)
{
    put32(48, 0);
    cat_len = 280408 + 8;
}
static void m_blob_flipped(void)
{
    cat[280408 + 1000] ^= 0x20;
}
static void m_rel_start_skips(void)
{
    put32(36, get32(36) + 8);
}
static void m_rel_end_early(void)
{
    put32(40, get32(40) - 4);
}
static void m_rel_pad_used(void)
{
    cat[280404] = 1;
}
static void m_desc_moved(void)
{
    put32(44, get32(44) + 4);
}
static void m_params_without_pool(void)
{
    put32(DESC + 4, 0);
}
static void m_bss_221mb(void)
{
    put32(24, 0x40000000u | 221u << 20);
}
static void m_pool_size_wraps(void)
{
    put32(DESC + 16, 0xFFFFFFF9u);
}
static void m_cpu_unknown(void)
{
    put32(4, 0x80785000u);
}
static void m_toolchain_unknown(void)
{
    put32(4, 0x80705D22u);
}

static void test_corrupted_models_are_refused_each_with_its_reason(void **state)
{
    (void)state;
    NEED_YOLO();
    static const struct {
        const char *name;
        void (*mutate)(void);
        int want;
    } cases[] = {
        {"magic", m_magic, MOTA_ERR_NBIN_MAGIC},
        {"seven bytes", m_short, MOTA_ERR_NBIN_TRUNCATED},
        {"reloc version 9.0", m_version, MOTA_ERR_NBIN_VERSION},
        {"reserved flag bit", m_reserved_flag, MOTA_ERR_NBIN_FLAGS},
        {"float ABI 3", m_float_abi, MOTA_ERR_NBIN_FLAGS},
        {"data_start off base", m_data_start, MOTA_ERR_NBIN_DATA_START},
        {"RO size misaligned", m_ro_misaligned, MOTA_ERR_NBIN_ALIGN},
        {"RO beyond the file", m_ro_beyond_file, MOTA_ERR_NBIN_HEADER},
        {"bss_end before bss_start", m_bss_backwards, MOTA_ERR_NBIN_OVERLAP},
        {"got_start tag 5", m_got_tag, MOTA_ERR_NBIN_TAG},
        {"REL table past the end", m_rel_past_end, MOTA_ERR_NBIN_TRUNCATED},
        {"descriptor table misaligned", m_desc_misaligned, MOTA_ERR_NBIN_ALIGN},
        {"entry without Thumb bit", m_entry_not_thumb, MOTA_ERR_NBIN_ENTRY},
        {"entry outside the code", m_entry_outside_code, MOTA_ERR_NBIN_ENTRY},
        {"header variant unknown", m_variant, MOTA_ERR_NBIN_VARIANT},
        {"rt_ctx outside the data", m_ctx_outside_data, MOTA_ERR_NBIN_RTCTX},
        {"params offset misaligned", m_params_misaligned, MOTA_ERR_NBIN_ALIGN},
        {"params over the REL table", m_params_over_rel, MOTA_ERR_NBIN_OVERLAP},
        {"bytes after the params blob", m_trailing, MOTA_ERR_NBIN_PARAMS_CRC},
        {"c_name pointer outside the file", m_cname_outside, MOTA_ERR_NBIN_STRING},
        {"c_name unterminated", m_cname_unterminated, MOTA_ERR_NBIN_STRING},
        {"rt_version major 2", m_rt_major, MOTA_ERR_NBIN_RTCTX},
        {"GOT word tag 0xA", m_got_tag_a, MOTA_ERR_NBIN_GOT},
        {"GOT word beyond the code", m_got_beyond_code, MOTA_ERR_NBIN_GOT_RANGE},
        {"GOT word beyond external RAM", m_got_beyond_ext, MOTA_ERR_NBIN_GOT_RANGE},
        {"reserved GOT word set", m_got_plt, MOTA_ERR_NBIN_GOT_PLT},
        {"REL entry outside RW data", m_rel_outside_rw, MOTA_ERR_NBIN_REL_ENTRY},
        {"REL entry misaligned", m_rel_misaligned, MOTA_ERR_NBIN_REL_ENTRY},
        {"REL entry repeated", m_rel_repeated, MOTA_ERR_NBIN_REL_ENTRY},
        {"REL entry into the GOT", m_rel_into_got, MOTA_ERR_NBIN_REL_ENTRY},
        {"REL entry tag 8", m_rel_tag_8, MOTA_ERR_NBIN_REL_ENTRY},
        {"REL target tag 0xA", m_rel_target_tag_a, MOTA_ERR_NBIN_REL_TARGET},
        {"descriptor table unterminated", m_desc_unterminated, MOTA_ERR_NBIN_DESC_UNTERMINATED},
        {"ten descriptors", m_desc_too_many, MOTA_ERR_NBIN_DESC_TOO_MANY},
        {"descriptor type 7", m_desc_type, MOTA_ERR_NBIN_DESC},
        {"RELOC pool id 2", m_desc_reloc_id, MOTA_ERR_NBIN_DESC},
        {"two RELOC pools of one id", m_desc_reloc_twice, MOTA_ERR_NBIN_DESC},
        {"tag-8 GOT word past the params from the PARAM pool on", m_got_past_params, MOTA_ERR_NBIN_GOT_RANGE},
        {"pool name outside the file", m_desc_name, MOTA_ERR_NBIN_STRING},
        {"pool beyond the params blob", m_desc_beyond_blob, MOTA_ERR_NBIN_DESC_RANGE},
        {"params blob shorter than the header says", m_blob_short, MOTA_ERR_NBIN_PARAMS_SIZE},
        {"split image with bytes after it", m_split_trailing, MOTA_ERR_NBIN_TRAILING},
        {"params blob corrupted", m_blob_flipped, MOTA_ERR_NBIN_PARAMS_CRC},
        {"REL table start skips two entries", m_rel_start_skips, MOTA_ERR_NBIN_REL_POSITION},
        {"REL table end one entry early", m_rel_end_early, MOTA_ERR_NBIN_REL_POSITION},
        {"bytes in the REL padding", m_rel_pad_used, MOTA_ERR_NBIN_REL_POSITION},
        {"descriptor table moved by 4", m_desc_moved, MOTA_ERR_NBIN_DESC_POSITION},
        {"params without a pool", m_params_without_pool, MOTA_ERR_NBIN_DESC_PARAMS},
        {".bss end at 221 MB", m_bss_221mb, MOTA_ERR_NBIN_SIZE_LIMIT},
        {"pool size that round8 wraps", m_pool_size_wraps, MOTA_ERR_NBIN_SIZE_LIMIT},
        {"CPU part 0x000", m_cpu_unknown, MOTA_ERR_NBIN_CPU},
        {"toolchain 0", m_toolchain_unknown, MOTA_ERR_NBIN_TOOLCHAIN},
    };
    struct mota_nbin_info in;
    int distinct[64], n_distinct = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        /* a fresh heap copy of exactly the right size, so ASan sees over-reads */
        memset(cat, 0, sizeof(cat));
        memcpy(cat, yolo, yolo_len);
        cat_len = yolo_len;
        cases[i].mutate();
        uint8_t *exact = malloc(cat_len);
        memcpy(exact, cat, cat_len);
        int ret = mota_nbin_validate(exact, cat_len, &in);
        if (ret == MOTA_OK)
            ret = mota_nbin_check_params(&in, exact, cat_len);
        free(exact);
        if (ret != cases[i].want)
            fail_msg("%s: got %s, want %s", cases[i].name, mota_err_name(ret), mota_err_name(cases[i].want));
        int seen = 0;
        for (int k = 0; k < n_distinct; k++)
            seen |= distinct[k] == ret;
        if (!seen)
            distinct[n_distinct++] = ret;
    }
    print_message("%zu corrupted models refused with %d distinct reason codes\n", sizeof(cases) / sizeof(cases[0]),
                  n_distinct);
    assert_true(sizeof(cases) / sizeof(cases[0]) >= 25);
}

/* ---- placement, limits and flags: the hostile-input review ---- */

/* yolo as a fresh exact-size heap copy after mutate(), validated (so ASan
 * sees any read past the end), and appended params checked as pack would. */
static int check_yolo_variant(void (*mutate)(void))
{
    struct mota_nbin_info in;
    memset(cat, 0, sizeof(cat));
    memcpy(cat, yolo, yolo_len);
    cat_len = yolo_len;
    if (mutate != NULL)
        mutate();
    uint8_t *exact = malloc(cat_len);
    memcpy(exact, cat, cat_len);
    int ret = mota_nbin_validate(exact, cat_len, &in);
    if (ret == MOTA_OK && !in.split) /* a split image has no params to check here */
        ret = mota_nbin_check_params(&in, exact, cat_len);
    free(exact);
    return ret;
}

#define EXPECT_VARIANT(mutate, want)                                                                                   \
    do {                                                                                                               \
        int got_ = check_yolo_variant(mutate);                                                                         \
        if (got_ != (want))                                                                                            \
            fail_msg("%s: got %s, want %s", #mutate, mota_err_name(got_), mota_err_name(want));                        \
    } while (0)

static void m_split(void)
{
    put32(48, 0);
    cat_len = 280408;
}
static void m_rel_window(void)
{
    put32(36, get32(36) + 40);
    put32(40, get32(40) - 40);
} /* 193 of 213 */
static void m_rel_start_back_into_data(void)
{
    put32(36, get32(36) - 8);
}
static void m_split_rel_pad_used(void)
{
    m_split();
    cat[280406] = 0x40;
}

static void test_a_rel_table_moved_inside_the_rw_data_is_refused(void **state)
{
    (void)state;
    NEED_YOLO();
    EXPECT_VARIANT(NULL, MOTA_OK);
    EXPECT_VARIANT(m_split, MOTA_OK);
    /* ST's post-processor puts REL at round8(RO + got_end): 279552 here */
    EXPECT_VARIANT(m_rel_start_skips, MOTA_ERR_NBIN_REL_POSITION); /* 211 entries, all valid: two lost */
    EXPECT_VARIANT(m_rel_window, MOTA_ERR_NBIN_REL_POSITION);
    EXPECT_VARIANT(m_rel_start_back_into_data, MOTA_ERR_NBIN_OVERLAP);
    /* its end meets the params (non-split) or the end of the file, across zero padding */
    EXPECT_VARIANT(m_rel_end_early, MOTA_ERR_NBIN_REL_POSITION);
    EXPECT_VARIANT(m_rel_pad_used, MOTA_ERR_NBIN_REL_POSITION);
    EXPECT_VARIANT(m_split_rel_pad_used, MOTA_ERR_NBIN_REL_POSITION);
}

static void m_desc_plus_20(void)
{
    put32(44, get32(44) + 20);
} /* skips xSPI1, reads the two RESET pools */
static void m_params_pool_is_activations(void)
{
    put32(DESC + 4, 0x01020601u);
} /* RELOC ACTIV id 1 */

static void test_a_descriptor_table_moved_inside_the_data_is_refused(void **state)
{
    (void)state;
    NEED_YOLO();
    /* ST's linker script: .params_desc right after the 17-word rt_ctx */
    assert_int_equal(CTX - RO + 17 * 4, DESC - RO);
    EXPECT_VARIANT(m_desc_moved, MOTA_ERR_NBIN_DESC_POSITION); /* read as 0 pools before */
    EXPECT_VARIANT(m_desc_plus_20, MOTA_ERR_NBIN_DESC_POSITION);
    EXPECT_VARIANT(m_desc_unterminated, MOTA_ERR_NBIN_DESC_UNTERMINATED);
}

static void test_a_model_that_declares_params_needs_a_pool_that_carries_them(void **state)
{
    (void)state;
    NEED_YOLO();
    EXPECT_VARIANT(m_params_without_pool, MOTA_ERR_NBIN_DESC_PARAMS);
    EXPECT_VARIANT(m_params_pool_is_activations, MOTA_ERR_NBIN_DESC_PARAMS);
}

static void m_bss_at_limit(void)
{
    put32(24, 0x40000000u | MOTA_NBIN_MAX_RW);
}
static void m_bss_past_limit(void)
{
    put32(24, 0x40000000u | (MOTA_NBIN_MAX_RW + 8));
}
static void m_acts_huge(void)
{
    put32(CTX + 24, 0xFFFFFFFFu);
}
static void m_params_sz_huge(void)
{
    put32(CTX + 28, MOTA_NBIN_MAX_EXTERNAL + 1);
}
static void m_ext_ram_wraps(void)
{
    put32(CTX + 32, 0xFFFFFFF9u);
} /* round8 would make it 0 */
static void m_blob_huge(void)
{
    put32(CTX + 48, 0x7FFFFFF8u);
}
static void m_reset_pool_huge(void)
{
    put32(DESC + 20 + 16, 0xFFFFFFF0u);
}

/* The hand-made legacy model with an RO image of ro bytes (>= 160, 4-aligned). */
static uint8_t *legacy_with_ro(uint32_t ro, size_t *len)
{
    uint8_t f[212];
    make_legacy(f);
    uint8_t *b = calloc(1, ro + 52);
    memcpy(b, f, 160);
    memcpy(b + ro, f + 160, 52); /* data image (44 bytes), REL (2 entries) */
    wr32(b + 16, 0x20000000u | ro);
    wr32(b + 36, 0x20000000u | (ro + 44));
    wr32(b + 40, 0x20000000u | (ro + 52));
    *len = ro + 52;
    return b;
}

static void test_sizes_above_their_documented_limits_are_refused(void **state)
{
    (void)state;
    NEED_YOLO();
    EXPECT_VARIANT(m_bss_221mb, MOTA_ERR_NBIN_SIZE_LIMIT);
    EXPECT_VARIANT(m_bss_at_limit, MOTA_OK);
    EXPECT_VARIANT(m_bss_past_limit, MOTA_ERR_NBIN_SIZE_LIMIT);
    EXPECT_VARIANT(m_acts_huge, MOTA_ERR_NBIN_SIZE_LIMIT);
    EXPECT_VARIANT(m_params_sz_huge, MOTA_ERR_NBIN_SIZE_LIMIT);
    EXPECT_VARIANT(m_ext_ram_wraps, MOTA_ERR_NBIN_SIZE_LIMIT);
    EXPECT_VARIANT(m_blob_huge, MOTA_ERR_NBIN_SIZE_LIMIT);
    EXPECT_VARIANT(m_pool_size_wraps, MOTA_ERR_NBIN_SIZE_LIMIT); /* a pool read from the blob */
    EXPECT_VARIANT(m_reset_pool_huge, MOTA_ERR_NBIN_SIZE_LIMIT);

    /* RO: 16 MiB is the flash segment of ST's linker script */
    struct mota_nbin_info in;
    size_t n;
    uint8_t *b = legacy_with_ro(MOTA_NBIN_MAX_RO, &n);
    assert_int_equal(mota_nbin_validate(b, n, &in), MOTA_OK);
    free(b);
    b = legacy_with_ro(MOTA_NBIN_MAX_RO + 4, &n);
    assert_int_equal(mota_nbin_validate(b, n, &in), MOTA_ERR_NBIN_SIZE_LIMIT);
    free(b);

    /* legacy: activations go to exec RAM after the RW segment, weights to flash */
    uint8_t f[212];
    n = make_legacy(f);
    wr32(f + 160 + 24, MOTA_NBIN_MAX_RW);
    assert_int_equal(mota_nbin_validate(f, n, &in), MOTA_OK);
    wr32(f + 160 + 24, 0xFFFFFFFFu); /* exec_ram_xip would wrap */
    assert_int_equal(mota_nbin_validate(f, n, &in), MOTA_ERR_NBIN_SIZE_LIMIT);
    n = make_legacy(f);
    wr32(f + 160 + 28, MOTA_NBIN_MAX_EXTERNAL + 4);
    assert_int_equal(mota_nbin_validate(f, n, &in), MOTA_ERR_NBIN_SIZE_LIMIT);
}

static void test_legacy_weights_bounds_are_checked_against_the_file_and_the_weights_size(void **state)
{
    (void)state;
    struct mota_nbin_info in;
    uint8_t f[212], g[232];
    size_t n = make_legacy(f);
    assert_int_equal(mota_nbin_validate(f, n, &in), MOTA_OK);
    assert_true(in.split);

    /* split: an end without a start is no file ST writes; ST's loader ignored it */
    wr32(f + 48, 0x200000E4u);
    assert_int_equal(mota_nbin_validate(f, n, &in), MOTA_ERR_NBIN_WEIGHTS);
    /* equal bounds (weights not in the file) still sit where the REL table ends */
    wr32(f + 44, 0x20000100u);
    wr32(f + 48, 0x20000100u);
    assert_int_equal(mota_nbin_validate(f, n, &in), MOTA_ERR_NBIN_REL_POSITION);
    wr32(f + 44, 0x200000D4u);
    wr32(f + 48, 0x200000D4u);
    assert_int_equal(mota_nbin_validate(f, n, &in), MOTA_OK);
    assert_true(in.split);

    /* appended: the 16 weights right after REL, to the end of the file */
    n = make_legacy(f);
    memcpy(g, f, 212);
    memset(g + 212, 0x5A, 16);
    wr32(g + 44, 0x200000D4u);
    wr32(g + 48, 0x200000E4u);
    assert_int_equal(mota_nbin_validate(g, 228, &in), MOTA_OK);
    assert_false(in.split);
    assert_int_equal(in.params_offset, 212);
    assert_int_equal(in.params_len, 16);
    wr32(g + 48, 0x200000E0u); /* 12 bytes, the rt_ctx says 16 */
    assert_int_equal(mota_nbin_validate(g, 228, &in), MOTA_ERR_NBIN_PARAMS_SIZE);
    wr32(g + 48, 0x200000E8u); /* past the file */
    assert_int_equal(mota_nbin_validate(g, 228, &in), MOTA_ERR_NBIN_TRUNCATED);
    wr32(g + 48, 0x200000E4u);
    assert_int_equal(mota_nbin_validate(g, 232, &in), MOTA_ERR_NBIN_TRAILING);
    wr32(g + 40, 0x200000D0u); /* REL end one entry early: the weights no longer follow it */
    assert_int_equal(mota_nbin_validate(g, 228, &in), MOTA_ERR_NBIN_REL_POSITION);
    wr32(g + 40, 0x200000D4u);
    wr32(g + 36, 0x200000D0u); /* REL start one entry late */
    assert_int_equal(mota_nbin_validate(g, 228, &in), MOTA_ERR_NBIN_REL_POSITION);
}

static void test_cpu_parts_and_toolchains_outside_the_known_tables_are_refused(void **state)
{
    (void)state;
    NEED_YOLO();
    struct mota_nbin_info in;
    uint8_t *img = cat;
    memcpy(img, yolo, yolo_len);
    static const uint16_t known[] = {0xC20, 0xC60, 0xC23, 0xC24, 0xC27, 0xD20, 0xD21, 0xD31, 0xD22, 0xD23};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        wr32(img + 4, 0x80785000u | known[i]);
        assert_int_equal(mota_nbin_parse(img, yolo_len, &in), MOTA_OK);
        assert_string_not_equal(mota_nbin_cpu_name(known[i]), "unknown");
    }
    assert_string_equal(mota_nbin_cpu_name(0xD31), "Cortex-M35P");
    static const uint16_t unknown[] = {0x000, 0xC21, 0xD30, 0xFFF};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        wr32(img + 4, 0x80785000u | unknown[i]);
        assert_int_equal(mota_nbin_parse(img, yolo_len, &in), MOTA_ERR_NBIN_CPU);
    }
    for (unsigned t = 0; t < 16; t++) {
        wr32(img + 4, 0x80705D22u | t << 16);
        assert_int_equal(mota_nbin_parse(img, yolo_len, &in), t >= 8 && t <= 10 ? MOTA_OK : MOTA_ERR_NBIN_TOOLCHAIN);
    }
    /* the legacy family reads the same fields */
    uint8_t f[212];
    size_t n = make_legacy(f);
    wr32(f + 4, 0x20085FFFu);
    assert_int_equal(mota_nbin_parse(f, n, &in), MOTA_ERR_NBIN_CPU);
    wr32(f + 4, 0x20035D21u);
    assert_int_equal(mota_nbin_parse(f, n, &in), MOTA_ERR_NBIN_TOOLCHAIN);
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
        cmocka_unit_test(test_legacy_crc_callback_words_are_found_only_in_a_60_byte_rt_ctx_with_null_slots),
        cmocka_unit_test(test_corrupted_models_are_refused_each_with_its_reason),
        cmocka_unit_test(test_a_rel_table_moved_inside_the_rw_data_is_refused),
        cmocka_unit_test(test_a_descriptor_table_moved_inside_the_data_is_refused),
        cmocka_unit_test(test_a_model_that_declares_params_needs_a_pool_that_carries_them),
        cmocka_unit_test(test_sizes_above_their_documented_limits_are_refused),
        cmocka_unit_test(test_legacy_weights_bounds_are_checked_against_the_file_and_the_weights_size),
        cmocka_unit_test(test_cpu_parts_and_toolchains_outside_the_known_tables_are_refused),
        cmocka_unit_test(test_crc32_check_value),
    };
    return cmocka_run_group_tests_name("nbin", tests, yolo_setup, yolo_teardown);
}
