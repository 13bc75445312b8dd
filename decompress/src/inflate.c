/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The deflate decoder of compressed payloads (src/inflate.h): RFC 1951,
 * decoded bit by bit with canonical Huffman codes (count and symbol tables,
 * as in Mark Adler's description of a minimal inflater), every length,
 * distance and code checked before the sink sees it.
 */
#include "inflate.h"

#include "mota/err.h"

#include <string.h>

enum {
    S_HEADER,     /* BFINAL and BTYPE */
    S_STORED,     /* LEN and NLEN of a stored block */
    S_COPY,       /* a stored block's bytes */
    S_COUNTS,     /* HLIT, HDIST, HCLEN */
    S_CLEN,       /* the code-length code's lengths, 3 bits each */
    S_LENS,       /* the literal/length and distance code lengths */
    S_REPEAT,     /* a repeat's count */
    S_SYMBOL,     /* a literal/length symbol */
    S_LENGTH,     /* a length's extra bits */
    S_DISTANCE,   /* a distance symbol */
    S_DIST_EXTRA, /* a distance's extra bits */
    S_END,        /* after the final block */
};

enum { NEED_INPUT = 0, GO_ON = 1, FLUSHED = 2 };

void mota_inflate_init(struct mota_inflate *z, uint32_t size, uint32_t block)
{
    memset(z, 0, offsetof(struct mota_inflate, lens)); /* the tables are filled before use */
    z->size = size;
    z->block = block;
    z->seg_end = size < block ? size : block;
    z->state = S_HEADER;
    z->need = 3;
}

void mota_inflate_resume(struct mota_inflate *z, uint32_t size, uint32_t block, uint32_t out)
{
    mota_inflate_init(z, size, block);
    z->out = out;
    z->seg_end = size - out < block ? size : out + block;
    z->flushed = 1;
}

bool mota_inflate_at_boundary(const struct mota_inflate *z)
{
    return z->state == S_HEADER && z->flushed && z->got == 0 && z->nbits == 0;
}

int mota_inflate_finish(const struct mota_inflate *z)
{
    return z->state == S_END ? MOTA_OK : MOTA_ERR_DECOMP_TRUNCATED;
}

uint32_t mota_inflate_bound(uint32_t size, uint32_t block)
{
    if (block == 0)
        return 0;
    /* a sanity limit, not a tight one: zlib may code a long block of noise in a Huffman block a little
     * larger than storing it (its deflateBound allows about 1/1000), and adds a flush (5 bytes) per block */
    uint32_t blocks = size / block + (size % block != 0); /* 32-bit: no 64-bit division in the device */
    uint64_t b = (uint64_t)size + size / 64u + (uint64_t)blocks * 16u + 16u;
    return b > 0xFFFFFFFFu ? 0 : (uint32_t)b;
}

/* ---- bits ---- */

/* The next bit of the input (LSB first), or -1: the input is used up. */
static int bit(struct mota_inflate *z, const uint8_t *in, size_t len, size_t *p)
{
    if (z->nbits == 0) {
        if (*p == len)
            return -1;
        z->bits = in[(*p)++];
        z->nbits = 8;
    }
    int b = z->bits & 1;
    z->bits >>= 1;
    z->nbits--;
    return b;
}

static void want(struct mota_inflate *z, uint8_t n)
{
    z->acc = 0;
    z->got = 0;
    z->need = n;
}

/* A field of z->need bits into z->acc: GO_ON once complete, NEED_INPUT meanwhile. */
static int field(struct mota_inflate *z, const uint8_t *in, size_t len, size_t *p)
{
    while (z->got < z->need) {
        int b = bit(z, in, len, p);
        if (b < 0)
            return NEED_INPUT;
        z->acc |= (uint32_t)b << z->got++;
    }
    z->got = 0; /* the field is read: at_boundary looks at got */
    return GO_ON;
}

/* A symbol of code h, bit by bit: GO_ON and *sym, NEED_INPUT, or an error for a code no symbol has. */
static int decode(struct mota_inflate *z, const struct mota_huffman *h, const uint8_t *in, size_t len, size_t *p,
                  unsigned *sym)
{
    for (;;) {
        int b = bit(z, in, len, p);
        if (b < 0)
            return NEED_INPUT;
        z->code |= (uint16_t)b;
        int count = h->count[++z->len];
        if ((int)z->code - count < (int)z->first) {
            *sym = h->symbol[z->index + (z->code - z->first)];
            z->code = z->first = z->index = 0;
            z->len = 0;
            return GO_ON;
        }
        z->index += (uint16_t)count;
        z->first = (uint16_t)((z->first + count) << 1);
        z->code = (uint16_t)(z->code << 1);
        if (z->len == 15)
            return MOTA_ERR_DECOMP_BLOCK; /* a code the block's code does not have */
    }
}

/* Canonical code from n lengths: 0, or > 0 for an incomplete code, or < 0 for an over-subscribed one. */
static int construct(struct mota_huffman *h, const uint8_t *lens, unsigned n)
{
    uint16_t offs[16];
    int left = 1;
    memset(h->count, 0, sizeof(h->count));
    for (unsigned s = 0; s < n; s++)
        h->count[lens[s]]++;
    if (h->count[0] == n)
        return 0;
    for (unsigned l = 1; l < 16; l++) {
        left = (left << 1) - h->count[l];
        if (left < 0)
            return left;
    }
    offs[1] = 0;
    for (unsigned l = 1; l < 15; l++)
        offs[l + 1] = (uint16_t)(offs[l] + h->count[l]);
    for (unsigned s = 0; s < n; s++)
        if (lens[s] != 0)
            h->symbol[offs[lens[s]]++] = (uint16_t)s;
    return left;
}

/* ---- blocks ---- */

/* A block ended: the next header, or the end of the stream after the final one. */
static int block_end(struct mota_inflate *z)
{
    z->flushed = 0;
    if (!z->final) {
        z->state = S_HEADER;
        want(z, 3);
        return GO_ON;
    }
    z->state = S_END;
    return z->out == z->size ? GO_ON : MOTA_ERR_DECOMP_SHORT;
}

/* A block's 3-bit header read: stored, fixed or dynamic codes. */
static int header(struct mota_inflate *z)
{
    unsigned type = z->acc >> 1;
    z->final = (uint8_t)(z->acc & 1u);
    if (type == 0) {
        z->nbits = 0; /* a stored block starts on a byte boundary */
        z->state = S_STORED;
        want(z, 32);
        return GO_ON;
    }
    if (type == 1) { /* the fixed codes (RFC 1951 3.2.6) */
        for (unsigned s = 0; s < 288; s++)
            z->lens[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
        memset(z->lens + 288, 5, 30);
        (void)construct(&z->lit, z->lens, 288);
        (void)construct(&z->dist, z->lens + 288, 30);
        z->state = S_SYMBOL;
        return GO_ON;
    }
    if (type == 2) {
        z->state = S_COUNTS;
        want(z, 14);
        return GO_ON;
    }
    return MOTA_ERR_DECOMP_BLOCK; /* type 3 is reserved */
}

/* LEN and NLEN of a stored block: its bytes, or an empty one: a flush (a resume point) or the end. */
static int stored(struct mota_inflate *z)
{
    uint32_t n = z->acc & 0xFFFFu;
    if ((z->acc >> 16) != (~n & 0xFFFFu))
        return MOTA_ERR_DECOMP_BLOCK;
    if (n > 0) {
        if (n > z->seg_end - z->out)
            return MOTA_ERR_DECOMP_OVERRUN;
        z->n = (uint16_t)n;
        z->state = S_COPY;
        return GO_ON;
    }
    if (z->final)
        return block_end(z);
    /* a flush: the block of image bytes it closes must be whole */
    if (z->out != z->seg_end)
        return MOTA_ERR_DECOMP_BLOCK;
    z->seg_end = z->size - z->out < z->block ? z->size : z->out + z->block;
    z->state = S_HEADER;
    want(z, 3);
    z->flushed = 1;
    return FLUSHED;
}

/* HLIT, HDIST and HCLEN read: the code-length code's lengths follow. */
static int counts(struct mota_inflate *z)
{
    z->hlit = (uint16_t)(257u + (z->acc & 31u));
    z->hdist = (uint16_t)(1u + ((z->acc >> 5) & 31u));
    z->hclen = (uint8_t)(4u + (z->acc >> 10));
    if (z->hlit > 286 || z->hdist > 30)
        return MOTA_ERR_DECOMP_BLOCK;
    memset(z->lens, 0, 19);
    z->n = 0;
    z->state = S_CLEN;
    want(z, 3);
    return GO_ON;
}

/* One length of the code-length code, in its order; after the last, that code is built. */
static int clen(struct mota_inflate *z)
{
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    z->lens[order[z->n++]] = (uint8_t)z->acc;
    if (z->n < z->hclen) {
        want(z, 3);
        return GO_ON;
    }
    if (construct(&z->dist, z->lens, 19) != 0)
        return MOTA_ERR_DECOMP_BLOCK; /* the code-length code must be complete */
    z->n = 0;
    z->state = S_LENS;
    return GO_ON;
}

/* A built code is usable: complete, or (as zlib allows) a single code of one bit. */
static bool code_ok(const struct mota_huffman *h, unsigned n, int left)
{
    return left == 0 || (left > 0 && h->count[1] == 1 && n - h->count[0] == 1);
}

/* Every code length read: the block's two codes. */
static int codes(struct mota_inflate *z)
{
    if (z->lens[256] == 0 || !code_ok(&z->lit, z->hlit, construct(&z->lit, z->lens, z->hlit)) ||
        !code_ok(&z->dist, z->hdist, construct(&z->dist, z->lens + z->hlit, z->hdist)))
        return MOTA_ERR_DECOMP_BLOCK; /* no end-of-block code, an over-subscribed or an incomplete code */
    z->state = S_SYMBOL;
    return GO_ON;
}

/* A code-length symbol: a length, or a repeat (16: the previous one, 17 and 18: zeros) whose count follows. */
static int lens_symbol(struct mota_inflate *z, unsigned sym)
{
    if (sym < 16) {
        z->lens[z->n++] = (uint8_t)sym;
        return z->n == z->hlit + z->hdist ? codes(z) : GO_ON;
    }
    if (sym == 16 && z->n == 0)
        return MOTA_ERR_DECOMP_BLOCK; /* nothing to repeat */
    z->sym = (uint16_t)sym;
    z->state = S_REPEAT;
    want(z, sym == 16 ? 2 : sym == 17 ? 3 : 7);
    return GO_ON;
}

static int repeat(struct mota_inflate *z)
{
    unsigned count = z->acc + (z->sym == 18 ? 11u : 3u);
    uint8_t v = z->sym == 16 ? z->lens[z->n - 1] : 0;
    if (count > (unsigned)(z->hlit + z->hdist - z->n))
        return MOTA_ERR_DECOMP_BLOCK;
    memset(z->lens + z->n, v, count);
    z->n = (uint16_t)(z->n + count);
    z->state = S_LENS;
    return z->n == z->hlit + z->hdist ? codes(z) : GO_ON;
}

/* A literal/length symbol: a byte, the block's end, or a match's length (extra bits may follow). */
static int symbol(struct mota_inflate *z, unsigned sym, const struct mota_decomp_sink *sink)
{
    if (sym < 256) {
        uint8_t b = (uint8_t)sym;
        if (z->out == z->seg_end)
            return MOTA_ERR_DECOMP_OVERRUN;
        int ret = sink->write(sink->ctx, &b, 1);
        z->out++;
        return ret == MOTA_OK ? GO_ON : ret;
    }
    if (sym == 256)
        return block_end(z);
    sym -= 257;
    if (sym >= 29)
        return MOTA_ERR_DECOMP_BLOCK; /* 286 and 287 are not lengths */
    unsigned ext = sym < 8 || sym == 28 ? 0 : (sym >> 2) - 1;
    z->n = (uint16_t)(sym < 8 ? 3 + sym : sym == 28 ? 258 : ((4u + (sym & 3u)) << ext) + 3u);
    z->state = ext ? S_LENGTH : S_DISTANCE;
    want(z, (uint8_t)ext);
    return GO_ON;
}

/* A distance symbol: its base, and its extra bits next. */
static int distance(struct mota_inflate *z, unsigned d)
{
    if (d >= 30)
        return MOTA_ERR_DECOMP_BLOCK; /* 30 and 31 are not distances */
    unsigned ext = d < 4 ? 0 : (d >> 1) - 1;
    z->dbase = (uint16_t)(d < 4 ? 1 + d : ((2u + (d & 1u)) << ext) + 1u);
    z->state = S_DIST_EXTRA;
    want(z, (uint8_t)ext);
    return GO_ON;
}

/* The match is known: every byte from the image already written, none past the block. */
static int match(struct mota_inflate *z, const struct mota_decomp_sink *sink)
{
    uint32_t dist = z->dbase + z->acc;
    if (dist > z->out)
        return MOTA_ERR_DECOMP_OFFSET;
    if (z->n > z->seg_end - z->out)
        return MOTA_ERR_DECOMP_OVERRUN;
    int ret = sink->copy(sink->ctx, dist, z->n);
    if (ret != MOTA_OK)
        return ret;
    z->out += z->n;
    z->state = S_SYMBOL;
    return GO_ON;
}

/* A stored block's bytes, as many as the input holds, in one write. */
static int copy(struct mota_inflate *z, const uint8_t *in, size_t len, size_t *p, const struct mota_decomp_sink *sink)
{
    size_t k = len - *p < z->n ? len - *p : z->n;
    if (k == 0)
        return NEED_INPUT;
    int ret = sink->write(sink->ctx, in + *p, k);
    if (ret != MOTA_OK)
        return ret;
    *p += k;
    z->out += (uint32_t)k;
    z->n = (uint16_t)(z->n - k);
    return z->n > 0 ? GO_ON : block_end(z);
}

/* One step: GO_ON, NEED_INPUT, FLUSHED or an error. */
static int step(struct mota_inflate *z, const uint8_t *in, size_t len, size_t *p, const struct mota_decomp_sink *sink)
{
    unsigned sym = 0;
    int r;
    switch (z->state) {
    case S_COPY: return copy(z, in, len, p, sink);
    case S_LENS: return (r = decode(z, &z->dist, in, len, p, &sym)) == GO_ON ? lens_symbol(z, sym) : r;
    case S_SYMBOL: return (r = decode(z, &z->lit, in, len, p, &sym)) == GO_ON ? symbol(z, sym, sink) : r;
    case S_DISTANCE: return (r = decode(z, &z->dist, in, len, p, &sym)) == GO_ON ? distance(z, sym) : r;
    case S_END: return *p < len ? MOTA_ERR_DECOMP_TRAILING : NEED_INPUT;
    default: break;
    }
    if ((r = field(z, in, len, p)) != GO_ON)
        return r;
    switch (z->state) {
    case S_HEADER: return header(z);
    case S_STORED: return stored(z);
    case S_COUNTS: return counts(z);
    case S_CLEN: return clen(z);
    case S_REPEAT: return repeat(z);
    case S_LENGTH:
        z->n = (uint16_t)(z->n + z->acc);
        z->state = S_DISTANCE;
        return GO_ON;
    default: /* S_DIST_EXTRA */ return match(z, sink);
    }
}

int mota_inflate_feed(struct mota_inflate *z, const uint8_t *in, size_t len, const struct mota_decomp_sink *sink,
                      size_t *used)
{
    size_t p = 0;
    int r = GO_ON;
    while (r == GO_ON)
        r = step(z, in, len, &p, sink);
    *used = p;
    return r < 0 ? r : MOTA_OK;
}
