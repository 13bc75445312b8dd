/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent on the flash of real parts: what progressive erase and ECC flash leave behind, and a journal
 * written by the agent before progressive erase. (The power-cut sweeps on each kind of flash:
 * test_agent_powerfail.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_fixture.h"

static jmp_buf powered_off;

static void power_cut(void *ctx)
{
    (void)ctx;
    longjmp(powered_off, 1);
}

/* Send a container with the power cut, torn, at the op-th flash operation from now. */
static __attribute__((noinline)) void cut_upload(struct mota_posix_device *d, const uint8_t *c, size_t len, uint64_t op)
{
    mota_posix_flash_on_cut(&d->pf, power_cut, NULL);
    mota_posix_flash_cut(&d->pf, op, true);
    if (setjmp(powered_off) == 0)
        (void)send_container(&d->device.agent, c, len, 2048);
}

static void install(struct mota_posix_device *d, const struct container_opts *o, bool confirm)
{
    size_t len;
    uint8_t *c = make_container(o, &len);
    assert_int_equal(send_container(&d->device.agent, c, len, 2048), MOTA_OK);
    if (confirm)
        assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
    free(c);
}

static uint64_t active_seq(struct mota_posix_device *d)
{
    struct mota_agent_model_info info;
    assert_int_equal(mota_agent_model_info(&d->device.agent, 0, &info), MOTA_OK);
    return info.seq;
}

/* On ECC flash a large upload torn late leaves an unreadable unit far into the slot; a smaller model
 * installed there afterwards never reaches it, and must not be judged by it (its head is read, not the
 * whole slot). */
static void test_a_unit_torn_past_a_smaller_model_does_not_invalidate_it(void **state)
{
    (void)state;
    struct container_opts o1 = {.seq = 1, .split = true, .model = {.code_bytes = 3000, .params_bytes = 1000}};
    struct container_opts big = {.seq = 2, .split = true, .model = {.code_bytes = 90000, .params_bytes = 20000}};
    struct container_opts o3 = {.seq = 3, .split = true, .model = {.code_bytes = 3000, .params_bytes = 900}};
    size_t blen;
    uint8_t *b = make_container(&big, &blen);
    dev_part = &dev_part_ecc;
    struct mota_posix_device *d = dev_new(1);
    dev_part = NULL;
    assert_int_equal(dev_boot(d), MOTA_OK);
    install(d, &o1, true);
    /* the big one, torn 20 programs before its end */
    uint8_t *img = dev_flash_save(d);
    uint64_t before = d->pf.ops;
    assert_int_equal(send_container(&d->device.agent, b, blen, 2048), MOTA_OK);
    uint64_t total = d->pf.ops - before;
    dev_flash_restore(d, img);
    assert_int_equal(dev_boot(d), MOTA_OK);
    cut_upload(d, b, blen, total - 20);
    assert_true(d->pf.dead && d->pf.cut_kind == 'p');
    mota_posix_flash_power_on(&d->pf);
    /* a smaller model into the same slot, confirmed, and a reboot: it is the one running */
    assert_int_equal(dev_boot(d), MOTA_OK);
    install(d, &o3, true);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(active_seq(d), 3);
    assert_int_equal(mota_agent_last_error(&d->device.agent, 0), 0);
    free(img);
    free(b);
    dev_free(d);
}

/* A journal record as docs/agent.md lays it out. */
static void put_rec(struct mota_posix_device *d, uint32_t sector, uint32_t index, uint8_t type, uint32_t jseq,
                    uint64_t seq, uint32_t value, uint32_t value2, uint8_t slot, uint8_t flags, const uint8_t *digest)
{
    uint8_t r[64];
    memset(r, 0, sizeof(r));
    r[0] = 0x52, r[1] = 0x4A, r[2] = type, r[3] = 0;
    wr32le(r + 4, jseq);
    wr32le(r + 8, (uint32_t)seq);
    wr32le(r + 12, (uint32_t)(seq >> 32));
    wr32le(r + 16, value);
    wr32le(r + 20, value2);
    r[24] = slot, r[25] = flags;
    if (digest)
        memcpy(r + 28, digest, 32);
    wr32le(r + 60, mota_crc32(0, r, 60));
    assert_int_equal(d->flash.prog(d->flash.ctx, sector + index * 64u, r, 64), MOTA_OK);
}

/* An upload interrupted under the agent before progressive erase, whose journal was compacted: its
 * snapshot says "erased" (the whole slot, as that agent erased it) with no record of how far. The resume
 * must keep what is on the slot, the head first. */
static void test_an_older_agents_compacted_upload_resumes_without_erasing_its_head(void **state)
{
    (void)state;
    struct container_opts o1 = {.seq = 1, .split = true, .model = {.code_bytes = 3000, .params_bytes = 1000}};
    struct container_opts o2 = {.seq = 2, .split = true, .model = {.code_bytes = 60000, .params_bytes = 9000}};
    size_t len;
    uint8_t *c = make_container(&o2, &len), d1[32], d2[32];
    struct mota_posix_device *d = dev_new(1);
    assert_int_equal(dev_boot(d), MOTA_OK);
    install(d, &o1, true);
    manifest_digest(c, len, d2);
    memcpy(d1, d->device.agent.st[0].active.digest, 32);
    /* half of v2, then its state rewritten as that agent's compaction wrote it */
    assert_true(mota_agent_write(&d->device.agent, 0, c, len / 2) > 0);
    const struct mota_agent_model_state *s = &d->device.agent.st[0];
    uint32_t offset = s->upload_offset, head = s->upload_head_len;
    uint8_t slot = s->upload.slot;
    assert_true(offset > head && s->upload_state == MOTA_UPLOAD_ERASED);
    assert_int_equal(d->flash.erase(d->flash.ctx, 0), MOTA_OK);
    assert_int_equal(d->flash.erase(d->flash.ctx, 4096), MOTA_OK);
    put_rec(d, 0, 0, 1, 1, 0, 9, 0, 0xFF, 0, NULL);               /* HEADER, epoch 9 */
    put_rec(d, 0, 1, 16, 2, 1, 0, 0, 0xFF, 0, d1);                /* SET_COMMITTED seq 1 */
    put_rec(d, 0, 2, 14, 3, 1, 0, 0, 0, 0, d1);                   /* SET_ACTIVE slot 0 */
    put_rec(d, 0, 3, 17, 4, 2, (uint32_t)len, head, slot, 2, d2); /* SET_UPLOAD, state ERASED */
    put_rec(d, 0, 4, 5, 5, 0, offset, 0, 0xFF, 0, NULL);          /* PROGRESS */
    put_rec(d, 0, 5, 2, 6, 0, 9, 0, 0xFF, 0, NULL);               /* SNAPSHOT_END, epoch 9 */
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(mota_agent_upload_offset(&d->device.agent), offset);
    assert_int_equal(send_container(&d->device.agent, c, len, 2048), MOTA_OK); /* resumes at offset */
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(active_seq(d), 2); /* its head intact: it boots */
    free(c);
    dev_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_unit_torn_past_a_smaller_model_does_not_invalidate_it),
        cmocka_unit_test(test_an_older_agents_compacted_upload_resumes_without_erasing_its_head),
    };
    dev_keys();
    return cmocka_run_group_tests_name("agent on real flash", tests, NULL, NULL);
}
