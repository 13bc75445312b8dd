/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host-only crypto: key files, key generation, random bytes and deterministic
 * signing.
 * Linked from target mota_crypto_sign, which firmware never links.
 */
#ifndef MOTA_CRYPTO_SIGN_H
#define MOTA_CRYPTO_SIGN_H

#include "mota/crypto.h"

#define MOTA_P256_PRIV_LEN 32u

struct mota_p256_key {
    uint8_t d[MOTA_P256_PRIV_LEN];  /* private scalar, big-endian (zero if public only) */
    uint8_t pub[MOTA_P256_PUB_LEN]; /* uncompressed public point */
    int has_private;
};

/*
 * Parse a key file's bytes: PEM or DER; SEC1 ("EC PRIVATE KEY", as written by
 * `openssl ecparam -genkey`, parameters block allowed before it), PKCS#8
 * ("PRIVATE KEY") or SubjectPublicKeyInfo ("PUBLIC KEY"). Only P-256 keys are
 * accepted (MOTA_ERR_KEY_INVALID otherwise). Encrypted keys are not supported.
 */
int mota_key_parse(const uint8_t *buf, size_t len, struct mota_p256_key *key);

/*
 * n bytes from the host's CTR-DRBG, seeded from the system entropy source:
 * content keys, IVs, key-encryption keys. MOTA_OK or MOTA_ERR_RANDOM (out
 * is then wiped).
 */
int mota_random(uint8_t *out, size_t n);

/* Generate a fresh P-256 key from the system entropy source. */
int mota_key_generate(struct mota_p256_key *key);

/*
 * PEM encodings of a key: private as SEC1 "EC PRIVATE KEY", public as
 * SubjectPublicKeyInfo "PUBLIC KEY". Writes a NUL-terminated string into out.
 */
int mota_key_write_private_pem(const struct mota_p256_key *key, char *out, size_t cap);
int mota_key_write_public_pem(const struct mota_p256_key *key, char *out, size_t cap);

/* Deterministic ECDSA P-256 (RFC 6979, SHA-256): sig = r||s over hash. */
int mota_ecdsa_p256_sign(const struct mota_p256_key *key, const uint8_t hash[MOTA_SHA256_LEN],
                         uint8_t sig[MOTA_P256_SIG_LEN]);

/*
 * An ECDSA signature as DER (ECDSA-Sig-Value, RFC 3279: what openssl, cloud
 * KMSs and most HSM front ends return) to COSE's r||s. MOTA_ERR_ARG unless
 * der is exactly one SEQUENCE of two positive INTEGERs of at most 32 bytes.
 */
int mota_ecdsa_sig_from_der(const uint8_t *der, size_t len, uint8_t sig[MOTA_P256_SIG_LEN]);

/* SHA-1, for UUID version 5 names only (never for integrity). */
void mota_sha1(const void *data, size_t len, uint8_t out[20]);

#endif /* MOTA_CRYPTO_SIGN_H */
