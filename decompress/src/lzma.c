/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The LZMA decoder of compressed payloads (src/lzma.h), written from the
 * LZMA specification (Igor Pavlov, lzma-specification.txt in the LZMA SDK):
 * its range decoder, adaptive bit models, literal coder (matched literals
 * after a match), length coders, distance slots and the twelve states. What
 * mota narrows: docs/container-format.md "Compressed payloads".
 */
#include "lzma.h"

#include "mota/err.h"

#include <string.h>

enum { P_HEADER, P_STORED, P_INIT, P_SYMBOLS, P_END };

#define TOP (1u << 24)
#define PROB_INIT 1024u /* half of 1 << 11 */
#define STORED 0xFFu    /* a block's first byte: its plain bytes follow */

/* the models, one after another in probs[] (the LZMA SDK's layout) */
enum {
    IS_MATCH = 0, /* [state][pos_state] */
    IS_REP = 192,
    IS_REP_G0 = 204,
    IS_REP_G1 = 216,
    IS_REP_G2 = 228,
    IS_REP0_LONG = 240, /* [state][pos_state] */
    POS_SLOT = 432,     /* [len_state][64] */
    SPEC_POS = 688,     /* the reverse trees of distance slots 4..13 */
    ALIGN = 802,
    LEN = 818,      /* match lengths */
    REP_LEN = 1332, /* repeated-match lengths */
    LITERAL = 1846, /* [0x300 per literal context] */
};
enum { L_CHOICE = 0, L_CHOICE2 = 1, L_LOW = 2, L_MID = 130, L_HIGH = 258 }; /* inside a length coder */

struct rc {
    uint32_t range, code;
    const uint8_t *p, *end;
    int bad; /* a read past the bytes given: only a broken block gets there */
};

void mota_lzma_init(struct mota_lzma *z, uint32_t size, uint32_t block)
{
    memset(z, 0, offsetof(struct mota_lzma, probs)); /* the models are set at each block's start */
    z->size = size;
    z->block = block;
    z->phase = size == 0 ? P_END : P_HEADER;
}

void mota_lzma_resume(struct mota_lzma *z, uint32_t size, uint32_t block, uint32_t out)
{
    mota_lzma_init(z, size, block);
    z->out = out;
    z->phase = out == size ? P_END : P_HEADER;
}

bool mota_lzma_at_boundary(const struct mota_lzma *z)
{
    return z->phase == P_HEADER && z->hdr_i == 0;
}

int mota_lzma_finish(const struct mota_lzma *z)
{
    return z->phase == P_END ? MOTA_OK : MOTA_ERR_DECOMP_TRUNCATED;
}

uint32_t mota_lzma_bound(uint32_t size, uint32_t block)
{
    if (block == 0)
        return 0;
    uint64_t b = (uint64_t)size + (uint64_t)(size / block + (size % block != 0)) * 4u; /* a header a block */
    return b > 0xFFFFFFFFu ? 0 : (uint32_t)b;
}

/* ---- the range decoder ---- */

static inline __attribute__((always_inline)) void rc_norm(struct rc *r)
{
    if (r->range < TOP) {
        r->range <<= 8;
        r->code <<= 8;
        if (r->p < r->end)
            r->code |= *r->p++;
        else
            r->bad = 1;
    }
}

/* One bit through the model *pr. Each branch updates on its own: branches, not predicated code (fewer
 * instructions on the Cortex-M). */
static inline __attribute__((always_inline)) unsigned rc_bit(struct rc *r, uint16_t *pr)
{
    uint32_t p = *pr, bound = (r->range >> 11) * p;
    unsigned b = 0;
    if (r->code < bound) {
        r->range = bound;
        *pr = (uint16_t)(p + ((2048u - p) >> 5));
    } else {
        r->range -= bound;
        r->code -= bound;
        *pr = (uint16_t)(p - (p >> 5));
        b = 1;
    }
    rc_norm(r);
    return b;
}

/* rc_bit's two outcomes on their own (p = *pr, bound: where the range splits), for a caller that branches
 * on the bit at once. */
static inline __attribute__((always_inline)) void rc_0(struct rc *r, uint16_t *pr, uint32_t p, uint32_t bound)
{
    r->range = bound;
    *pr = (uint16_t)(p + ((2048u - p) >> 5));
    rc_norm(r);
}

static inline __attribute__((always_inline)) void rc_1(struct rc *r, uint16_t *pr, uint32_t p, uint32_t bound)
{
    r->range -= bound;
    r->code -= bound;
    *pr = (uint16_t)(p - (p >> 5));
    rc_norm(r);
}

/* The rest of a byte through a tree of 255 models from node sym (< 0x100): the literals' loop, each bit one
 * branch. */
static inline __attribute__((always_inline)) unsigned rc_byte(struct rc *r, uint16_t *probs, unsigned sym)
{
    do {
        uint16_t *pr = &probs[sym];
        uint32_t p = *pr, bound = (r->range >> 11) * p;
        sym <<= 1;
        if (r->code < bound) {
            rc_0(r, pr, p, bound);
        } else {
            rc_1(r, pr, p, bound);
            sym++;
        }
    } while (sym < 0x100u);
    return sym;
}

/* n bits, most significant first, through a tree of 2^n - 1 models (the coder in locals meanwhile) */
static unsigned rc_tree(struct rc *r, uint16_t *probs, unsigned n)
{
    struct rc c = *r;
    unsigned m = 1;
    for (unsigned i = 0; i < n; i++)
        m = (m << 1) | rc_bit(&c, &probs[m]);
    *r = c;
    return m - (1u << n);
}

/* n bits, least significant first */
static unsigned rc_rtree(struct rc *r, uint16_t *probs, unsigned n)
{
    struct rc c = *r;
    unsigned m = 1, sym = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned b = rc_bit(&c, &probs[m]);
        m = (m << 1) | b;
        sym |= b << i;
    }
    *r = c;
    return sym;
}

/* n bits of equal probability */
static uint32_t rc_direct(struct rc *r, unsigned n)
{
    struct rc c = *r;
    uint32_t v = 0;
    while (n-- > 0) {
        c.range >>= 1;
        uint32_t b = c.code >= c.range;
        c.code -= c.range & (0u - b);
        v = (v << 1) | b;
        rc_norm(&c);
    }
    *r = c;
    return v;
}

/* ---- the models ---- */

static unsigned len_decode(struct rc *r, uint16_t *l, unsigned pos_state)
{
    if (!rc_bit(r, &l[L_CHOICE]))
        return rc_tree(r, l + L_LOW + (pos_state << 3), 3);
    if (!rc_bit(r, &l[L_CHOICE2]))
        return 8u + rc_tree(r, l + L_MID + (pos_state << 3), 3);
    return 16u + rc_tree(r, l + L_HIGH, 8);
}

/* A match's distance minus one (0xFFFFFFFF: the end marker, which mota's blocks never have). */
static uint32_t dist_decode(struct rc *r, uint16_t *probs, unsigned len)
{
    unsigned slot = rc_tree(r, probs + POS_SLOT + ((len < 4 ? len : 3u) << 6), 6);
    if (slot < 4)
        return slot;
    unsigned nd = (slot >> 1) - 1u;
    uint32_t d = (2u | (slot & 1u)) << nd;
    if (slot < 14)
        return d + rc_rtree(r, probs + SPEC_POS + d - slot - 1u, nd);
    d += rc_direct(r, nd - 4u) << 4;
    return d + rc_rtree(r, probs + ALIGN, 4);
}

/* Where the next image byte goes: out counts the bytes the sink has, lit_n those still held. */
static inline uint32_t pos(const struct mota_lzma *z)
{
    return z->out + z->lit_n;
}

static int flush(struct mota_lzma *z, const struct mota_decomp_sink *sink)
{
    int ret = z->lit_n > 0 ? sink->write(sink->ctx, z->lit, z->lit_n) : MOTA_OK;
    z->out += ret == MOTA_OK ? z->lit_n : 0u;
    z->lit_n = 0;
    return ret;
}

/* A byte of the image (a literal, or a short rep's), kept until a match or the block's end needs it written. */
static int put(struct mota_lzma *z, uint8_t b, const struct mota_decomp_sink *sink)
{
    z->lit[z->lit_n++] = b;
    z->prev = b;
    return z->lit_n == sizeof(z->lit) ? flush(z, sink) : MOTA_OK;
}

/* The image byte rep0 + 1 back (the decoder checked it is there), every byte before it written. */
static int rep_byte(struct mota_lzma *z, const struct mota_decomp_sink *sink, uint8_t *b)
{
    int ret = flush(z, sink);
    return ret != MOTA_OK ? ret : sink->peek(sink->ctx, z->rep[0] + 1u, b);
}

/* The state after a literal (the specification's UpdateState_Literal) */
static const uint8_t after_literal[12] = {0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 4, 5};

/* A literal (IsMatch was 0) at image offset pos, with r the caller's coder in locals. lc + lp <= 1: its
 * context is pos's low bit (lp), the previous byte's high bit (lc), or none. */
static inline __attribute__((always_inline)) int literal(struct mota_lzma *z, struct rc *r, uint32_t pos,
                                                         const struct mota_decomp_sink *sink)
{
    unsigned ctx = (pos & z->lp) | (((unsigned)z->prev >> 7) & z->lc);
    uint16_t *probs = z->probs + LITERAL + 0x300u * ctx;
    unsigned sym = 1;
    if (z->state >= 7) { /* after a match: the byte at rep0 is the context while the bits agree */
        uint8_t mb = 0;
        int ret = rep_byte(z, sink, &mb);
        if (ret != MOTA_OK)
            return ret;
        unsigned match = mb;
        do {
            unsigned mbit = (match >> 7) & 1u, b;
            match <<= 1;
            b = rc_bit(r, &probs[((1u + mbit) << 8) + sym]);
            sym = (sym << 1) | b;
            if (b != mbit)
                break;
        } while (sym < 0x100u);
    }
    if (sym < 0x100u)
        sym = rc_byte(r, probs, sym);
    z->state = after_literal[z->state];
    return r->bad ? MOTA_ERR_DECOMP_BLOCK : put(z, (uint8_t)sym, sink);
}

/* A match's length: len (minus two) and rep0 set; copied from the image after every check. */
static int copy_match(struct mota_lzma *z, struct rc *r, unsigned len, const struct mota_decomp_sink *sink)
{
    len += 2u;
    if (r->bad)
        return MOTA_ERR_DECOMP_BLOCK;
    if (z->rep[0] >= pos(z))
        return MOTA_ERR_DECOMP_OFFSET;
    if (len > z->block_end - pos(z))
        return MOTA_ERR_DECOMP_OVERRUN;
    int ret = flush(z, sink);
    if (ret == MOTA_OK)
        ret = sink->copy(sink->ctx, z->rep[0] + 1u, len);
    z->out += ret == MOTA_OK ? len : 0u;
    if (ret == MOTA_OK && z->lc > 0)
        ret = sink->peek(sink->ctx, 1, &z->prev);
    return ret;
}

/* A repeated match (IsRep was 1): a short rep of one byte, or one of the four distances again. */
static int rep_match(struct mota_lzma *z, struct rc *r, unsigned pos_state, const struct mota_decomp_sink *sink)
{
    uint16_t *probs = z->probs;
    unsigned s = z->state;
    if (!rc_bit(r, &probs[IS_REP_G0 + s])) {
        if (!rc_bit(r, &probs[IS_REP0_LONG + (s << 4) + pos_state])) {
            uint8_t b = 0;
            z->state = s < 7 ? 9 : 11;
            if (r->bad)
                return MOTA_ERR_DECOMP_BLOCK;
            if (z->rep[0] >= pos(z))
                return MOTA_ERR_DECOMP_OFFSET;
            int ret = rep_byte(z, sink, &b);
            return ret != MOTA_OK ? ret : put(z, b, sink);
        }
    } else {
        uint32_t d;
        if (!rc_bit(r, &probs[IS_REP_G1 + s])) {
            d = z->rep[1];
        } else {
            if (!rc_bit(r, &probs[IS_REP_G2 + s])) {
                d = z->rep[2];
            } else {
                d = z->rep[3];
                z->rep[3] = z->rep[2];
            }
            z->rep[2] = z->rep[1];
        }
        z->rep[1] = z->rep[0];
        z->rep[0] = d;
    }
    unsigned len = len_decode(r, probs + REP_LEN, pos_state);
    z->state = s < 7 ? 8 : 11;
    return copy_match(z, r, len, sink);
}

/* A match or a repeated match (IsMatch was 1). */
static int match(struct mota_lzma *z, struct rc *r, unsigned pos_state, const struct mota_decomp_sink *sink)
{
    uint16_t *probs = z->probs;
    unsigned s = z->state;
    if (rc_bit(r, &probs[IS_REP + s]))
        return rep_match(z, r, pos_state, sink);
    unsigned len = len_decode(r, probs + LEN, pos_state);
    z->state = s < 7 ? 7 : 10;
    uint32_t d = dist_decode(r, probs, len);
    if (d == 0xFFFFFFFFu)
        return MOTA_ERR_DECOMP_BLOCK; /* an end marker: mota's blocks end by their size */
    z->rep[3] = z->rep[2];
    z->rep[2] = z->rep[1];
    z->rep[1] = z->rep[0];
    z->rep[0] = d;
    return copy_match(z, r, len, sink);
}

/* Symbols (literals, matches, repeated matches) while out is in the block and the input holds `need` bytes
 * (SIZE_MAX: one symbol), with the coder and the image offset in locals: the literals' bits are most of the
 * work. */
static int symbols(struct mota_lzma *z, struct rc *r, size_t need, const struct mota_decomp_sink *sink)
{
    struct rc c = *r;
    uint32_t at = pos(z), pb = (1u << z->pb) - 1u, end = z->block_end;
    int ret;
    do {
        unsigned pos_state = at & pb;
        uint16_t *pm = &z->probs[IS_MATCH + ((unsigned)z->state << 4) + pos_state];
        uint32_t p = *pm, bound = (c.range >> 11) * p;
        if (c.code < bound) { /* rc_bit's branches, with what follows them */
            rc_0(&c, pm, p, bound);
            ret = literal(z, &c, at++, sink);
        } else {
            rc_1(&c, pm, p, bound);
            *r = c;
            ret = match(z, r, pos_state, sink);
            c = *r;
            at = pos(z);
        }
    } while (ret == MOTA_OK && at < end && (size_t)(c.end - c.p) >= need);
    *r = c;
    return ret;
}

/* ---- blocks ---- */

static int block_start(struct mota_lzma *z, const struct mota_decomp_sink *sink)
{
    uint32_t plain = z->size - z->out < z->block ? z->size - z->out : z->block;
    unsigned p = z->hdr[0];
    z->block_end = z->out + plain;
    z->hdr_i = 0;
    if (p == STORED) {
        z->left = plain;
        z->phase = P_STORED;
        return MOTA_OK;
    }
    z->lc = (uint8_t)(p % 9u);
    z->lp = (uint8_t)(p / 9u % 5u);
    z->pb = (uint8_t)(p / 45u);
    z->left = z->hdr[1] | (uint32_t)z->hdr[2] << 8 | (uint32_t)z->hdr[3] << 16;
    /* the models this decoder has room for; data smaller than the plain bytes (else it is stored) */
    if (z->pb > 4 || z->lc + z->lp > 1 || z->left < 5 || z->left >= plain)
        return MOTA_ERR_DECOMP_BLOCK;
    for (uint32_t i = 0; i < LITERAL + (0x300u << (z->lc + z->lp)); i++)
        z->probs[i] = PROB_INIT;
    memset(z->rep, 0, sizeof(z->rep));
    z->state = 0;
    z->carry_n = 0;
    z->prev = 0;
    z->phase = P_INIT;
    return z->lc > 0 && z->out > 0 ? sink->peek(sink->ctx, 1, &z->prev) : MOTA_OK;
}

/* The block's last symbol decoded: every byte of its data taken, and the coder's end (code 0). */
static int block_done(struct mota_lzma *z, const struct mota_decomp_sink *sink)
{
    int ret = flush(z, sink);
    if (ret != MOTA_OK)
        return ret;
    if (z->left != 0 || z->code != 0)
        return MOTA_ERR_DECOMP_BLOCK;
    z->phase = z->out == z->size ? P_END : P_HEADER;
    return MOTA_OK;
}

/* Symbols from a[0..n), n <= left: while out is in the block and a symbol's bytes are surely there. */
static int run(struct mota_lzma *z, const uint8_t *a, size_t n, const struct mota_decomp_sink *sink, size_t *taken)
{
    struct rc r = {z->range, z->code, a, a + n, 0};
    bool all = n == z->left; /* the block's data ends here: a symbol reading past it is broken */
    int ret = MOTA_OK;
    if (pos(z) < z->block_end && (all || n >= MOTA_LZMA_AHEAD))
        ret = symbols(z, &r, all ? 0 : MOTA_LZMA_AHEAD, sink);
    if (ret == MOTA_OK && r.bad)
        ret = MOTA_ERR_DECOMP_BLOCK;
    z->range = r.range;
    z->code = r.code;
    *taken = (size_t)(r.p - a);
    z->left -= (uint32_t)*taken;
    return ret;
}

/* A symbol whose bytes came in pieces: gathered in carry (n input bytes of the block here), decoded once
 * they are all there; the carry keeps what the symbol did not take. */
static int carried(struct mota_lzma *z, const uint8_t *in, size_t n, const struct mota_decomp_sink *sink, size_t *used)
{
    size_t k = MOTA_LZMA_AHEAD - z->carry_n, have, taken;
    k = k < n ? k : n;
    memcpy(z->carry + z->carry_n, in, k);
    have = z->carry_n + k;
    if (have < MOTA_LZMA_AHEAD && have < z->left) {
        z->carry_n = (uint8_t)have; /* still not a whole symbol's worth */
        *used = k;
        return MOTA_OK;
    }
    struct rc r = {z->range, z->code, z->carry, z->carry + have, 0};
    int ret = symbols(z, &r, SIZE_MAX, sink);
    if (ret == MOTA_OK && r.bad)
        ret = MOTA_ERR_DECOMP_BLOCK; /* past the block's data (a symbol takes at most 20 bytes) */
    z->range = r.range;
    z->code = r.code;
    taken = (size_t)(r.p - z->carry);
    z->left -= (uint32_t)taken;
    if (taken >= z->carry_n) {
        *used = taken - z->carry_n;
        z->carry_n = 0;
    } else {
        memmove(z->carry, z->carry + taken, z->carry_n - taken);
        z->carry_n = (uint8_t)(z->carry_n - taken);
        *used = 0;
    }
    return ret;
}

/* The coder's five first bytes: a 0, and the code, below the range. */
static int rc_start(struct mota_lzma *z, const uint8_t *in, size_t n, size_t *used)
{
    size_t k = 5u - z->carry_n < n ? 5u - z->carry_n : n;
    memcpy(z->carry + z->carry_n, in, k);
    z->carry_n = (uint8_t)(z->carry_n + k);
    *used = k;
    if (z->carry_n < 5)
        return MOTA_OK;
    z->range = 0xFFFFFFFFu;
    z->code = (uint32_t)z->carry[1] << 24 | (uint32_t)z->carry[2] << 16 | (uint32_t)z->carry[3] << 8 | z->carry[4];
    z->left -= 5u;
    z->carry_n = 0;
    z->phase = P_SYMBOLS;
    return z->carry[0] != 0 || z->code == z->range ? MOTA_ERR_DECOMP_BLOCK : MOTA_OK;
}

/* The block's range-coded data, from in[0..len). */
static int coded(struct mota_lzma *z, const uint8_t *in, size_t len, const struct mota_decomp_sink *sink, size_t *used)
{
    size_t n = len < z->left - z->carry_n ? len : z->left - z->carry_n; /* the block's bytes here */
    int ret;
    *used = 0;
    if (z->phase == P_INIT)
        return rc_start(z, in, n, used);
    if (z->carry_n == 0 && (n >= MOTA_LZMA_AHEAD || n == z->left))
        ret = run(z, in, n, sink, used);
    else
        ret = carried(z, in, n, sink, used);
    if (ret == MOTA_OK && pos(z) == z->block_end)
        ret = block_done(z, sink);
    return ret;
}

int mota_lzma_feed(struct mota_lzma *z, const uint8_t *in, size_t len, const struct mota_decomp_sink *sink,
                   size_t *used)
{
    size_t p = 0;
    int ret = MOTA_OK;
    /* symbols may take no byte: with the block's data all taken, the rest is decoded without input */
    while (ret == MOTA_OK && (p < len || (z->phase == P_SYMBOLS && z->left == z->carry_n))) {
        size_t k = 0;
        if (z->phase == P_END) {
            ret = MOTA_ERR_DECOMP_TRAILING;
        } else if (z->phase == P_HEADER) {
            z->hdr[z->hdr_i++] = in[p++];
            if (z->hdr_i == 4 || z->hdr[0] == STORED)
                ret = block_start(z, sink);
        } else if (z->phase == P_STORED) {
            k = len - p < z->left ? len - p : z->left;
            ret = sink->write(sink->ctx, in + p, k); /* z->left: the block's plain bytes, inside the image */
            z->out += ret == MOTA_OK ? (uint32_t)k : 0u;
            z->left -= (uint32_t)k;
            p += k;
            if (z->left == 0)
                z->phase = z->out == z->size ? P_END : P_HEADER;
        } else {
            ret = coded(z, in + p, len - p, sink, &k);
            p += k;
        }
        if (ret == MOTA_OK && z->phase != P_STORED && mota_lzma_at_boundary(z))
            break; /* a block ended: a resume point */
    }
    if (ret == MOTA_OK)
        ret = flush(z, sink);
    *used = p;
    return ret;
}
