/* SPDX-License-Identifier: Apache-2.0 */
/* The container format: encode/decode round trip, determinism, rejection of
 * every truncation, COSE header labels, the SUIT draft's Example 0 and all
 * of its bit flips. */
#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct mota_p256_key key;
static struct mota_trusted_key trusted;
static uint8_t code[3000], params[1000];

static int sign_cb(void *ctx, const uint8_t h[32], uint8_t sig[64])
{
    return mota_ecdsa_p256_sign(ctx, h, sig);
}

static void make_spec(struct mota_pack_spec *s, bool with_params)
{
    memset(s, 0, sizeof(*s));
    s->seq = 1234567;
    mota_uuid5(mota_uuid_ns_dns, "example.com", 11, s->vendor_id);
    mota_uuid5(s->vendor_id, "board", 5, s->class_id);
    s->n_components = with_params ? 2 : 1;
    s->comp[0].role = MOTA_COMPONENT_CODE;
    s->comp[0].size = sizeof(code);
    mota_sha256(code, sizeof(code), s->comp[0].digest);
    if (with_params) {
        s->comp[1].role = MOTA_COMPONENT_PARAMS;
        s->comp[1].size = sizeof(params);
        mota_sha256(params, sizeof(params), s->comp[1].digest);
    }
    s->version = "2.0.1";
    s->model_name = "tiny";
    s->description = "unit test";
    s->created = "2026-01-01T00:00:00Z";
    s->vendor_name = "example.com";
    struct mota_compat *c = &s->compat;
    c->reloc_major = 8;
    c->cpu_part = 0xD22;
    c->fpu = true;
    c->float_abi = 2;
    c->async = true;
    c->toolchain = 8;
    c->has_runtime_version = true;
    c->rt_major = 1;
    c->rt_minor = 1;
    c->rt_micro = 1;
    c->c_name = "tiny";
    c->c_name_len = 4;
    c->acts_size = 4096;
    c->params_size = sizeof(params);
    c->exec_ram_xip = 512;
    c->exec_ram_copy = 3512;
    c->install_mode = MOTA_INSTALL_COPY;
}

/* Build a whole container in buf, signed or (sign NULL) unsigned; returns its length. */
static size_t build_signed_by(const struct mota_pack_spec *s, mota_sign_cb sign, uint8_t *buf, size_t cap)
{
    size_t len = 0, n;
    assert_int_equal(mota_container_encode_head(s, trusted.kid, sign, &key, buf, cap, &len), MOTA_OK);
    for (size_t i = 0; i < s->n_components; i++) {
        const uint8_t *src = s->comp[i].role == MOTA_COMPONENT_CODE ? code : params;
        assert_int_equal(mota_payload_head_encode(s->comp[i].role, s->comp[i].size, buf + len, cap - len, &n), MOTA_OK);
        len += n;
        memcpy(buf + len, src, s->comp[i].size);
        len += s->comp[i].size;
    }
    return len;
}

static size_t build(const struct mota_pack_spec *s, uint8_t *buf, size_t cap)
{
    return build_signed_by(s, sign_cb, buf, cap);
}

static int setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(code); i++)
        code[i] = (uint8_t)(i * 7 + 3);
    for (size_t i = 0; i < sizeof(params); i++)
        params[i] = (uint8_t)(i ^ 0x5a);
    if (mota_key_generate(&key) != MOTA_OK)
        return -1;
    mota_trusted_key_set(&trusted, key.pub);
    return 0;
}

/*
 * The container of make_spec (no params) re-signed with a COSE_Sign1 whose
 * header maps are prot (bstr-wrapped here) and unprot, as the caller encoded
 * them. The signature is valid, so a rejection comes from the headers.
 */
static size_t build_with_headers(const uint8_t *prot, size_t prot_len, const uint8_t *unprot, size_t unprot_len,
                                 uint8_t *out, size_t cap)
{
    static uint8_t base[16384];
    uint8_t tbs[512], hash[32], sig[64], sign1[512], auth[1024];
    struct mota_pack_spec s;
    struct mota_envelope env;
    struct mota_cbor_enc e;
    make_spec(&s, false);
    size_t len = build(&s, base, sizeof(base));
    assert_int_equal(mota_envelope_decode(base, len, &env), MOTA_OK);

    mota_cbor_enc_init(&e, tbs, sizeof(tbs)); /* Sig_structure, RFC 9052 section 4.4 */
    mota_cbor_put_array(&e, 4);
    mota_cbor_put_tstr(&e, "Signature1");
    mota_cbor_put_bstr(&e, prot, prot_len);
    mota_cbor_put_bstr(&e, NULL, 0);
    mota_cbor_put_bstr(&e, env.digest_enc, env.digest_enc_len);
    assert_int_equal(e.err, 0);
    mota_sha256(tbs, e.len, hash);
    assert_int_equal(mota_ecdsa_p256_sign(&key, hash, sig), MOTA_OK);

    mota_cbor_enc_init(&e, sign1, sizeof(sign1));
    mota_cbor_put_tag(&e, 18);
    mota_cbor_put_array(&e, 4);
    mota_cbor_put_bstr(&e, prot, prot_len);
    mota_cbor_put_raw(&e, unprot, unprot_len);
    mota_cbor_put_null(&e);
    mota_cbor_put_bstr(&e, sig, sizeof(sig));
    assert_int_equal(e.err, 0);
    size_t sign1_len = e.len;

    mota_cbor_enc_init(&e, auth, sizeof(auth));
    mota_cbor_put_array(&e, 2);
    mota_cbor_put_bstr(&e, env.digest_enc, env.digest_enc_len);
    mota_cbor_put_bstr(&e, sign1, sign1_len);
    assert_int_equal(e.err, 0);
    size_t auth_len = e.len;

    mota_cbor_enc_init(&e, out, cap);
    mota_cbor_put_tag(&e, 107);
    mota_cbor_put_map(&e, 2 + env.n_payloads);
    mota_cbor_put_uint(&e, 2);
    mota_cbor_put_bstr(&e, auth, auth_len);
    mota_cbor_put_uint(&e, 3);
    mota_cbor_put_raw(&e, env.manifest_wrapped, env.manifest_wrapped_len);
    mota_cbor_put_raw(&e, base + env.head_len, len - env.head_len);
    assert_int_equal(e.err, 0);
    return e.len;
}

/* A COSE header map entry for hdr(): an integer label (t NULL) or a text
 * label. Label 1 gets alg ES256, label 4 our key id, the others 0. */
struct label {
    int64_t i;
    const char *t;
};
#define ALG                                                                                                            \
    {                                                                                                                  \
        1, NULL                                                                                                        \
    }
#define KID                                                                                                            \
    {                                                                                                                  \
        4, NULL                                                                                                        \
    }
#define TXT(s)                                                                                                         \
    {                                                                                                                  \
        0, s                                                                                                           \
    }

static size_t hdr(uint8_t *b, size_t cap, const struct label *l, size_t n)
{
    struct mota_cbor_enc e;
    mota_cbor_enc_init(&e, b, cap);
    mota_cbor_put_map(&e, n);
    for (size_t k = 0; k < n; k++) {
        if (l[k].t != NULL)
            mota_cbor_put_tstr(&e, l[k].t);
        else
            mota_cbor_put_int(&e, l[k].i);
        if (l[k].t == NULL && l[k].i == 1)
            mota_cbor_put_int(&e, MOTA_COSE_ALG_ES256);
        else if (l[k].t == NULL && l[k].i == 4)
            mota_cbor_put_bstr(&e, trusted.kid, sizeof(trusted.kid));
        else
            mota_cbor_put_uint(&e, 0);
    }
    assert_int_equal(e.err, 0);
    return e.len;
}

/* The verdict on a container whose headers are prot and unprot. */
static int verify_headers(const struct label *prot, size_t n_prot, const struct label *unprot, size_t n_unprot)
{
    static uint8_t buf[16384];
    static struct mota_verify_result r;
    uint8_t p[128], u[128];
    size_t pl = hdr(p, sizeof(p), prot, n_prot), ul = hdr(u, sizeof(u), unprot, n_unprot);
    size_t len = build_with_headers(p, pl, u, ul, buf, sizeof(buf));
    return mota_container_verify(buf, len, &trusted, 1, &r);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_packed_container_verifies_and_reads_back(void **state)
{
    (void)state;
    static uint8_t buf[16384];
    static struct mota_verify_result r;
    struct mota_pack_spec s;
    make_spec(&s, true);
    size_t len = build(&s, buf, sizeof(buf));
    assert_int_equal(mota_container_verify(buf, len, &trusted, 1, &r), MOTA_OK);
    assert_true(r.mota_profile);
    assert_int_equal(r.n_payloads_checked, 2);
    assert_int_equal(r.manifest.seq, 1234567);
    assert_int_equal(r.manifest.n_components, 2);
    assert_int_equal(r.manifest.comp[1].role, MOTA_COMPONENT_PARAMS);
    assert_memory_equal(r.manifest.comp[0].vendor_id, s.vendor_id, 16);
    assert_memory_equal(r.manifest.comp[1].class_id, s.class_id, 16);
    assert_int_equal(r.manifest.compat.cpu_part, 0xD22);
    assert_int_equal(r.manifest.compat.install_mode, MOTA_INSTALL_COPY);
    assert_int_equal(r.manifest.compat.rt_micro, 1);
    assert_int_equal(r.manifest.text.version_len, 5);
    assert_memory_equal(r.manifest.text.version, "2.0.1", 5);
    assert_memory_equal(r.manifest.text.created, "2026-01-01T00:00:00Z", 20);
}

/* The layout the encoder decides is where a written container has each part: the head, then each payload's head
 * and bytes in component order; a compressed payload takes its compressed size. */
static void test_layout_places_every_part_where_the_container_has_it(void **state)
{
    (void)state;
    static uint8_t buf[16384], head[8192];
    struct mota_container_layout lay;
    struct mota_pack_spec s;
    size_t head_len = 0;
    make_spec(&s, true);
    for (int sig = 0; sig < 2; sig++) {
        size_t len = build_signed_by(&s, sig ? sign_cb : NULL, buf, sizeof(buf));
        assert_int_equal(
            mota_container_encode_head(&s, trusted.kid, sig ? sign_cb : NULL, &key, head, sizeof(head), &head_len),
            MOTA_OK);
        assert_int_equal(mota_container_layout(&s, trusted.kid, sig != 0, &lay), MOTA_OK);
        assert_int_equal(lay.head_len, head_len);
        assert_int_equal(lay.n_payloads, 2);
        assert_int_equal(lay.len, len);
        for (size_t i = 0; i < lay.n_payloads; i++) {
            const struct mota_container_part *p = &lay.payload[i];
            assert_int_equal(p->head_off, i == 0 ? head_len : lay.payload[i - 1].off + lay.payload[i - 1].len);
            assert_int_equal(p->off, p->head_off + p->head_len);
            assert_memory_equal(buf + p->head_off, p->head, p->head_len);
            assert_memory_equal(buf + p->off, s.comp[i].role == MOTA_COMPONENT_CODE ? code : params, p->len);
        }
    }
    s.comp[1].compressed = true;
    s.comp[1].wire_size = 100;
    assert_int_equal(mota_container_layout(&s, trusted.kid, true, &lay), MOTA_OK);
    assert_int_equal(lay.payload[1].len, 100);
    assert_int_equal(lay.len, lay.payload[1].off + 100);
    assert_int_equal(mota_container_layout(NULL, trusted.kid, true, &lay), MOTA_ERR_ARG);
}

/* A manifest decoded from one buffer, moved to a copy of it, is the manifest decoded from the copy. */
static void test_a_rebased_manifest_equals_one_decoded_from_the_copy(void **state)
{
    (void)state;
    static uint8_t a[16384], b[16384];
    static struct mota_envelope ea, eb;
    static struct mota_manifest ma, mb;
    struct mota_pack_spec s;
    make_spec(&s, true);
    s.compat.rt_desc = "runtime 1.1.1";
    s.compat.rt_desc_len = 13;
    size_t len = build(&s, a, sizeof(a));
    memcpy(b, a, len);
    assert_int_equal(mota_envelope_decode(a, len, &ea), MOTA_OK);
    assert_int_equal(mota_manifest_decode(&ea, &ma), MOTA_OK);
    assert_int_equal(mota_envelope_decode(b, len, &eb), MOTA_OK);
    assert_int_equal(mota_manifest_decode(&eb, &mb), MOTA_OK);
    assert_true(ma.text.description && ma.text.created && ma.text.vendor_name && ma.text.model_name &&
                ma.text.version && ma.compat.rt_desc && ma.comp[1].uri); /* every kind of slice is there */
    mota_manifest_rebase(&ma, a, ea.head_len, b);
    assert_memory_equal(&ma, &mb, sizeof(ma));
    memset(a, 0, len); /* nothing points at the old buffer any more */
    assert_memory_equal(ma.text.version, "2.0.1", 5);
    assert_memory_equal(ma.compat.c_name, "tiny", 4);
    assert_memory_equal(ma.compat.rt_desc, "runtime 1.1.1", 13);
    /* a pointer outside the moved range stays */
    static const char elsewhere[] = "elsewhere";
    mb.text.description = elsewhere;
    mota_manifest_rebase(&mb, b, eb.head_len, a);
    assert_ptr_equal(mb.text.description, elsewhere);
}

static void test_same_inputs_give_the_same_bytes(void **state)
{
    (void)state;
    static uint8_t a[16384], b[16384];
    struct mota_pack_spec s;
    make_spec(&s, false);
    size_t la = build(&s, a, sizeof(a)), lb = build(&s, b, sizeof(b));
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    s.seq++;
    lb = build(&s, b, sizeof(b));
    assert_true(la != lb || memcmp(a, b, la) != 0);
}

static void test_every_truncation_is_rejected(void **state)
{
    (void)state;
    static uint8_t buf[16384];
    static struct mota_verify_result r;
    struct mota_pack_spec s;
    make_spec(&s, true);
    size_t len = build(&s, buf, sizeof(buf));
    struct mota_envelope env;
    assert_int_equal(mota_envelope_decode(buf, len, &env), MOTA_OK);
    /* every byte of the head and payload heads; payload content in strides
     * (each of those verifies the signature before it fails) */
    for (size_t n = 0; n < len; n += (n < env.head_len + 8 || (n > len - 1008 && n < len - 992)) ? 1 : 61) {
        int ret = mota_container_verify(buf, n, &trusted, 1, &r);
        if (ret == MOTA_OK)
            fail_msg("truncation to %zu of %zu bytes accepted", n, len);
    }
}

static void test_head_decodes_as_soon_as_its_bytes_arrive(void **state)
{
    (void)state;
    static uint8_t buf[16384];
    struct mota_envelope env;
    struct mota_pack_spec s;
    make_spec(&s, false);
    size_t len = build(&s, buf, sizeof(buf));
    assert_int_equal(mota_envelope_decode(buf, len, &env), MOTA_OK);
    size_t head = env.head_len;
    for (size_t n = 0; n < head; n++)
        assert_int_equal(mota_envelope_decode(buf, n, &env), MOTA_ERR_CBOR_TRUNCATED);
    assert_int_equal(mota_envelope_decode(buf, head, &env), MOTA_OK);
    assert_int_equal(mota_envelope_authenticate(&env, &trusted, 1, NULL), MOTA_OK);
}

static void test_unknown_and_wrong_keys_are_told_apart(void **state)
{
    (void)state;
    static uint8_t buf[16384];
    struct mota_envelope env;
    struct mota_pack_spec s;
    struct mota_p256_key other;
    struct mota_trusted_key t2;
    make_spec(&s, false);
    size_t len = build(&s, buf, sizeof(buf));
    assert_int_equal(mota_envelope_decode(buf, len, &env), MOTA_OK);
    assert_int_equal(mota_key_generate(&other), MOTA_OK);
    mota_trusted_key_set(&t2, other.pub);
    assert_int_equal(mota_envelope_authenticate(&env, &t2, 1, NULL), MOTA_ERR_KEY_UNKNOWN);
    /* a key slot that claims our key id but holds another key */
    memcpy(t2.kid, trusted.kid, sizeof(t2.kid));
    assert_int_equal(mota_envelope_authenticate(&env, &t2, 1, NULL), MOTA_ERR_SIGNATURE);
    struct mota_trusted_key both[2] = {t2, trusted};
    size_t idx = 9;
    assert_int_equal(mota_envelope_authenticate(&env, both, 2, &idx), MOTA_OK);
    assert_int_equal(idx, 1);
}

static void test_payload_head_size_matches_the_encoder(void **state)
{
    (void)state;
    static const uint64_t sizes[] = {0, 23, 24, 255, 256, 65535, 65536, 0xFFFFFFFFull, 0x100000000ull};
    for (int role = MOTA_COMPONENT_CODE; role <= MOTA_COMPONENT_SELFTEST; role++) {
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            uint8_t b[32];
            size_t n = 0;
            assert_int_equal(mota_payload_head_encode((enum mota_component_role)role, sizes[i], b, sizeof(b), &n),
                             MOTA_OK);
            assert_int_equal(mota_payload_head_size((enum mota_component_role)role, sizes[i]), n);
        }
    }
    assert_int_equal(mota_payload_head_size(MOTA_COMPONENT_OTHER, 5), 0);
}

static void test_uuid5_matches_published_suit_vectors(void **state)
{
    (void)state;
    uint8_t u[16];
    const uint8_t arm[16] = {0xfa, 0x6b, 0x4a, 0x53, 0xd5, 0xad, 0x5f, 0xdf,
                             0xbe, 0x9d, 0xe6, 0x63, 0xe4, 0xd4, 0x1f, 0xfe};
    const uint8_t riot[16] = {0x54, 0x7d, 0x0d, 0x74, 0x6d, 0x3a, 0x5a, 0x92,
                              0x96, 0x62, 0x48, 0x81, 0xaf, 0xd9, 0x40, 0x7b};
    mota_uuid5(mota_uuid_ns_dns, "arm.com", 7, u);
    assert_memory_equal(u, arm, 16);
    mota_uuid5(mota_uuid_ns_dns, "riot-os.org", 11, u);
    assert_memory_equal(u, riot, 16);
}

static void test_cose_labels_are_accepted_once_each(void **state)
{
    (void)state;
    /* the control for the next test: distinct int and text labels in each map */
    const struct label prot[] = {ALG, {3, NULL}, KID, TXT("x")}, unprot[] = {{5, NULL}, TXT("y")};
    assert_int_equal(verify_headers(prot, N(prot), unprot, N(unprot)), MOTA_OK);
    assert_int_equal(verify_headers(prot, N(prot), NULL, 0), MOTA_OK);
}

static void test_cose_label_twice_in_a_map_or_in_both_maps_is_refused(void **state)
{
    (void)state;
    const struct label plain[] = {ALG, KID};
    const struct label text_twice[] = {ALG, KID, TXT("x"), TXT("x")};
    const struct label int_twice[] = {ALG, {3, NULL}, {3, NULL}, KID};
    const struct label unprot_text_twice[] = {TXT("y"), {5, NULL}, TXT("y")};
    const struct label prot_x[] = {ALG, KID, TXT("x")}, unprot_x[] = {TXT("x")};
    const struct label prot_3[] = {ALG, {3, NULL}, KID}, unprot_3[] = {{3, NULL}};
    const struct label unprot_kid[] = {KID};
    /* RFC 9052 section 3: at most once in a map */
    assert_int_equal(verify_headers(text_twice, N(text_twice), NULL, 0), MOTA_ERR_CBOR_DUP_KEY);
    assert_int_equal(verify_headers(int_twice, N(int_twice), NULL, 0), MOTA_ERR_CBOR_DUP_KEY);
    assert_int_equal(verify_headers(plain, N(plain), unprot_text_twice, N(unprot_text_twice)), MOTA_ERR_CBOR_DUP_KEY);
    /* and not in both the protected and the unprotected map */
    assert_int_equal(verify_headers(prot_x, N(prot_x), unprot_x, N(unprot_x)), MOTA_ERR_COSE_DUP_LABEL);
    assert_int_equal(verify_headers(prot_3, N(prot_3), unprot_3, N(unprot_3)), MOTA_ERR_COSE_DUP_LABEL);
    assert_int_equal(verify_headers(plain, N(plain), unprot_kid, N(unprot_kid)), MOTA_ERR_COSE_DUP_LABEL);
}

static void test_cose_label_that_is_neither_int_nor_text_is_refused(void **state)
{
    (void)state;
    static uint8_t buf[16384];
    static struct mota_verify_result r;
    const struct label prot[] = {ALG, KID};
    uint8_t p[128];
    static const uint8_t unprot[] = {0xA1, 0x41, 0x01, 0x00}; /* {h'01': 0} */
    size_t len = build_with_headers(p, hdr(p, sizeof(p), prot, N(prot)), unprot, sizeof(unprot), buf, sizeof(buf));
    assert_int_equal(mota_container_verify(buf, len, &trusted, 1, &r), MOTA_ERR_CBOR_TYPE);
}

static uint8_t *read_fixture(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", MOTA_FIXTURES_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    static uint8_t buf[2][4096];
    static int which;
    uint8_t *b = buf[which++ & 1];
    *len = fread(b, 1, 4096, f);
    fclose(f);
    return b;
}

static void test_suit_example0_verifies_and_every_bit_flip_is_rejected(void **state)
{
    (void)state;
    size_t len = 0, klen = 0;
    uint8_t *env = read_fixture("suit/example0.suit", &len);
    uint8_t *pem = read_fixture("suit/example0_public.pem", &klen);
    static struct mota_verify_result r;
    struct mota_p256_key k;
    struct mota_trusted_key t;
    if (env == NULL || pem == NULL) {
        print_message("SKIPPED: ../shared/fixtures/suit is absent\n");
        skip();
    }
    assert_int_equal(mota_key_parse(pem, klen, &k), MOTA_OK);
    mota_trusted_key_set(&t, k.pub);
    assert_int_equal(mota_container_verify(env, len, &t, 1, &r), MOTA_OK);
    assert_false(r.mota_profile);
    assert_int_equal(r.manifest.comp[0].size, 34768);
    size_t flips = 0;
    for (size_t bit = 0; bit < len * 8; bit++) {
        env[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int ret = mota_container_verify(env, len, &t, 1, &r);
        env[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        if (ret == MOTA_OK)
            fail_msg("bit %zu flipped was accepted", bit);
        assert_non_null(mota_err_name(ret));
        flips++;
    }
    print_message("rejected all %zu single-bit flips of example0.suit\n", flips);
}

/* pack --unsigned: the same container with an empty signature; sign_head fills it in to the directly
 * signed bytes, and until then no key authenticates it. */
static void test_unsigned_container_is_refused_until_signed_then_equals_the_signed_one(void **state)
{
    static uint8_t direct[16384], unsigned_[16384], head[4096], joined[16384];
    struct mota_pack_spec s;
    struct mota_envelope env;
    struct mota_verify_result r;
    uint8_t tbs[MOTA_SIG_STRUCTURE_MAX], hash[32], sig[64];
    size_t dlen, ulen, tbs_len, hlen;
    (void)state;
    make_spec(&s, true);
    dlen = build(&s, direct, sizeof(direct));
    ulen = build_signed_by(&s, NULL, unsigned_, sizeof(unsigned_));

    assert_int_equal(mota_envelope_decode(unsigned_, ulen, &env), MOTA_OK);
    assert_true(env.blocks[0].no_sig);
    assert_null(env.blocks[0].sig);
    assert_int_equal(mota_envelope_authenticate(&env, &trusted, 1, NULL), MOTA_ERR_UNSIGNED);
    assert_int_equal(mota_envelope_authenticate(&env, NULL, 0, NULL), MOTA_ERR_UNSIGNED);
    assert_int_equal(mota_container_verify(unsigned_, ulen, &trusted, 1, &r), MOTA_ERR_UNSIGNED);

    /* what a signer signs does not change with signing */
    assert_int_equal(mota_sig_structure(&env, &env.blocks[0], tbs, sizeof(tbs), &tbs_len), MOTA_OK);
    mota_sha256(tbs, tbs_len, hash);
    assert_int_equal(mota_ecdsa_p256_sign(&key, hash, sig), MOTA_OK);
    assert_int_equal(mota_container_sign_head(unsigned_, ulen, sig, head, sizeof(head), &hlen), MOTA_OK);
    memcpy(joined, head, hlen);
    memcpy(joined + hlen, unsigned_ + env.head_len, ulen - env.head_len);
    assert_int_equal(hlen + ulen - env.head_len, dlen);
    assert_memory_equal(joined, direct, dlen);
    assert_int_equal(mota_container_verify(joined, dlen, &trusted, 1, &r), MOTA_OK);
    /* signed once: not again */
    assert_int_equal(mota_container_sign_head(direct, dlen, sig, head, sizeof(head), &hlen), MOTA_ERR_ALREADY_SIGNED);
    /* a wrong signature in the empty one's place is a signature failure, not "unsigned" */
    sig[5] ^= 1;
    assert_int_equal(mota_container_sign_head(unsigned_, ulen, sig, head, sizeof(head), &hlen), MOTA_OK);
    memcpy(joined, head, hlen);
    assert_int_equal(mota_container_verify(joined, dlen, &trusted, 1, &r), MOTA_ERR_SIGNATURE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packed_container_verifies_and_reads_back),
        cmocka_unit_test(test_layout_places_every_part_where_the_container_has_it),
        cmocka_unit_test(test_a_rebased_manifest_equals_one_decoded_from_the_copy),
        cmocka_unit_test(test_same_inputs_give_the_same_bytes),
        cmocka_unit_test(test_every_truncation_is_rejected),
        cmocka_unit_test(test_head_decodes_as_soon_as_its_bytes_arrive),
        cmocka_unit_test(test_unknown_and_wrong_keys_are_told_apart),
        cmocka_unit_test(test_payload_head_size_matches_the_encoder),
        cmocka_unit_test(test_uuid5_matches_published_suit_vectors),
        cmocka_unit_test(test_cose_labels_are_accepted_once_each),
        cmocka_unit_test(test_cose_label_twice_in_a_map_or_in_both_maps_is_refused),
        cmocka_unit_test(test_cose_label_that_is_neither_int_nor_text_is_refused),
        cmocka_unit_test(test_suit_example0_verifies_and_every_bit_flip_is_rejected),
        cmocka_unit_test(test_unsigned_container_is_refused_until_signed_then_equals_the_signed_one),
    };
    return cmocka_run_group_tests_name("container", tests, setup, NULL);
}
