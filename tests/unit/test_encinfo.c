/* SPDX-License-Identifier: Apache-2.0 */
/* SUIT_Encryption_Info (container/src/encinfo.c) against the SUIT working group's examples
 * (../shared/suit-encryption-examples, draft-ietf-suit-firmware-encryption; SKIPPED when absent): the four items and the copies the five
 * signed manifests carry in parameter 19 decode, give their content keys for kid-1 and kid-2 and decrypt to
 * the firmware; the AAD and KDF context are the draft's bytes; the encoder writes the items byte for byte;
 * and every malformed variant, truncation and bit flip is refused with its reason, never read past. */
#include "mota/cbor.h"
#include "mota/cipher.h"
#include "mota/encinfo.h"
#include "mota/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hex.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MOTA_ENC_DATA_DIR
#error "MOTA_ENC_DATA_DIR: the folder of the working group's examples (tests/CMakeLists.txt sets it)"
#endif

static const char firmware[] = "This is a real firmware image.";
#define FIRMWARE_LEN (sizeof(firmware) - 1)

static const char *const items[4] = {"aes-kw-aes-gcm", "aes-kw-aes-ctr", "es-ecdh-aes-gcm", "es-ecdh-aes-ctr"};
static const char *const manifests[5] = {"aes-kw-content", "aes-kw-slot", "aes-kw", "es-ecdh-content",
                                         "es-ecdh-dependency"};

/* A hex file of the examples (whitespace between the digits), into out. */
static size_t read_hex(const char *name, uint8_t *out, size_t cap)
{
    char path[512];
    size_t n = 0;
    int c, hi = -1;
    snprintf(path, sizeof(path), "%s/%s", MOTA_ENC_DATA_DIR, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while ((c = fgetc(f)) != EOF) {
        if (isspace(c))
            continue;
        assert_true(isxdigit(c));
        int v = isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
        if (hi < 0) {
            hi = v;
            continue;
        }
        assert_true(n < cap);
        out[n++] = (uint8_t)(hi << 4 | v);
        hi = -1;
    }
    fclose(f);
    assert_int_equal(hi, -1);
    return n;
}

static size_t read_item(unsigned i, uint8_t *out, size_t cap)
{
    char name[96];
    snprintf(name, sizeof(name), "suit-encryption-info-%s.hex", items[i]);
    return read_hex(name, out, cap);
}

/* The keys of the examples: kid-1's KEK (16 x 'a') and kid-2's P-256 key pair. */
static struct mota_kek kid1;
static uint8_t kid2_d[32], kid2_pub[65];
static struct mota_enc_keys example_keys(void)
{
    struct mota_enc_keys k = {.keks = &kid1,
                              .n_keks = 1,
                              .device_d = kid2_d,
                              .device_pub = kid2_pub,
                              .device_kid = (const uint8_t *)"kid-2",
                              .device_kid_len = 5};
    memcpy(kid1.kid, "kid-1", 5);
    kid1.kid_len = 5;
    memset(kid1.k, 'a', sizeof(kid1.k));
    unhex("60FE6DD6D85D5740A5349B6F91267EEAC5BA81B8CB53EE249E4B4EB102C476B3", kid2_d);
    unhex("04"
          "5886CD61DD875862E5AAA820E7A15274C968A9BC96048DDCACE32F50C3651BA3"
          "9EED8125E932CD60C0EAD3650D0A485CF726D378D1B016ED4298B2961E258F1B",
          kid2_pub);
    return k;
}

/* ---- parameter 19 inside a signed envelope, found with the pull decoder ---- */

static bool walk(struct mota_cbor_dec *d, const uint8_t **p, size_t *len, int depth);

/* a bstr that holds one whole CBOR item (the manifest, its command sequences) is searched inside */
static bool walk_bstr(const uint8_t *buf, size_t n, const uint8_t **p, size_t *len, int depth)
{
    struct mota_cbor_dec in;
    mota_cbor_dec_init(&in, buf, n);
    return n > 0 && walk(&in, p, len, depth + 1);
}

/* a map: the bstr value of key 19, else a search of its keys and values */
static bool walk_map(struct mota_cbor_dec *d, uint64_t pairs, const uint8_t **p, size_t *len, int depth)
{
    for (uint64_t i = 0; i < pairs && d->err == 0; i++) {
        struct mota_cbor_item k, v;
        if (mota_cbor_next(d, &k) != 0)
            return false;
        if (k.type == MOTA_CBOR_UINT && k.val == 19 && mota_cbor_peek(d, &v) == 0 && v.type == MOTA_CBOR_BSTR) {
            *p = v.ptr;
            *len = v.len;
            return true;
        }
        if (walk(d, p, len, depth + 1))
            return true;
    }
    return false;
}

static bool walk(struct mota_cbor_dec *d, const uint8_t **p, size_t *len, int depth)
{
    struct mota_cbor_item it;
    if (depth > 24 || mota_cbor_next(d, &it) != 0)
        return false;
    switch (it.type) {
    case MOTA_CBOR_BSTR: return walk_bstr(it.ptr, it.len, p, len, depth);
    case MOTA_CBOR_TAG: return walk(d, p, len, depth + 1);
    case MOTA_CBOR_MAP: return walk_map(d, it.val, p, len, depth);
    case MOTA_CBOR_ARRAY:
        for (uint64_t i = 0; i < it.val && d->err == 0; i++)
            if (walk(d, p, len, depth + 1))
                return true;
        return false;
    default: return false;
    }
}

/* Parameter 19 (encryption-info) of a signed manifest of the examples: a slice of buf. */
static size_t manifest_param19(unsigned i, uint8_t *buf, size_t cap, const uint8_t **p)
{
    char name[96];
    size_t len = 0;
    snprintf(name, sizeof(name), "suit-manifest-%s.hex.signed", manifests[i]);
    size_t n = read_hex(name, buf, cap);
    struct mota_cbor_dec d;
    mota_cbor_dec_init(&d, buf, n);
    assert_true(walk(&d, p, &len, 0));
    return len;
}

/* ---- decoding ---- */

static void test_encinfo_reads_the_working_groups_four_items(void **state)
{
    (void)state;
    uint8_t buf[MOTA_ENC_MAX_INFO], want[24];
    const char *wrapped[4] = {
        "75603FFC9518D794713C8CA8A115A7FB32565A6D59534D62", "CE34035CE5C2E2666E46D4C131FC561DD190A6D26CFA1990",
        "A06B8E6550F308712B1DF044B21B7D11D9B22792F1DE0997", "E28B4502E4F5151884A995405579006E9465C3E94E3E0808"};
    for (unsigned i = 0; i < 4; i++) {
        struct mota_enc_info ei;
        size_t n = read_item(i, buf, sizeof(buf));
        bool gcm = i % 2 == 0, ecdh = i >= 2;
        assert_int_equal(mota_enc_info_decode(buf, n, &ei), MOTA_OK);
        assert_int_equal(ei.alg, gcm ? MOTA_ENC_A128GCM : MOTA_ENC_A128CTR);
        assert_int_equal(ei.iv_len, gcm ? 12 : 16);
        assert_int_equal(ei.protected_len, gcm ? 3 : 0);
        assert_int_equal(ei.n_recipients, 1);
        const struct mota_enc_recipient *r = &ei.r[0];
        assert_int_equal(r->alg, ecdh ? MOTA_ENC_ECDH_ES_A128KW : MOTA_ENC_A128KW);
        assert_int_equal(r->protected_len, ecdh ? 4 : 0);
        if (ecdh) {
            assert_memory_equal(r->protected_hdr, mota_enc_ecdh_protected, 4);
            assert_null(r->kid); /* the standalone items name no key */
            assert_non_null(r->epk_x);
            assert_non_null(r->epk_y);
            assert_null(r->salt);
        } else {
            assert_int_equal(r->kid_len, 5);
            assert_memory_equal(r->kid, "kid-1", 5);
            assert_null(r->epk_x);
        }
        unhex(wrapped[i], want);
        assert_memory_equal(r->wrapped, want, 24);
    }
}

static void test_encinfo_reads_parameter_19_of_the_five_signed_manifests(void **state)
{
    (void)state;
    uint8_t env[1024], item[MOTA_ENC_MAX_INFO];
    size_t item_len = read_item(0, item, sizeof(item));
    for (unsigned i = 0; i < 5; i++) {
        const uint8_t *p = NULL;
        struct mota_enc_info ei;
        size_t n = manifest_param19(i, env, sizeof(env), &p);
        assert_int_equal(mota_enc_info_decode(p, n, &ei), MOTA_OK);
        assert_int_equal(ei.alg, MOTA_ENC_A128GCM);
        assert_int_equal(ei.n_recipients, 1);
        if (i < 3) { /* the AES-KW manifests carry the standalone GCM item as it is */
            assert_int_equal(n, item_len);
            assert_memory_equal(p, item, n);
            continue;
        }
        /* the ES-DH ones add kid-2 after the key: {-1, 4}, not canonical order, and read all the same */
        assert_int_equal(ei.r[0].alg, MOTA_ENC_ECDH_ES_A128KW);
        assert_int_equal(ei.r[0].kid_len, 5);
        assert_memory_equal(ei.r[0].kid, "kid-2", 5);
    }
}

/* ---- content keys and the payloads ---- */

static void decrypt_to_firmware(const struct mota_enc_info *ei, const uint8_t cek[16], const char *payload)
{
    struct mota_aes128 aes;
    uint8_t ct[64], pt[FIRMWARE_LEN], aad[MOTA_ENC_AAD_MAX];
    size_t aad_len = 0, n = read_hex(payload, ct, sizeof(ct));
    mota_aes128_setkey(&aes, cek, false);
    if (ei->alg == MOTA_ENC_A128GCM) {
        struct mota_gcm g;
        assert_int_equal(n, FIRMWARE_LEN + MOTA_GCM_TAG_LEN);
        assert_int_equal(mota_enc_aad(ei, aad, sizeof(aad), &aad_len), MOTA_OK);
        mota_gcm_start(&g, &aes, ei->iv, true, aad, aad_len);
        mota_gcm_update(&g, ct, pt, FIRMWARE_LEN);
        assert_int_equal(mota_gcm_finish(&g, ct + FIRMWARE_LEN), MOTA_OK);
        mota_cipher_wipe(&g, sizeof(g));
    } else {
        struct mota_ctr c;
        assert_int_equal(n, FIRMWARE_LEN);
        mota_ctr_start(&c, &aes, ei->iv, 0);
        mota_ctr_xor(&c, ct, pt, FIRMWARE_LEN);
        mota_cipher_wipe(&c, sizeof(c));
    }
    mota_cipher_wipe(&aes, sizeof(aes));
    assert_memory_equal(pt, firmware, FIRMWARE_LEN);
}

static void test_encinfo_content_keys_of_kid_1_and_kid_2_decrypt_the_four_payloads(void **state)
{
    (void)state;
    struct mota_enc_keys keys = example_keys();
    uint8_t buf[1024], cek[16], want[16];
    char payload[96];
    for (unsigned i = 0; i < 4; i++) {
        struct mota_enc_info ei;
        size_t n = read_item(i, buf, sizeof(buf));
        assert_int_equal(mota_enc_info_decode(buf, n, &ei), MOTA_OK);
        memset(cek, 0, sizeof(cek));
        assert_int_equal(mota_enc_cek(&ei, &keys, cek), MOTA_OK);
        unhex(i % 2 == 0 ? "15f785b5c931414411b4b71373a9c0f7" : "261de6165070fb8951ec5d7b92a065fe", want);
        assert_memory_equal(cek, want, 16);
        snprintf(payload, sizeof(payload), "encrypted-payload-%s.hex", items[i]);
        decrypt_to_firmware(&ei, cek, payload);
    }
    for (unsigned i = 3; i < 5; i++) { /* the manifests' copies name kid-2: the device key's id */
        const uint8_t *p = NULL;
        struct mota_enc_info ei;
        size_t n = manifest_param19(i, buf, sizeof(buf), &p);
        assert_int_equal(mota_enc_info_decode(p, n, &ei), MOTA_OK);
        assert_int_equal(mota_enc_cek(&ei, &keys, cek), MOTA_OK);
        decrypt_to_firmware(&ei, cek, "encrypted-payload-es-ecdh-aes-gcm.hex");
    }
}

static void test_encinfo_ecdh_kek_is_the_drafts_and_a_salt_changes_it(void **state)
{
    (void)state;
    (void)example_keys();
    uint8_t buf[MOTA_ENC_MAX_INFO], kek[16], want[16], x[65];
    struct mota_enc_info ei;
    assert_int_equal(mota_enc_info_decode(buf, read_item(2, buf, sizeof(buf)), &ei), MOTA_OK);
    struct mota_enc_recipient r = ei.r[0];
    x[0] = 0x04;
    memcpy(x + 1, r.epk_x, 32);
    memcpy(x + 33, r.epk_y, 32);
    assert_int_equal(mota_enc_ecdh_kek(kid2_d, x, &r, kek), MOTA_OK);
    unhex("bb63763fc3913868040a1d63cf3a72ba", want);
    assert_memory_equal(kek, want, 16);
    r.salt = (const uint8_t *)"a salt of the -20 header";
    r.salt_len = 24;
    assert_int_equal(mota_enc_ecdh_kek(kid2_d, x, &r, kek), MOTA_OK);
    assert_memory_not_equal(kek, want, 16);
    r.alg = MOTA_ENC_A128KW; /* no KDF context for a KW recipient */
    assert_int_equal(mota_enc_ecdh_kek(kid2_d, x, &r, kek), MOTA_ERR_ARG);
}

static void test_encinfo_a_wrong_key_is_unwrap_and_no_key_for_a_recipient_is_no_key(void **state)
{
    (void)state;
    struct mota_enc_keys keys = example_keys();
    uint8_t kw[MOTA_ENC_MAX_INFO], ecdh[MOTA_ENC_MAX_INFO], env[2048], cek[16], other_d[32];
    struct mota_enc_info kwi, ecdhi, named;
    const uint8_t *p = NULL;
    assert_int_equal(mota_enc_info_decode(kw, read_item(0, kw, sizeof(kw)), &kwi), MOTA_OK);
    assert_int_equal(mota_enc_info_decode(ecdh, read_item(2, ecdh, sizeof(ecdh)), &ecdhi), MOTA_OK);
    size_t n = manifest_param19(3, env, sizeof(env), &p);
    assert_int_equal(mota_enc_info_decode(p, n, &named), MOTA_OK);
    memset(cek, 0x55, sizeof(cek));

    kid1.k[0] ^= 1; /* kid-1 with the wrong key */
    assert_int_equal(mota_enc_cek(&kwi, &keys, cek), MOTA_ERR_ENC_UNWRAP);
    kid1.k[0] ^= 1;
    kid1.kid[4] = '9'; /* a key, but not the one the recipient names */
    assert_int_equal(mota_enc_cek(&kwi, &keys, cek), MOTA_ERR_ENC_NO_KEY);
    kid1.kid[4] = '1';
    keys.n_keks = 0;
    assert_int_equal(mota_enc_cek(&kwi, &keys, cek), MOTA_ERR_ENC_NO_KEY);

    keys.device_d = NULL; /* ES-DH without a device key */
    assert_int_equal(mota_enc_cek(&ecdhi, &keys, cek), MOTA_ERR_ENC_NO_KEY);
    unhex("0f2d8e3c1a49b2b8f4a0d1c2e3f405162738495a6b7c8d9eafb0c1d2e3f40516", other_d);
    keys.device_d = other_d; /* another device's key: tried, and it fails the unwrap */
    assert_int_equal(mota_enc_cek(&ecdhi, &keys, cek), MOTA_ERR_ENC_UNWRAP);
    keys.device_d = kid2_d;
    keys.device_kid = (const uint8_t *)"kid-3"; /* the manifest's copy names kid-2: not this device's */
    assert_int_equal(mota_enc_cek(&named, &keys, cek), MOTA_ERR_ENC_NO_KEY);
    keys.device_kid = NULL;
    assert_int_equal(mota_enc_cek(&named, &keys, cek), MOTA_ERR_ENC_NO_KEY);
    assert_int_equal(mota_enc_cek(&ecdhi, &keys, cek), MOTA_OK); /* no kid: the key is tried */
    for (unsigned i = 0; i < 16; i++)
        assert_int_not_equal(cek[i], 0x55);
    memset(cek, 0x55, sizeof(cek));
    assert_int_equal(mota_enc_cek(&kwi, &keys, cek), MOTA_ERR_ENC_NO_KEY); /* and failures leave cek alone */
    for (unsigned i = 0; i < 16; i++)
        assert_int_equal(cek[i], 0x55);
    assert_int_equal(mota_enc_cek(NULL, &keys, cek), MOTA_ERR_ARG);
    keys.keks = NULL;
    keys.n_keks = 1;
    assert_int_equal(mota_enc_cek(&kwi, &keys, cek), MOTA_ERR_ARG);
}

static void test_encinfo_a_corrupted_ephemeral_point_is_refused_as_epk(void **state)
{
    (void)state;
    struct mota_enc_keys keys = example_keys();
    uint8_t buf[MOTA_ENC_MAX_INFO], cek[16];
    for (unsigned i = 2; i < 4; i++) {
        struct mota_enc_info ei;
        size_t n = read_item(i, buf, sizeof(buf));
        assert_int_equal(mota_enc_info_decode(buf, n, &ei), MOTA_OK);
        size_t y = (size_t)(ei.r[0].epk_y - buf);
        buf[y + 31] ^= 1; /* off the curve */
        assert_int_equal(mota_enc_info_decode(buf, n, &ei), MOTA_OK);
        assert_int_equal(mota_enc_cek(&ei, &keys, cek), MOTA_ERR_ENC_EPK);
        buf[y + 31] ^= 1;
        memset(buf + y - 35, 0xff, 32); /* x above the field's prime */
        assert_int_equal(mota_enc_info_decode(buf, n, &ei), MOTA_OK);
        assert_int_equal(mota_enc_cek(&ei, &keys, cek), MOTA_ERR_ENC_EPK);
    }
}

static void test_encinfo_a_later_recipient_serves_when_an_earlier_one_cannot(void **state)
{
    (void)state;
    struct mota_enc_keys keys = example_keys();
    uint8_t kw[MOTA_ENC_MAX_INFO], ecdh[MOTA_ENC_MAX_INFO], out[MOTA_ENC_MAX_INFO], cek[16], want[16];
    struct mota_enc_info kwi, ecdhi, ei;
    struct mota_enc_info_spec s;
    size_t len = 0;
    assert_int_equal(mota_enc_info_decode(kw, read_item(0, kw, sizeof(kw)), &kwi), MOTA_OK);
    assert_int_equal(mota_enc_info_decode(ecdh, read_item(2, ecdh, sizeof(ecdh)), &ecdhi), MOTA_OK);
    memset(&s, 0, sizeof(s));
    s.alg = MOTA_ENC_A128GCM;
    memcpy(s.iv, kwi.iv, 12);
    s.n_recipients = 3;
    /* 1: a key this device lacks; 2: a point off the curve; 3: kid-1 */
    s.r[0] = (struct mota_enc_recipient_spec){.alg = MOTA_ENC_A128KW, .kid = (const uint8_t *)"kid-7", .kid_len = 5};
    s.r[1].alg = MOTA_ENC_ECDH_ES_A128KW;
    s.r[1].epk[0] = 0x04;
    memcpy(s.r[1].epk + 1, ecdhi.r[0].epk_x, 32);
    memcpy(s.r[1].epk + 33, ecdhi.r[0].epk_y, 32);
    s.r[1].epk[64] ^= 1;
    s.r[2] = (struct mota_enc_recipient_spec){.alg = MOTA_ENC_A128KW, .kid = (const uint8_t *)"kid-1", .kid_len = 5};
    memcpy(s.r[2].wrapped, kwi.r[0].wrapped, 24);
    assert_int_equal(mota_enc_info_encode(&s, out, sizeof(out), &len), MOTA_OK);
    assert_int_equal(mota_enc_info_decode(out, len, &ei), MOTA_OK);
    assert_int_equal(ei.n_recipients, 3);
    assert_int_equal(mota_enc_cek(&ei, &keys, cek), MOTA_OK);
    unhex("15f785b5c931414411b4b71373a9c0f7", want);
    assert_memory_equal(cek, want, 16);
    s.n_recipients = 2; /* without the third: the bad point is the reason, before the unknown kid */
    assert_int_equal(mota_enc_info_encode(&s, out, sizeof(out), &len), MOTA_OK);
    assert_int_equal(mota_enc_info_decode(out, len, &ei), MOTA_OK);
    assert_int_equal(mota_enc_cek(&ei, &keys, cek), MOTA_ERR_ENC_EPK);
}

/* ---- the bytes the ciphers and the KDF cover ---- */

static void test_encinfo_aad_and_kdf_context_are_the_drafts_bytes(void **state)
{
    (void)state;
    uint8_t buf[MOTA_ENC_MAX_INFO], env[2048], out[MOTA_ENC_KDF_CONTEXT_MAX], want[64];
    const uint8_t *p = NULL;
    struct mota_enc_info ei;
    size_t len = 0, n;
    for (unsigned i = 0; i < 4; i += 2) { /* the GCM items */
        assert_int_equal(mota_enc_info_decode(buf, read_item(i, buf, sizeof(buf)), &ei), MOTA_OK);
        assert_int_equal(mota_enc_aad(&ei, out, MOTA_ENC_AAD_MAX, &len), MOTA_OK);
        n = unhex("8367456e637279707443a1010140", want);
        assert_int_equal(len, n);
        assert_memory_equal(out, want, n);
        assert_int_equal(mota_enc_aad(&ei, out, n - 1, &len), MOTA_ERR_NOSPC);
    }
    n = unhex("842283f6f6f683f6f6f683188044a101381c5753554954205061796c6f616420456e6372797074696f6e", want);
    for (unsigned i = 2; i < 4; i++) {
        assert_int_equal(mota_enc_info_decode(buf, read_item(i, buf, sizeof(buf)), &ei), MOTA_OK);
        assert_int_equal(mota_enc_kdf_context(&ei.r[0], out, sizeof(out), &len), MOTA_OK);
        assert_int_equal(len, 42);
        assert_memory_equal(out, want, n);
        assert_int_equal(mota_enc_kdf_context(&ei.r[0], out, n - 1, &len), MOTA_ERR_NOSPC);
    }
    n = manifest_param19(4, env, sizeof(env), &p);
    assert_int_equal(mota_enc_info_decode(p, n, &ei), MOTA_OK);
    assert_int_equal(mota_enc_kdf_context(&ei.r[0], out, sizeof(out), &len), MOTA_OK);
    assert_memory_equal(out, want, 42); /* the kid is unprotected: the same context */
    assert_int_equal(mota_enc_info_decode(buf, read_item(0, buf, sizeof(buf)), &ei), MOTA_OK);
    assert_int_equal(mota_enc_kdf_context(&ei.r[0], out, sizeof(out), &len), MOTA_ERR_ARG); /* a KW recipient */
}

/* ---- the encoder ---- */

static void spec_of(const struct mota_enc_info *ei, struct mota_enc_info_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->alg = ei->alg;
    memcpy(s->iv, ei->iv, ei->iv_len);
    s->n_recipients = ei->n_recipients;
    for (size_t i = 0; i < ei->n_recipients; i++) {
        const struct mota_enc_recipient *r = &ei->r[i];
        s->r[i].alg = r->alg;
        s->r[i].kid = r->kid;
        s->r[i].kid_len = r->kid_len;
        if (r->epk_x != NULL) {
            s->r[i].epk[0] = 0x04;
            memcpy(s->r[i].epk + 1, r->epk_x, 32);
            memcpy(s->r[i].epk + 33, r->epk_y, 32);
        }
        memcpy(s->r[i].wrapped, r->wrapped, 24);
    }
}

static void test_encinfo_encoder_writes_the_four_items_byte_for_byte(void **state)
{
    (void)state;
    uint8_t buf[MOTA_ENC_MAX_INFO], out[MOTA_ENC_MAX_INFO];
    struct mota_enc_info ei, back;
    struct mota_enc_info_spec s;
    size_t len = 0;
    for (unsigned i = 0; i < 4; i++) {
        size_t n = read_item(i, buf, sizeof(buf));
        assert_int_equal(mota_enc_info_decode(buf, n, &ei), MOTA_OK);
        spec_of(&ei, &s);
        assert_int_equal(mota_enc_info_encode(&s, out, sizeof(out), &len), MOTA_OK);
        assert_int_equal(len, n);
        assert_memory_equal(out, buf, n);
        assert_int_equal(mota_enc_info_encode(&s, out, n - 1, &len), MOTA_ERR_NOSPC);
    }
    /* with kid-2, canonical order: {4: kid, -1: key}, where the draft's manifests write {-1, 4} */
    s.r[0].kid = (const uint8_t *)"kid-2";
    s.r[0].kid_len = 5;
    assert_int_equal(mota_enc_info_encode(&s, out, sizeof(out), &len), MOTA_OK);
    assert_int_equal(mota_enc_info_decode(out, len, &back), MOTA_OK);
    assert_memory_equal(back.r[0].kid, "kid-2", 5);
    assert_memory_equal(back.r[0].protected_hdr + back.r[0].protected_len, "\xa2\x04\x45kid-2\x20\xa4", 10);
    /* what it would write and the decoder refuse is an argument error */
    s.n_recipients = 0;
    assert_int_equal(mota_enc_info_encode(&s, out, sizeof(out), &len), MOTA_ERR_ARG);
    s.n_recipients = 5;
    assert_int_equal(mota_enc_info_encode(&s, out, sizeof(out), &len), MOTA_ERR_ARG);
    s.n_recipients = 1;
    s.r[0].kid_len = 33;
    assert_int_equal(mota_enc_info_encode(&s, out, sizeof(out), &len), MOTA_ERR_ARG);
    s.r[0].kid_len = 0;
    s.r[0].epk[0] = 0x02;
    assert_int_equal(mota_enc_info_encode(&s, out, sizeof(out), &len), MOTA_ERR_ARG);
    s.r[0].epk[0] = 0x04;
    s.alg = -65533;
    assert_int_equal(mota_enc_info_encode(&s, out, sizeof(out), &len), MOTA_ERR_ARG);
}

/* ---- malformed items ---- */

#define IV12 "4cf14aab9d81d51f7ad943fe87"
#define IV16 "50dae613b2e0dc55f4322be38bdba9dc68"
#define GCM_BODY "43a10101a105" IV12
#define CTR_BODY "40a20139fffd05" IV16
#define WRAP "581875603ffc9518d794713c8ca8a115a7fb32565a6d59534d62"
#define KID1 "456b69642d31"
#define KW_R "8340a2012204" KID1 WRAP
#define ITEM(body, recipients) "d86084" body "f6" recipients
#define X32 "582073024f415aa51529a66ccefd88f3f62a734492ff45f6ad37fd2888e73eaf19da"
#define Y32 "58204005b48a6fd091aa6abfe3cfbeede88b347e521d43405fdbd7d2cff0ebc21b26"
#define WRAP2 "5818a06b8e6550f308712b1df044b21b7d11d9b22792f1de0997"
#define ECDH_R(key) "8344a101381ca120" key WRAP2
#define EPK(kty, crv) "a401" kty "20" crv "21" X32 "22" Y32
#define K16 "6b69642d316b69642d316b69642d3131"
#define S32 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

struct variant {
    const char *what, *hex;
    int want;
};

static const struct variant variants[] = {
    {"the working group's GCM item", ITEM(GCM_BODY, "81" KW_R), MOTA_OK},
    {"GCM's alg unprotected beside h''",
     ITEM("40a20101"
          "05" IV12,
          "81" KW_R),
     MOTA_OK},
    {"a kid of 32 bytes", ITEM(GCM_BODY, "818340a20122045820" K16 K16 WRAP), MOTA_OK},
    {"a salt of 64 bytes", ITEM(GCM_BODY, "818344a101381ca220" EPK("02", "01") "335840" S32 S32 WRAP2), MOTA_OK},
    {"four recipients", ITEM(GCM_BODY, "84" KW_R KW_R KW_R KW_R), MOTA_OK},
    {"the KW recipient's protected an empty map", ITEM(GCM_BODY, "818341a0a2012204" KID1 WRAP), MOTA_OK},
    {"tag 97", "d86184" GCM_BODY "f681" KW_R, MOTA_ERR_ENC_INFO},
    {"tag 16 (COSE_Encrypt0)", "d084" GCM_BODY "f681" KW_R, MOTA_ERR_ENC_INFO},
    {"no tag", "84" GCM_BODY "f681" KW_R, MOTA_ERR_ENC_INFO},
    {"an array of 3", "d86083" GCM_BODY "f6", MOTA_ERR_ENC_INFO},
    {"a ciphertext that is not nil", "d86084" GCM_BODY "4081" KW_R, MOTA_ERR_ENC_INFO},
    {"no recipients", ITEM(GCM_BODY, "80"), MOTA_ERR_ENC_INFO},
    {"five recipients", ITEM(GCM_BODY, "85" KW_R KW_R KW_R KW_R KW_R), MOTA_ERR_ENC_INFO},
    {"recipients not an array", ITEM(GCM_BODY, "a0"), MOTA_ERR_ENC_INFO},
    {"a GCM IV of 11 bytes", ITEM("43a10101a1054bf14aab9d81d51f7ad943fe", "81" KW_R), MOTA_ERR_ENC_INFO},
    {"a GCM IV of 13 bytes", ITEM("43a10101a1054df14aab9d81d51f7ad943fe8700", "81" KW_R), MOTA_ERR_ENC_INFO},
    {"a GCM IV of 16 bytes", ITEM("43a10101a105" IV16, "81" KW_R), MOTA_ERR_ENC_INFO},
    {"a CTR IV of 12 bytes", ITEM("40a20139fffd05" IV12, "81" KW_R), MOTA_ERR_ENC_INFO},
    {"no IV", ITEM("43a10101a0", "81" KW_R), MOTA_ERR_ENC_INFO},
    {"CTR with an empty map protected", ITEM("41a0a20139fffd05" IV16, "81" KW_R), MOTA_ERR_ENC_INFO},
    {"CTR with its alg protected", ITEM("45a10139fffda105" IV16, "81" KW_R), MOTA_ERR_ENC_INFO},
    {"content alg A256GCM", ITEM("43a10103a105" IV12, "81" KW_R), MOTA_ERR_ENC_ALG},
    {"content alg missing", ITEM("40a105" IV12, "81" KW_R), MOTA_ERR_ENC_ALG},
    {"content alg as text", ITEM("4aa101674131323847434da105" IV12, "81" KW_R), MOTA_ERR_ENC_ALG},
    {"recipient alg A256KW", ITEM(GCM_BODY, "818340a2012404" KID1 WRAP), MOTA_ERR_ENC_ALG},
    {"recipient alg ECDH-ES+A256KW", ITEM(GCM_BODY, "818340a201381e04" KID1 WRAP), MOTA_ERR_ENC_ALG},
    {"crit in the body's protected map", ITEM("46a20101028103a105" IV12, "81" KW_R), MOTA_ERR_COSE_CRIT},
    {"crit in a recipient", ITEM(GCM_BODY, "818340a3012204" KID1 "028104" WRAP), MOTA_ERR_COSE_CRIT},
    {"alg in both maps",
     ITEM("43a10101a20101"
          "05" IV12,
          "81" KW_R),
     MOTA_ERR_COSE_DUP_LABEL},
    {"kid twice in one map", ITEM(GCM_BODY, "818340a3012204" KID1 "04" KID1 WRAP), MOTA_ERR_CBOR_DUP_KEY},
    {"IV twice in one map", ITEM("43a10101a205" IV12 "05" IV12, "81" KW_R), MOTA_ERR_CBOR_DUP_KEY},
    {"a kid of 33 bytes", ITEM(GCM_BODY, "818340a20122045821" K16 K16 "31" WRAP), MOTA_ERR_ENC_INFO},
    {"an empty kid", ITEM(GCM_BODY, "818340a201220440" WRAP), MOTA_ERR_ENC_INFO},
    {"a wrapped key of 23 bytes",
     ITEM(GCM_BODY, "818340a2012204" KID1 "581775603ffc9518d794713c8ca8a115a7fb32565a6d59534d"), MOTA_ERR_ENC_INFO},
    {"a wrapped key of 25 bytes",
     ITEM(GCM_BODY, "818340a2012204" KID1 "581975603ffc9518d794713c8ca8a115a7fb32565a6d59534d6200"), MOTA_ERR_ENC_INFO},
    {"a recipient of 4 elements", ITEM(GCM_BODY, "818440a2012204" KID1 WRAP "80"), MOTA_ERR_ENC_INFO},
    {"an unknown body label (3, content type)",
     ITEM("43a10101a2"
          "0300"
          "05" IV12,
          "81" KW_R),
     MOTA_ERR_ENC_INFO},
    {"a text label",
     ITEM("43a10101a2"
          "616100"
          "05" IV12,
          "81" KW_R),
     MOTA_ERR_ENC_INFO},
    {"a kid in the body",
     ITEM("43a10101a2"
          "04" KID1 "05" IV12,
          "81" KW_R),
     MOTA_ERR_ENC_INFO},
    {"an IV in a recipient", ITEM(GCM_BODY, "818340a3012204" KID1 "05" IV12 WRAP), MOTA_ERR_ENC_INFO},
    {"a KW recipient with a salt",
     ITEM(GCM_BODY, "818340a3012204" KID1 "3341"
                    "00" WRAP),
     MOTA_ERR_ENC_INFO},
    {"a KW recipient with its alg protected", ITEM(GCM_BODY, "818343a10122a104" KID1 WRAP), MOTA_ERR_ENC_INFO},
    {"an ECDH recipient without its key", ITEM(GCM_BODY, "818344a101381ca104456b69642d32" WRAP2), MOTA_ERR_ENC_INFO},
    {"a salt of 65 bytes", ITEM(GCM_BODY, "818344a101381ca220" EPK("02", "01") "335841" S32 S32 "00" WRAP2),
     MOTA_ERR_ENC_INFO},
    {"the ephemeral key an OKP", ITEM(GCM_BODY, "81" ECDH_R(EPK("01", "01"))), MOTA_ERR_ENC_EPK},
    {"the ephemeral key on P-384", ITEM(GCM_BODY, "81" ECDH_R(EPK("02", "02"))), MOTA_ERR_ENC_EPK},
    {"an x of 31 bytes",
     ITEM(GCM_BODY, "81" ECDH_R("a40102200121581f73024f415aa51529a66ccefd88f3f62a734492ff45f6ad37fd2888e73eaf19"
                                "22" Y32)),
     MOTA_ERR_ENC_EPK},
    {"a compressed point (y a boolean)",
     ITEM(GCM_BODY, "81" ECDH_R("a401022001"
                                "21" X32 "22f5")),
     MOTA_ERR_ENC_EPK},
    {"a key without y",
     ITEM(GCM_BODY, "81" ECDH_R("a301022001"
                                "21" X32)),
     MOTA_ERR_ENC_EPK},
    {"a key with a kid",
     ITEM(GCM_BODY, "81" ECDH_R("a501022001"
                                "21" X32 "22" Y32 "0241"
                                "00")),
     MOTA_ERR_ENC_EPK},
    {"a key with kty twice",
     ITEM(GCM_BODY, "81" ECDH_R("a4010201022001"
                                "21" X32)),
     MOTA_ERR_CBOR_DUP_KEY},
    {"a key that is not a map", ITEM(GCM_BODY, "81" ECDH_R("80")), MOTA_ERR_ENC_EPK},
    {"the key protected", ITEM(GCM_BODY, "81835850a201381c20" EPK("02", "01") "a0" WRAP2), MOTA_OK},
    {"the key in both maps", ITEM(GCM_BODY, "81835850a201381c20" EPK("02", "01") "a120" EPK("02", "01") WRAP2),
     MOTA_ERR_COSE_DUP_LABEL},
    {"a trailing byte", ITEM(GCM_BODY, "81" KW_R) "00", MOTA_ERR_ENC_INFO},
    {"a protected map with a byte after it", ITEM("44a1010100a105" IV12, "81" KW_R), MOTA_ERR_ENC_INFO},
    {"a head not in its shortest form", ITEM("43a10101a105580cf14aab9d81d51f7ad943fe87", "81" KW_R), MOTA_ERR_ENC_INFO},
    {"an indefinite-length array", "d8609f" GCM_BODY "f681" KW_R "ff", MOTA_ERR_ENC_INFO},
};

static int decode_hex(const char *hex)
{
    size_t n = strlen(hex) / 2;
    uint8_t *buf = malloc(n ? n : 1); /* exactly n bytes: ASan sees a read past them */
    struct mota_enc_info ei;
    assert_non_null(buf);
    unhex(hex, buf);
    int ret = mota_enc_info_decode(buf, n, &ei);
    if (ret != MOTA_OK) /* nothing of a refused item is left */
        assert_int_equal(ei.n_recipients, 0);
    free(buf);
    return ret;
}

static void test_encinfo_malformed_items_are_refused_with_their_reasons(void **state)
{
    (void)state;
    uint8_t big[MOTA_ENC_MAX_INFO + 1];
    struct mota_enc_info ei;
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
        int got = decode_hex(variants[i].hex);
        if (got != variants[i].want)
            fail_msg("%s: %d, not %d", variants[i].what, got, variants[i].want);
    }
    memset(big, 0, sizeof(big));
    assert_int_equal(mota_enc_info_decode(big, sizeof(big), &ei), MOTA_ERR_ENC_INFO);
    assert_int_equal(mota_enc_info_decode(NULL, 4, &ei), MOTA_ERR_ARG);
}

/* Every cut of the items (and of the manifests' copies) and every single-bit flip: refused or decoded, never
 * a read past the bytes given; what decodes still gives an AAD, a context and a verdict on its key. */
static void check_cuts_and_flips(const uint8_t *item, size_t n)
{
    struct mota_enc_keys keys = example_keys();
    keys.device_d = NULL; /* no ES-DH here: thousands of point multiplications for nothing */
    struct mota_enc_info ei;
    uint8_t *buf = malloc(n), out[MOTA_ENC_KDF_CONTEXT_MAX], cek[16];
    size_t len;
    assert_non_null(buf);
    for (size_t cut = 0; cut < n; cut++) {
        uint8_t *part = malloc(cut ? cut : 1);
        assert_non_null(part);
        memcpy(part, item, cut);
        assert_int_not_equal(mota_enc_info_decode(part, cut, &ei), MOTA_OK);
        free(part);
    }
    for (size_t bit = 0; bit < n * 8; bit++) {
        memcpy(buf, item, n);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        if (mota_enc_info_decode(buf, n, &ei) != MOTA_OK)
            continue;
        assert_int_equal(mota_enc_aad(&ei, out, MOTA_ENC_AAD_MAX, &len), MOTA_OK);
        for (size_t r = 0; r < ei.n_recipients; r++)
            if (ei.r[r].alg == MOTA_ENC_ECDH_ES_A128KW)
                assert_int_equal(mota_enc_kdf_context(&ei.r[r], out, sizeof(out), &len), MOTA_OK);
        int ret = mota_enc_cek(&ei, &keys, cek);
        assert_true(ret == MOTA_OK || ret == MOTA_ERR_ENC_UNWRAP || ret == MOTA_ERR_ENC_NO_KEY);
    }
    free(buf);
}

static void test_encinfo_every_cut_and_bit_flip_is_refused_or_read_within_bounds(void **state)
{
    (void)state;
    uint8_t buf[2048];
    const uint8_t *p = NULL;
    for (unsigned i = 0; i < 4; i++)
        check_cuts_and_flips(buf, read_item(i, buf, sizeof(buf)));
    size_t n = manifest_param19(3, buf, sizeof(buf), &p);
    check_cuts_and_flips(p, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encinfo_reads_the_working_groups_four_items),
        cmocka_unit_test(test_encinfo_reads_parameter_19_of_the_five_signed_manifests),
        cmocka_unit_test(test_encinfo_content_keys_of_kid_1_and_kid_2_decrypt_the_four_payloads),
        cmocka_unit_test(test_encinfo_ecdh_kek_is_the_drafts_and_a_salt_changes_it),
        cmocka_unit_test(test_encinfo_a_wrong_key_is_unwrap_and_no_key_for_a_recipient_is_no_key),
        cmocka_unit_test(test_encinfo_a_corrupted_ephemeral_point_is_refused_as_epk),
        cmocka_unit_test(test_encinfo_a_later_recipient_serves_when_an_earlier_one_cannot),
        cmocka_unit_test(test_encinfo_aad_and_kdf_context_are_the_drafts_bytes),
        cmocka_unit_test(test_encinfo_encoder_writes_the_four_items_byte_for_byte),
        cmocka_unit_test(test_encinfo_malformed_items_are_refused_with_their_reasons),
        cmocka_unit_test(test_encinfo_every_cut_and_bit_flip_is_refused_or_read_within_bounds),
    };
    char probe[512];
    snprintf(probe, sizeof(probe), "%s/README.md", MOTA_ENC_DATA_DIR);
    FILE *f = fopen(probe, "r");
    if (f == NULL) {
        printf("SKIPPED: ../shared/suit-encryption-examples is absent\n");
        return 0;
    }
    fclose(f);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
