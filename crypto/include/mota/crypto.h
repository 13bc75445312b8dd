/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota crypto shim: the only door to mbed TLS (and, on the host, OpenSSL).
 *
 * Device and host: streaming SHA-256, ECDSA P-256 verification, key ids.
 * Signing, key generation and key files are host-only: see crypto_sign.h.
 * SHA-256 is mbed TLS's on the device and OpenSSL libcrypto's on the host
 * (its SHA-NI / ARMv8 code: sha256_openssl.c). No other directory includes
 * either's headers; contexts here are opaque storage sized for both
 * libraries' structures (checked at compile time).
 *
 * All functions return MOTA_OK or a negative enum mota_err code.
 */
#ifndef MOTA_CRYPTO_H
#define MOTA_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define MOTA_SHA256_LEN 32u
#define MOTA_P256_PUB_LEN 65u /* uncompressed point: 0x04 || X || Y */
#define MOTA_P256_SIG_LEN 64u /* r || s, big-endian, 32 bytes each */
#define MOTA_KEY_ID_LEN 16u

/* Opaque streaming SHA-256 state (caller-allocated, no heap). */
struct mota_sha256 {
    union {
        uint64_t align;
        uint8_t bytes[128];
    } opaque;
};

void mota_sha256_init(struct mota_sha256 *ctx);
void mota_sha256_update(struct mota_sha256 *ctx, const void *data, size_t len);
void mota_sha256_finish(struct mota_sha256 *ctx, uint8_t out[MOTA_SHA256_LEN]);
void mota_sha256(const void *data, size_t len, uint8_t out[MOTA_SHA256_LEN]);

/*
 * The state of a hash after its whole 64-byte blocks, for a transfer that
 * resumes where the hashed bytes cannot be read again (a compressed payload):
 * writes the 32-byte state (its eight words, little-endian) and returns how many bytes it
 * covers, a multiple of 64; the bytes after those are not in it.
 * mota_sha256_resume() continues a hash from such a state.
 */
#define MOTA_SHA256_STATE_LEN 32u
uint64_t mota_sha256_midstate(const struct mota_sha256 *ctx, uint8_t state[MOTA_SHA256_STATE_LEN]);
/* MOTA_ERR_ARG unless count is a multiple of 64. */
int mota_sha256_resume(struct mota_sha256 *ctx, const uint8_t state[MOTA_SHA256_STATE_LEN], uint64_t count);

/*
 * Verify an ES256 signature: sig = r||s over the 32-byte message hash, pub an
 * uncompressed P-256 point. MOTA_OK if valid, MOTA_ERR_SIGNATURE if not,
 * MOTA_ERR_KEY_INVALID if pub is not a point on the curve.
 */
int mota_ecdsa_p256_verify(const uint8_t pub[MOTA_P256_PUB_LEN], const uint8_t hash[MOTA_SHA256_LEN],
                           const uint8_t sig[MOTA_P256_SIG_LEN]);

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/* libFuzzer builds only: the signature mota_ecdsa_p256_verify accepts there (crypto.c says why). */
void mota_fuzz_sign(const uint8_t pub[MOTA_P256_PUB_LEN], const uint8_t hash[MOTA_SHA256_LEN],
                    uint8_t sig[MOTA_P256_SIG_LEN]);
#endif

/*
 * Key id of a public key: the first 16 bytes of SHA-256(0x04 || X || Y).
 * It names the key in the COSE header (label 4) and in device key slots.
 */
void mota_key_id(const uint8_t pub[MOTA_P256_PUB_LEN], uint8_t kid[MOTA_KEY_ID_LEN]);

/* Constant-time comparison: 0 if equal. */
int mota_ct_memcmp(const void *a, const void *b, size_t len);


#endif /* MOTA_CRYPTO_H */
