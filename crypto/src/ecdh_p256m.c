/* SPDX-License-Identifier: Apache-2.0 */
/* ECDH on P-256 on the device through p256-m (the same library as the verify, ecdsa_p256m.c): no heap, the
 * peer's point checked on the curve. */
#include "mota/cipher.h"
#include "mota/err.h"

#include <p256-m.h>

int mota_p256_ecdh(const uint8_t d[32], const uint8_t pub[65], uint8_t z[MOTA_ECDH_SECRET_LEN])
{
    if (d == NULL || pub == NULL || z == NULL)
        return MOTA_ERR_ARG;
    if (pub[0] != 0x04) /* uncompressed points only */
        return MOTA_ERR_ENC_EPK;
    int v = p256_ecdh_shared_secret(z, d, pub + 1);
    if (v == P256_SUCCESS)
        return MOTA_OK;
    mota_cipher_wipe(z, MOTA_ECDH_SECRET_LEN);
    return v == P256_INVALID_PUBKEY ? MOTA_ERR_ENC_EPK : MOTA_ERR_KEY_INVALID;
}
