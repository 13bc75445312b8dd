/* SPDX-License-Identifier: Apache-2.0 */
/* ECDSA P-256 verify through mbed TLS 2.28: the host's (Debian's libmbedtls), as the device's was before
 * p256-m (ecdsa_p256m.c). Not in the fuzz build: crypto.c's stand-in is. */
#include "mota/crypto.h"

#include "mota/err.h"

#include <mbedtls/ecdsa.h>
#include <mbedtls/ecp.h>
#include <string.h>

#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
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
