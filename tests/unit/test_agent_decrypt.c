/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Encrypted containers on the agent (posix port): decrypted while received, in any chunking, for every
 * cipher and key distribution, compressed or not; a wrong, missing or unusable key refused before any
 * erase; an altered ciphertext refused by its tag before anything is installed; and the keys nowhere on
 * flash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_fixture.h"

static void expect_active(struct mota_posix_device *d, const uint8_t *c, size_t len)
{
    struct mota_agent_model_info info;
    uint8_t md[32];
    manifest_digest(c, len, md);
    assert_int_equal(mota_agent_model_info(&d->device.agent, 0, &info), MOTA_OK);
    assert_memory_equal(info.digest, md, 32);
}

/* Whether the n bytes of needle are anywhere in the device's flash. */
static bool on_flash(const struct mota_posix_device *d, const uint8_t *needle, size_t n)
{
    for (size_t i = 0; i + n <= d->pf.size; i++)
        if (d->pf.mem[i] == needle[0] && memcmp(d->pf.mem + i, needle, n) == 0)
            return true;
    return false;
}

/* Every cipher, with a KEK and with ECDH, plain and deflated, in chunks from 1 byte up: installed and run,
 * its self-test passed, the content key and the key-encryption key nowhere on flash. */
static void test_encrypted_containers_install_in_any_chunking(void **state)
{
    (void)state;
    static const struct {
        int alg;
        bool ecdh;
        uint32_t compress;
        size_t chunk;
    } cases[] = {
        {MOTA_ENC_A128GCM, false, 0, 4096},
        {MOTA_ENC_A128CTR, false, 0, 1000},
        {MOTA_ENC_A128GCM, true, 0, 61},
        {MOTA_ENC_A128CTR, true, MOTA_DECOMP_LZ4, 4093},
        {MOTA_ENC_A128GCM, false, MOTA_DECOMP_DEFLATE, 1},
        {MOTA_ENC_A128GCM, false, MOTA_DECOMP_LZ4, 17},
        {MOTA_ENC_A128GCM, false, MOTA_DECOMP_LZMA, 61},
        {MOTA_ENC_A128CTR, true, MOTA_DECOMP_LZMA, 1},
    };
    for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
        struct mota_posix_device *d = dev_new(1);
        struct container_opts o = {
            .seq = 1 + t,
            .selftest = true,
            .split = true,
            .encrypt = cases[t].alg,
            .enc_ecdh = cases[t].ecdh,
            .compress = cases[t].compress,
            .model = {
                .code_bytes = cases[t].chunk == 1 ? 6000 : 30000, .params_bytes = 3000, .fill = 5, .noise = true}};
        size_t len;
        uint8_t *c = make_container(&o, &len);
        assert_int_equal(dev_boot(d), MOTA_OK);
        int ret = send_container(&d->device.agent, c, len, cases[t].chunk);
        if (ret != MOTA_OK)
            fail_msg("case %zu: %s", t, mota_err_name(ret));
        expect_active(d, c, len);
        assert_int_equal(d->sim.runs, 1);
        assert_false(on_flash(d, test_cek, sizeof(test_cek)));
        assert_false(on_flash(d, dev_kek.k, sizeof(dev_kek.k)));
        assert_int_equal(dev_boot(d), MOTA_OK); /* and it stays, re-validated from flash */
        expect_active(d, c, len);
        free(c);
        dev_free(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encrypted_containers_install_in_any_chunking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
