/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SHA-256 over OpenSSL's libcrypto: the host's implementation, for the speed
 * of its SHA-NI / ARMv8 code paths (mota pack and verify hash whole models).
 * The low-level SHA256_CTX fits the caller-provided struct mota_sha256 and
 * needs no heap, which the shim's contract promises on every side; its
 * functions are deprecated in OpenSSL 3 but run the same assembly as EVP.
 */
#define OPENSSL_API_COMPAT 0x10101000L /* SHA256_Init and friends, without deprecation warnings */

#include "mota/crypto.h"
#include "mota/err.h"
#include "mota/le.h"

#include <openssl/sha.h>

_Static_assert(sizeof(SHA256_CTX) <= sizeof(((struct mota_sha256 *)0)->opaque),
               "struct mota_sha256 too small for SHA256_CTX");

static SHA256_CTX *sha(struct mota_sha256 *ctx)
{
    return (SHA256_CTX *)(void *)ctx->opaque.bytes;
}

/* Init, update and final cannot fail for the software and CPU-extension code OpenSSL ships. */
void mota_sha256_init(struct mota_sha256 *ctx)
{
    (void)SHA256_Init(sha(ctx));
}

void mota_sha256_update(struct mota_sha256 *ctx, const void *data, size_t len)
{
    if (len > 0)
        (void)SHA256_Update(sha(ctx), data, len);
}

void mota_sha256_finish(struct mota_sha256 *ctx, uint8_t out[MOTA_SHA256_LEN])
{
    (void)SHA256_Final(out, sha(ctx));
}

void mota_sha256(const void *data, size_t len, uint8_t out[MOTA_SHA256_LEN])
{
    (void)SHA256(data, len, out);
}

/* SHA256_CTX keeps the state words in h and the count in bits (Nh:Nl); num bytes are buffered. */
uint64_t mota_sha256_midstate(const struct mota_sha256 *ctx, uint8_t state[MOTA_SHA256_STATE_LEN])
{
    const SHA256_CTX *c = (const SHA256_CTX *)(const void *)ctx->opaque.bytes;
    for (unsigned i = 0; i < 8; i++)
        mota_put32(state + 4 * i, (uint32_t)c->h[i]);
    uint64_t bits = (uint64_t)c->Nh << 32 | c->Nl;
    return (bits / 8u) & ~(uint64_t)63;
}

int mota_sha256_resume(struct mota_sha256 *ctx, const uint8_t state[MOTA_SHA256_STATE_LEN], uint64_t count)
{
    if (count % 64u != 0)
        return MOTA_ERR_ARG;
    mota_sha256_init(ctx);
    SHA256_CTX *c = sha(ctx);
    for (unsigned i = 0; i < 8; i++)
        c->h[i] = mota_get32(state + 4 * i);
    uint64_t bits = count * 8u;
    c->Nl = (SHA_LONG)bits;
    c->Nh = (SHA_LONG)(bits >> 32);
    return MOTA_OK;
}
