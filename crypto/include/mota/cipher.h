/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ciphers of SUIT's encrypted payloads (draft-ietf-suit-firmware-encryption): the AES-128 block (mbed TLS's,
 * on host and device alike), and mota's own modes on it, so that one implementation runs everywhere and a
 * transfer can resume: AES-CTR, AES-GCM whose running state can be saved and restored at a 16-byte boundary,
 * RFC 3394 key wrap (A128KW), and HKDF-SHA256 (the COSE KDF of ECDH-ES+A128KW). No heap, caller-provided
 * state. A context holds key material: mota_cipher_wipe() it when done.
 *
 * All functions that can fail return MOTA_OK or a negative enum mota_err code.
 */
#ifndef MOTA_CIPHER_H
#define MOTA_CIPHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOTA_AES128_KEY_LEN 16u
#define MOTA_AES_BLOCK 16u
#define MOTA_GCM_IV_LEN 12u
#define MOTA_GCM_TAG_LEN 16u
#define MOTA_KW_OVERHEAD 8u /* a wrapped key is 8 bytes longer than the key */

/* An AES-128 key schedule, for encryption or for decryption (opaque storage sized for mbed TLS's; it holds a
 * pointer into itself: never copy one, set it up where it stays). */
struct mota_aes128 {
    union {
        uint64_t align;
        uint8_t bytes[296];
    } opaque;
    bool decrypt; /* the schedule's direction */
};

void mota_aes128_setkey(struct mota_aes128 *aes, const uint8_t key[MOTA_AES128_KEY_LEN], bool decrypt);
void mota_aes128_block(struct mota_aes128 *aes, const uint8_t in[MOTA_AES_BLOCK], uint8_t out[MOTA_AES_BLOCK]);

/* AES-CTR: the 16-byte IV is the whole first counter block, incremented as a 128-bit big-endian number
 * (RFC 9459, as mbed TLS and OpenSSL do); started at any byte offset of the stream. */
struct mota_ctr {
    struct mota_aes128 *aes; /* an encryption schedule */
    uint8_t counter[MOTA_AES_BLOCK], stream[MOTA_AES_BLOCK];
    unsigned used; /* bytes of stream already used: 16 = none left */
};

void mota_ctr_start(struct mota_ctr *c, struct mota_aes128 *aes, const uint8_t iv[MOTA_AES_BLOCK], uint64_t offset);
/* out = in XOR the key stream (encrypts and decrypts alike); out may be in */
void mota_ctr_xor(struct mota_ctr *c, const uint8_t *in, uint8_t *out, size_t len);

/* AES-GCM with a 12-byte IV (NIST SP 800-38D), decrypting or encrypting, fed in pieces of any size. Its
 * running state after whole 16-byte blocks of text (the GHASH accumulator and the count) can be saved and a
 * decryption resumed from it, where the bytes before cannot be read again. */
struct mota_gcm {
    struct mota_aes128 *aes; /* an encryption schedule */
    uint32_t table[16][4];   /* multiples of the hash key H (Shoup's 4-bit method) */
    uint32_t y[4];           /* the GHASH state after the last whole block, as big-endian words */
    uint8_t j0[MOTA_AES_BLOCK], block[MOTA_AES_BLOCK];
    struct mota_ctr ctr;
    uint64_t aad_len, len;
    unsigned fill; /* bytes of the current text block so far, kept in block until it is whole */
    bool decrypt;
};

/* the additional data is authenticated at the start, whole */
void mota_gcm_start(struct mota_gcm *g, struct mota_aes128 *aes, const uint8_t iv[MOTA_GCM_IV_LEN], bool decrypt,
                    const uint8_t *aad, size_t aad_len);
void mota_gcm_update(struct mota_gcm *g, const uint8_t *in, uint8_t *out, size_t len);
/* decryption: MOTA_OK if the tag matches (constant time), MOTA_ERR_DECRYPT_TAG if not; encryption: writes it */
int mota_gcm_finish(struct mota_gcm *g, uint8_t tag[MOTA_GCM_TAG_LEN]);

/*
 * A decryption in two halves that run apart, for a receiver that decrypts ahead of what it has consumed
 * (a decoder may stop inside what was decrypted) and authenticates exactly what it consumed: absorb runs
 * GHASH over ciphertext only, stream XORs the key stream from where stream_at put it (a byte offset of the
 * text; mota_gcm_start puts it at 0). Use them instead of mota_gcm_update, never with it.
 */
void mota_gcm_absorb(struct mota_gcm *g, const uint8_t *ct, size_t len);
void mota_gcm_stream_at(struct mota_gcm *g, uint64_t offset);
void mota_gcm_stream(struct mota_gcm *g, const uint8_t *in, uint8_t *out, size_t len);

#define MOTA_GCM_STATE_LEN 16u
/* The state at the last whole 16-byte block of text: writes it and returns the text bytes it covers. */
uint64_t mota_gcm_state(const struct mota_gcm *g, uint8_t state[MOTA_GCM_STATE_LEN]);
/* A decryption or encryption started (mota_gcm_start, same key, IV and additional data) continued from a
 * state at `count` bytes of text; MOTA_ERR_ARG unless count is a multiple of 16. */
int mota_gcm_resume(struct mota_gcm *g, const uint8_t state[MOTA_GCM_STATE_LEN], uint64_t count);

/* RFC 3394 key wrap with the default IV: in_len = key length + 8, a multiple of 8, 24 to 40 bytes.
 * Unwrap: MOTA_ERR_ENC_UNWRAP when the integrity check fails (the wrong key-encryption key). */
int mota_kw_unwrap(const uint8_t kek[MOTA_AES128_KEY_LEN], const uint8_t *in, size_t in_len, uint8_t *out);
int mota_kw_wrap(const uint8_t kek[MOTA_AES128_KEY_LEN], const uint8_t *in, size_t in_len, uint8_t *out);

/* HKDF-SHA256 (RFC 5869): out_len up to 255 * 32 bytes; an empty salt is 32 zero bytes. */
int mota_hkdf_sha256(const uint8_t *salt, size_t salt_len, const uint8_t *ikm, size_t ikm_len, const uint8_t *info,
                     size_t info_len, uint8_t *out, size_t out_len);

/* ECDH on P-256 (ES-DH, RFC 9053): z = the x-coordinate of d * pub, pub an uncompressed point; MOTA_ERR_ENC_EPK
 * if pub is not a point of the curve, MOTA_ERR_KEY_INVALID if d is not a private key (0 or not below the
 * order). p256-m on the device, mbed TLS on the host. */
#define MOTA_ECDH_SECRET_LEN 32u
int mota_p256_ecdh(const uint8_t d[32], const uint8_t pub[65], uint8_t z[MOTA_ECDH_SECRET_LEN]);

/* Zero a context or key buffer (not optimised away). */
void mota_cipher_wipe(void *p, size_t len);

#endif
