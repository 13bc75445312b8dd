/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The LZ4 frame decoder of compressed payloads (src/lz4.h). Format: lz4's
 * doc/lz4_Frame_format.md and doc/lz4_Block_format.md; what mota narrows:
 * docs/container-format.md "Compressed payloads".
 */
#include "lz4.h"

#include "mota/err.h"

#include <string.h>

enum {
    S_HEADER,  /* the 7 header bytes */
    S_SIZE,    /* a block-size field (or the end mark) */
    S_STORED,  /* a stored block's bytes */
    S_TOKEN,   /* a sequence's token */
    S_LIT_EXT, /* literal length bytes past 15 */
    S_LIT,     /* literals */
    S_OFF0,    /* match offset, low byte */
    S_OFF1,    /* match offset, high byte */
    S_MAT_EXT, /* match length bytes past 19 */
    S_END,     /* after the end mark: nothing more */
};

/* magic 0x184D2204; FLG 0x40: version 01, linked blocks, no block or content checksum, no content
 * size, no dictionary; BD 0x40: blocks of at most 64 KiB; HC = (xxh32(FLG BD) >> 8) & 0xFF */
static const uint8_t k_header[MOTA_LZ4_HEADER_LEN] = {0x04, 0x22, 0x4D, 0x18, 0x40, 0x40, 0xC0};

#define STORED_BIT 0x80000000u

void mota_lz4_init(struct mota_lz4 *z, uint32_t size, uint32_t block)
{
    memset(z, 0, sizeof(*z));
    z->size = size;
    z->block = block;
    z->state = S_HEADER;
}

void mota_lz4_resume(struct mota_lz4 *z, uint32_t size, uint32_t block, uint32_t out)
{
    mota_lz4_init(z, size, block);
    z->out = out;
    z->state = S_SIZE;
}

bool mota_lz4_at_boundary(const struct mota_lz4 *z)
{
    return z->state == S_SIZE && z->i == 0;
}

int mota_lz4_finish(const struct mota_lz4 *z)
{
    return z->state == S_END ? MOTA_OK : MOTA_ERR_DECOMP_TRUNCATED;
}

uint32_t mota_lz4_bound(uint32_t size, uint32_t block)
{
    if (block == 0)
        return 0;
    uint32_t blocks = size / block + (size % block != 0);                 /* 32-bit: no 64-bit division in the device */
    uint64_t b = MOTA_LZ4_HEADER_LEN + (uint64_t)blocks * 4u + size + 4u; /* stored blocks, then the end mark */
    return b > 0xFFFFFFFFu ? 0 : (uint32_t)b;
}

/* A block-size field is complete: the end mark, or the next block's size and kind. */
static int block_start(struct mota_lz4 *z)
{
    uint32_t v =
        (uint32_t)z->word[0] | (uint32_t)z->word[1] << 8 | (uint32_t)z->word[2] << 16 | (uint32_t)z->word[3] << 24;
    uint32_t rest = z->size - z->out, plain = rest < z->block ? rest : z->block;
    z->i = 0;
    if (v == 0) { /* the end mark */
        if (z->out != z->size)
            return MOTA_ERR_DECOMP_SHORT;
        z->state = S_END;
        return MOTA_OK;
    }
    if (rest == 0)
        return MOTA_ERR_DECOMP_OVERRUN; /* a block past the image's declared size: a bomb */
    z->left = v & ~STORED_BIT;
    z->block_end = z->out + plain;
    /* a stored block holds its plain bytes exactly; a compressed one is smaller (else it is stored) */
    if ((v & STORED_BIT) != 0 ? z->left != plain : (z->left == 0 || z->left >= plain))
        return MOTA_ERR_DECOMP_BLOCK;
    z->state = (v & STORED_BIT) != 0 ? S_STORED : S_TOKEN;
    return MOTA_OK;
}

/* The block's compressed bytes are used up: it must have produced exactly its plain bytes. */
static int block_done(struct mota_lz4 *z)
{
    if (z->out != z->block_end)
        return MOTA_ERR_DECOMP_BLOCK;
    z->state = S_SIZE;
    z->i = 0;
    return MOTA_OK;
}

/* A literal or match length is complete: it must fit the block. */
static int length_fits(const struct mota_lz4 *z)
{
    return z->n <= z->block_end - z->out ? MOTA_OK : MOTA_ERR_DECOMP_OVERRUN;
}

/* The literal length is known: literals, or straight to the offset. */
static int literals_start(struct mota_lz4 *z)
{
    int ret = length_fits(z);
    if (ret != MOTA_OK)
        return ret;
    if (z->n > 0) {
        z->state = S_LIT;
        return MOTA_OK;
    }
    z->state = S_OFF0;
    return z->left == 0 ? block_done(z) : MOTA_OK; /* a block may end after a sequence's literals */
}

/* The match is known: copy it (every byte from the image already written). */
static int match(struct mota_lz4 *z, const struct mota_decomp_sink *sink)
{
    int ret = length_fits(z);
    if (ret != MOTA_OK)
        return ret;
    if (z->left == 0)
        return MOTA_ERR_DECOMP_BLOCK; /* a block ends with literals, never with a match */
    if ((ret = sink->copy(sink->ctx, z->dist, z->n)) != MOTA_OK)
        return ret;
    z->out += z->n;
    z->state = S_TOKEN;
    return MOTA_OK;
}

/* Literal or stored bytes: as many as the input, the run and the block's data allow, in one write. */
static int run(struct mota_lz4 *z, const uint8_t *in, size_t len, const struct mota_decomp_sink *sink, size_t *used)
{
    uint32_t want = z->state == S_LIT ? z->n : z->left;
    uint32_t k = len < want ? (uint32_t)len : want;
    if (k > z->left)
        k = z->left;
    if (k == 0)
        return MOTA_ERR_DECOMP_BLOCK;        /* literals past the block's data */
    int ret = sink->write(sink->ctx, in, k); /* inside the block: checked by length_fits or block_start */
    if (ret != MOTA_OK)
        return ret;
    z->out += k;
    z->left -= k;
    *used = k;
    if (z->state == S_LIT) {
        z->n -= k;
        if (z->n > 0)
            return z->left > 0 ? MOTA_OK : MOTA_ERR_DECOMP_BLOCK;
        z->state = S_OFF0;
    }
    return z->left == 0 ? block_done(z) : MOTA_OK;
}

/* One byte of the header, a size field or a sequence's token, lengths and offset. */
static int step(struct mota_lz4 *z, uint8_t c, const struct mota_decomp_sink *sink)
{
    switch (z->state) {
    case S_HEADER:
        if (c != k_header[z->i])
            return MOTA_ERR_DECOMP_FRAME;
        if (++z->i == MOTA_LZ4_HEADER_LEN) {
            z->state = S_SIZE;
            z->i = 0;
        }
        return MOTA_OK;
    case S_SIZE: z->word[z->i++] = c; return z->i == 4 ? block_start(z) : MOTA_OK;
    case S_END: return MOTA_ERR_DECOMP_TRAILING;
    default: break;
    }
    if (z->left == 0)
        return MOTA_ERR_DECOMP_BLOCK; /* a sequence cut by the end of its block's data */
    z->left--;
    switch (z->state) {
    case S_TOKEN:
        z->token = c;
        z->n = c >> 4;
        if (z->n == 15u) {
            z->state = S_LIT_EXT;
            return MOTA_OK;
        }
        return literals_start(z);
    case S_LIT_EXT: /* at most 255 per byte of a block of at most 64 KiB: no overflow */
        z->n += c;
        return c == 255u ? MOTA_OK : literals_start(z);
    case S_OFF0:
        z->dist = c;
        z->state = S_OFF1;
        return MOTA_OK;
    case S_OFF1:
        z->dist |= (uint32_t)c << 8;
        if (z->dist == 0 || z->dist > z->out)
            return MOTA_ERR_DECOMP_OFFSET;
        z->n = (z->token & 15u) + 4u;
        if ((z->token & 15u) == 15u) {
            z->state = S_MAT_EXT;
            return MOTA_OK;
        }
        return match(z, sink);
    default: /* S_MAT_EXT */ z->n += c; return c == 255u ? MOTA_OK : match(z, sink);
    }
}

int mota_lz4_feed(struct mota_lz4 *z, const uint8_t *in, size_t len, const struct mota_decomp_sink *sink, size_t *used)
{
    size_t p = 0;
    int ret = MOTA_OK;
    while (p < len && ret == MOTA_OK) {
        if (z->state == S_LIT || z->state == S_STORED) {
            size_t k = 0;
            ret = run(z, in + p, len - p, sink, &k);
            p += k;
        } else {
            ret = step(z, in[p++], sink);
        }
        if (ret == MOTA_OK && mota_lz4_at_boundary(z))
            break; /* a block (or the header) ended: a resume point */
    }
    *used = p;
    return ret;
}
