/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: SUIT_Encryption_Info (mota/encinfo.h), the bytes of a manifest's parameter 19.
 * Input: the item itself. What decodes must give its AAD and every ECDH recipient's KDF context within the
 * header's bounds, and a content-key verdict from fixed keys (the examples' kid-1 KEK, a KEK without a kid,
 * and kid-2's P-256 key: mota_p256_ecdh is the host's real one, the fuzz build keeps it) that is one of the
 * four reasons; then the item is written again, and that reads back to the same fields and writes again to
 * the same bytes. Anything else aborts. */
#include "mota/encinfo.h"
#include "mota/err.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t kid2_d[32] = {0x60, 0xFE, 0x6D, 0xD6, 0xD8, 0x5D, 0x57, 0x40, 0xA5, 0x34, 0x9B,
                                   0x6F, 0x91, 0x26, 0x7E, 0xEA, 0xC5, 0xBA, 0x81, 0xB8, 0xCB, 0x53,
                                   0xEE, 0x24, 0x9E, 0x4B, 0x4E, 0xB1, 0x02, 0xC4, 0x76, 0xB3};

static struct mota_enc_keys fuzz_keys(void)
{
    static struct mota_kek keks[2];
    struct mota_enc_keys k = {
        .keks = keks, .n_keks = 2, .device_d = kid2_d, .device_kid = (const uint8_t *)"kid-2", .device_kid_len = 5};
    memcpy(keks[0].kid, "kid-1", 5);
    keks[0].kid_len = 5;
    memset(keks[0].k, 'a', sizeof(keks[0].k));
    memset(keks[1].k, 'b', sizeof(keks[1].k)); /* no kid: tried only for recipients without one */
    return k;
}

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
        if (r->alg == MOTA_ENC_ECDH_ES_A128KW) {
            s->r[i].epk[0] = 0x04;
            memcpy(s->r[i].epk + 1, r->epk_x, 32);
            memcpy(s->r[i].epk + 33, r->epk_y, 32);
        }
        memcpy(s->r[i].wrapped, r->wrapped, MOTA_ENC_WRAPPED_LEN);
    }
}

/* the fields the encoder writes, equal in a and b */
static bool same_fields(const struct mota_enc_info *a, const struct mota_enc_info *b)
{
    if (a->alg != b->alg || a->iv_len != b->iv_len || memcmp(a->iv, b->iv, a->iv_len) != 0 ||
        a->n_recipients != b->n_recipients)
        return false;
    for (size_t i = 0; i < a->n_recipients; i++) {
        const struct mota_enc_recipient *x = &a->r[i], *y = &b->r[i];
        if (x->alg != y->alg || x->kid_len != y->kid_len || (x->kid_len && memcmp(x->kid, y->kid, x->kid_len)) ||
            memcmp(x->wrapped, y->wrapped, MOTA_ENC_WRAPPED_LEN) != 0)
            return false;
        if (x->alg == MOTA_ENC_ECDH_ES_A128KW && (memcmp(x->epk_x, y->epk_x, 32) || memcmp(x->epk_y, y->epk_y, 32)))
            return false;
    }
    return true;
}

/* written again, read back, written again: the same fields, the same bytes */
static void reencode(const struct mota_enc_info *ei)
{
    static uint8_t out[MOTA_ENC_MAX_INFO], again[MOTA_ENC_MAX_INFO];
    struct mota_enc_info_spec s;
    struct mota_enc_info back;
    size_t len = 0, len2 = 0;
    spec_of(ei, &s);
    if (mota_enc_info_encode(&s, out, sizeof(out), &len) != MOTA_OK)
        abort(); /* whatever decodes can be written */
    if (mota_enc_info_decode(out, len, &back) != MOTA_OK || !same_fields(ei, &back))
        abort();
    spec_of(&back, &s);
    if (mota_enc_info_encode(&s, again, sizeof(again), &len2) != MOTA_OK || len2 != len || memcmp(out, again, len) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mota_enc_info ei;
    struct mota_enc_keys keys = fuzz_keys();
    uint8_t out[MOTA_ENC_KDF_CONTEXT_MAX], cek[MOTA_AES128_KEY_LEN];
    size_t len;
    /* a copy of exactly `size` bytes, so ASan sees any over-read */
    uint8_t *buf = malloc(size ? size : 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    int ret = mota_enc_info_decode(buf, size, &ei);
    if (mota_err_name(ret) == NULL)
        abort(); /* every result must be a known reason code */
    if (ret == MOTA_OK) {
        if (mota_enc_aad(&ei, out, MOTA_ENC_AAD_MAX, &len) != MOTA_OK)
            abort();
        for (size_t i = 0; i < ei.n_recipients; i++)
            if (ei.r[i].alg == MOTA_ENC_ECDH_ES_A128KW &&
                mota_enc_kdf_context(&ei.r[i], out, sizeof(out), &len) != MOTA_OK)
                abort();
        ret = mota_enc_cek(&ei, &keys, cek);
        if (ret != MOTA_OK && ret != MOTA_ERR_ENC_UNWRAP && ret != MOTA_ERR_ENC_NO_KEY && ret != MOTA_ERR_ENC_EPK)
            abort();
        reencode(&ei);
    }
    free(buf);
    return 0;
}
