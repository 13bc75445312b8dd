/* SPDX-License-Identifier: Apache-2.0 */
/* Frame codec: header + payload + CRC-32, COBS, 0x00 delimiter. */
#include "mota/proto.h"

#include "mota/crc32.h"
#include "mota/err.h"

#include <string.h>

/* COBS-encode n bytes from the frame parts into out; returns the length or 0. */
static size_t cobs_put(const uint8_t *const parts[3], const size_t lens[3], uint8_t *out, size_t cap)
{
    size_t o = 1, code_at = 0;
    uint8_t code = 1;
    if (cap < 2)
        return 0;
    for (int p = 0; p < 3; p++) {
        for (size_t i = 0; i < lens[p]; i++) {
            uint8_t b = parts[p][i];
            if (b != 0) {
                if (o >= cap)
                    return 0;
                out[o++] = b;
                code++;
            }
            if (b == 0 || code == 0xFF) {
                out[code_at] = code;
                code = 1;
                code_at = o;
                if (o >= cap)
                    return 0;
                o++;
            }
        }
    }
    out[code_at] = code;
    if (o >= cap)
        return 0;
    out[o++] = 0x00; /* frame delimiter */
    return o;
}

size_t mota_frame_encode(const struct mota_frame *f, uint8_t *out, size_t cap)
{
    uint8_t hdr[MOTA_PROTO_HEADER], crc[MOTA_PROTO_CRC];
    if (f == NULL || out == NULL || f->len > MOTA_PROTO_MAX_PAYLOAD || (f->len > 0 && f->payload == NULL))
        return 0;
    hdr[0] = MOTA_PROTO_VERSION;
    hdr[1] = f->kind;
    mota_put16(hdr + 2, f->seq);
    hdr[4] = f->cmd;
    hdr[5] = f->flags;
    mota_put16(hdr + 6, f->len);
    uint32_t c = mota_crc32(0, hdr, sizeof(hdr));
    c = mota_crc32(c, f->payload, f->len);
    mota_put32(crc, c);
    const uint8_t *parts[3] = {hdr, f->payload, crc};
    const size_t lens[3] = {sizeof(hdr), f->len, sizeof(crc)};
    return cobs_put(parts, lens, out, cap);
}

void mota_deframer_init(struct mota_deframer *d, uint8_t *buf, size_t cap)
{
    memset(d, 0, sizeof(*d));
    d->buf = buf;
    d->cap = cap;
}

/* Decode the COBS frame in d->buf[0..fill) in place; returns the decoded length or -1. */
static long cobs_decode(uint8_t *b, size_t n)
{
    size_t i = 0, o = 0;
    while (i < n) {
        uint8_t code = b[i++];
        if (code == 0)
            return -1;
        if ((size_t)(code - 1) > n - i)
            return -1;
        for (uint8_t k = 1; k < code; k++)
            b[o++] = b[i++];
        if (code != 0xFF && i < n)
            b[o++] = 0;
    }
    return (long)o;
}

static bool check(struct mota_deframer *d, struct mota_frame *f)
{
    long n = cobs_decode(d->buf, d->fill);
    if (n < 0) {
        d->bad_cobs++;
        return false;
    }
    if ((size_t)n < MOTA_PROTO_HEADER + MOTA_PROTO_CRC) {
        d->runts++;
        return false;
    }
    const uint8_t *b = d->buf;
    uint16_t len = mota_get16(b + 6);
    if ((size_t)n != MOTA_PROTO_HEADER + len + MOTA_PROTO_CRC || b[0] != MOTA_PROTO_VERSION) {
        d->runts++;
        return false;
    }
    if (mota_crc32(0, b, MOTA_PROTO_HEADER + len) != mota_get32(b + MOTA_PROTO_HEADER + len)) {
        d->bad_crc++;
        return false;
    }
    f->kind = b[1];
    f->seq = mota_get16(b + 2);
    f->cmd = b[4];
    f->flags = b[5];
    f->len = len;
    f->payload = b + MOTA_PROTO_HEADER;
    d->frames++;
    return true;
}

int mota_deframer_push(struct mota_deframer *d, const uint8_t *data, size_t len, size_t *used, struct mota_frame *f)
{
    size_t i = 0;
    while (i < len) {
        uint8_t b = data[i++];
        if (b != 0) {
            if (d->skipping)
                continue;
            if (d->fill == d->cap) { /* too long for any frame we accept: drop it whole */
                d->skipping = true;
                d->oversize++;
                continue;
            }
            d->buf[d->fill++] = b;
            continue;
        }
        /* delimiter */
        bool ok = !d->skipping && d->fill > 0 && check(d, f);
        d->skipping = false;
        d->fill = 0;
        if (ok) {
            *used = i;
            return 1;
        }
    }
    *used = i;
    return 0;
}

size_t mota_begin_encode(const struct mota_begin *b, uint8_t out[MOTA_PROTO_BEGIN_FLAGS_LEN])
{
    mota_put32(out, b->length);
    memcpy(out + 4, b->digest, MOTA_SHA256_LEN);
    if (b->flags == 0)
        return MOTA_PROTO_BEGIN_LEN;
    out[MOTA_PROTO_BEGIN_LEN] = b->flags;
    return MOTA_PROTO_BEGIN_FLAGS_LEN;
}

int mota_begin_decode(const uint8_t *p, size_t len, struct mota_begin *b)
{
    if (len != MOTA_PROTO_BEGIN_LEN && len != MOTA_PROTO_BEGIN_FLAGS_LEN)
        return MOTA_ERR_PROTO_FRAME;
    b->length = mota_get32(p);
    memcpy(b->digest, p + 4, MOTA_SHA256_LEN);
    b->flags = len == MOTA_PROTO_BEGIN_FLAGS_LEN ? p[MOTA_PROTO_BEGIN_LEN] : 0;
    /* a flag it does not know would be ignored silently: the host asked for something this device cannot do */
    return (b->flags & ~MOTA_BEGIN_REINSTALL) ? MOTA_ERR_PROTO_FLAGS : MOTA_OK;
}

void mota_begun_encode(const struct mota_begun *b, uint8_t out[MOTA_PROTO_BEGUN_LEN])
{
    mota_put32(out, b->resume);
    mota_put16(out + 4, b->max_payload);
    out[6] = b->window;
}

int mota_begun_decode(const uint8_t *p, size_t len, struct mota_begun *b)
{
    if (len < MOTA_PROTO_BEGUN_LEN)
        return MOTA_ERR_PROTO_FRAME;
    b->resume = mota_get32(p);
    b->max_payload = mota_get16(p + 4);
    b->window = p[6];
    return MOTA_OK;
}
