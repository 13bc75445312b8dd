/* SPDX-License-Identifier: Apache-2.0 */
/* mota's cipher modes (crypto/src/cipher.c) against published vectors: RFC 3394, NIST SP 800-38D (the
 * McGrew-Viega GCM cases), RFC 5869, and the SUIT working group's encrypted payloads
 * (draft-ietf-suit-firmware-encryption examples: the content keys of kid-1 and the ES-DH KDF); then what a
 * transfer that resumes needs: CTR from any offset, GCM from a saved state. */
#include "mota/cipher.h"
#include "mota/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hex.h"
#include <stdio.h>
#include <string.h>

static const char firmware[] = "This is a real firmware image.";

static void test_key_wrap_matches_rfc3394_and_refuses_the_wrong_kek(void **state)
{
    (void)state;
    uint8_t kek[16], key[16], want[24], got[24], back[16];
    unhex("000102030405060708090A0B0C0D0E0F", kek);
    unhex("00112233445566778899AABBCCDDEEFF", key);
    unhex("1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5", want); /* RFC 3394 4.1 */
    assert_int_equal(mota_kw_wrap(kek, key, 16, got), MOTA_OK);
    assert_memory_equal(got, want, 24);
    assert_int_equal(mota_kw_unwrap(kek, want, 24, back), MOTA_OK);
    assert_memory_equal(back, key, 16);
    kek[0] ^= 1;
    memset(back, 0x55, sizeof(back));
    assert_int_equal(mota_kw_unwrap(kek, want, 24, back), MOTA_ERR_ENC_UNWRAP);
    for (unsigned i = 0; i < 16; i++) /* nothing of a key that failed its check */
        assert_int_equal(back[i], 0x55);
    assert_int_equal(mota_kw_unwrap(kek, want, 20, back), MOTA_ERR_ARG);
    assert_int_equal(mota_kw_unwrap(kek, want, 16, back), MOTA_ERR_ARG);
}

/* the SUIT examples' CEKs, unwrapped with kid-1's key (16 x 'a') */
static void test_suit_examples_content_keys_unwrap_with_kid_1(void **state)
{
    (void)state;
    uint8_t kek[16], wrapped[24], cek[16], want[16];
    memset(kek, 'a', sizeof(kek));
    unhex("75603FFC9518D794713C8CA8A115A7FB32565A6D59534D62", wrapped); /* aes-kw-aes-gcm */
    unhex("15f785b5c931414411b4b71373a9c0f7", want);
    assert_int_equal(mota_kw_unwrap(kek, wrapped, 24, cek), MOTA_OK);
    assert_memory_equal(cek, want, 16);
    unhex("CE34035CE5C2E2666E46D4C131FC561DD190A6D26CFA1990", wrapped); /* aes-kw-aes-ctr */
    unhex("261de6165070fb8951ec5d7b92a065fe", want);
    assert_int_equal(mota_kw_unwrap(kek, wrapped, 24, cek), MOTA_OK);
    assert_memory_equal(cek, want, 16);
}

static void test_suit_example_ctr_payload_decrypts_from_any_offset(void **state)
{
    (void)state;
    struct mota_aes128 aes;
    struct mota_ctr ctr;
    uint8_t cek[16], iv[16], ct[30], pt[30];
    unhex("261de6165070fb8951ec5d7b92a065fe", cek);
    unhex("DAE613B2E0DC55F4322BE38BDBA9DC68", iv);
    unhex("2BB8DB522AE978246CC775C3B0241BD4B0333FFDD2DB70C7EE7A4966E3B7", ct);
    mota_aes128_setkey(&aes, cek, false);
    for (unsigned from = 0; from < sizeof(ct); from++) { /* a resumed transfer starts anywhere */
        memset(pt, 0, sizeof(pt));
        mota_ctr_start(&ctr, &aes, iv, from);
        mota_ctr_xor(&ctr, ct + from, pt + from, 7 < sizeof(ct) - from ? 7 : sizeof(ct) - from);
        mota_ctr_xor(&ctr, ct + from + 7, pt + from + 7, from + 7 < sizeof(ct) ? sizeof(ct) - from - 7 : 0);
        assert_memory_equal(pt + from, firmware + from, sizeof(ct) - from);
    }
    mota_cipher_wipe(&aes, sizeof(aes));
}

static void test_suit_example_gcm_payload_decrypts_and_a_changed_bit_fails_its_tag(void **state)
{
    (void)state;
    struct mota_aes128 aes;
    struct mota_gcm gcm;
    uint8_t cek[16], iv[12], aad[14], ct[46], pt[30];
    unhex("15f785b5c931414411b4b71373a9c0f7", cek);
    unhex("F14AAB9D81D51F7AD943FE87", iv);
    unhex("8367456e637279707443a1010140", aad); /* Enc_structure ["Encrypt", h'a10101', h''] */
    unhex("758C4B7BBAE2C4C1D462423E0F0DC3164FFA7B85BB94D4BD6D7ED26AB32F"
          "EB063385D4D3465927EC82CB5E198A59",
          ct);
    mota_aes128_setkey(&aes, cek, false);
    mota_gcm_start(&gcm, &aes, iv, true, aad, sizeof(aad));
    mota_gcm_update(&gcm, ct, pt, 11);
    mota_gcm_update(&gcm, ct + 11, pt + 11, 19);
    assert_int_equal(mota_gcm_finish(&gcm, ct + 30), MOTA_OK);
    assert_memory_equal(pt, firmware, 30);
    for (unsigned bit = 0; bit < 8 * sizeof(ct); bit += 13) { /* the text, then the tag */
        ct[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        mota_gcm_start(&gcm, &aes, iv, true, aad, sizeof(aad));
        mota_gcm_update(&gcm, ct, pt, 30);
        assert_int_equal(mota_gcm_finish(&gcm, ct + 30), MOTA_ERR_DECRYPT_TAG);
        ct[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    mota_gcm_start(&gcm, &aes, iv, true, aad, 13); /* the additional data is authenticated too */
    mota_gcm_update(&gcm, ct, pt, 30);
    assert_int_equal(mota_gcm_finish(&gcm, ct + 30), MOTA_ERR_DECRYPT_TAG);
}

/* McGrew-Viega test case 4 (SP 800-38D's reference vectors): 60 bytes with 20 of additional data */
static void test_gcm_encrypts_the_reference_case_and_resumes_from_a_saved_state(void **state)
{
    (void)state;
    struct mota_aes128 aes;
    struct mota_gcm gcm;
    uint8_t key[16], iv[12], aad[20], pt[60], want[60], tag[16], got[60], out[16], st[16];
    unhex("feffe9928665731c6d6a8f9467308308", key);
    unhex("cafebabefacedbaddecaf888", iv);
    unhex("feedfacedeadbeeffeedfacedeadbeefabaddad2", aad);
    unhex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16a"
          "edf5aa0de657ba637b39",
          pt);
    unhex("42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba3"
          "0b396a0aac973d58e091",
          want);
    unhex("5bc94fbc3221a5db94fae95ae7121a47", tag);
    mota_aes128_setkey(&aes, key, false);
    mota_gcm_start(&gcm, &aes, iv, false, aad, sizeof(aad));
    mota_gcm_update(&gcm, pt, got, 37); /* then a power cut: the state at the last whole block */
    uint64_t at = mota_gcm_state(&gcm, st);
    assert_int_equal(at, 32);
    mota_gcm_update(&gcm, pt + 37, got + 37, 23);
    assert_int_equal(mota_gcm_finish(&gcm, out), MOTA_OK);
    assert_memory_equal(got, want, 60);
    assert_memory_equal(out, tag, 16);
    mota_gcm_start(&gcm, &aes, iv, true, aad, sizeof(aad)); /* decrypting, resumed at 32 from that state */
    assert_int_equal(mota_gcm_resume(&gcm, st, at), MOTA_OK);
    memset(got, 0, sizeof(got));
    mota_gcm_update(&gcm, want + 32, got + 32, 28);
    assert_memory_equal(got + 32, pt + 32, 28);
    assert_int_equal(mota_gcm_finish(&gcm, tag), MOTA_OK);
    assert_int_equal(mota_gcm_resume(&gcm, st, 31), MOTA_ERR_ARG);
}

/* any split of the text gives the same ciphertext and tag, and decrypting in place gives the text back */
static void test_gcm_gives_the_same_bytes_and_tag_whatever_the_pieces(void **state)
{
    (void)state;
    static uint8_t text[1000], one[1000], pieces[1000];
    struct mota_aes128 aes;
    struct mota_gcm gcm;
    uint8_t key[16], iv[12], tag1[16], tag2[16];
    memset(key, 0x42, sizeof(key));
    memset(iv, 0x24, sizeof(iv));
    for (unsigned i = 0; i < sizeof(text); i++)
        text[i] = (uint8_t)(i * 7u + 3u);
    mota_aes128_setkey(&aes, key, false);
    mota_gcm_start(&gcm, &aes, iv, false, key, 5);
    mota_gcm_update(&gcm, text, one, sizeof(text));
    assert_int_equal(mota_gcm_finish(&gcm, tag1), MOTA_OK);
    mota_gcm_start(&gcm, &aes, iv, false, key, 5);
    for (size_t at = 0, n = 1; at < sizeof(text); at += n, n = n * 3 % 41 + 1) {
        n = n < sizeof(text) - at ? n : sizeof(text) - at;
        mota_gcm_update(&gcm, text + at, pieces + at, n);
    }
    assert_int_equal(mota_gcm_finish(&gcm, tag2), MOTA_OK);
    assert_memory_equal(one, pieces, sizeof(one));
    assert_memory_equal(tag1, tag2, 16);
    mota_gcm_start(&gcm, &aes, iv, true, key, 5);
    mota_gcm_update(&gcm, pieces, pieces, 333);
    mota_gcm_update(&gcm, pieces + 333, pieces + 333, sizeof(pieces) - 333);
    assert_int_equal(mota_gcm_finish(&gcm, tag1), MOTA_OK);
    assert_memory_equal(pieces, text, sizeof(text));
}

/* Decrypting ahead with the stream and authenticating behind with absorb, in any pieces, stopped at a
 * saved state and resumed with the stream put back where decryption stood, is the one-pass decryption. */
static void test_gcm_split_into_stream_and_absorb_decrypts_and_resumes_like_one_pass(void **state)
{
    (void)state;
    static uint8_t text[1000], ct[1000], out[1000];
    struct mota_aes128 aes;
    struct mota_gcm gcm;
    uint8_t key[16], iv[12], tag[16], saved[16];
    memset(key, 0x17, sizeof(key));
    memset(iv, 0x71, sizeof(iv));
    for (unsigned i = 0; i < sizeof(text); i++)
        text[i] = (uint8_t)(i * 13u + 1u);
    mota_aes128_setkey(&aes, key, false);
    mota_gcm_start(&gcm, &aes, iv, false, iv, 7);
    mota_gcm_update(&gcm, text, ct, sizeof(text));
    assert_int_equal(mota_gcm_finish(&gcm, tag), MOTA_OK);
    mota_gcm_start(&gcm, &aes, iv, true, iv, 7);
    mota_gcm_stream(&gcm, ct, out, 700); /* decrypted ahead */
    mota_gcm_absorb(&gcm, ct, 5);        /* consumed behind, in odd pieces, some inside one block */
    mota_gcm_absorb(&gcm, ct + 5, 3);
    mota_gcm_absorb(&gcm, ct + 8, 504);
    assert_int_equal(mota_gcm_state(&gcm, saved), 512);
    mota_gcm_absorb(&gcm, ct + 512, 100);
    /* a reset: the state at 512, decryption resumed at 600 where the consumer stopped */
    mota_gcm_start(&gcm, &aes, iv, true, iv, 7);
    assert_int_equal(mota_gcm_resume(&gcm, saved, 512), MOTA_OK);
    mota_gcm_stream_at(&gcm, 600);
    mota_gcm_stream(&gcm, ct + 600, out + 600, sizeof(ct) - 600);
    mota_gcm_absorb(&gcm, ct + 512, sizeof(ct) - 512);
    assert_int_equal(mota_gcm_finish(&gcm, tag), MOTA_OK);
    assert_memory_equal(out, text, sizeof(text));
    tag[3] ^= 1;
    mota_gcm_start(&gcm, &aes, iv, true, iv, 7);
    mota_gcm_absorb(&gcm, ct, sizeof(ct));
    assert_int_equal(mota_gcm_finish(&gcm, tag), MOTA_ERR_DECRYPT_TAG);
}

/* RFC 5869 A.1, and the SUIT ES-DH example's KEK from its shared secret and KDF context */
static void test_hkdf_matches_rfc5869_and_the_suit_es_dh_kek(void **state)
{
    (void)state;
    uint8_t ikm[22], salt[13], info[10], okm[42], want[42], z[32], ctx[42], kek[16];
    memset(ikm, 0x0b, sizeof(ikm));
    unhex("000102030405060708090a0b0c", salt);
    unhex("f0f1f2f3f4f5f6f7f8f9", info);
    unhex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865", want);
    assert_int_equal(mota_hkdf_sha256(salt, sizeof(salt), ikm, sizeof(ikm), info, sizeof(info), okm, 42), MOTA_OK);
    assert_memory_equal(okm, want, 42);
    unhex("13bd7df22a0b2fa132a02083de47e209ae79231de158037f51aa663ae758fcd7", z);
    unhex("842283f6f6f683f6f6f683188044a101381c5753554954205061796c6f616420456e6372797074696f6e", ctx);
    unhex("bb63763fc3913868040a1d63cf3a72ba", want);
    assert_int_equal(mota_hkdf_sha256(NULL, 0, z, sizeof(z), ctx, sizeof(ctx), kek, sizeof(kek)), MOTA_OK);
    assert_memory_equal(kek, want, 16);
    assert_int_equal(mota_hkdf_sha256(NULL, 0, z, sizeof(z), ctx, sizeof(ctx), okm, 255u * 32u + 1u), MOTA_ERR_ARG);
}

/* The SUIT ES-DH example end to end: kid-2's private key and the sender's ephemeral point give Z, the COSE KDF
 * context gives the KEK, which unwraps the content key; a point off the curve is refused as such */
static void test_suit_es_dh_example_gives_its_content_key_and_refuses_a_point_off_the_curve(void **state)
{
    (void)state;
    uint8_t d[32], epk[65], z[32], want[32], ctx[42], kek[16], wrapped[24], cek[16];
    unhex("60FE6DD6D85D5740A5349B6F91267EEAC5BA81B8CB53EE249E4B4EB102C476B3", d);
    epk[0] = 0x04;
    unhex("73024f415aa51529a66ccefd88f3f62a734492ff45f6ad37fd2888e73eaf19da"
          "4005b48a6fd091aa6abfe3cfbeede88b347e521d43405fdbd7d2cff0ebc21b26",
          epk + 1);
    unhex("13bd7df22a0b2fa132a02083de47e209ae79231de158037f51aa663ae758fcd7", want);
    assert_int_equal(mota_p256_ecdh(d, epk, z), MOTA_OK);
    assert_memory_equal(z, want, 32);
    unhex("842283f6f6f683f6f6f683188044a101381c5753554954205061796c6f616420456e6372797074696f6e", ctx);
    assert_int_equal(mota_hkdf_sha256(NULL, 0, z, sizeof(z), ctx, sizeof(ctx), kek, sizeof(kek)), MOTA_OK);
    unhex("a06b8e6550f308712b1df044b21b7d11d9b22792f1de0997", wrapped);
    assert_int_equal(mota_kw_unwrap(kek, wrapped, 24, cek), MOTA_OK);
    unhex("15f785b5c931414411b4b71373a9c0f7", want);
    assert_memory_equal(cek, want, 16);
    epk[64] ^= 1;
    assert_int_equal(mota_p256_ecdh(d, epk, z), MOTA_ERR_ENC_EPK);
    epk[64] ^= 1;
    epk[0] = 0x02;
    assert_int_equal(mota_p256_ecdh(d, epk, z), MOTA_ERR_ENC_EPK);
    epk[0] = 0x04;
    memset(d, 0, sizeof(d));
    assert_int_equal(mota_p256_ecdh(d, epk, z), MOTA_ERR_KEY_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_wrap_matches_rfc3394_and_refuses_the_wrong_kek),
        cmocka_unit_test(test_suit_examples_content_keys_unwrap_with_kid_1),
        cmocka_unit_test(test_suit_example_ctr_payload_decrypts_from_any_offset),
        cmocka_unit_test(test_suit_example_gcm_payload_decrypts_and_a_changed_bit_fails_its_tag),
        cmocka_unit_test(test_gcm_encrypts_the_reference_case_and_resumes_from_a_saved_state),
        cmocka_unit_test(test_gcm_gives_the_same_bytes_and_tag_whatever_the_pieces),
        cmocka_unit_test(test_gcm_split_into_stream_and_absorb_decrypts_and_resumes_like_one_pass),
        cmocka_unit_test(test_hkdf_matches_rfc5869_and_the_suit_es_dh_kek),
        cmocka_unit_test(test_suit_es_dh_example_gives_its_content_key_and_refuses_a_point_off_the_curve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
