/* SPDX-License-Identifier: Apache-2.0 */
/* The crypto shim: SHA-256, RFC 6979 signing, verification, key files, key ids. */
#include "mota/crypto_sign.h"
#include "mota/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

static void unhex(const char *h, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

/* RFC 6979 A.2.5: P-256, SHA-256, message "sample". */
static void rfc6979_key(struct mota_p256_key *k)
{
    memset(k, 0, sizeof(*k));
    unhex("C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721", k->d, 32);
    k->pub[0] = 0x04;
    unhex("60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6", k->pub + 1, 32);
    unhex("7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299", k->pub + 33, 32);
    k->has_private = 1;
}

static void test_sha256_matches_fips_vector_in_one_call_and_streamed(void **state)
{
    (void)state;
    uint8_t want[32], got[32];
    unhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", want, 32);
    mota_sha256("abc", 3, got);
    assert_memory_equal(got, want, 32);
    struct mota_sha256 ctx;
    mota_sha256_init(&ctx);
    mota_sha256_update(&ctx, "a", 1);
    mota_sha256_update(&ctx, "", 0);
    mota_sha256_update(&ctx, "bc", 2);
    mota_sha256_finish(&ctx, got);
    assert_memory_equal(got, want, 32);
}

static void test_signing_is_deterministic_per_rfc6979(void **state)
{
    (void)state;
    struct mota_p256_key k;
    uint8_t h[32], sig[64], want[64];
    rfc6979_key(&k);
    mota_sha256("sample", 6, h);
    assert_int_equal(mota_ecdsa_p256_sign(&k, h, sig), MOTA_OK);
    unhex("EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716"
          "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8",
          want, 64);
    assert_memory_equal(sig, want, 64);
    assert_int_equal(mota_ecdsa_p256_verify(k.pub, h, sig), MOTA_OK);
}

static void test_verify_rejects_any_changed_bit(void **state)
{
    (void)state;
    struct mota_p256_key k;
    uint8_t h[32], sig[64];
    rfc6979_key(&k);
    mota_sha256("sample", 6, h);
    assert_int_equal(mota_ecdsa_p256_sign(&k, h, sig), MOTA_OK);
    for (int bit = 0; bit < 512; bit += 7) {
        sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(mota_ecdsa_p256_verify(k.pub, h, sig), MOTA_ERR_SIGNATURE);
        sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    h[5] ^= 0x40;
    assert_int_equal(mota_ecdsa_p256_verify(k.pub, h, sig), MOTA_ERR_SIGNATURE);
}

static void test_verify_rejects_a_point_off_the_curve(void **state)
{
    (void)state;
    struct mota_p256_key k;
    uint8_t h[32] = {0}, sig[64] = {1};
    rfc6979_key(&k);
    k.pub[64] ^= 1;
    assert_int_equal(mota_ecdsa_p256_verify(k.pub, h, sig), MOTA_ERR_KEY_INVALID);
}

static void test_generated_keys_round_trip_through_pem(void **state)
{
    (void)state;
    struct mota_p256_key k, priv, pub;
    char pem[512], pubpem[512];
    uint8_t h[32], sig[64];
    assert_int_equal(mota_key_generate(&k), MOTA_OK);
    assert_int_equal(mota_key_write_private_pem(&k, pem, sizeof(pem)), MOTA_OK);
    assert_int_equal(mota_key_write_public_pem(&k, pubpem, sizeof(pubpem)), MOTA_OK);
    assert_non_null(strstr(pem, "BEGIN EC PRIVATE KEY"));
    assert_non_null(strstr(pubpem, "BEGIN PUBLIC KEY"));
    assert_int_equal(mota_key_parse((const uint8_t *)pem, strlen(pem), &priv), MOTA_OK);
    assert_int_equal(mota_key_parse((const uint8_t *)pubpem, strlen(pubpem), &pub), MOTA_OK);
    assert_true(priv.has_private);
    assert_false(pub.has_private);
    assert_memory_equal(priv.pub, k.pub, 65);
    assert_memory_equal(pub.pub, k.pub, 65);
    mota_sha256("x", 1, h);
    assert_int_equal(mota_ecdsa_p256_sign(&priv, h, sig), MOTA_OK);
    assert_int_equal(mota_ecdsa_p256_verify(pub.pub, h, sig), MOTA_OK);
    assert_int_equal(mota_ecdsa_p256_sign(&pub, h, sig), MOTA_ERR_ARG);
}

static void test_garbage_and_other_curves_are_not_keys(void **state)
{
    (void)state;
    struct mota_p256_key k;
    /* a P-384 public key (SubjectPublicKeyInfo) */
    const char *p384 = "-----BEGIN PUBLIC KEY-----\n"
                       "MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE54snKS62P7tiQ/y0l7G+D9z005tWFe5u\n"
                       "AJFB5UPORUjdBDak/INLi8cmrVGS45ZstpZOrrG6nt6+j0a902ojtwS2nYlKEngA\n"
                       "4O16euQRoySkpocMtkG5EN9ilM2PUbTm\n"
                       "-----END PUBLIC KEY-----\n";
    assert_int_equal(mota_key_parse((const uint8_t *)"hello", 5, &k), MOTA_ERR_KEY_INVALID);
    assert_int_equal(mota_key_parse((const uint8_t *)p384, strlen(p384), &k), MOTA_ERR_KEY_INVALID);
}

static void test_key_id_is_a_prefix_of_the_point_hash(void **state)
{
    (void)state;
    struct mota_p256_key k;
    uint8_t kid[16], h[32];
    rfc6979_key(&k);
    mota_key_id(k.pub, kid);
    mota_sha256(k.pub, 65, h);
    assert_memory_equal(kid, h, 16);
    assert_int_equal(mota_ct_memcmp(kid, h, 16), 0);
    assert_int_not_equal(mota_ct_memcmp(kid, h + 1, 16), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_matches_fips_vector_in_one_call_and_streamed),
        cmocka_unit_test(test_signing_is_deterministic_per_rfc6979),
        cmocka_unit_test(test_verify_rejects_any_changed_bit),
        cmocka_unit_test(test_verify_rejects_a_point_off_the_curve),
        cmocka_unit_test(test_generated_keys_round_trip_through_pem),
        cmocka_unit_test(test_garbage_and_other_curves_are_not_keys),
        cmocka_unit_test(test_key_id_is_a_prefix_of_the_point_hash),
    };
    return cmocka_run_group_tests_name("crypto", tests, NULL, NULL);
}
