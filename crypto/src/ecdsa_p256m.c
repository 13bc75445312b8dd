/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ECDSA P-256 verify on the device through p256-m (mbed TLS 3.6.6's 3rdparty/p256-m, Debian's source,
 * pinned: scripts/fetch-cross-deps.sh): about 3.8 KB of code at -O2, no heap, 0.8 KB of stack, the same
 * instruction count for every signature (docs/porting.md). The key is checked on the curve in every verify
 * (about 7 k of its 13 M instructions): a key that is not is reported as such (MOTA_ERR_KEY_INVALID),
 * never as a bad signature; `mota provision` and `mota keygen` validate keys before any reaches a
 * device. Not in the fuzz build: crypto.c's stand-in is.
 */
#include "mota/crypto.h"

#include "mota/err.h"

#include <p256-m.h>
#include <string.h>

#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
int mota_ecdsa_p256_verify(const uint8_t pub[MOTA_P256_PUB_LEN], const uint8_t hash[MOTA_SHA256_LEN],
                           const uint8_t sig[MOTA_P256_SIG_LEN])
{
    int ret = MOTA_ERR_SIGNATURE;
    if (pub == NULL || hash == NULL || sig == NULL)
        return MOTA_ERR_ARG;
    if (pub[0] != 0x04) /* uncompressed points only: [0x04, X, Y] */
        return MOTA_ERR_KEY_INVALID;
    int v = p256_ecdsa_verify(sig, pub + 1, hash, MOTA_SHA256_LEN);
    if (v == P256_SUCCESS)
        ret = MOTA_OK;
    else if (v == P256_INVALID_PUBKEY) /* not on the curve: the key, not the container */
        ret = MOTA_ERR_KEY_INVALID;
    return ret;
}
#endif /* FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION */
