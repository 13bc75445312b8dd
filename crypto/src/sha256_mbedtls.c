/* SPDX-License-Identifier: Apache-2.0 */
/* SHA-256 over mbed TLS 2.28: the device's (and the cross builds') implementation. */
#include "mota/crypto.h"
#include "mota/err.h"
#include "mota/le.h"

#include <mbedtls/sha256.h>

_Static_assert(sizeof(mbedtls_sha256_context) <= sizeof(((struct mota_sha256 *)0)->opaque),
               "struct mota_sha256 too small for mbedtls_sha256_context");

static mbedtls_sha256_context *sha(struct mota_sha256 *ctx)
{
    return (mbedtls_sha256_context *)(void *)ctx->opaque.bytes;
}

/* The _ret variants cannot fail for the software implementation we build; an
 * accelerated port that can fail must not be linked behind this shim. */
void mota_sha256_init(struct mota_sha256 *ctx)
{
    mbedtls_sha256_init(sha(ctx));
    (void)mbedtls_sha256_starts_ret(sha(ctx), 0);
}

void mota_sha256_update(struct mota_sha256 *ctx, const void *data, size_t len)
{
    if (len > 0)
        (void)mbedtls_sha256_update_ret(sha(ctx), data, len);
}

void mota_sha256_finish(struct mota_sha256 *ctx, uint8_t out[MOTA_SHA256_LEN])
{
    (void)mbedtls_sha256_finish_ret(sha(ctx), out);
    mbedtls_sha256_free(sha(ctx));
}

void mota_sha256(const void *data, size_t len, uint8_t out[MOTA_SHA256_LEN])
{
    struct mota_sha256 ctx;
    mota_sha256_init(&ctx);
    mota_sha256_update(&ctx, data, len);
    mota_sha256_finish(&ctx, out);
}

/* mbed TLS 2.28 keeps the state words and the byte count (total[1]:total[0]) in its context. */
uint64_t mota_sha256_midstate(const struct mota_sha256 *ctx, uint8_t state[MOTA_SHA256_STATE_LEN])
{
    const mbedtls_sha256_context *c = (const mbedtls_sha256_context *)(const void *)ctx->opaque.bytes;
    for (unsigned i = 0; i < 8; i++)
        mota_put32(state + 4 * i, (uint32_t)c->state[i]);
    uint64_t count = (uint64_t)c->total[1] << 32 | c->total[0];
    return count & ~(uint64_t)63;
}

int mota_sha256_resume(struct mota_sha256 *ctx, const uint8_t state[MOTA_SHA256_STATE_LEN], uint64_t count)
{
    if (count % 64u != 0)
        return MOTA_ERR_ARG;
    mota_sha256_init(ctx);
    mbedtls_sha256_context *c = sha(ctx);
    for (unsigned i = 0; i < 8; i++)
        c->state[i] = mota_get32(state + 4 * i);
    c->total[0] = (uint32_t)count;
    c->total[1] = (uint32_t)(count >> 32);
    return MOTA_OK;
}
