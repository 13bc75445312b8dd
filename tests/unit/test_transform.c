/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Transformed payloads in the container: the two-component pattern as the
 * encoder writes it and the decoder folds it (a role's image and its
 * transport in one entry), compressed, encrypted (A128GCM and A128CTR, with
 * a key-encryption key and with ECDH) and both, each rebuilt to its image by
 * mota_payload_reconstruct, and what is refused when a part is missing or
 * altered.
 */
#include "encoders.h"
#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/crypto_sign.h"
#include "mota/decompress.h"
#include "mota/encinfo.h"
#include "mota/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

static struct mota_p256_key key;
static struct mota_trusted_key trusted;
static uint8_t code[6000], params[1500];
static const uint8_t cek[16] = {0x15, 0xf7, 0x85, 0xb5, 0xc9, 0x31, 0x41, 0x44,
                                0x11, 0xb4, 0xb7, 0x13, 0x73, 0xa9, 0xc0, 0xf7};
static const struct mota_kek kek = {.kid = "kid-1", .kid_len = 5, .k = "aaaaaaaaaaaaaaaa"};

/* What one test container holds, and its transported bytes. */
struct built {
    struct mota_pack_spec spec;
    uint8_t info[2][MOTA_ENC_MAX_INFO];
    uint8_t *wire[2];
    uint8_t buf[32768];
    size_t len;
};

static int sign_cb(void *ctx, const uint8_t h[32], uint8_t sig[64])
{
    return mota_ecdsa_p256_sign(ctx, h, sig);
}

static void base_spec(struct mota_pack_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->seq = 7;
    mota_uuid5(mota_uuid_ns_dns, "example.com", 11, s->vendor_id);
    mota_uuid5(s->vendor_id, "board", 5, s->class_id);
    s->n_components = 2;
    s->comp[0].role = MOTA_COMPONENT_CODE;
    s->comp[0].size = sizeof(code);
    mota_sha256(code, sizeof(code), s->comp[0].digest);
    s->comp[1].role = MOTA_COMPONENT_PARAMS;
    s->comp[1].size = sizeof(params);
    mota_sha256(params, sizeof(params), s->comp[1].digest);
    s->compat.reloc_major = 8;
    s->compat.has_runtime_version = true;
    s->compat.rt_major = 1;
    s->compat.cpu_part = 0xD22;
    s->compat.c_name = "tiny";
    s->compat.c_name_len = 4;
    s->compat.install_mode = 1;
}

/* Encrypt n bytes at in into out (GCM: the tag after them) and describe it for one KW recipient. */
static size_t encrypt(int alg, const uint8_t *in, size_t n, uint8_t *out, uint8_t *info, size_t *info_len, int i)
{
    struct mota_enc_info_spec es = {.alg = alg, .n_recipients = 1};
    struct mota_aes128 aes;
    memset(es.iv, 0x30 + i, sizeof(es.iv));
    es.iv[12] = es.iv[13] = es.iv[14] = es.iv[15] = 0; /* CTR: the low counter word starts at 0 */
    es.r[0].alg = MOTA_ENC_A128KW;
    es.r[0].kid = kek.kid;
    es.r[0].kid_len = kek.kid_len;
    assert_int_equal(mota_kw_wrap(kek.k, cek, 16, es.r[0].wrapped), MOTA_OK);
    assert_int_equal(mota_enc_info_encode(&es, info, MOTA_ENC_MAX_INFO, info_len), MOTA_OK);
    mota_aes128_setkey(&aes, cek, false);
    if (alg == MOTA_ENC_A128CTR) {
        struct mota_ctr c;
        mota_ctr_start(&c, &aes, es.iv, 0);
        mota_ctr_xor(&c, in, out, n);
        return n;
    }
    struct mota_enc_info ei;
    uint8_t aad[MOTA_ENC_AAD_MAX];
    size_t aad_len;
    struct mota_gcm g;
    assert_int_equal(mota_enc_info_decode(info, *info_len, &ei), MOTA_OK);
    assert_int_equal(mota_enc_aad(&ei, aad, sizeof(aad), &aad_len), MOTA_OK);
    mota_gcm_start(&g, &aes, es.iv, false, aad, aad_len);
    mota_gcm_update(&g, in, out, n);
    assert_int_equal(mota_gcm_finish(&g, out + n), MOTA_OK);
    return n + MOTA_GCM_TAG_LEN;
}

/* Component i sent compressed (deflate, 1 KiB blocks) and/or encrypted with alg (0: not). */
static void transform(struct built *b, int i, bool compress, int alg)
{
    struct mota_pack_component *c = &b->spec.comp[i];
    const uint8_t *img = i == 0 ? code : params;
    size_t n = (size_t)c->size;
    uint8_t *z = NULL;
    if (compress) {
        z = test_deflate(img, n, 1024, &n);
        assert_non_null(z);
        img = z;
        c->compressed = true;
        c->z_alg = MOTA_DECOMP_DEFLATE;
        c->z_block = 1024;
    }
    b->wire[i] = malloc(n + MOTA_GCM_TAG_LEN);
    memcpy(b->wire[i], img, n);
    if (alg != 0) {
        n = encrypt(alg, img, n, b->wire[i], b->info[i], &c->enc_len, i);
        c->encrypted = true;
        c->enc_info = b->info[i];
    }
    free(z);
    c->wire_size = n;
    mota_sha256(b->wire[i], n, c->wire_digest);
}

/* The container: head, then each payload as sent. */
static void pack(struct built *b)
{
    struct mota_container_layout lay;
    size_t hl;
    assert_int_equal(mota_container_layout(&b->spec, trusted.kid, true, &lay), MOTA_OK);
    assert_int_equal(mota_container_encode_head(&b->spec, trusted.kid, sign_cb, &key, b->buf, sizeof(b->buf), &hl),
                     MOTA_OK);
    assert_int_equal(hl, lay.head_len);
    for (size_t i = 0; i < lay.n_payloads; i++) {
        const uint8_t *src = b->wire[i] != NULL ? b->wire[i] : i == 0 ? code : params;
        memcpy(b->buf + lay.payload[i].head_off, lay.payload[i].head, lay.payload[i].head_len);
        memcpy(b->buf + lay.payload[i].off, src, (size_t)lay.payload[i].len);
    }
    b->len = (size_t)lay.len;
}

static void release(struct built *b)
{
    free(b->wire[0]);
    free(b->wire[1]);
    free(b);
}

static struct built *make(bool compress0, int alg0, bool compress1, int alg1)
{
    struct built *b = calloc(1, sizeof(*b));
    base_spec(&b->spec);
    if (compress0 || alg0)
        transform(b, 0, compress0, alg0);
    if (compress1 || alg1)
        transform(b, 1, compress1, alg1);
    pack(b);
    return b;
}

static int setup(void **state)
{
    (void)state;
    if (mota_key_generate(&key) != MOTA_OK)
        return -1;
    mota_trusted_key_set(&trusted, key.pub);
    for (size_t i = 0; i < sizeof(code); i++)
        code[i] = (uint8_t)(i % 251 < 120 ? i % 7 : i * 13);
    for (size_t i = 0; i < sizeof(params); i++)
        params[i] = (uint8_t)(i / 3);
    return 0;
}

/* Each image rebuilt from its payload as a host would: the decoder's entry, the CEK, the reconstruction. */
static void check_images(struct built *b, const struct mota_verify_result *r)
{
    for (size_t i = 0; i < 2; i++) {
        const struct mota_component *c = &r->manifest.comp[i];
        uint8_t out[sizeof(code) * 2];
        uint8_t k[16];
        if (!c->transport)
            continue;
        const uint8_t *key16 = NULL;
        if (c->encrypted) {
            struct mota_enc_info ei;
            struct mota_enc_keys keys = {.keks = &kek, .n_keks = 1};
            assert_int_equal(mota_enc_info_decode(c->enc_info, c->enc_len, &ei), MOTA_OK);
            assert_int_equal(mota_enc_cek(&ei, &keys, k), MOTA_OK);
            assert_memory_equal(k, cek, 16);
            key16 = k;
        }
        assert_int_equal(mota_payload_reconstruct(c, b->wire[i], (size_t)c->wire_size, key16, out, sizeof(out)),
                         MOTA_OK);
        assert_memory_equal(out, i == 0 ? code : params, (size_t)c->size);
    }
}

/* Every combination the encoder writes folds back into two entries, each rebuilt to its image. */
static void test_transformed_payloads_round_trip_through_encoder_decoder_and_reconstruction(void **state)
{
    (void)state;
    static const struct {
        bool z0;
        int a0;
        bool z1;
        int a1;
    } cases[] = {
        {true, 0, false, 0},
        {false, MOTA_ENC_A128GCM, false, MOTA_ENC_A128GCM},
        {false, MOTA_ENC_A128CTR, true, 0},
        {true, MOTA_ENC_A128GCM, true, MOTA_ENC_A128CTR},
        {false, 0, true, MOTA_ENC_A128GCM},
    };
    for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
        struct built *b = make(cases[t].z0, cases[t].a0, cases[t].z1, cases[t].a1);
        struct mota_verify_result r;
        assert_int_equal(mota_container_verify(b->buf, b->len, &trusted, 1, &r), MOTA_OK);
        assert_int_equal(r.manifest.n_components, 2);
        assert_int_equal(r.n_payloads_checked, 2);
        for (size_t i = 0; i < 2; i++) {
            const struct mota_component *c = &r.manifest.comp[i];
            bool z = i == 0 ? cases[t].z0 : cases[t].z1;
            int a = i == 0 ? cases[t].a0 : cases[t].a1;
            assert_int_equal(c->transport, z || a != 0);
            assert_int_equal(c->compressed, z);
            assert_int_equal(c->encrypted, a != 0);
            assert_true(c->fetched && c->image_match);
            assert_int_equal(mota_component_wire_size(c),
                             b->spec.comp[i].wire_size ? b->spec.comp[i].wire_size : b->spec.comp[i].size);
        }
        check_images(b, &r);
        release(b);
    }
}

/* A flipped ciphertext bit passes the transport digest only when the digest is fixed up too: then GCM's
 * tag refuses it, and CTR's plaintext fails its image digest. */
static void test_altered_ciphertext_is_refused_by_the_tag_or_the_image_digest(void **state)
{
    (void)state;
    int algs[2] = {MOTA_ENC_A128GCM, MOTA_ENC_A128CTR};
    for (size_t t = 0; t < 2; t++) {
        struct built *b = make(false, algs[t], false, 0);
        struct mota_verify_result r;
        uint8_t out[sizeof(code)];
        b->wire[0][100] ^= 0x04;
        b->spec.comp[0].enc_info = b->info[0];
        mota_sha256(b->wire[0], (size_t)b->spec.comp[0].wire_size, b->spec.comp[0].wire_digest);
        pack(b);
        assert_int_equal(mota_container_verify(b->buf, b->len, &trusted, 1, &r), MOTA_OK);
        assert_int_equal(mota_payload_reconstruct(&r.manifest.comp[0], b->wire[0], (size_t)r.manifest.comp[0].wire_size,
                                                  cek, out, sizeof(out)),
                         t == 0 ? MOTA_ERR_DECRYPT_TAG : MOTA_ERR_DECRYPT_IMAGE_DIGEST);
        /* and sent without the fix, the transport digest names it */
        b->buf[b->len - (size_t)b->spec.comp[1].size - 30] ^= 1;
        assert_int_equal(mota_container_verify(b->buf, b->len, &trusted, 1, &r), MOTA_ERR_PAYLOAD_DIGEST);
        release(b);
    }
}

/* Sizes that do not add up are refused before any payload byte: an encrypted-only transport is its image
 * (+16 with GCM). */
static void test_a_transport_whose_size_disagrees_with_its_image_is_refused(void **state)
{
    (void)state;
    struct built *b = make(false, MOTA_ENC_A128GCM, false, 0);
    struct mota_verify_result r;
    b->spec.comp[0].wire_size -= 1;
    pack(b);
    assert_int_equal(mota_container_verify(b->buf, b->len, &trusted, 1, &r), MOTA_ERR_PAYLOAD_SIZE);
    b->spec.comp[0].wire_size = MOTA_GCM_TAG_LEN;
    pack(b);
    assert_int_equal(mota_container_verify(b->buf, b->len, &trusted, 1, &r), MOTA_ERR_PAYLOAD_SIZE);
    release(b);
}

/* The encryption info is a slice of the manifest: moved with the head like every other slice. */
static void test_rebase_moves_the_encryption_info_with_the_head(void **state)
{
    (void)state;
    struct built *b = make(true, MOTA_ENC_A128CTR, false, 0);
    struct mota_envelope env;
    struct mota_manifest m, m2;
    assert_int_equal(mota_envelope_decode(b->buf, b->len, &env), MOTA_OK);
    assert_int_equal(mota_manifest_decode(&env, &m), MOTA_OK);
    uint8_t *copy = malloc(env.head_len);
    memcpy(copy, b->buf, env.head_len);
    mota_manifest_rebase(&m, b->buf, env.head_len, copy);
    assert_true(m.comp[0].enc_info >= copy && m.comp[0].enc_info < copy + env.head_len);
    memset(b->buf, 0, env.head_len);
    assert_int_equal(mota_manifest_check_profile(&m), MOTA_OK);
    struct mota_envelope env2;
    assert_int_equal(mota_envelope_decode(copy, env.head_len, &env2), MOTA_OK);
    assert_int_equal(mota_manifest_decode(&env2, &m2), MOTA_OK);
    assert_memory_equal(m.comp[0].enc_info, m2.comp[0].enc_info, m2.comp[0].enc_len);
    free(copy);
    release(b);
}

/* A spec the encoder cannot write honestly is refused: encryption without its info, a transport of 0 bytes. */
static void test_encoder_refuses_a_transform_without_its_parts(void **state)
{
    (void)state;
    struct built *b = make(false, 0, false, 0);
    uint8_t head[16384];
    size_t hl;
    b->spec.comp[0].encrypted = true;
    b->spec.comp[0].wire_size = b->spec.comp[0].size;
    assert_int_equal(mota_container_encode_head(&b->spec, trusted.kid, NULL, NULL, head, sizeof(head), &hl),
                     MOTA_ERR_ARG);
    b->spec.comp[0].encrypted = false;
    b->spec.comp[0].compressed = true;
    b->spec.comp[0].wire_size = 0;
    assert_int_equal(mota_container_encode_head(&b->spec, trusted.kid, NULL, NULL, head, sizeof(head), &hl),
                     MOTA_ERR_ARG);
    release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transformed_payloads_round_trip_through_encoder_decoder_and_reconstruction),
        cmocka_unit_test(test_altered_ciphertext_is_refused_by_the_tag_or_the_image_digest),
        cmocka_unit_test(test_a_transport_whose_size_disagrees_with_its_image_is_refused),
        cmocka_unit_test(test_rebase_moves_the_encryption_info_with_the_head),
        cmocka_unit_test(test_encoder_refuses_a_transform_without_its_parts),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
