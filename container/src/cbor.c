/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded CBOR decoding (every item's head read here; libcbor's streaming decoder checks each again where
 * MOTA_FEATURE_CBOR_CROSSCHECK is on), and a small encoder of shortest-form heads. */
#include "mota/cbor.h"

#include "mota/err.h"
#include "mota/features.h"

#include <string.h>

/* ---- decoder ---- */

void mota_cbor_dec_init(struct mota_cbor_dec *d, const uint8_t *buf, size_t len)
{
    d->buf = buf;
    d->len = buf != NULL ? len : 0;
    d->pos = 0;
    d->err = 0;
}

int mota_cbor_fail(struct mota_cbor_dec *d, int err)
{
    if (d->err == 0)
        d->err = err;
    return d->err;
}

#if MOTA_FEATURE_CBOR_CROSSCHECK
#include <cbor.h>

/* libcbor 0.8 (Debian bookworm, host) passes string and collection lengths as
 * size_t, 0.9 and later (the cross build's 0.10) as uint64_t. */
#if CBOR_MAJOR_VERSION == 0 && CBOR_MINOR_VERSION < 9
typedef size_t cb_len_t;
#else
typedef uint64_t cb_len_t;
#endif

/* What libcbor's callbacks saw; the head itself is re-read below. */
struct seen {
    enum { SEEN_NONE, SEEN_OK, SEEN_INDEF, SEEN_SIMPLE } kind;
};

static void cb_ok_u8(void *c, uint8_t v)
{
    (void)v;
    ((struct seen *)c)->kind = SEEN_OK;
}
static void cb_ok_u16(void *c, uint16_t v)
{
    (void)v;
    ((struct seen *)c)->kind = SEEN_OK;
}
static void cb_ok_u32(void *c, uint32_t v)
{
    (void)v;
    ((struct seen *)c)->kind = SEEN_OK;
}
static void cb_ok_u64(void *c, uint64_t v)
{
    (void)v;
    ((struct seen *)c)->kind = SEEN_OK;
}
static void cb_ok_str(void *c, cbor_data p, cb_len_t n)
{
    (void)p;
    (void)n;
    ((struct seen *)c)->kind = SEEN_OK;
}
static void cb_ok_coll(void *c, cb_len_t n)
{
    (void)n;
    ((struct seen *)c)->kind = SEEN_OK;
}
static void cb_ok_bool(void *c, bool v)
{
    (void)v;
    ((struct seen *)c)->kind = SEEN_OK;
}
static void cb_ok_null(void *c)
{
    ((struct seen *)c)->kind = SEEN_OK;
}
static void cb_indef(void *c)
{
    ((struct seen *)c)->kind = SEEN_INDEF;
}
static void cb_simple(void *c)
{
    ((struct seen *)c)->kind = SEEN_SIMPLE;
}
static void cb_float(void *c, float v)
{
    (void)v;
    ((struct seen *)c)->kind = SEEN_SIMPLE;
}
static void cb_double(void *c, double v)
{
    (void)v;
    ((struct seen *)c)->kind = SEEN_SIMPLE;
}

static const struct cbor_callbacks callbacks = {
    .uint8 = cb_ok_u8,
    .uint16 = cb_ok_u16,
    .uint32 = cb_ok_u32,
    .uint64 = cb_ok_u64,
    .negint8 = cb_ok_u8,
    .negint16 = cb_ok_u16,
    .negint32 = cb_ok_u32,
    .negint64 = cb_ok_u64,
    .byte_string = cb_ok_str,
    .byte_string_start = cb_indef,
    .string = cb_ok_str,
    .string_start = cb_indef,
    .array_start = cb_ok_coll,
    .indef_array_start = cb_indef,
    .map_start = cb_ok_coll,
    .indef_map_start = cb_indef,
    .tag = cb_ok_u64,
    .float2 = cb_float,
    .float4 = cb_float,
    .float8 = cb_double,
    .undefined = cb_simple,
    .null = cb_ok_null,
    .boolean = cb_ok_bool,
    .indef_break = cb_indef,
};

/* libcbor's verdict on the item at p: well formed, definite, no float or simple value (*read: its extent,
 * head and string content; tags are left to mota_cbor_head, libcbor 0.8 rejects tags 6..20 and COSE_Sign1
 * is 18). */
static int libcbor_check(const uint8_t *p, size_t avail, size_t *read)
{
    struct seen seen = {SEEN_NONE};
    uint8_t major = (uint8_t)(p[0] >> 5), ai = (uint8_t)(p[0] & 0x1f);
    *read = 0;
    if (major == 7 && (ai < 20 || (ai >= 23 && ai <= 27)))
        return MOTA_ERR_CBOR_SIMPLE; /* floats, undefined, simple values */
    if (major == 6)
        return MOTA_OK;
    struct cbor_decoder_result r = cbor_stream_decode(p, avail, &callbacks, &seen);
    if (r.status == CBOR_DECODER_NEDATA)
        return MOTA_ERR_CBOR_TRUNCATED;
    if (r.status != CBOR_DECODER_FINISHED || seen.kind == SEEN_NONE)
        return MOTA_ERR_CBOR_MALFORMED;
    if (seen.kind == SEEN_INDEF)
        return MOTA_ERR_CBOR_INDEFINITE;
    if (seen.kind == SEEN_SIMPLE)
        return MOTA_ERR_CBOR_SIMPLE;
    *read = r.read;
    return MOTA_OK;
}
#else
/* Without libcbor (a small build): the head read below is the whole check. */
static int libcbor_check(const uint8_t *p, size_t avail, size_t *read)
{
    (void)p, (void)avail;
    *read = SIZE_MAX; /* taken as the item's extent below */
    return MOTA_OK;
}
#endif

/* The item from its head (re-read here: the width for the shortest-form rule, and a 64-bit length that
 * must not be truncated on 32-bit targets), every length bounded by the bytes left. */
static int read_item(const uint8_t *p, size_t avail, struct mota_cbor_item *it)
{
    unsigned major = p[0] >> 5, ai = p[0] & 0x1f;
    uint64_t arg = 0;
    size_t hl = 1;
    int ret;
    if (major == 7 && (ai < 20 || ai > 22))
        return MOTA_ERR_CBOR_SIMPLE;
    if (major == 6 && ai == 31) /* only strings and containers have an indefinite form: not well formed */
        return MOTA_ERR_CBOR_MALFORMED;
    if (major != 7 && (ret = mota_cbor_head(p, avail, &major, &arg, &hl)) != MOTA_OK)
        return ret;
    it->start = p;
    it->head_len = hl;
    it->size = hl;
    it->val = arg;
    static const enum mota_cbor_type types[7] = {MOTA_CBOR_UINT,  MOTA_CBOR_NINT, MOTA_CBOR_BSTR, MOTA_CBOR_TSTR,
                                                 MOTA_CBOR_ARRAY, MOTA_CBOR_MAP,  MOTA_CBOR_TAG};
    it->type = major < 7 ? types[major] : ai == 20 ? MOTA_CBOR_FALSE : ai == 21 ? MOTA_CBOR_TRUE : MOTA_CBOR_NULL;
    if (major == 2 || major == 3) {
        if (arg > (uint64_t)(avail - hl))
            return MOTA_ERR_CBOR_TRUNCATED;
        it->ptr = p + hl;
        it->len = (size_t)arg;
        it->size = hl + (size_t)arg;
    } else if (major == 4 && arg > (uint64_t)(avail - hl)) { /* every item needs at least one byte */
        return MOTA_ERR_CBOR_TRUNCATED;
    } else if (major == 5 && arg > (uint64_t)(avail - hl) / 2) {
        return MOTA_ERR_CBOR_TRUNCATED;
    }
    return MOTA_OK;
}

static int decode_at(struct mota_cbor_dec *d, struct mota_cbor_item *it)
{
    size_t read;
    int ret;
    memset(it, 0, sizeof(*it)); /* a failed read yields a zero item */
    if (d->err != 0)
        return d->err;
    if (d->pos >= d->len)
        return mota_cbor_fail(d, MOTA_ERR_CBOR_TRUNCATED);
    const uint8_t *p = d->buf + d->pos;
    size_t avail = d->len - d->pos;
    if ((ret = libcbor_check(p, avail, &read)) != MOTA_OK || (ret = read_item(p, avail, it)) != MOTA_OK) {
        memset(it, 0, sizeof(*it));
        return mota_cbor_fail(d, ret);
    }
    if (it->type != MOTA_CBOR_TAG && read != SIZE_MAX && read != it->size) /* libcbor and we agree on the extent */
        return mota_cbor_fail(d, MOTA_ERR_CBOR_MALFORMED);
    return 0;
}

int mota_cbor_peek(struct mota_cbor_dec *d, struct mota_cbor_item *it)
{
    return decode_at(d, it);
}

int mota_cbor_next(struct mota_cbor_dec *d, struct mota_cbor_item *it)
{
    int ret = decode_at(d, it);
    if (ret == 0)
        d->pos += it->size;
    return ret;
}

int mota_cbor_skip(struct mota_cbor_dec *d)
{
    uint64_t left[MOTA_CBOR_MAX_DEPTH];
    int depth = 0;
    struct mota_cbor_item it;

    left[0] = 1;
    while (depth >= 0) {
        if (left[depth] == 0) {
            depth--;
            continue;
        }
        if (mota_cbor_next(d, &it) != 0)
            return d->err;
        left[depth]--;
        uint64_t children = 0;
        if (it.type == MOTA_CBOR_ARRAY)
            children = it.val;
        else if (it.type == MOTA_CBOR_MAP)
            children = it.val * 2; /* bounded by the remaining bytes: no overflow */
        else if (it.type == MOTA_CBOR_TAG)
            children = 1;
        if (children > 0) {
            if (depth + 1 >= MOTA_CBOR_MAX_DEPTH)
                return mota_cbor_fail(d, MOTA_ERR_CBOR_DEPTH);
            left[++depth] = children;
        }
    }
    return 0;
}

static int expect(struct mota_cbor_dec *d, struct mota_cbor_item *it, enum mota_cbor_type t)
{
    struct mota_cbor_item tmp;
    memset(it, 0, sizeof(*it));
    if (decode_at(d, &tmp) != 0)
        return d->err;
    if (tmp.type != t)
        return mota_cbor_fail(d, MOTA_ERR_CBOR_TYPE);
    d->pos += tmp.size;
    *it = tmp;
    return 0;
}

/* The getters yield zero values (0, false, an empty slice) when they fail, so straight-line code may read
 * on and check the sticky error once, where a value decides something. */
int mota_cbor_get_uint(struct mota_cbor_dec *d, uint64_t *v)
{
    struct mota_cbor_item it;
    int ret = expect(d, &it, MOTA_CBOR_UINT);
    *v = it.val;
    return ret;
}

int mota_cbor_get_int(struct mota_cbor_dec *d, int64_t *v)
{
    struct mota_cbor_item it = {0};
    *v = 0;
    if (decode_at(d, &it) != 0)
        return d->err;
    if ((it.type != MOTA_CBOR_UINT && it.type != MOTA_CBOR_NINT) || it.val > (uint64_t)INT64_MAX)
        return mota_cbor_fail(d, MOTA_ERR_CBOR_TYPE);
    d->pos += it.size;
    *v = it.type == MOTA_CBOR_UINT ? (int64_t)it.val : -1 - (int64_t)it.val;
    return 0;
}

int mota_cbor_get_bstr(struct mota_cbor_dec *d, const uint8_t **p, size_t *len)
{
    struct mota_cbor_item it;
    int ret = expect(d, &it, MOTA_CBOR_BSTR);
    *p = it.ptr;
    *len = it.len;
    return ret;
}

int mota_cbor_get_tstr(struct mota_cbor_dec *d, const char **p, size_t *len)
{
    struct mota_cbor_item it;
    *p = NULL;
    *len = 0;
    if (expect(d, &it, MOTA_CBOR_TSTR) != 0)
        return d->err;
    if (!mota_utf8_valid(it.ptr, it.len))
        return mota_cbor_fail(d, MOTA_ERR_CBOR_UTF8);
    *p = (const char *)it.ptr;
    *len = it.len;
    return 0;
}

int mota_cbor_get_bool(struct mota_cbor_dec *d, bool *v)
{
    struct mota_cbor_item it = {0};
    *v = false;
    if (decode_at(d, &it) != 0)
        return d->err;
    if (it.type != MOTA_CBOR_TRUE && it.type != MOTA_CBOR_FALSE)
        return mota_cbor_fail(d, MOTA_ERR_CBOR_TYPE);
    d->pos += it.size;
    *v = it.type == MOTA_CBOR_TRUE;
    return 0;
}

int mota_cbor_get_array(struct mota_cbor_dec *d, size_t *count)
{
    struct mota_cbor_item it;
    int ret = expect(d, &it, MOTA_CBOR_ARRAY);
    *count = (size_t)it.val; /* bounded by the buffer length in decode_at */
    return ret;
}

int mota_cbor_get_map(struct mota_cbor_dec *d, size_t *count)
{
    struct mota_cbor_item it;
    int ret = expect(d, &it, MOTA_CBOR_MAP);
    *count = (size_t)it.val;
    return ret;
}

int mota_cbor_get_tag(struct mota_cbor_dec *d, uint64_t *tag)
{
    struct mota_cbor_item it;
    int ret = expect(d, &it, MOTA_CBOR_TAG);
    *tag = it.val;
    return ret;
}

int mota_cbor_get_null(struct mota_cbor_dec *d)
{
    struct mota_cbor_item it;
    return expect(d, &it, MOTA_CBOR_NULL);
}

/* Canonical rank of an integer key: the bytewise order of its encoding. */
static uint64_t key_rank(int64_t k)
{
    return k >= 0 ? (uint64_t)k : ((uint64_t)1 << 63) + (uint64_t)(-1 - k);
}

int mota_cbor_get_int_key(struct mota_cbor_dec *d, int64_t *key, int64_t *prev)
{
    if (mota_cbor_get_int(d, key) != 0)
        return d->err; /* *key is 0 */
    if (*prev != MOTA_CBOR_KEY_NONE) {
        if (*key == *prev)
            return mota_cbor_fail(d, MOTA_ERR_CBOR_DUP_KEY);
        if (key_rank(*key) < key_rank(*prev))
            return mota_cbor_fail(d, MOTA_ERR_CBOR_KEY_ORDER);
    }
    *prev = *key;
    return 0;
}

int mota_cbor_key_order(const uint8_t *prev, size_t prev_len, const uint8_t *cur, size_t cur_len)
{
    size_t n = prev_len < cur_len ? prev_len : cur_len;
    int c = memcmp(prev, cur, n);
    if (c == 0 && prev_len == cur_len)
        return MOTA_ERR_CBOR_DUP_KEY;
    if (c < 0 || (c == 0 && prev_len < cur_len))
        return MOTA_OK;
    return MOTA_ERR_CBOR_KEY_ORDER;
}

int mota_cbor_head(const uint8_t *p, size_t len, unsigned *major, uint64_t *arg, size_t *head_len)
{
    static const uint64_t min_for_width[4] = {24u, 0x100u, 0x10000u, 0x100000000u};
    uint8_t ai;
    uint64_t v = 0;
    if (len < 1)
        return MOTA_ERR_CBOR_TRUNCATED;
    *major = p[0] >> 5;
    ai = p[0] & 0x1f;
    if (ai < 24) {
        *arg = ai;
        *head_len = 1;
        return MOTA_OK;
    }
    if (ai == 31)
        return MOTA_ERR_CBOR_INDEFINITE;
    if (ai > 27)
        return MOTA_ERR_CBOR_MALFORMED;
    size_t n = (size_t)1 << (ai - 24);
    if (len < 1 + n)
        return MOTA_ERR_CBOR_TRUNCATED;
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | p[1 + i];
    if (v < min_for_width[ai - 24])
        return MOTA_ERR_CBOR_NONMINIMAL;
    *arg = v;
    *head_len = 1 + n;
    return MOTA_OK;
}

int mota_cbor_finish(struct mota_cbor_dec *d)
{
    if (d->err != 0)
        return d->err;
    if (d->pos != d->len)
        return mota_cbor_fail(d, MOTA_ERR_CBOR_TRAILING);
    return 0;
}

bool mota_utf8_valid(const uint8_t *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = p[i];
        size_t n;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            n = 1;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (len - i - 1 < n)
            return false;
        for (size_t k = 1; k <= n; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + k] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += n + 1;
    }
    return true;
}

/* ---- encoder ---- */

void mota_cbor_enc_init(struct mota_cbor_enc *e, uint8_t *buf, size_t cap)
{
    e->buf = buf;
    e->cap = buf != NULL ? cap : 0;
    e->len = 0;
    e->err = 0;
}

static uint8_t *room(struct mota_cbor_enc *e)
{
    return e->buf + e->len;
}

static void advance(struct mota_cbor_enc *e, size_t n)
{
    if (n == 0)
        e->err = MOTA_ERR_NOSPC;
    else
        e->len += n;
}

/* A head: major type and argument in the shortest form (RFC 8949, 4.2.1); its length, or 0: no room. */
static size_t encode_head(unsigned major, uint64_t v, uint8_t *buf, size_t cap)
{
    size_t n = v < 24 ? 0 : v <= 0xFFu ? 1 : v <= 0xFFFFu ? 2 : v <= 0xFFFFFFFFu ? 4 : 8;
    if (cap < 1 + n)
        return 0;
    buf[0] = (uint8_t)(major << 5 | (n == 0 ? (unsigned)v : n == 1 ? 24u : n == 2 ? 25u : n == 4 ? 26u : 27u));
    for (size_t i = 0; i < n; i++)
        buf[1 + i] = (uint8_t)(v >> (8 * (n - 1 - i)));
    return 1 + n;
}

#define ENC_HEAD(e, call)                                                                                              \
    do {                                                                                                               \
        if ((e)->err == 0)                                                                                             \
            advance((e), (call));                                                                                      \
    } while (0)

void mota_cbor_put_uint(struct mota_cbor_enc *e, uint64_t v)
{
    ENC_HEAD(e, encode_head(0, v, room(e), e->cap - e->len));
}

void mota_cbor_put_int(struct mota_cbor_enc *e, int64_t v)
{
    if (v >= 0)
        mota_cbor_put_uint(e, (uint64_t)v);
    else
        ENC_HEAD(e, encode_head(1, (uint64_t)(-1 - v), room(e), e->cap - e->len));
}

void mota_cbor_put_raw(struct mota_cbor_enc *e, const void *p, size_t len)
{
    if (e->err != 0)
        return;
    if (len > e->cap - e->len) {
        e->err = MOTA_ERR_NOSPC;
        return;
    }
    if (len > 0)
        memcpy(room(e), p, len);
    e->len += len;
}

void mota_cbor_put_bstr_head(struct mota_cbor_enc *e, size_t len)
{
    ENC_HEAD(e, encode_head(2, len, room(e), e->cap - e->len));
}

void mota_cbor_put_bstr(struct mota_cbor_enc *e, const void *p, size_t len)
{
    mota_cbor_put_bstr_head(e, len);
    mota_cbor_put_raw(e, p, len);
}

void mota_cbor_put_tstr_n(struct mota_cbor_enc *e, const char *s, size_t len)
{
    ENC_HEAD(e, encode_head(3, len, room(e), e->cap - e->len));
    mota_cbor_put_raw(e, s, len);
}

void mota_cbor_put_tstr(struct mota_cbor_enc *e, const char *s)
{
    mota_cbor_put_tstr_n(e, s, strlen(s));
}

void mota_cbor_put_array(struct mota_cbor_enc *e, size_t count)
{
    ENC_HEAD(e, encode_head(4, count, room(e), e->cap - e->len));
}

void mota_cbor_put_map(struct mota_cbor_enc *e, size_t count)
{
    ENC_HEAD(e, encode_head(5, count, room(e), e->cap - e->len));
}

void mota_cbor_put_tag(struct mota_cbor_enc *e, uint64_t tag)
{
    ENC_HEAD(e, encode_head(6, tag, room(e), e->cap - e->len));
}

void mota_cbor_put_bool(struct mota_cbor_enc *e, bool v)
{
    ENC_HEAD(e, encode_head(7, v ? 21u : 20u, room(e), e->cap - e->len));
}

void mota_cbor_put_null(struct mota_cbor_enc *e)
{
    ENC_HEAD(e, encode_head(7, 22u, room(e), e->cap - e->len));
}

#define BSTR_RESERVE 9u /* longest bstr head: 0x5b + 8 length bytes */

size_t mota_cbor_bstr_open(struct mota_cbor_enc *e)
{
    size_t pos = e->len;
    if (e->err == 0 && e->cap - e->len < BSTR_RESERVE)
        e->err = MOTA_ERR_NOSPC;
    if (e->err == 0)
        e->len += BSTR_RESERVE;
    return pos;
}

void mota_cbor_bstr_close(struct mota_cbor_enc *e, size_t open_pos)
{
    uint8_t head[BSTR_RESERVE];
    size_t inner, hl;
    if (e->err != 0)
        return;
    inner = e->len - open_pos - BSTR_RESERVE;
    hl = encode_head(2, inner, head, sizeof(head));
    if (hl == 0) {
        e->err = MOTA_ERR_INTERNAL;
        return;
    }
    memmove(e->buf + open_pos + hl, e->buf + open_pos + BSTR_RESERVE, inner);
    memcpy(e->buf + open_pos, head, hl);
    e->len = open_pos + hl + inner;
}
