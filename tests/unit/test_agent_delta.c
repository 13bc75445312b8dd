/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Delta containers on the agent (posix port): a delta from the model the device runs installs through
 * every coder, in any chunking, encrypted or not, and the image is checked from flash; a delta from
 * another model, or with no model running, is refused before anything is erased and the model that runs
 * stays; a signer's malformed regions are refused before any erase; a delta installed is an ordinary
 * model afterwards (re-validated at boot, rolled back to its source).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_fixture.h"

/* the old model, and the new one: the same with 3000 bytes of its code moved a little (a retrained layer) */
static const struct model_opts old_model = {.code_bytes = 30000, .params_bytes = 4000, .fill = 7, .noise = true};

static struct container_opts old_opts(void)
{
    return (struct container_opts){.seq = 1, .selftest = true, .split = true, .model = old_model};
}

static struct container_opts delta_opts(uint32_t compress, int encrypt)
{
    struct container_opts o = old_opts();
    o.seq = 2;
    o.model.tweak = 3000;
    o.compress = compress;
    o.encrypt = encrypt;
    o.delta_from = &old_model;
    return o;
}

static bool runs(struct mota_posix_device *d, const uint8_t *c, size_t len)
{
    struct mota_agent_model_info info;
    uint8_t md[32];
    manifest_digest(c, len, md);
    return mota_agent_model_info(&d->device.agent, 0, &info) == MOTA_OK && memcmp(info.digest, md, 32) == 0;
}

/* A device running the old model, confirmed. */
static struct mota_posix_device *running_old(uint8_t **c, size_t *len)
{
    struct container_opts o = old_opts();
    struct mota_posix_device *d = dev_new(1);
    *c = make_container(&o, len);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(send_container(&d->device.agent, *c, *len, 4096), MOTA_OK);
    assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
    return d;
}

static void test_a_delta_from_the_running_model_installs_through_each_coder_and_cipher(void **state)
{
    (void)state;
    static const struct {
        uint32_t compress;
        int encrypt;
        size_t chunk;
        bool code_only; /* the params after it compressed as they are: not patched */
    } cases[] = {
        {MOTA_DECOMP_LZMA, 0, 4096, false},
        {MOTA_DECOMP_LZMA, 0, 1, false},
        {MOTA_DECOMP_LZMA, 0, 777, true},
        {MOTA_DECOMP_DEFLATE, 0, 333, false},
        {MOTA_DECOMP_LZ4, 0, 1000, false},
        {MOTA_DECOMP_DEFLATE, MOTA_ENC_A128CTR, 4096, false},
        {MOTA_DECOMP_LZMA, MOTA_ENC_A128CTR, 4096, false},
        {MOTA_DECOMP_LZMA, MOTA_ENC_A128GCM, 4096, false},
        {MOTA_DECOMP_LZMA, MOTA_ENC_A128GCM, 61, false},
    };
    for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
        uint8_t *c1;
        size_t l1, l2;
        struct mota_posix_device *d = running_old(&c1, &l1);
        struct container_opts o = delta_opts(cases[t].compress, cases[t].encrypt);
        o.delta_code_only = cases[t].code_only;
        uint8_t *c2 = make_container(&o, &l2);
        int ret = send_container(&d->device.agent, c2, l2, cases[t].chunk);
        if (ret != MOTA_OK)
            fail_msg("case %zu: %s", t, mota_err_name(ret));
        assert_true(runs(d, c2, l2));
        assert_int_equal(d->sim.runs, 2);       /* its self-test ran */
        assert_int_equal(dev_boot(d), MOTA_OK); /* re-validated from flash: an ordinary model now */
        assert_true(runs(d, c2, l2));
        assert_int_equal(mota_agent_rollback(&d->device.agent, 0), MOTA_OK); /* its source is intact */
        assert_true(runs(d, c1, l1));
        if (t == 0)
            print_message("a %zu-byte delta container for a %zu-byte one\n", l2, l1);
        free(c1);
        free(c2);
        dev_free(d);
    }
}

static void test_a_delta_from_another_model_is_refused_before_any_erase(void **state)
{
    (void)state;
    uint8_t *c2;
    size_t l1, l2;
    struct container_opts other = old_opts();
    other.model.fill = 8; /* another model runs */
    struct mota_posix_device *d = dev_new(1);
    uint8_t *co = make_container(&other, &l1);
    struct container_opts o = delta_opts(MOTA_DECOMP_LZMA, 0);
    c2 = make_container(&o, &l2);
    /* no model at all: nothing to predict from */
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(send_container(&d->device.agent, c2, l2, 4096), MOTA_ERR_DELTA_SOURCE);
    assert_int_equal(send_container(&d->device.agent, co, l1, 4096), MOTA_OK);
    assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
    uint64_t ops = d->pf.ops;
    assert_int_equal(send_container(&d->device.agent, c2, l2, 4096), MOTA_ERR_DELTA_SOURCE);
    assert_int_equal(mota_agent_last_error(&d->device.agent, 0), MOTA_ERR_DELTA_SOURCE);
    assert_true(d->pf.ops == ops); /* not a sector erased, not a byte programmed */
    assert_true(runs(d, co, l1));
    free(co);
    dev_free(d);
    free(c2);
}

static void test_malformed_regions_are_refused_before_any_erase(void **state)
{
    (void)state;
    static uint8_t r[13 * 65];
    size_t bad_len;
    struct {
        const char *what;
        uint32_t v[6];
        size_t n;
    } cases[] = {
        {"overlapping", {0, 100, 0, 50, 100, 0}, 24},
        {"out of order", {200, 10, 0, 100, 10, 0}, 24},
        {"past the image", {0, 0xFFFFFF00u, 0, 0, 0, 0}, 12},
        {"past the source", {0, 10, 0xFFFFFFF8u, 0, 0, 0}, 12},
        {"empty", {0, 0, 0, 0, 0, 0}, 12},
        {"a partial record", {0, 10, 0, 0, 0, 0}, 11},
    };
    uint8_t *c1;
    size_t l1;
    struct mota_posix_device *d = running_old(&c1, &l1);
    for (size_t t = 0; t <= sizeof(cases) / sizeof(cases[0]); t++) {
        memset(r, 0, sizeof(r));
        if (t < sizeof(cases) / sizeof(cases[0])) {
            for (size_t i = 0; i < 6; i++)
                wr32le(r + 4 * i, cases[t].v[i]);
            bad_len = cases[t].n;
        } else { /* 65 regions: more than the patcher holds */
            for (uint32_t i = 0; i < 65; i++)
                wr32le(r + 12 * i, i * 2), wr32le(r + 12 * i + 4, 1), wr32le(r + 12 * i + 8, 0);
            bad_len = 65 * 12;
        }
        struct container_opts o = delta_opts(MOTA_DECOMP_LZMA, 0); /* a hostile signer's regions */
        o.delta_regions = r;
        o.delta_regions_len = bad_len;
        size_t l2;
        uint8_t *c2 = make_container(&o, &l2);
        uint64_t ops = d->pf.ops;
        int ret = send_container(&d->device.agent, c2, l2, 4096);
        if (ret != MOTA_ERR_DELTA_REGIONS || d->pf.ops != ops)
            fail_msg("%s: %s, %llu flash operations", t < sizeof(cases) / sizeof(cases[0]) ? cases[t].what : "65",
                     mota_err_name(ret), (unsigned long long)(d->pf.ops - ops));
        assert_true(runs(d, c1, l1));
        free(c2);
    }
    free(c1);
    dev_free(d);
}

/* A signer's delta that decodes, to another image: regions that are sound but not the diff's (one byte
 * further into the source). Its image digest, checked from flash, refuses it; the old model runs on. */
static void test_a_delta_that_patches_to_another_image_never_installs(void **state)
{
    (void)state;
    uint8_t *c1, r[12];
    size_t l1, l2;
    struct mota_posix_device *d = running_old(&c1, &l1);
    wr32le(r, 0), wr32le(r + 4, 3000), wr32le(r + 8, 1); /* inside the code and the params */
    struct container_opts o = delta_opts(MOTA_DECOMP_LZMA, 0);
    o.delta_regions = r;
    o.delta_regions_len = sizeof(r);
    uint8_t *c2 = make_container(&o, &l2);
    assert_int_equal(send_container(&d->device.agent, c2, l2, 4096), MOTA_ERR_DECOMP_IMAGE_DIGEST);
    assert_true(runs(d, c1, l1));
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_true(runs(d, c1, l1));
    free(c1);
    free(c2);
    dev_free(d);
}

int main(void)
{
    dev_keys();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_delta_from_the_running_model_installs_through_each_coder_and_cipher),
        cmocka_unit_test(test_a_delta_from_another_model_is_refused_before_any_erase),
        cmocka_unit_test(test_malformed_regions_are_refused_before_any_erase),
        cmocka_unit_test(test_a_delta_that_patches_to_another_image_never_installs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
