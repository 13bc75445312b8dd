/* SPDX-License-Identifier: Apache-2.0 */
/* ECDH on P-256 on the host through mbed TLS 2.28 (Debian's): the same answers as the device's p256-m
 * (ecdh_p256m.c), the peer's point checked on the curve, the private key below the order. */
#include "mota/cipher.h"
#include "mota/err.h"

#include <mbedtls/ecp.h>

int mota_p256_ecdh(const uint8_t d[32], const uint8_t pub[65], uint8_t z[MOTA_ECDH_SECRET_LEN])
{
    int ret = MOTA_ERR_CRYPTO;
    mbedtls_ecp_group grp;
    mbedtls_ecp_point q, r;
    mbedtls_mpi k;
    if (d == NULL || pub == NULL || z == NULL)
        return MOTA_ERR_ARG;
    mbedtls_ecp_group_init(&grp);
    mbedtls_ecp_point_init(&q);
    mbedtls_ecp_point_init(&r);
    mbedtls_mpi_init(&k);
    if (mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_SECP256R1) != 0 || mbedtls_mpi_read_binary(&k, d, 32) != 0)
        goto out;
    if (pub[0] != 0x04 || mbedtls_ecp_point_read_binary(&grp, &q, pub, 65) != 0 ||
        mbedtls_ecp_check_pubkey(&grp, &q) != 0) {
        ret = MOTA_ERR_ENC_EPK;
        goto out;
    }
    if (mbedtls_ecp_check_privkey(&grp, &k) != 0) {
        ret = MOTA_ERR_KEY_INVALID;
        goto out;
    }
    /* no RNG of ours: mbed TLS blinds the multiplication with its internal one */
    if (mbedtls_ecp_mul(&grp, &r, &k, &q, NULL, NULL) == 0 && mbedtls_mpi_write_binary(&r.X, z, 32) == 0)
        ret = MOTA_OK;
out:
    mbedtls_mpi_free(&k);
    mbedtls_ecp_point_free(&r);
    mbedtls_ecp_point_free(&q);
    mbedtls_ecp_group_free(&grp);
    return ret;
}
