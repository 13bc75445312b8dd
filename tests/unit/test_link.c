/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device's link server driven frame by frame, as a faulty line would:
 * answers lost, frames repeated late, frames after the upload ended. Each
 * case is one that a push through the line emulator can hit by chance.
 */
#include "agent_fixture.h"
#include "mota/cbor.h"
#include "mota/link.h"
#include "mota/proto_keys.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

struct wire {
    uint8_t to_dev[4096];
    size_t to_dev_len, to_dev_off;
    uint8_t to_host[64 * 1024];
    size_t to_host_len;
};

static int wire_read(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms)
{
    struct wire *w = ctx;
    (void)timeout_ms;
    size_t n = w->to_dev_len - w->to_dev_off;
    if (n > len)
        n = len;
    memcpy(buf, w->to_dev + w->to_dev_off, n);
    w->to_dev_off += n;
    return (int)n;
}

static int wire_write(void *ctx, const uint8_t *buf, size_t len)
{
    struct wire *w = ctx;
    if (len > sizeof(w->to_host) - w->to_host_len)
        return MOTA_ERR_TRANSPORT;
    memcpy(w->to_host + w->to_host_len, buf, len);
    w->to_host_len += len;
    return MOTA_OK;
}

struct bench {
    struct mota_posix_device *d;
    struct wire w;
    struct mota_transport tr;
    struct mota_link link;
    uint16_t seq;
    uint8_t *c;
    size_t c_len;
};

struct answer {
    int status;
    uint32_t word0, word1; /* the first two body words, when present */
    size_t body_len;
    uint8_t body[MOTA_LINK_MAX_PAYLOAD];
    unsigned n_events; /* event frames before the answer, about this request */
    uint8_t phases[8];
    uint32_t event_offset;
};

/* One request in, every frame the device sends back decoded; the last one returned. */
static int request(struct bench *b, uint8_t cmd, uint16_t seq, const uint8_t *p, size_t n, struct answer *a)
{
    static uint8_t enc[MOTA_PROTO_ENCODED_MAX(MOTA_LINK_MAX_PAYLOAD)];
    struct mota_frame f = {.kind = MOTA_KIND_REQUEST, .cmd = cmd, .seq = seq, .len = (uint16_t)n, .payload = p};
    size_t len = mota_frame_encode(&f, enc, sizeof(enc));
    assert_true(len > 0 && len <= sizeof(b->w.to_dev));
    memcpy(b->w.to_dev, enc, len);
    b->w.to_dev_len = len;
    b->w.to_dev_off = 0;
    b->w.to_host_len = 0;
    while (b->w.to_dev_off < b->w.to_dev_len || b->link.pending_off < b->link.pending_len)
        assert_int_equal(mota_link_poll(&b->link, 0), MOTA_OK);
    static uint8_t dbuf[MOTA_PROTO_ENCODED_MAX(MOTA_LINK_MAX_PAYLOAD)];
    struct mota_deframer df;
    mota_deframer_init(&df, dbuf, sizeof(dbuf));
    size_t off = 0, answers = 0;
    memset(a, 0, sizeof(*a));
    while (off < b->w.to_host_len) {
        size_t used = 0;
        struct mota_frame r;
        int got = mota_deframer_push(&df, b->w.to_host + off, b->w.to_host_len - off, &used, &r);
        off += used;
        if (!got)
            continue;
        if (r.kind == MOTA_KIND_EVENT) {
            /* about this request, before its answer, never mistaken for it */
            assert_int_equal(answers, 0);
            assert_int_equal(r.seq, seq);
            assert_int_equal(r.cmd, MOTA_CMD_DATA);
            assert_int_equal(r.len, MOTA_PROTO_EVENT_LEN);
            assert_true(a->n_events < sizeof(a->phases));
            a->phases[a->n_events++] = r.payload[0];
            a->event_offset = mota_get32(r.payload + 1);
            continue;
        }
        assert_int_equal(r.kind, MOTA_KIND_RESPONSE);
        assert_int_equal(r.cmd, cmd);
        assert_int_equal(r.seq, seq);
        assert_true(r.len >= 2);
        a->status = (int16_t)mota_get16(r.payload);
        a->body_len = r.len - 2u;
        a->word0 = r.len >= 6 ? mota_get32(r.payload + 2) : 0;
        a->word1 = r.len >= 10 ? mota_get32(r.payload + 6) : 0;
        memcpy(a->body, r.payload + 2, a->body_len);
        answers++;
    }
    assert_int_equal(answers, 1);
    return a->status;
}

static struct bench *bench_with(const struct container_opts *o)
{
    struct bench *b = calloc(1, sizeof(*b));
    b->d = dev_new(1);
    assert_int_equal(dev_boot(b->d), MOTA_OK);
    b->tr.read = wire_read;
    b->tr.write = wire_write;
    b->tr.ctx = &b->w;
    mota_link_init(&b->link, &b->d->device.agent, &b->tr, &b->d->sys, "test");
    b->c = make_container(o, &b->c_len);
    struct answer a;
    uint8_t hello[3] = {MOTA_PROTO_VERSION, 0x00, 0x04}; /* 1 KiB frames */
    assert_int_equal(request(b, MOTA_CMD_HELLO, ++b->seq, hello, sizeof(hello), &a), MOTA_OK);
    return b;
}

static struct bench *bench_new(const struct mota_p256_key *key)
{
    struct container_opts o = {.seq = 5, .key = key, .model = {.code_bytes = 20000, .params_bytes = 3000}};
    return bench_with(&o);
}

static void bench_free(struct bench *b)
{
    free(b->c);
    dev_free(b->d);
    free(b);
}

static int begin(struct bench *b, struct answer *a)
{
    uint8_t p[MOTA_PROTO_BEGIN_FLAGS_LEN];
    struct mota_begin req = {(uint32_t)b->c_len, {0}, 0};
    manifest_digest(b->c, b->c_len, req.digest);
    return request(b, MOTA_CMD_BEGIN, ++b->seq, p, mota_begin_encode(&req, p), a);
}

#define CHUNK 1000u

static int data(struct bench *b, uint32_t off, struct answer *a)
{
    static uint8_t p[4 + CHUNK];
    size_t n = b->c_len - off < CHUNK ? b->c_len - off : CHUNK;
    mota_put32(p, off);
    memcpy(p + 4, b->c + off, n);
    return request(b, MOTA_CMD_DATA, ++b->seq, p, 4 + n, a);
}

/* Sends from off to the end, following the device's offsets; the last answer. */
static int send_rest(struct bench *b, uint32_t off, struct answer *a)
{
    int st = MOTA_OK;
    while (off < b->c_len) {
        if ((st = data(b, off, a)) != MOTA_OK)
            return st;
        off = a->word0;
    }
    return st;
}

static void active_seq_is(struct bench *b, uint64_t seq)
{
    struct mota_agent_model_info info;
    assert_int_equal(mota_agent_model_info(&b->d->device.agent, 0, &info), MOTA_OK);
    assert_int_equal(info.seq, seq);
}

static void test_a_data_frame_repeated_after_the_upload_ended_gets_the_end_offset(void **state)
{
    (void)state;
    struct bench *b = bench_new(NULL);
    struct answer a;
    assert_int_equal(begin(b, &a), MOTA_OK);
    assert_int_equal(send_rest(b, 0, &a), MOTA_OK);
    assert_int_equal(a.word0, b->c_len);
    active_seq_is(b, 5);
    uint64_t writes = b->d->pf.ops;
    /* the last answer was lost: the host sends the last frames again */
    uint32_t last = (uint32_t)((b->c_len - 1) / CHUNK * CHUNK);
    assert_int_equal(data(b, last, &a), MOTA_OK);
    assert_int_equal(a.word0, b->c_len);
    /* and a late copy of an earlier one */
    assert_int_equal(data(b, last - CHUNK, &a), MOTA_OK);
    assert_int_equal(a.word0, b->c_len);
    assert_int_equal(b->d->pf.ops, writes); /* nothing written again */
    active_seq_is(b, 5);
    bench_free(b);
}

static void test_a_late_copy_of_the_first_frame_does_not_restart_the_upload(void **state)
{
    (void)state;
    struct bench *b = bench_new(NULL);
    struct answer a;
    assert_int_equal(begin(b, &a), MOTA_OK);
    uint32_t off = 0;
    for (int i = 0; i < 8; i++) {
        assert_int_equal(data(b, off, &a), MOTA_OK);
        off = a.word0;
    }
    assert_true(off > 4 * CHUNK);
    /* a duplicate of frame 0, delayed in the line */
    assert_int_equal(data(b, 0, &a), MOTA_ERR_UPLOAD_OFFSET);
    assert_int_equal(a.word0, off); /* where the device stands, unchanged */
    assert_int_equal(a.word1, 0);
    assert_int_equal(send_rest(b, off, &a), MOTA_OK);
    assert_int_equal(a.word0, b->c_len);
    active_seq_is(b, 5);
    bench_free(b);
}

static void test_a_data_frame_after_a_refused_upload_gets_the_refusal_reason(void **state)
{
    (void)state;
    dev_keys();
    struct mota_p256_key stranger;
    mota_key_generate(&stranger);
    struct bench *b = bench_new(&stranger);
    struct answer a;
    assert_int_equal(begin(b, &a), MOTA_OK);
    int refused = send_rest(b, 0, &a);
    assert_int_equal(refused, MOTA_ERR_KEY_UNKNOWN);
    /* the refusal was lost on the way back; the next frames still say why */
    assert_int_equal(data(b, CHUNK, &a), refused);
    assert_int_equal(data(b, 0, &a), refused);
    assert_int_equal(mota_agent_model_info(&b->d->device.agent, 0, &(struct mota_agent_model_info){0}),
                     MOTA_ERR_NO_MODEL);
    bench_free(b);
}

static void test_data_before_any_begin_is_answered_no_session(void **state)
{
    (void)state;
    struct bench *b = bench_new(NULL);
    struct answer a;
    assert_int_equal(data(b, 0, &a), MOTA_ERR_PROTO_NO_SESSION);
    assert_int_equal(begin(b, &a), MOTA_OK);
    assert_int_equal(data(b, 0, &a), MOTA_OK);
    /* a new peer starts over: its frames need a BEGIN of their own */
    mota_link_reconnect(&b->link);
    uint8_t hello[3] = {MOTA_PROTO_VERSION, 0x00, 0x04};
    assert_int_equal(request(b, MOTA_CMD_HELLO, ++b->seq, hello, sizeof(hello), &a), MOTA_OK);
    assert_int_equal(data(b, CHUNK, &a), MOTA_ERR_PROTO_NO_SESSION);
    bench_free(b);
}

static void test_the_last_data_frame_is_preceded_by_one_event_per_phase_and_the_others_by_none(void **state)
{
    (void)state;
    struct container_opts o = {.seq = 5, .selftest = true, .model = {.code_bytes = 20000, .params_bytes = 3000}};
    struct bench *b = bench_with(&o);
    struct answer a;
    assert_int_equal(begin(b, &a), MOTA_OK);
    uint32_t off = 0;
    while (off + CHUNK < b->c_len) {
        assert_int_equal(data(b, off, &a), MOTA_OK);
        assert_int_equal(a.n_events, 0);
        off = a.word0;
    }
    /* request() checks each event carries the request's seq and cmd DATA and comes before the answer */
    assert_int_equal(data(b, off, &a), MOTA_OK);
    assert_int_equal(a.word0, b->c_len);
    assert_int_equal(a.n_events, 4);
    assert_memory_equal(
        a.phases, ((uint8_t[]){MOTA_PHASE_VERIFY, MOTA_PHASE_INSTALL, MOTA_PHASE_SELFTEST, MOTA_PHASE_COMMIT}), 4);
    assert_int_equal(a.event_offset, b->c_len);
    /* the verdict again for a late copy: no work, no events */
    assert_int_equal(data(b, off, &a), MOTA_OK);
    assert_int_equal(a.n_events, 0);
    bench_free(b);
}

static void test_a_refusal_names_its_facts_in_the_answer_and_again_for_late_frames(void **state)
{
    (void)state;
    struct bench *b = bench_new(NULL); /* signed by the key of index 1 */
    struct answer a;
    static const char want[] = "key_index: device 2, model 1";
    assert_int_equal(mota_agent_revoke_keys(&b->d->device.agent, 2), MOTA_OK);
    assert_int_equal(begin(b, &a), MOTA_OK);
    assert_int_equal(send_rest(b, 0, &a), MOTA_ERR_KEY_REVOKED);
    assert_int_equal(a.body_len, strlen(want));
    assert_memory_equal(a.body, want, strlen(want));
    /* the answer was lost: a later frame of the same upload hears the same facts */
    assert_int_equal(data(b, CHUNK, &a), MOTA_ERR_KEY_REVOKED);
    assert_int_equal(a.body_len, strlen(want));
    assert_memory_equal(a.body, want, strlen(want));
    bench_free(b);
}

/* HELLO's device id (key 14): *n bytes at *id; false when the answer has none. */
static bool hello_device_id(struct bench *b, const uint8_t **id, size_t *n)
{
    struct answer a;
    struct mota_cbor_dec d;
    size_t count;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    uint8_t hello[3] = {MOTA_PROTO_VERSION, 0x00, 0x04}; /* 1 KiB frames */
    assert_int_equal(request(b, MOTA_CMD_HELLO, ++b->seq, hello, sizeof(hello), &a), MOTA_OK);
    static uint8_t body[MOTA_LINK_MAX_PAYLOAD];
    memcpy(body, a.body, a.body_len);
    mota_cbor_dec_init(&d, body, a.body_len);
    assert_int_equal(mota_cbor_get_map(&d, &count), 0);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(mota_cbor_get_int_key(&d, &key, &prev), 0);
        if (key == MOTA_INFO_DEVICE_ID) {
            assert_int_equal(mota_cbor_get_bstr(&d, id, n), 0);
            return true;
        }
        assert_int_equal(mota_cbor_skip(&d), 0);
    }
    assert_int_equal(d.err, 0);
    return false;
}

static void test_hello_names_the_device_by_its_id_and_a_device_without_one_leaves_it_out(void **state)
{
    (void)state;
    struct bench *b = bench_new(NULL);
    struct mota_agent_config *c = &b->d->cfg;
    const uint8_t *id = NULL;
    size_t n = 0;
    assert_false(hello_device_id(b, &id, &n));                         /* none configured */
    for (size_t len = 1; len <= MOTA_AGENT_DEVICE_ID_MAX; len += 11) { /* 1 and 12 bytes (an STM32's UID) */
        for (size_t i = 0; i < len; i++)
            c->device_id[i] = (uint8_t)(0xA0 + i);
        c->device_id_len = (uint8_t)len;
        assert_true(hello_device_id(b, &id, &n));
        assert_int_equal(n, len);
        assert_memory_equal(id, c->device_id, len);
    }
    c->device_id_len = MOTA_AGENT_DEVICE_ID_MAX; /* the longest */
    assert_true(hello_device_id(b, &id, &n));
    assert_int_equal(n, MOTA_AGENT_DEVICE_ID_MAX);
    c->device_id_len = MOTA_AGENT_DEVICE_ID_MAX + 1; /* a configuration the agent refuses to start with */
    assert_int_equal(dev_boot(b->d), MOTA_ERR_CONFIG);
    bench_free(b);
}

/* The CBOR of key `want` in an answer's map (HELLO, STATUS): *v, *n bytes; false when the map has none. */
static bool answer_value(const uint8_t *body, size_t len, int64_t want, const uint8_t **v, size_t *n)
{
    struct mota_cbor_dec d;
    size_t count;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    mota_cbor_dec_init(&d, body, len);
    assert_int_equal(mota_cbor_get_map(&d, &count), 0);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(mota_cbor_get_int_key(&d, &key, &prev), 0);
        size_t at = d.pos;
        assert_int_equal(mota_cbor_skip(&d), 0);
        if (key == want) {
            *v = body + at;
            *n = d.pos - at;
            return true;
        }
    }
    return false;
}

static bool holds(const uint8_t *hay, size_t n, const uint8_t *needle, size_t m)
{
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(hay + i, needle, m) == 0)
            return true;
    return false;
}

/* HELLO (at the smallest payload a host may ask for) and STATUS, each body into its own buffer. */
static void hello_and_status(struct bench *b, uint8_t *hello, size_t *hello_len, uint8_t *status, size_t *status_len)
{
    struct answer a;
    uint8_t req[3] = {MOTA_PROTO_VERSION, 64, 0}; /* 64-byte frames */
    assert_int_equal(request(b, MOTA_CMD_HELLO, ++b->seq, req, sizeof(req), &a), MOTA_OK);
    memcpy(hello, a.body, a.body_len);
    *hello_len = a.body_len;
    assert_int_equal(request(b, MOTA_CMD_STATUS, ++b->seq, NULL, 0, &a), MOTA_OK);
    memcpy(status, a.body, a.body_len);
    *status_len = a.body_len;
}

static void test_hello_and_status_name_the_decryption_keys_by_id_and_never_carry_a_key(void **state)
{
    (void)state;
    static uint8_t hello[MOTA_LINK_MAX_PAYLOAD], status[MOTA_LINK_MAX_PAYLOAD];
    static struct mota_kek keks[2];
    static uint8_t dev_d[32], dev_pub[MOTA_P256_PUB_LEN], dev_kid[MOTA_KEY_ID_LEN];
    size_t hl, sl, n;
    const uint8_t *v;
    struct bench *b = bench_new(NULL);
    for (int i = 0; i < 2; i++) { /* the longest kids: the largest key 18 */
        keks[i].kid_len = MOTA_ENC_MAX_KID;
        memset(keks[i].kid, 'a' + i, MOTA_ENC_MAX_KID);
        memset(keks[i].k, 0x5A + i, sizeof(keks[i].k));
    }
    memset(dev_d, 0x77, sizeof(dev_d));
    memset(dev_pub, 0x33, sizeof(dev_pub));
    dev_pub[0] = 0x04;
    memset(dev_kid, 0xC1, sizeof(dev_kid));
    b->d->cfg.enc = (struct mota_enc_keys){keks, 2, dev_d, dev_pub, dev_kid, sizeof(dev_kid)};
    hello_and_status(b, hello, &hl, status, &sl);
    assert_true(answer_value(hello, hl, MOTA_INFO_DECRYPT, &v, &n)); /* {1: [kid, kid], 2: device key id} */
    assert_int_equal(n, 1 + 1 + 1 + 2 * (2 + MOTA_ENC_MAX_KID) + 1 + 1 + MOTA_KEY_ID_LEN);
    assert_true(holds(v, n, keks[0].kid, MOTA_ENC_MAX_KID) && holds(v, n, keks[1].kid, MOTA_ENC_MAX_KID));
    assert_true(holds(v, n, dev_kid, sizeof(dev_kid)));
    assert_true(answer_value(status, sl, MOTA_STATUS_DEVICE_KEY, &v, &n)); /* the public point */
    assert_int_equal(n, 2 + MOTA_P256_PUB_LEN);
    assert_memory_equal(v + 2, dev_pub, MOTA_P256_PUB_LEN);
    for (int i = 0; i < 2; i++) /* no key in any answer */
        assert_false(holds(hello, hl, keks[i].k, 16) || holds(status, sl, keks[i].k, 16));
    assert_false(holds(hello, hl, dev_d, 16) || holds(status, sl, dev_d, 16));
    b->d->cfg.enc = (struct mota_enc_keys){0}; /* a device without keys says nothing of them */
    hello_and_status(b, hello, &hl, status, &sl);
    assert_false(answer_value(hello, hl, MOTA_INFO_DECRYPT, &v, &n));
    assert_false(answer_value(status, sl, MOTA_STATUS_DEVICE_KEY, &v, &n));
    bench_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_data_frame_repeated_after_the_upload_ended_gets_the_end_offset),
        cmocka_unit_test(test_a_late_copy_of_the_first_frame_does_not_restart_the_upload),
        cmocka_unit_test(test_a_data_frame_after_a_refused_upload_gets_the_refusal_reason),
        cmocka_unit_test(test_data_before_any_begin_is_answered_no_session),
        cmocka_unit_test(test_the_last_data_frame_is_preceded_by_one_event_per_phase_and_the_others_by_none),
        cmocka_unit_test(test_a_refusal_names_its_facts_in_the_answer_and_again_for_late_frames),
        cmocka_unit_test(test_hello_names_the_device_by_its_id_and_a_device_without_one_leaves_it_out),
        cmocka_unit_test(test_hello_and_status_name_the_decryption_keys_by_id_and_never_carry_a_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
