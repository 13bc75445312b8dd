/* SPDX-License-Identifier: Apache-2.0 */
/* HELLO's and STATUS's answers in parts, read and put together (see pages.h). */
#include "pages.h"

#include "mota/cbor.h"
#include "mota/err.h"

#include <string.h>

int answer_page(const uint8_t *b, size_t len, int64_t models_key, int64_t from_key, struct answer_page *p)
{
    struct mota_cbor_dec d;
    size_t n, k;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    memset(p, 0, sizeof(*p));
    mota_cbor_dec_init(&d, b, len);
    if (mota_cbor_get_map(&d, &n) != 0)
        return MOTA_ERR_PROTO_FRAME;
    for (size_t i = 0; i < n; i++) {
        if (mota_cbor_get_int_key(&d, &key, &prev) != 0)
            return MOTA_ERR_PROTO_FRAME;
        if (key == models_key && mota_cbor_get_array(&d, &p->n) == 0) {
            size_t at = d.pos;
            for (size_t m = 0; m < p->n && d.err == 0; m++) /* a count from outside: no further than its bytes */
                mota_cbor_skip(&d);
            p->items = b + at;
            p->items_len = d.pos - at;
        } else if (key == from_key && mota_cbor_get_array(&d, &k) == 0 && k == 2) {
            p->partial = mota_cbor_get_uint(&d, &p->first) == 0 && mota_cbor_get_uint(&d, &p->total) == 0;
        } else if (key == models_key || key == from_key) {
            return MOTA_ERR_PROTO_FRAME;
        } else {
            mota_cbor_skip(&d);
        }
    }
    return d.err || (p->partial && (p->first > p->total || p->n > p->total - p->first)) ? MOTA_ERR_PROTO_FRAME
                                                                                        : MOTA_OK;
}

int answer_merge(const uint8_t *base, size_t blen, int64_t models_key, int64_t from_key, const uint8_t *items,
                 size_t items_len, size_t n_items, uint8_t *out, size_t cap, size_t *out_len)
{
    struct mota_cbor_dec d;
    struct mota_cbor_enc e;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    mota_cbor_dec_init(&d, base, blen);
    mota_cbor_enc_init(&e, out, cap);
    if (mota_cbor_get_map(&d, &n) != 0 || n == 0)
        return MOTA_ERR_PROTO_FRAME;
    mota_cbor_put_map(&e, n - 1);
    for (size_t i = 0; i < n && d.err == 0; i++) {
        size_t at = d.pos, val;
        mota_cbor_get_int_key(&d, &key, &prev);
        val = d.pos;
        mota_cbor_skip(&d);
        if (key == from_key)
            continue;
        mota_cbor_put_raw(&e, base + at, val - at);
        if (key == models_key) {
            mota_cbor_put_array(&e, n_items);
            mota_cbor_put_raw(&e, items, items_len);
        } else {
            mota_cbor_put_raw(&e, base + val, d.pos - val);
        }
    }
    *out_len = e.len;
    return d.err || e.err ? MOTA_ERR_PROTO_FRAME : MOTA_OK;
}
