/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provisioning record (agent/src/provision.c): version 3's keys of
 * encrypted payloads written and read back, records of versions 1 and 2 still
 * read (as records without keys), and malformed keys refused whole.
 */
#include "mota/crc32.h"
#include "mota/err.h"
#include "mota/le.h"
#include "mota/provision.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

/* A valid P-256 key pair (tests/fuzz/fuzz_device.h: d = SHA-256("mota fuzz device key")) */
static const uint8_t dev_d[32] = {0x19, 0x15, 0x06, 0x05, 0x41, 0xb6, 0x09, 0xbe, 0xe5, 0x08, 0x92,
                                  0x0c, 0xd2, 0x95, 0x14, 0x08, 0x27, 0x8a, 0xe7, 0x88, 0x9b, 0xb6,
                                  0xf9, 0xb5, 0xeb, 0xca, 0x25, 0xe0, 0xa0, 0x65, 0x1d, 0xc2};
static const uint8_t dev_pub[65] = {0x04, 0xf8, 0x3c, 0x1f, 0x85, 0x95, 0x6d, 0x49, 0xcf, 0xa7, 0x69, 0x25, 0xcc,
                                    0xbd, 0xdd, 0x27, 0x78, 0xcd, 0x73, 0x89, 0xb8, 0xa5, 0xfc, 0x6e, 0x3d, 0xe5,
                                    0x42, 0x24, 0x63, 0xc2, 0x6f, 0x83, 0xda, 0x84, 0x8e, 0x37, 0x9e, 0x73, 0x42,
                                    0xbd, 0x45, 0xfe, 0x19, 0x75, 0xe5, 0x85, 0x6c, 0xff, 0xca, 0x4b, 0xe6, 0xe6,
                                    0x5f, 0x38, 0x84, 0xd5, 0xa3, 0xa9, 0x4e, 0xee, 0x4d, 0xc5, 0x68, 0xfe, 0x29};
static const uint8_t dev_kid[16] = {0x80, 0x50, 0x0d, 0xb7, 0xa4, 0x08, 0x67, 0x53,
                                    0xe1, 0xdc, 0xc3, 0x28, 0x62, 0xe2, 0x4a, 0x9a}; /* its key id */

/* A record's contents: one trusted key, one model, two KEKs and the device key. */
static void identity(struct mota_provision *p)
{
    memset(p, 0, sizeof(*p));
    memset(p->vendor_id, 0x11, 16);
    memset(p->class_id, 0x22, 16);
    strcpy(p->name, "dev");
    p->n_keys = 1;
    p->keys[0].index = 1;
    memset(p->keys[0].pub, 0x04, sizeof(p->keys[0].pub));
    p->n_models = 1;
    strcpy(p->models[0], "network");
    p->max_trial_boots = 3;
    p->device_id_len = 12;
    memset(p->device_id, 0xD1, 12);
    p->n_keks = 2;
    memcpy(p->keks[0].kid, "kek-a", 5);
    p->keks[0].kid_len = 5;
    memset(p->keks[0].k, 0x42, 16);
    memset(p->keks[1].kid, 'b', MOTA_ENC_MAX_KID);
    p->keks[1].kid_len = MOTA_ENC_MAX_KID;
    memset(p->keks[1].k, 0x43, 16);
    p->has_device_key = true;
    memcpy(p->device_d, dev_d, 32);
    memcpy(p->device_pub, dev_pub, 65);
}

/* The record's crc made right again after a field was changed (a malformed record, as a writer made it). */
static void recrc(uint8_t *rec, size_t size)
{
    mota_put32(rec + size - 4u, mota_crc32(0, rec, size - 4u));
}

/* The record as an older version writes it: its size, its crc where the newer fields begin. */
static size_t as_version(uint8_t *rec, unsigned version)
{
    size_t size = version == 1 ? MOTA_PROVISION_V1_SIZE : MOTA_PROVISION_V2_SIZE;
    mota_put16(rec + offsetof(struct mota_provision_rec, version), (uint16_t)version);
    mota_put16(rec + offsetof(struct mota_provision_rec, size), (uint16_t)size);
    recrc(rec, size);
    memset(rec + size, 0xFF, sizeof(struct mota_provision_rec) - size); /* erased after it */
    return size;
}

static void test_a_version_3_record_keeps_its_keks_and_device_key_and_apply_points_the_agent_at_them(void **state)
{
    (void)state;
    struct mota_provision p, q;
    struct mota_agent_config cfg;
    uint8_t rec[sizeof(struct mota_provision_rec)];
    identity(&p);
    assert_int_equal(mota_provision_encode(&p, rec, sizeof(rec)), 816);
    assert_int_equal(mota_get16(rec + 4), 3);
    assert_int_equal(mota_provision_decode(rec, sizeof(rec), &q), MOTA_OK);
    assert_int_equal(q.n_keks, 2);
    assert_int_equal(q.keks[0].kid_len, 5);
    assert_memory_equal(q.keks[0].kid, "kek-a", 5);
    assert_memory_equal(q.keks[1].k, p.keks[1].k, 16);
    assert_true(q.has_device_key);
    assert_memory_equal(q.device_d, dev_d, 32);
    assert_memory_equal(q.device_kid, dev_kid, 16); /* computed: the id pack --encrypt-to writes */
    memset(&cfg, 0, sizeof(cfg));
    mota_provision_apply(&q, &cfg);
    assert_ptr_equal(cfg.enc.keks, q.keks);
    assert_int_equal(cfg.enc.n_keks, 2);
    assert_ptr_equal(cfg.enc.device_d, q.device_d);
    assert_ptr_equal(cfg.enc.device_pub, q.device_pub);
    assert_memory_equal(cfg.enc.device_kid, dev_kid, 16);
    assert_int_equal(cfg.enc.device_kid_len, 16);
    p.n_keks = 0; /* no keys at all: nothing for the agent to decrypt with */
    p.has_device_key = false;
    assert_int_equal(mota_provision_encode(&p, rec, sizeof(rec)), 816);
    assert_int_equal(mota_provision_decode(rec, sizeof(rec), &q), MOTA_OK);
    mota_provision_apply(&q, &cfg);
    assert_null(cfg.enc.keks);
    assert_null(cfg.enc.device_d);
    assert_null(cfg.enc.device_kid);
    mota_provision_wipe(&q);
    assert_int_equal(q.keks[1].k[0], 0);
}

static void test_version_1_and_2_records_are_still_read_as_records_without_keys(void **state)
{
    (void)state;
    struct mota_provision p, q;
    uint8_t rec[sizeof(struct mota_provision_rec)];
    for (unsigned v = 1; v <= 2; v++) {
        identity(&p);
        assert_int_equal(mota_provision_encode(&p, rec, sizeof(rec)), 816);
        size_t size = as_version(rec, v);
        assert_int_equal(mota_provision_decode(rec, size, &q), MOTA_OK);
        assert_string_equal(q.name, "dev");
        assert_int_equal(q.n_keys, 1);
        assert_int_equal(q.n_keks, 0);
        assert_false(q.has_device_key);
        assert_int_equal(q.device_id_len, 12);
        if (v == 1)
            assert_string_equal(q.vendor_name, "");
    }
    identity(&p);
    assert_int_equal(mota_provision_encode(&p, rec, sizeof(rec)), 816);
    mota_put16(rec + offsetof(struct mota_provision_rec, version), 4); /* a version this firmware predates */
    recrc(rec, sizeof(rec));
    assert_int_equal(mota_provision_decode(rec, sizeof(rec), &q), MOTA_ERR_PROVISION);
}

/* p's record with one byte at off set to v (crc made right): what decode says. */
static int decode_with(const struct mota_provision *p, size_t off, uint8_t v)
{
    struct mota_provision q;
    uint8_t rec[sizeof(struct mota_provision_rec)];
    assert_int_equal(mota_provision_encode(p, rec, sizeof(rec)), 816);
    rec[off] = v;
    recrc(rec, sizeof(rec));
    int ret = mota_provision_decode(rec, sizeof(rec), &q);
    if (ret != MOTA_OK) /* refused whole: nothing of it kept */
        assert_int_equal(q.n_keks + q.n_keys + q.has_device_key + q.keks[0].k[0] + q.device_d[0], 0);
    return ret;
}

static void test_malformed_keys_are_refused_whole(void **state)
{
    (void)state;
    struct mota_provision p;
    const size_t keks = offsetof(struct mota_provision_rec, keks), kek = 52;
    identity(&p);
    assert_int_equal(decode_with(&p, offsetof(struct mota_provision_rec, n_keks), 3), MOTA_ERR_PROVISION);
    assert_int_equal(decode_with(&p, keks, 0), MOTA_ERR_PROVISION);        /* kid of 0 bytes */
    assert_int_equal(decode_with(&p, keks + kek, 33), MOTA_ERR_PROVISION); /* kid over 32 bytes */
    assert_int_equal(decode_with(&p, offsetof(struct mota_provision_rec, device_key), 2), MOTA_ERR_PROVISION);
    size_t pub = offsetof(struct mota_provision_rec, device_pub);
    assert_int_equal(decode_with(&p, pub, 0x02), MOTA_ERR_PROVISION);               /* compressed form */
    assert_int_equal(decode_with(&p, pub + 1, dev_pub[1] ^ 1), MOTA_ERR_PROVISION); /* another point */
    assert_int_equal(decode_with(&p, offsetof(struct mota_provision_rec, device_d) + 31, dev_d[31] ^ 1),
                     MOTA_ERR_PROVISION);                          /* another key's d */
    memset(p.device_d, 0, 32);                                     /* d = 0 is no key */
    assert_int_equal(decode_with(&p, 0, 'M'), MOTA_ERR_PROVISION); /* as encoded */
    identity(&p);
    p.has_device_key = false; /* no device key: its bytes are not looked at */
    assert_int_equal(decode_with(&p, pub, 0x02), MOTA_OK);
    struct mota_provision bad;
    uint8_t rec[sizeof(struct mota_provision_rec)];
    identity(&bad);
    bad.keks[0].kid_len = 0; /* encode refuses what decode would */
    assert_int_equal(mota_provision_encode(&bad, rec, sizeof(rec)), MOTA_ERR_ARG);
    bad.keks[0].kid_len = 5;
    bad.n_keks = 3;
    assert_int_equal(mota_provision_encode(&bad, rec, sizeof(rec)), MOTA_ERR_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_version_3_record_keeps_its_keks_and_device_key_and_apply_points_the_agent_at_them),
        cmocka_unit_test(test_version_1_and_2_records_are_still_read_as_records_without_keys),
        cmocka_unit_test(test_malformed_keys_are_refused_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
