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

void mota_cipher_wipe(void *p, size_t len)
{
    volatile uint8_t *v = p;
    while (len--)
        *v++ = 0;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
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

/* out = in ^ s, one block */
static void xor16(uint8_t *out, const uint8_t *in, const uint8_t *s)
{
    uint32_t a[4], b[4];
    memcpy(a, in, 16);
    memcpy(b, s, 16);
    for (unsigned k = 0; k < 4; k++)
        a[k] ^= b[k];
    memcpy(out, a, 16);
}

void mota_ctr_xor(struct mota_ctr *c, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t i = 0;
    for (; c->used < MOTA_AES_BLOCK && i < len; i++) /* the rest of a block begun */
        out[i] = in[i] ^ c->stream[c->used++];
    for (; len - i >= MOTA_AES_BLOCK; i += MOTA_AES_BLOCK) { /* whole blocks */
        mota_aes128_block(c->aes, c->counter, c->stream);
        counter_add(c->counter, 1);
        xor16(out + i, in + i, c->stream);
    }
    for (; i < len; i++) {
        if (c->used == MOTA_AES_BLOCK) {
            mota_aes128_block(c->aes, c->counter, c->stream);
            counter_add(c->counter, 1);
            c->used = 0;
        }
        out[i] = in[i] ^ c->stream[c->used++];
    }
}

/* ---- GHASH: multiplication by H in GF(2^128), Shoup's 4-bit table ---- */

/* the reduction of the 4 bits shifted out, by x^128 + x^7 + x^2 + x + 1 (bit-reflected), in the top word */
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

/* z = (z >> 4) + t[n], reduced */
static void shift4_add(uint32_t z[4], const uint32_t t[4])
{
    uint32_t rem = z[3] & 0xFu;
    z[3] = (z[3] >> 4) | (z[2] << 28);
    z[2] = (z[2] >> 4) | (z[1] << 28);
    z[1] = (z[1] >> 4) | (z[0] << 28);
    z[0] = (z[0] >> 4) ^ ((uint32_t)reduce4[rem] << 16);
    for (unsigned k = 0; k < 4; k++)
        z[k] ^= t[k];
}

/* y = y * H */
static void ghash_mult(const uint32_t t[16][4], uint8_t y[MOTA_AES_BLOCK])
{
    uint32_t z[4];
    memcpy(z, t[y[15] & 0xFu], sizeof(z));
    shift4_add(z, t[y[15] >> 4]);
    for (int i = 14; i >= 0; i--) {
        shift4_add(z, t[y[i] & 0xFu]);
        shift4_add(z, t[y[i] >> 4]);
    }
    for (unsigned k = 0; k < 4; k++)
        put_be32(y + 4 * k, z[k]);
}

/* absorb data into y, zero-padding its last partial block */
static void ghash_blocks(const uint32_t t[16][4], uint8_t y[MOTA_AES_BLOCK], const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i += MOTA_AES_BLOCK) {
        size_t k = n - i < MOTA_AES_BLOCK ? n - i : MOTA_AES_BLOCK;
        for (size_t j = 0; j < k; j++)
            y[j] ^= p[i + j];
        ghash_mult(t, y);
    }
}

/* ---- GCM ---- */

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
    mota_gcm_resume(g, g->y, 0);
}

int mota_gcm_resume(struct mota_gcm *g, const uint8_t state[MOTA_GCM_STATE_LEN], uint64_t count)
{
    uint8_t first[MOTA_AES_BLOCK];
    if (count % MOTA_AES_BLOCK != 0)
        return MOTA_ERR_ARG;
    memmove(g->y, state, MOTA_GCM_STATE_LEN);
    g->len = count;
    g->fill = 0;
    memcpy(first, g->j0, MOTA_AES_BLOCK);
    counter_add(first, 1); /* the text's first counter is inc32(J0): 2^32 blocks are far beyond any payload */
    mota_ctr_start(&g->ctr, g->aes, first, count);
    return MOTA_OK;
}

/* one byte of text; a block completed is multiplied in */
static uint8_t gcm_byte(struct mota_gcm *g, uint8_t x)
{
    uint8_t c;
    mota_ctr_xor(&g->ctr, &x, &c, 1);
    g->block[g->fill] = g->decrypt ? x : c; /* GHASH runs over the ciphertext */
    g->y[g->fill] ^= g->block[g->fill];
    if (++g->fill == MOTA_AES_BLOCK) {
        ghash_mult(g->table, g->y);
        g->fill = 0;
    }
    return c;
}

void mota_gcm_update(struct mota_gcm *g, const uint8_t *in, uint8_t *out, size_t len)
{
    g->len += len;
    for (size_t i = 0; i < len;) {
        if (g->fill != 0 || len - i < MOTA_AES_BLOCK) {
            out[i] = gcm_byte(g, in[i]);
            i++;
            continue;
        }
        if (g->decrypt) /* a whole block on a block boundary (in and out may be the same) */
            xor16(g->y, g->y, in + i);
        mota_ctr_xor(&g->ctr, in + i, out + i, MOTA_AES_BLOCK);
        if (!g->decrypt)
            xor16(g->y, g->y, out + i);
        ghash_mult(g->table, g->y);
        i += MOTA_AES_BLOCK;
    }
}

uint64_t mota_gcm_state(const struct mota_gcm *g, uint8_t state[MOTA_GCM_STATE_LEN])
{
    uint8_t y[MOTA_AES_BLOCK];
    memcpy(y, g->y, sizeof(y));
    for (unsigned j = 0; j < g->fill; j++) /* a partial block is not in the state: take its bytes out again */
        y[j] ^= g->block[j];
    memcpy(state, y, MOTA_GCM_STATE_LEN);
    return g->len - g->fill;
}

int mota_gcm_finish(struct mota_gcm *g, uint8_t tag[MOTA_GCM_TAG_LEN])
{
    uint8_t lens[MOTA_AES_BLOCK], s[MOTA_AES_BLOCK];
    if (g->fill != 0)
        ghash_mult(g->table, g->y);
    put_be64(lens, g->aad_len * 8u);
    put_be64(lens + 8, g->len * 8u);
    ghash_blocks(g->table, g->y, lens, sizeof(lens));
    mota_aes128_block(g->aes, g->j0, s);
    for (unsigned j = 0; j < MOTA_AES_BLOCK; j++)
        s[j] ^= g->y[j];
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
