/* SHA-256 over mbed TLS 2.28: the device's (and the cross builds') implementation. */
#include "mota/crypto.h"

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
