/* SPDX-License-Identifier: Apache-2.0 */
/* What every build of the crypto shim shares: key ids, a constant-time compare, and the fuzz build's
 * stand-in for the signature. The ECDSA P-256 verify: ecdsa_p256m.c (device, p256-m),
 * ecdsa_mbedtls.c (host, mbed TLS 2.28); SHA-256: sha256_mbedtls.c (device), sha256_openssl.c (host). */
#include "mota/crypto.h"

#include "mota/err.h"

#include <string.h>

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
