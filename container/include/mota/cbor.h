/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Bounded, allocation-free CBOR pull decoder and a small encoder.
 *
 * The decoder reads one data item head at a time from a caller buffer with
 * an explicit length, using libcbor's streaming decoder (cbor_stream_decode),
 * which never allocates. On top of it, it enforces the container's CBOR
 * profile: deterministic (shortest-form) heads, definite lengths only, no
 * floats or undefined, lengths and counts checked against the bytes that are
 * actually left before anything is used, and a nesting limit when skipping.
 *
 * Errors are sticky (as in QCBOR and zcbor): after the first failure every
 * call returns that same code and yields zero values, so straight-line
 * decoding code reads on and checks once, where a value decides something;
 * a semantic check records its own reason with mota_cbor_fail, which keeps
 * the first. Strings are returned as slices into the input buffer.
 */
#ifndef MOTA_CBOR_H
#define MOTA_CBOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOTA_CBOR_MAX_DEPTH 16 /* nesting limit for mota_cbor_skip */

enum mota_cbor_type {
    MOTA_CBOR_UINT = 0,
    MOTA_CBOR_NINT, /* value v means -1 - v */
    MOTA_CBOR_BSTR,
    MOTA_CBOR_TSTR,
    MOTA_CBOR_ARRAY, /* count = number of items */
    MOTA_CBOR_MAP,   /* count = number of pairs */
    MOTA_CBOR_TAG,
    MOTA_CBOR_FALSE,
    MOTA_CBOR_TRUE,
    MOTA_CBOR_NULL,
};

struct mota_cbor_item {
    enum mota_cbor_type type;
    uint64_t val;         /* UINT/NINT value, TAG number, ARRAY/MAP count, string length */
    const uint8_t *ptr;   /* BSTR/TSTR: first content byte (inside the input buffer) */
    size_t len;           /* BSTR/TSTR: content length */
    const uint8_t *start; /* first byte of the head */
    size_t head_len;      /* bytes of the head (and content, for strings: see size) */
    size_t size;          /* bytes of this head plus string content */
};

struct mota_cbor_dec {
    const uint8_t *buf;
    size_t len;
    size_t pos;
    int err; /* sticky: 0 or a negative enum mota_err code */
};

void mota_cbor_dec_init(struct mota_cbor_dec *d, const uint8_t *buf, size_t len);

/* Decode the next head (and string content). Returns 0 or the sticky error. */
int mota_cbor_next(struct mota_cbor_dec *d, struct mota_cbor_item *it);

/* Like next, but does not advance. */
int mota_cbor_peek(struct mota_cbor_dec *d, struct mota_cbor_item *it);

/* Skip one complete data item (with everything nested in it). */
int mota_cbor_skip(struct mota_cbor_dec *d);

/* Typed getters: fail with MOTA_ERR_CBOR_TYPE on another type. A getter that fails (or is called after a
 * failure) yields a zero value: 0, false, an empty slice (NULL, 0), a count of 0. */
int mota_cbor_get_uint(struct mota_cbor_dec *d, uint64_t *v);
int mota_cbor_get_int(struct mota_cbor_dec *d, int64_t *v);
int mota_cbor_get_bstr(struct mota_cbor_dec *d, const uint8_t **p, size_t *len);
int mota_cbor_get_tstr(struct mota_cbor_dec *d, const char **p, size_t *len);
int mota_cbor_get_bool(struct mota_cbor_dec *d, bool *v);
int mota_cbor_get_array(struct mota_cbor_dec *d, size_t *count);
int mota_cbor_get_map(struct mota_cbor_dec *d, size_t *count);
int mota_cbor_get_tag(struct mota_cbor_dec *d, uint64_t *tag);
int mota_cbor_get_null(struct mota_cbor_dec *d);

/*
 * Map key in a map whose keys are all integers. Enforces canonical order
 * (RFC 8949 4.2.1: bytewise order of the encoded keys) against *prev, which
 * the caller initialises to MOTA_CBOR_KEY_NONE before the first key:
 * MOTA_ERR_CBOR_DUP_KEY for a repeat, MOTA_ERR_CBOR_KEY_ORDER otherwise.
 */
#define MOTA_CBOR_KEY_NONE INT64_MIN
int mota_cbor_get_int_key(struct mota_cbor_dec *d, int64_t *key, int64_t *prev);

/*
 * Canonical order of two encoded map keys (any type): MOTA_OK if prev sorts
 * strictly before cur, MOTA_ERR_CBOR_DUP_KEY if equal, else KEY_ORDER.
 */
int mota_cbor_key_order(const uint8_t *prev, size_t prev_len, const uint8_t *cur, size_t cur_len);

/*
 * Decode only a head (major type and argument) at p, without its content:
 * for payloads whose megabytes have not arrived yet. Shortest form and
 * definite length enforced. *head_len bytes; MOTA_ERR_CBOR_TRUNCATED if the
 * head itself is incomplete.
 */
int mota_cbor_head(const uint8_t *p, size_t len, unsigned *major, uint64_t *arg, size_t *head_len);

/* Fail the decoder with err (if it has not failed yet); returns the sticky error. */
int mota_cbor_fail(struct mota_cbor_dec *d, int err);

/* Remaining bytes; MOTA_ERR_CBOR_TRAILING if any are left, else 0. */
int mota_cbor_finish(struct mota_cbor_dec *d);

/* Valid UTF-8 check (RFC 3629: no overlongs, no surrogates, max U+10FFFF). */
bool mota_utf8_valid(const uint8_t *p, size_t len);

/* ---- encoder (deterministic: shortest heads; callers emit keys in order) ---- */

struct mota_cbor_enc {
    uint8_t *buf;
    size_t cap;
    size_t len;
    int err; /* sticky: MOTA_ERR_NOSPC once the buffer is full */
};

void mota_cbor_enc_init(struct mota_cbor_enc *e, uint8_t *buf, size_t cap);
void mota_cbor_put_uint(struct mota_cbor_enc *e, uint64_t v);
void mota_cbor_put_int(struct mota_cbor_enc *e, int64_t v);
void mota_cbor_put_bstr(struct mota_cbor_enc *e, const void *p, size_t len);
void mota_cbor_put_tstr(struct mota_cbor_enc *e, const char *s);
void mota_cbor_put_tstr_n(struct mota_cbor_enc *e, const char *s, size_t len);
void mota_cbor_put_bstr_head(struct mota_cbor_enc *e, size_t len);
void mota_cbor_put_array(struct mota_cbor_enc *e, size_t count);
void mota_cbor_put_map(struct mota_cbor_enc *e, size_t count);
void mota_cbor_put_tag(struct mota_cbor_enc *e, uint64_t tag);
void mota_cbor_put_bool(struct mota_cbor_enc *e, bool v);
void mota_cbor_put_null(struct mota_cbor_enc *e);
void mota_cbor_put_raw(struct mota_cbor_enc *e, const void *p, size_t len);

/*
 * Byte-string wrapping ("bstr .cbor X") in place: open reserves room for the
 * longest head, the caller encodes X, close writes the shortest head and
 * moves X down. Returns the open position to pass to close.
 */
size_t mota_cbor_bstr_open(struct mota_cbor_enc *e);
void mota_cbor_bstr_close(struct mota_cbor_enc *e, size_t open_pos);

#endif /* MOTA_CBOR_H */
