/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota's cipher modes on the AES-128 block (aes_mbedtls.c): CTR, GCM with a state that survives a power cut,
 * RFC 3394 key wrap, HKDF-SHA256. Written from the specifications (NIST SP 800-38D, RFC 3394, RFC 5869) rather
 * than taken from a library, because the libraries' GCM, KW and HKDF allocate (their cipher and MD layers),
 * Debian's host mbed TLS has no KW, and none lets a GHASH state be saved and restored.
 */
#include "mota/cipher.h"
#include "mota/crypto.h"
#include "mota/err.h"

#include <string.h>
#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#endif

/* the per-block helpers of CTR and GHASH inlined even at -Os (the device's build): a call costs more than them */
#if defined(__GNUC__)
#define HOT inline __attribute__((always_inline))
#else
#define HOT inline
#endif

void mota_cipher_wipe(void *p, size_t len)
{
    volatile uint8_t *v = p;
    while (len--)
        *v++ = 0;
}

static HOT uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static HOT void put_be32(uint8_t *p, uint32_t v)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap32(v); /* one REV and one store: -Os does not merge the four byte stores */
    memcpy(p, &v, sizeof(v));
#else
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
#endif
}

static void put_be64(uint8_t *p, uint64_t v)
{
    put_be32(p, (uint32_t)(v >> 32));
    put_be32(p + 4, (uint32_t)v);
}

/* ---- CTR ---- */

/* the counter block plus n, as a 128-bit big-endian number */
static void counter_add(uint8_t c[MOTA_AES_BLOCK], uint64_t n)
{
    for (int i = 15; i >= 0 && n != 0; i--) {
        uint64_t sum = c[i] + (n & 0xFFu);
        c[i] = (uint8_t)sum;
        n = (n >> 8) + (sum >> 8);
    }
}

void mota_ctr_start(struct mota_ctr *c, struct mota_aes128 *aes, const uint8_t iv[MOTA_AES_BLOCK], uint64_t offset)
{
    c->aes = aes;
    memcpy(c->counter, iv, MOTA_AES_BLOCK);
    counter_add(c->counter, offset / MOTA_AES_BLOCK);
    c->used = MOTA_AES_BLOCK;
    if (offset % MOTA_AES_BLOCK != 0) { /* into a block: its stream, the counter past it */
        mota_aes128_block(aes, c->counter, c->stream);
        counter_add(c->counter, 1);
        c->used = (unsigned)(offset % MOTA_AES_BLOCK);
    }
}

#if defined(__ARM_FEATURE_MVE)
/* out = in ^ s, one block: a vector each on Helium (Cortex-M55), any alignment */
static HOT void xor16(uint8_t *out, const uint8_t *in, const uint8_t *s)
{
    vst1q_u8(out, veorq_u8(vld1q_u8(in), vld1q_u8(s)));
}
#else
/* a word at p, in the machine's order (in and out need not be aligned: memcpy of a word is one load or store) */
static HOT uint32_t load32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static HOT void store32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, sizeof(v));
}

/* out = in ^ s, one block, unrolled (-Os does not) */
static HOT void xor16(uint8_t *out, const uint8_t *in, const uint8_t *s)
{
    store32(out, load32(in) ^ load32(s));
    store32(out + 4, load32(in + 4) ^ load32(s + 4));
    store32(out + 8, load32(in + 8) ^ load32(s + 8));
    store32(out + 12, load32(in + 12) ^ load32(s + 12));
}
#endif

/* one block of CTR: the counter's low word in a register, the upper 96 bits carried into once in 2^32 blocks */
static HOT void ctr_one(struct mota_aes128 *aes, uint8_t counter[MOTA_AES_BLOCK], uint32_t *low,
                        uint8_t stream[MOTA_AES_BLOCK], const uint8_t *in, uint8_t *out)
{
    put_be32(counter + 12, *low);
    mota_aes128_block(aes, counter, stream);
    xor16(out, in, stream);
    if (++*low == 0)
        counter_add(counter, (uint64_t)1 << 32);
}

/* blocks > 0 whole blocks from a block boundary, the steady state: the counter and the key stream on the stack,
 * so that the loop keeps what it needs in registers, and two blocks a turn to halve the loop's own cost; about 15
 * instructions a block over the AES call on Cortex-M55 */
static void ctr_blocks(struct mota_ctr *c, const uint8_t *in, uint8_t *out, size_t blocks)
{
    struct mota_aes128 *aes = c->aes;
    uint8_t counter[MOTA_AES_BLOCK], stream[MOTA_AES_BLOCK];
    memcpy(counter, c->counter, sizeof(counter));
    uint32_t low = be32(counter + 12);
    const uint8_t *end = in + MOTA_AES_BLOCK * blocks;
    if (blocks % 2 != 0) {
        ctr_one(aes, counter, &low, stream, in, out);
        in += MOTA_AES_BLOCK, out += MOTA_AES_BLOCK;
    }
    for (; in != end; in += 2 * MOTA_AES_BLOCK, out += 2 * MOTA_AES_BLOCK) {
        ctr_one(aes, counter, &low, stream, in, out);
        ctr_one(aes, counter, &low, stream, in + MOTA_AES_BLOCK, out + MOTA_AES_BLOCK);
    }
    put_be32(counter + 12, low);
    memcpy(c->counter, counter, sizeof(counter));
    mota_cipher_wipe(stream, sizeof(stream));
}

void mota_ctr_xor(struct mota_ctr *c, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t i = 0;
    for (; c->used < MOTA_AES_BLOCK && i < len; i++) /* the rest of a block begun */
        out[i] = in[i] ^ c->stream[c->used++];
    size_t whole = (len - i) / MOTA_AES_BLOCK;
    if (whole != 0) {
        ctr_blocks(c, in + i, out + i, whole);
        i += whole * MOTA_AES_BLOCK;
    }
    if (i < len) { /* a block begun, its rest left for the next call */
        mota_aes128_block(c->aes, c->counter, c->stream);
        counter_add(c->counter, 1);
        for (c->used = 0; i < len; i++)
            out[i] = in[i] ^ c->stream[c->used++];
    }
}

/* ---- GHASH: multiplication by H in GF(2^128), Shoup's 4-bit table ----
 * The table lookups are indexed by secret data (H and the hash state): not constant time, which the threat model
 * accepts (the ciphertext is public, the tag is compared in constant time). */

/* the reduction of the 4 bits shifted out, by x^128 + x^7 + x^2 + x + 1 (bit-reflected), in the top half-word */
static const uint16_t reduce4[16] = {0x0000, 0x1c20, 0x3840, 0x2460, 0x7080, 0x6ca0, 0x48c0, 0x54e0,
                                     0xe100, 0xfd20, 0xd940, 0xc560, 0x9180, 0x8da0, 0xa9c0, 0xb5e0};

static void ghash_table(uint32_t t[16][4], const uint8_t h[MOTA_AES_BLOCK])
{
    uint32_t v[4] = {be32(h), be32(h + 4), be32(h + 8), be32(h + 12)};
    memset(t, 0, 16 * sizeof(t[0]));
    memcpy(t[8], v, sizeof(v)); /* t[8] = H; t[4], t[2], t[1] = H times x, x^2, x^3 */
    for (unsigned i = 4; i > 0; i >>= 1) {
        uint32_t carry = (v[3] & 1u) ? 0xe1000000u : 0u;
        v[3] = (v[3] >> 1) | (v[2] << 31);
        v[2] = (v[2] >> 1) | (v[1] << 31);
        v[1] = (v[1] >> 1) | (v[0] << 31);
        v[0] = (v[0] >> 1) ^ carry;
        memcpy(t[i], v, sizeof(v));
    }
    for (unsigned i = 2; i < 16; i <<= 1) /* the sums: t[i + j] = t[i] + t[j] */
        for (unsigned j = 1; j < i; j++)
            for (unsigned k = 0; k < 4; k++)
                t[i + j][k] = t[i][k] ^ t[j][k];
}

/* An empty asm keeps a value as computed: without it GCC joins z >> 4 and z << 28 into an OR before the XOR
 * with the table (3 instructions a word on Arm instead of 2: an EOR takes a shifted operand), and indexes the
 * table row twice. */
#if defined(__GNUC__)
#define KEEP(x) __asm__("" : "+r"(x))
#else
#define KEEP(x) (void)(x)
#endif

/* z = z * x^4 + t[the nibble of w at bit s], the 4 bits shifted out of z reduced through reduce4; a word at a
 * time from the last, as each needs the one before it unshifted */
#define GHASH_NIBBLE(s)                                                                                                \
    do {                                                                                                               \
        const uint32_t *m = t[(w >> (s)) & 0xFu];                                                                      \
        uint32_t r = reduce4[z3 & 0xFu], a;                                                                            \
        KEEP(m);                                                                                                       \
        a = m[3] ^ (z3 >> 4);                                                                                          \
        KEEP(a);                                                                                                       \
        z3 = a ^ (z2 << 28);                                                                                           \
        a = m[2] ^ (z2 >> 4);                                                                                          \
        KEEP(a);                                                                                                       \
        z2 = a ^ (z1 << 28);                                                                                           \
        a = m[1] ^ (z1 >> 4);                                                                                          \
        KEEP(a);                                                                                                       \
        z1 = a ^ (z0 << 28);                                                                                           \
        a = m[0] ^ (z0 >> 4);                                                                                          \
        KEEP(a);                                                                                                       \
        z0 = a ^ (r << 16);                                                                                            \
    } while (0)

/* y = (y + each block of p) * H, y as four big-endian words: each product by Horner's rule over the nibbles
 * from the last, 8 of them unrolled a word */
static void ghash_run(const uint32_t t[16][4], uint32_t y[4], const uint8_t *p, size_t blocks)
{
    uint32_t z0 = y[0], z1 = y[1], z2 = y[2], z3 = y[3];
    for (; blocks > 0; blocks--, p += MOTA_AES_BLOCK) {
        uint32_t x[4] = {z0 ^ be32(p), z1 ^ be32(p + 4), z2 ^ be32(p + 8), z3 ^ be32(p + 12)};
        z0 = z1 = z2 = z3 = 0;
        for (int i = 3; i >= 0; i--) {
            uint32_t w = x[i];
            GHASH_NIBBLE(0);
            GHASH_NIBBLE(4);
            GHASH_NIBBLE(8);
            GHASH_NIBBLE(12);
            GHASH_NIBBLE(16);
            GHASH_NIBBLE(20);
            GHASH_NIBBLE(24);
            GHASH_NIBBLE(28);
        }
    }
    y[0] = z0, y[1] = z1, y[2] = z2, y[3] = z3;
}

/* absorb data into y, zero-padding its last partial block */
static void ghash_blocks(const uint32_t t[16][4], uint32_t y[4], const uint8_t *p, size_t n)
{
    size_t whole = n / MOTA_AES_BLOCK;
    if (whole != 0)
        ghash_run(t, y, p, whole);
    if (n % MOTA_AES_BLOCK != 0) {
        uint8_t last[MOTA_AES_BLOCK] = {0};
        memcpy(last, p + whole * MOTA_AES_BLOCK, n % MOTA_AES_BLOCK);
        ghash_run(t, y, last, 1);
    }
}

/* ---- GCM ---- */

/* the text's counter and GHASH continued at `count` bytes of text, a multiple of 16 */
static void gcm_at(struct mota_gcm *g, uint64_t count)
{
    uint8_t first[MOTA_AES_BLOCK];
    g->len = count;
    g->fill = 0;
    memcpy(first, g->j0, MOTA_AES_BLOCK);
    counter_add(first, 1); /* the text's first counter is inc32(J0): 2^32 blocks are far beyond any payload */
    mota_ctr_start(&g->ctr, g->aes, first, count);
}

void mota_gcm_start(struct mota_gcm *g, struct mota_aes128 *aes, const uint8_t iv[MOTA_GCM_IV_LEN], bool decrypt,
                    const uint8_t *aad, size_t aad_len)
{
    uint8_t h[MOTA_AES_BLOCK] = {0};
    memset(g, 0, sizeof(*g));
    g->aes = aes;
    g->decrypt = decrypt;
    mota_aes128_block(aes, h, h); /* H = E(K, 0^128) */
    ghash_table(g->table, h);
    mota_cipher_wipe(h, sizeof(h));
    memcpy(g->j0, iv, MOTA_GCM_IV_LEN);
    g->j0[15] = 1; /* J0 = IV || 0^31 || 1 */
    ghash_blocks(g->table, g->y, aad, aad_len);
    g->aad_len = aad_len;
    gcm_at(g, 0);
}

int mota_gcm_resume(struct mota_gcm *g, const uint8_t state[MOTA_GCM_STATE_LEN], uint64_t count)
{
    if (count % MOTA_AES_BLOCK != 0)
        return MOTA_ERR_ARG;
    for (unsigned k = 0; k < 4; k++)
        g->y[k] = be32(state + 4 * k);
    gcm_at(g, count);
    return MOTA_OK;
}

/* up to the end of the current block: the ciphertext kept in g->block until it is whole (in and out may be the
 * same) */
static size_t gcm_part(struct mota_gcm *g, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t n = MOTA_AES_BLOCK - g->fill;
    n = len < n ? len : n;
    if (g->decrypt)
        memcpy(g->block + g->fill, in, n);
    mota_ctr_xor(&g->ctr, in, out, n);
    if (!g->decrypt)
        memcpy(g->block + g->fill, out, n);
    g->fill += (unsigned)n;
    if (g->fill == MOTA_AES_BLOCK) {
        ghash_run(g->table, g->y, g->block, 1);
        g->fill = 0;
    }
    return n;
}

/* blocks > 0 whole blocks on a block boundary: GHASH runs over the ciphertext, read before it is overwritten when
 * decrypting (in and out may be the same) */
static void gcm_blocks(struct mota_gcm *g, const uint8_t *in, uint8_t *out, size_t blocks)
{
    if (g->decrypt)
        ghash_run(g->table, g->y, in, blocks);
    ctr_blocks(&g->ctr, in, out, blocks);
    if (!g->decrypt)
        ghash_run(g->table, g->y, out, blocks);
}

void mota_gcm_update(struct mota_gcm *g, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t i = 0;
    if (len == 0)
        return;
    g->len += len;
    if (g->fill != 0)
        i = gcm_part(g, in, out, len);
    size_t whole = (len - i) / MOTA_AES_BLOCK;
    if (whole != 0) {
        gcm_blocks(g, in + i, out + i, whole);
        i += whole * MOTA_AES_BLOCK;
    }
    if (i < len)
        gcm_part(g, in + i, out + i, len - i);
}

void mota_gcm_absorb(struct mota_gcm *g, const uint8_t *ct, size_t len)
{
    size_t i = 0;
    g->len += len;
    while (g->fill != 0 && i < len) { /* up to the end of the current block */
        g->block[g->fill++] = ct[i++];
        if (g->fill == MOTA_AES_BLOCK) {
            ghash_run(g->table, g->y, g->block, 1);
            g->fill = 0;
        }
    }
    if (g->fill != 0)
        return; /* all of it went into the current block, still not whole */
    size_t whole = (len - i) / MOTA_AES_BLOCK;
    if (whole != 0)
        ghash_run(g->table, g->y, ct + i, whole);
    i += whole * MOTA_AES_BLOCK;
    memcpy(g->block, ct + i, len - i);
    g->fill = (unsigned)(len - i);
}

void mota_gcm_stream_at(struct mota_gcm *g, uint64_t offset)
{
    uint8_t first[MOTA_AES_BLOCK];
    memcpy(first, g->j0, MOTA_AES_BLOCK);
    counter_add(first, 1);
    mota_ctr_start(&g->ctr, g->aes, first, offset);
}

void mota_gcm_stream(struct mota_gcm *g, const uint8_t *in, uint8_t *out, size_t len)
{
    mota_ctr_xor(&g->ctr, in, out, len);
}

uint64_t mota_gcm_state(const struct mota_gcm *g, uint8_t state[MOTA_GCM_STATE_LEN])
{
    for (unsigned k = 0; k < 4; k++) /* a partial block is not in y yet */
        put_be32(state + 4 * k, g->y[k]);
    return g->len - g->fill;
}

int mota_gcm_finish(struct mota_gcm *g, uint8_t tag[MOTA_GCM_TAG_LEN])
{
    uint8_t lens[MOTA_AES_BLOCK], s[MOTA_AES_BLOCK];
    ghash_blocks(g->table, g->y, g->block, g->fill);
    put_be64(lens, g->aad_len * 8u);
    put_be64(lens + 8, g->len * 8u);
    ghash_run(g->table, g->y, lens, 1);
    mota_aes128_block(g->aes, g->j0, s);
    for (unsigned k = 0; k < 4; k++)
        put_be32(s + 4 * k, be32(s + 4 * k) ^ g->y[k]);
    int ret = MOTA_OK;
    if (g->decrypt)
        ret = mota_ct_memcmp(s, tag, MOTA_GCM_TAG_LEN) == 0 ? MOTA_OK : MOTA_ERR_DECRYPT_TAG;
    else
        memcpy(tag, s, MOTA_GCM_TAG_LEN);
    mota_cipher_wipe(s, sizeof(s));
    return ret;
}

/* ---- RFC 3394 key wrap, default IV ---- */

static const uint8_t kw_iv[8] = {0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6};
#define KW_MAX 40u /* a 256-bit key wrapped */

static int kw_check(size_t in_len)
{
    return in_len % 8u == 0 && in_len >= 24u && in_len <= KW_MAX ? MOTA_OK : MOTA_ERR_ARG;
}

int mota_kw_wrap(const uint8_t kek[MOTA_AES128_KEY_LEN], const uint8_t *in, size_t in_len, uint8_t *out)
{
    struct mota_aes128 aes;
    uint8_t b[MOTA_AES_BLOCK], r[KW_MAX];
    size_t n = in_len / 8u;
    if (kw_check(in_len + MOTA_KW_OVERHEAD) != MOTA_OK)
        return MOTA_ERR_ARG;
    mota_aes128_setkey(&aes, kek, false);
    memcpy(b, kw_iv, 8);
    memcpy(r, in, in_len);
    for (uint64_t j = 0; j < 6; j++)
        for (size_t i = 0; i < n; i++) {
            memcpy(b + 8, r + 8 * i, 8);
            mota_aes128_block(&aes, b, b);
            uint64_t t = n * j + i + 1;
            for (unsigned k = 0; k < 8; k++) /* A = MSB(64, B) ^ t */
                b[7 - k] ^= (uint8_t)(t >> (8 * k));
            memcpy(r + 8 * i, b + 8, 8);
        }
    memcpy(out, b, 8);
    memcpy(out + 8, r, in_len);
    mota_cipher_wipe(&aes, sizeof(aes));
    mota_cipher_wipe(r, sizeof(r));
    mota_cipher_wipe(b, sizeof(b));
    return MOTA_OK;
}

int mota_kw_unwrap(const uint8_t kek[MOTA_AES128_KEY_LEN], const uint8_t *in, size_t in_len, uint8_t *out)
{
    struct mota_aes128 aes;
    uint8_t b[MOTA_AES_BLOCK], r[KW_MAX];
    if (kw_check(in_len) != MOTA_OK)
        return MOTA_ERR_ARG;
    size_t n = in_len / 8u - 1u;
    mota_aes128_setkey(&aes, kek, true);
    memcpy(b, in, 8);
    memcpy(r, in + 8, 8 * n);
    for (uint64_t j = 6; j-- > 0;)
        for (size_t i = n; i-- > 0;) {
            uint64_t t = n * j + i + 1;
            for (unsigned k = 0; k < 8; k++)
                b[7 - k] ^= (uint8_t)(t >> (8 * k));
            memcpy(b + 8, r + 8 * i, 8);
            mota_aes128_block(&aes, b, b);
            memcpy(r + 8 * i, b + 8, 8);
        }
    int ret = mota_ct_memcmp(b, kw_iv, 8) == 0 ? MOTA_OK : MOTA_ERR_ENC_UNWRAP;
    if (ret == MOTA_OK)
        memcpy(out, r, 8 * n); /* nothing of a key that failed its check */
    mota_cipher_wipe(&aes, sizeof(aes));
    mota_cipher_wipe(r, sizeof(r));
    mota_cipher_wipe(b, sizeof(b));
    return ret;
}

/* ---- HMAC-SHA256 and HKDF (RFC 2104, RFC 5869) on mota_sha256 ---- */

struct hmac {
    struct mota_sha256 inner;
    uint8_t opad[64];
};

static void hmac_start(struct hmac *h, const uint8_t *key, size_t key_len)
{
    uint8_t k[64] = {0}, ipad[64];
    if (key_len > sizeof(k))
        mota_sha256(key, key_len, k);
    else if (key_len > 0)
        memcpy(k, key, key_len);
    for (unsigned i = 0; i < 64; i++) {
        ipad[i] = k[i] ^ 0x36u;
        h->opad[i] = k[i] ^ 0x5Cu;
    }
    mota_sha256_init(&h->inner);
    mota_sha256_update(&h->inner, ipad, sizeof(ipad));
    mota_cipher_wipe(k, sizeof(k));
    mota_cipher_wipe(ipad, sizeof(ipad));
}

static void hmac_finish(struct hmac *h, uint8_t out[MOTA_SHA256_LEN])
{
    struct mota_sha256 outer;
    mota_sha256_finish(&h->inner, out);
    mota_sha256_init(&outer);
    mota_sha256_update(&outer, h->opad, sizeof(h->opad));
    mota_sha256_update(&outer, out, MOTA_SHA256_LEN);
    mota_sha256_finish(&outer, out);
    mota_cipher_wipe(h, sizeof(*h));
}

int mota_hkdf_sha256(const uint8_t *salt, size_t salt_len, const uint8_t *ikm, size_t ikm_len, const uint8_t *info,
                     size_t info_len, uint8_t *out, size_t out_len)
{
    struct hmac h;
    uint8_t prk[MOTA_SHA256_LEN], t[MOTA_SHA256_LEN];
    if (out_len > 255u * MOTA_SHA256_LEN)
        return MOTA_ERR_ARG;
    hmac_start(&h, salt, salt_len); /* extract: an empty salt is HashLen zeros, as the zero-padded key is */
    mota_sha256_update(&h.inner, ikm, ikm_len);
    hmac_finish(&h, prk);
    for (size_t done = 0, i = 1; done < out_len; i++) { /* expand */
        uint8_t n = (uint8_t)i;
        hmac_start(&h, prk, sizeof(prk));
        if (i > 1)
            mota_sha256_update(&h.inner, t, sizeof(t));
        mota_sha256_update(&h.inner, info, info_len);
        mota_sha256_update(&h.inner, &n, 1);
        hmac_finish(&h, t);
        size_t k = out_len - done < sizeof(t) ? out_len - done : sizeof(t);
        memcpy(out + done, t, k);
        done += k;
    }
    mota_cipher_wipe(prk, sizeof(prk));
    mota_cipher_wipe(t, sizeof(t));
    return MOTA_OK;
}
