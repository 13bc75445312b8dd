/* SPDX-License-Identifier: Apache-2.0 */
/* Private to the container's decoder: what both the envelope (cose.c) and the manifest (manifest.c) read. */
#ifndef MOTA_CONTAINER_DECODE_H
#define MOTA_CONTAINER_DECODE_H

#include "mota/cbor.h"
#include "mota/crypto.h"

#include <stdint.h>

/* One read of a field: a type error it makes becomes the field's own reason err (was: d->err before it). */
int mota_dec_field(struct mota_cbor_dec *d, int was, int err);
#define MOTA_DEC_FIELD(d, read, reason)                                                                                \
    do {                                                                                                               \
        int was_ = (d)->err;                                                                                           \
        (void)(read);                                                                                                  \
        mota_dec_field((d), was_, (reason));                                                                           \
    } while (0)

/* SUIT_Digest = [ -16, bstr .size 32 ]: the SHA-256 into out; returns d->err. */
int mota_dec_digest(struct mota_cbor_dec *d, uint8_t out[MOTA_SHA256_LEN]);

#endif
