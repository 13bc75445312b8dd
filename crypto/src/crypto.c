/* SPDX-License-Identifier: Apache-2.0 */
/* Crypto shim over mbed TLS 2.28: ECDSA P-256 verify, key ids. SHA-256: sha256_mbedtls.c (device),
 * sha256_openssl.c (host). */
#include "mota/crypto.h"

#include "mota/err.h"

#include <mbedtls/ecdsa.h>
#include <mbedtls/ecp.h>
#include <string.h>

#ifdef MOTA_CRYPTO_STATIC_ARENA
#include <mbedtls/memory_buffer_alloc.h>
#endif


#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#if defined(__arm__) || !defined(__clang__)
#error "fuzz signatures exist only in the host's libFuzzer build (-DMOTA_FUZZ=ON)"
#endif
/* The fuzz build's seam (docs/architecture.md, "Fuzzing past the signature"): a real ES256 verify costs
 * milliseconds, so the fuzzers could neither sign their mutants nor run fast. Here a signature is the
 * hash followed by the first half of SHA-256(pub): everything around the primitive (key selection by
 * kid, the Sig_structure, every check after it) runs as in production. */
void mota_fuzz_sign(const uint8_t pub[MOTA_P256_PUB_LEN], const uint8_t hash[MOTA_SHA256_LEN],
                    uint8_t sig[MOTA_P256_SIG_LEN])
{
    uint8_t kh[MOTA_SHA256_LEN];
    mota_sha256(pub, MOTA_P256_PUB_LEN, kh);
    memcpy(sig, hash, MOTA_SHA256_LEN);
    memcpy(sig + MOTA_SHA256_LEN, kh, MOTA_P256_SIG_LEN - MOTA_SHA256_LEN);
}

int mota_ecdsa_p256_verify(const uint8_t pub[MOTA_P256_PUB_LEN], const uint8_t hash[MOTA_SHA256_LEN],
                           const uint8_t sig[MOTA_P256_SIG_LEN])
{
    uint8_t want[MOTA_P256_SIG_LEN];
    if (pub == NULL || hash == NULL || sig == NULL)
        return MOTA_ERR_ARG;
    if (pub[0] != 0x04)
        return MOTA_ERR_KEY_INVALID;
    mota_fuzz_sign(pub, hash, want);
    return mota_ct_memcmp(want, sig, MOTA_P256_SIG_LEN) == 0 ? MOTA_OK : MOTA_ERR_SIGNATURE;
}
#else
/* The P-256 group is loaded once and kept: with MBEDTLS_ECP_FIXED_POINT_OPTIM
 * it caches the comb table of the base point (about 1 KiB), and every verify
 * after the first is about 5 M instructions cheaper on a Cortex-M55. */
static mbedtls_ecp_group p256;
static int p256_loaded;

static mbedtls_ecp_group *group(void)
{
    if (!p256_loaded) {
        mbedtls_ecp_group_init(&p256);
        if (mbedtls_ecp_group_load(&p256, MBEDTLS_ECP_DP_SECP256R1) != 0) {
            mbedtls_ecp_group_free(&p256);
            return NULL;
        }
        p256_loaded = 1;
    }
    return &p256;
}

int mota_ecdsa_p256_verify(const uint8_t pub[MOTA_P256_PUB_LEN], const uint8_t hash[MOTA_SHA256_LEN],
                           const uint8_t sig[MOTA_P256_SIG_LEN])
{
    int ret = MOTA_ERR_SIGNATURE;
    mbedtls_ecp_group *grp = NULL;
    mbedtls_ecp_point q;
    mbedtls_mpi r, s;

    mbedtls_ecp_point_init(&q);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);

    if (pub == NULL || hash == NULL || sig == NULL) {
        ret = MOTA_ERR_ARG;
        goto out;
    }
    if ((grp = group()) == NULL) {
        ret = MOTA_ERR_CRYPTO;
        goto out;
    }
    int k = mbedtls_ecp_point_read_binary(grp, &q, pub, MOTA_P256_PUB_LEN);
    if (k == 0)
        k = mbedtls_ecp_check_pubkey(grp, &q);
    if (k != 0) { /* out of arena memory is not a bad key */
        ret = k == MBEDTLS_ERR_MPI_ALLOC_FAILED ? MOTA_ERR_CRYPTO : MOTA_ERR_KEY_INVALID;
        goto out;
    }
    if (mbedtls_mpi_read_binary(&r, sig, 32) != 0 || mbedtls_mpi_read_binary(&s, sig + 32, 32) != 0) {
        /* only an allocation can fail here */
        ret = MOTA_ERR_CRYPTO;
        goto out;
    }
    int v = mbedtls_ecdsa_verify(grp, hash, MOTA_SHA256_LEN, &q, &r, &s);
    if (v != 0) {
        /* a wrong signature, or the verify could not run (the arena too small): not the same answer */
        ret = v == MBEDTLS_ERR_ECP_VERIFY_FAILED || v == MBEDTLS_ERR_ECP_INVALID_KEY ? MOTA_ERR_SIGNATURE
                                                                                     : MOTA_ERR_CRYPTO;
        goto out;
    }
    ret = MOTA_OK;
out:
    mbedtls_mpi_free(&s);
    mbedtls_mpi_free(&r);
    mbedtls_ecp_point_free(&q);
    return ret;
}
#endif /* FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION */

void mota_key_id(const uint8_t pub[MOTA_P256_PUB_LEN], uint8_t kid[MOTA_KEY_ID_LEN])
{
    uint8_t h[MOTA_SHA256_LEN];
    mota_sha256(pub, MOTA_P256_PUB_LEN, h);
    memcpy(kid, h, MOTA_KEY_ID_LEN);
}

int mota_ct_memcmp(const void *a, const void *b, size_t len)
{
    const volatile uint8_t *pa = a;
    const volatile uint8_t *pb = b;
    uint8_t diff = 0;
    for (size_t i = 0; i < len; i++)
        diff |= (uint8_t)(pa[i] ^ pb[i]);
    return diff != 0;
}

int mota_crypto_setup(void *arena, size_t len)
{
#ifdef MOTA_CRYPTO_STATIC_ARENA
    if (arena == NULL || len < 1024)
        return MOTA_ERR_ARG;
    if (p256_loaded) { /* its memory belongs to the arena being replaced */
        mbedtls_ecp_group_free(&p256);
        p256_loaded = 0;
    }
    mbedtls_memory_buffer_alloc_init(arena, len);
#else
    (void)arena;
    (void)len;
#endif
    return MOTA_OK;
}
