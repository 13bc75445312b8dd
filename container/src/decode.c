/* SPDX-License-Identifier: Apache-2.0 */
/* Decoding helpers shared by the envelope (cose.c) and the manifest (manifest.c). */
#include "decode.h"

#include "mota/container.h"
#include "mota/err.h"

#include <string.h>

/* A field of the wrong type is refused with the field's own reason: the type error of this read is
 * renamed, never an earlier error (the decoder keeps the first). */
int mota_dec_field(struct mota_cbor_dec *d, int was, int err)
{
    if (was == 0 && d->err == MOTA_ERR_CBOR_TYPE)
        d->err = err;
    return d->err;
}

/* SUIT_Digest = [ -16, bstr .size 32 ] */
int mota_dec_digest(struct mota_cbor_dec *d, uint8_t out[MOTA_SHA256_LEN])
{
    size_t n;
    int64_t alg;
    const uint8_t *p;
    size_t len;
    mota_cbor_get_array(d, &n);
    if (n != 2)
        mota_cbor_fail(d, n < 2 ? MOTA_ERR_DIGEST_LEN : MOTA_ERR_CBOR_TOO_LARGE);
    mota_cbor_get_int(d, &alg);
    if (alg != MOTA_SUIT_DIGEST_SHA256)
        mota_cbor_fail(d, MOTA_ERR_DIGEST_ALG);
    mota_cbor_get_bstr(d, &p, &len);
    if (len != MOTA_SHA256_LEN)
        mota_cbor_fail(d, MOTA_ERR_DIGEST_LEN);
    if (d->err == 0)
        memcpy(out, p, MOTA_SHA256_LEN);
    return d->err;
}
