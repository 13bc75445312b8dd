/* SPDX-License-Identifier: Apache-2.0 */
/* The AES-128 block from mbed TLS 2.28 (Debian's on the host, the device's own build): the one call mota's
 * cipher modes (cipher.c) stand on. */
#include "mota/cipher.h"

#include <mbedtls/aes.h>

_Static_assert(sizeof(mbedtls_aes_context) <= sizeof(((struct mota_aes128 *)0)->opaque),
               "struct mota_aes128 is too small for mbed TLS's context");

void mota_aes128_setkey(struct mota_aes128 *aes, const uint8_t key[MOTA_AES128_KEY_LEN], bool decrypt)
{
    mbedtls_aes_context *ctx = (mbedtls_aes_context *)(void *)aes->opaque.bytes;
    mbedtls_aes_init(ctx);
    aes->decrypt = decrypt;
    /* 128-bit keys cannot fail */
    if (decrypt)
        (void)mbedtls_aes_setkey_dec(ctx, key, 128);
    else
        (void)mbedtls_aes_setkey_enc(ctx, key, 128);
}

void mota_aes128_block(struct mota_aes128 *aes, const uint8_t in[MOTA_AES_BLOCK], uint8_t out[MOTA_AES_BLOCK])
{
    mbedtls_aes_context *ctx = (mbedtls_aes_context *)(void *)aes->opaque.bytes;
#if defined(__arm__)
    /* the block itself, past crypt_ecb's dispatch (there is no AES instruction to dispatch to): CTR's 16 bytes
     * cost one call less */
    if (aes->decrypt)
        (void)mbedtls_internal_aes_decrypt(ctx, in, out);
    else
        (void)mbedtls_internal_aes_encrypt(ctx, in, out);
#else
    (void)mbedtls_aes_crypt_ecb(ctx, aes->decrypt ? MBEDTLS_AES_DECRYPT : MBEDTLS_AES_ENCRYPT, in, out);
#endif
}
