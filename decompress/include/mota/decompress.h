/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compressed payloads (docs/container-format.md, "Compressed payloads"): the
 * decoders of the algorithms a manifest's compression parameter may name,
 * behind this one interface, which the agent and the host use. Both decode a
 * stream fed in any chunks into a sink, with no window in RAM (matches are
 * copied by the sink from what it wrote), in fixed blocks of image bytes, and
 * can resume at a block boundary knowing only the image bytes written.
 * The per-algorithm decoders (src/lz4.c, src/inflate.c) are private; their
 * states are here only so that a caller can own struct mota_decompress.
 */
#ifndef MOTA_DECOMPRESS_H
#define MOTA_DECOMPRESS_H

#include "mota/features.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* compression-info algorithm numbers */
#define MOTA_DECOMP_LZ4 1u     /* LZ4 frame, mota's form (src/lz4.c) */
#define MOTA_DECOMP_DEFLATE 2u /* raw deflate (RFC 1951), a sync flush every block (src/inflate.c) */
#define MOTA_DECOMP_LZMA 3u    /* LZMA, each block a stream of its own over the whole image's history (src/lzma.c) */

#define MOTA_DECOMP_MIN_BLOCK 256u /* image bytes per block: a power of two in this range */
#define MOTA_DECOMP_MAX_BLOCK 65536u
#define MOTA_DECOMP_MAX_BLOCK_LZMA 1048576u /* a state reset costs about 2.5 KiB of output: larger blocks */

struct mota_decomp_sink {
    /* append n image bytes */
    int (*write)(void *ctx, const uint8_t *p, size_t n);
    /* append n bytes, each a copy of the byte dist before it (1 <= dist <= bytes written; the
     * source may overlap what is being written: byte by byte) */
    int (*copy)(void *ctx, uint32_t dist, uint32_t n);
    void *ctx;
    /* the image byte dist before the next one (1 <= dist <= bytes written): LZMA's matched literals */
    int (*peek)(void *ctx, uint32_t dist, uint8_t *b);
};

/* ---- the decoders' states (src/lz4.h, src/inflate.h) ---- */

/* LZ4: one frame with linked blocks of `block` image bytes (src/lz4.h) */
#define MOTA_LZ4_HEADER_LEN 7u /* magic, FLG, BD, HC: the only header mota accepts */

struct mota_lz4 {
    uint32_t out;       /* plain bytes produced */
    uint32_t size;      /* plain bytes the image has (signed) */
    uint32_t block;     /* plain bytes per block */
    uint32_t block_end; /* plain offset where the current block ends */
    uint32_t left;      /* compressed bytes left in the current block */
    uint32_t n;         /* length being read, or literals left */
    uint32_t dist;      /* match offset being read */
    uint8_t state, token, i;
    uint8_t word[4]; /* a block-size field being read */
};

/* deflate: raw RFC 1951 with a sync flush every block (src/inflate.h) */
struct mota_huffman {
    uint16_t count[16];   /* codes of each length */
    uint16_t symbol[288]; /* symbols in canonical order */
};

struct mota_inflate {
    uint32_t out, size, block;   /* image bytes written; the image's size; image bytes per block */
    uint32_t seg_end;            /* where the current block must end (a flush, or the final block's end) */
    uint32_t acc;                /* a field's bits, gathered LSB first */
    uint16_t n, hlit, hdist;     /* a stored length, a match length, or code lengths read */
    uint16_t sym, dbase;         /* a code-length repeat being read; a match's distance base */
    uint16_t code, first, index; /* a Huffman code being read, bit by bit */
    uint8_t bits, nbits;         /* the input byte being taken apart */
    uint8_t got, need;           /* bits of acc read, and wanted */
    uint8_t state, len, hclen, final, flushed;
    uint8_t lens[288 + 32];   /* the code lengths of a dynamic block's header */
    struct mota_huffman lit;  /* literal/length code */
    struct mota_huffman dist; /* distance code (and the code-length code while a header is read) */
};

/* LZMA: a block's stream, lc + lp <= 1 (src/lzma.h) */
#define MOTA_LZMA_PROBS (1846u + (0x300u << 1)) /* the specification's models; literals for lc + lp <= 1 */
#define MOTA_LZMA_AHEAD 24u                     /* input bytes a symbol may take (20), and a margin */

struct mota_lzma {
    uint32_t out, size, block, block_end; /* plain bytes written; the image's; per block; where this block ends */
    uint32_t left;                        /* the block's bytes not yet taken by the range decoder */
    uint32_t range, code;
    uint32_t rep[4];          /* the last four distances, minus one */
    uint8_t phase, state;     /* where in a block; the specification's state (0..11) */
    uint8_t lc, lp, pb, prev; /* the block's parameters; the byte before out (lc > 0) */
    uint8_t hdr_i, carry_n, lit_n;
    uint8_t hdr[4];
    uint8_t carry[MOTA_LZMA_AHEAD]; /* the start of a symbol whose bytes came in pieces */
    uint8_t lit[16];                /* literals not yet given to the sink */
    uint16_t probs[MOTA_LZMA_PROBS];
};

struct mota_decompress {
    uint32_t alg; /* MOTA_DECOMP_LZ4, _DEFLATE or _LZMA */
    union {       /* only the decoders this build has (mota/features.h) */
#if MOTA_FEATURE_LZ4
        struct mota_lz4 lz4;
#endif
#if MOTA_FEATURE_DEFLATE
        struct mota_inflate inflate;
#endif
#if MOTA_FEATURE_LZMA
        struct mota_lzma lzma;
#endif
        uint32_t none; /* a build with neither */
    } u;
};

/* The algorithm is one the container format has (a host checks every container with it). */
bool mota_decompress_known(uint32_t alg);

/* ... and one this build decodes (MOTA_FEATURE_LZ4, _DEFLATE, _LZMA): a device refuses the others before any erase
 * (MOTA_ERR_DECOMP_OFF). */
bool mota_decompress_built(uint32_t alg);

/* A new stream, or one resumed at a block boundary after `out` image bytes (0: a new one). MOTA_ERR_ARG for an
 * unknown algorithm, a block of 0, or an `out` past the image or off a block boundary. */
int mota_decompress_start(struct mota_decompress *d, uint32_t alg, uint32_t size, uint32_t block, uint32_t out);

/* As mota_lz4_feed / mota_inflate_feed / mota_lzma_feed: stops right after a block boundary. */
int mota_decompress_feed(struct mota_decompress *d, const uint8_t *in, size_t len, const struct mota_decomp_sink *sink,
                         size_t *used);
bool mota_decompress_at_boundary(const struct mota_decompress *d);
int mota_decompress_finish(const struct mota_decompress *d);
uint32_t mota_decompress_out(const struct mota_decompress *d); /* image bytes written */

/* The most bytes a payload of `size` image bytes can take; 0 for an unknown algorithm or an overflow. */
uint32_t mota_decompress_bound(uint32_t alg, uint32_t size, uint32_t block);

/* A whole payload in memory into out[0..size), with d as the decoder's state. */
int mota_decompress_buffer(struct mota_decompress *d, uint32_t alg, const uint8_t *in, size_t len, uint8_t *out,
                           uint32_t size, uint32_t block);

#endif /* MOTA_DECOMPRESS_H */
