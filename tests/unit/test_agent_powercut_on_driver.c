/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's power-cut sweep (test_agent_powerfail.c's, there on the posix flash simulator) on a part's
 * own flash driver over a register model of the part (powercut_part.h: one executable a part, its
 * powercut_part_<part>.c naming the driver, the model and the board's layout on it). The model counts every register and array write, finer than the
 * simulator's operations: an update, a confirm, a rollback, a trial's expiry and an update that compacts the
 * journal are cut at every write of every erase and journal record, at the ends of every longer program and
 * at a stride inside it (the argument "every": at each write), then the part is powered on (registers at
 * reset, the interface locked), its driver set up again and the agent booted:
 *   - it comes up with the old model or the new one, verified, never a mix, and nothing committed is lost;
 *   - retrying the action completes it;
 *   - the part never saw what a correct driver never does (a wrong key, a write while busy, a word programmed
 *     twice, an error flag; at rest, the interface unlocked or the data cache stale after an erase).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <time.h>

#include "agent_fixture.h"
#include "powercut_part.h"

#define KIB 1024u
/* The writes cut at: every write of an erase and of a program of one journal record or less (the agent's
 * commit points), an operation's first HEAD (the unlock, the setup, the first word) and last TAIL (the last
 * word, the lock), and between, every stride-th of the action (powercut_stride) (prime, and counted across operations: the cut
 * moves through the words of the payload's programs) */
#define HEAD 4u
#define TAIL 2u
#define RECORD 64u /* the journal's record */
#define OLD_SEQ 2u /* the model the device runs before the update */
#define NEW_SEQ 3u
#define MAX_OPS 8192u

static const struct powercut_part *part;

enum scenario { UPDATE, CONFIRM, ROLLBACK, EXPIRY, COMPACTION, N_SCENARIOS };
static const char *names[] = {"update", "confirm", "rollback", "trial expiry", "update with journal compaction"};

/* c0: an earlier model, larger than half a slot, left in the slot the update goes to (a torn erase of it
 * leaves its end); c1: the old model; c2: the new one */
static uint8_t *c0, *c1, *c2;
static size_t l0, l1, l2;
static uint8_t d1[32], d2[32];
static uint64_t stride;

/* The fixture's device (keys, identity, profile, exec RAM) with the part's driver as its flash, in the
 * board's layout: the posix flash it was built with is left unused. */
static struct mota_posix_device *dev_on_part(void)
{
    struct mota_posix_device *d = dev_new_sized(1, DEV_FLASH_SIZE, part->slot_size);
    struct mota_agent_config *c = &d->cfg;
    c->journal_offset = part->journal_offset;
    c->models[0].slot_offset[0] = part->slot_offset[0];
    c->models[0].slot_offset[1] = part->slot_offset[1];
    c->models[0].slot_size = part->slot_size;
    return d;
}

/* What a boot does before the agent: the part out of reset, its driver set up again. */
static void power_up(struct mota_posix_device *d)
{
    part->power_on();
    assert_int_equal(part->driver(&d->flash), MOTA_OK);
}

static int upload(struct mota_posix_device *d, const uint8_t *c, size_t len)
{
    return send_container(&d->device.agent, c, len, 2048);
}

/* The action under test, from boot on; a power cut never returns into it. */
static int run(struct mota_posix_device *d, enum scenario s)
{
    int ret = dev_boot(d);
    if (ret != MOTA_OK)
        return ret;
    switch (s) {
    case UPDATE:
    case COMPACTION: return upload(d, c2, l2);
    case CONFIRM: return mota_agent_confirm(&d->device.agent, 0);
    case ROLLBACK: return mota_agent_rollback(&d->device.agent, 0);
    default: return MOTA_OK; /* the boot itself reverts the expired trial */
    }
}

/* Aborted uploads until the journal has compacted into its other sector, or has only `left` records free. */
static void fill_journal(struct mota_posix_device *d, bool compact, uint32_t left)
{
    const struct mota_journal *j = &d->device.agent.journal;
    uint8_t sector = j->sector;
    struct mota_envelope env;
    assert_int_equal(mota_envelope_decode(c2, l2, &env), MOTA_OK);
    while (compact ? j->sector == sector : j->next < j->sector_size / RECORD - left) {
        assert_true(mota_agent_write(&d->device.agent, 0, c2, env.head_len + 64) > 0);
        assert_int_equal(mota_agent_abort(&d->device.agent), MOTA_OK);
    }
}

/* The state each scenario starts from, on the part: nothing of it erased that a device in use would not
 * have written (the update's slot holds an earlier model, the journal's spare sector old records). */
static void prepare(struct mota_posix_device *d, enum scenario s)
{
    power_up(d);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(upload(d, c0, l0), MOTA_OK);
    assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
    fill_journal(d, true, 0);
    assert_int_equal(upload(d, c1, l1), MOTA_OK);
    assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
    uint32_t spare = part->slot_offset[1 - d->device.agent.st[0].active.slot];
    assert_int_not_equal(part->array()[spare + l0 - 256], 0xFF); /* c0's end (on the F4, past half its sector) */
    if (s == CONFIRM || s == ROLLBACK || s == EXPIRY)
        assert_int_equal(upload(d, c2, l2), MOTA_OK);
    for (int b = 0; s == EXPIRY && b < 3; b++) /* the trial has used all its boots */
        assert_int_equal(dev_boot(d), MOTA_OK);
    if (s == COMPACTION) /* the update compacts the journal into its other sector */
        fill_journal(d, false, 6);
    assert_int_equal(part->violations(), 0);
}

static void observe(struct mota_posix_device *d, struct dev_outcome *o)
{
    if (!dev_observe(d, d1, d2, o))
        fail_msg("active model is neither the old nor the new one");
}

/* Retry what the cut interrupted; the end state it reaches. */
static void retry(struct mota_posix_device *d, enum scenario s, uint64_t k, struct dev_outcome *o)
{
    struct mota_agent *a = &d->device.agent;
    if ((s == UPDATE || s == COMPACTION) && !(o->is_new && o->testing)) {
        int ret = upload(d, c2, l2);
        if (ret != MOTA_OK)
            fail_msg("%s, cut at write %llu: retry failed: %s", names[s], (unsigned long long)k, mota_err_name(ret));
    } else if (s == CONFIRM && o->is_new && o->testing) {
        assert_int_equal(mota_agent_confirm(a, 0), MOTA_OK);
    } else if ((s == ROLLBACK || s == EXPIRY) && o->testing) {
        assert_int_equal(mota_agent_rollback(a, 0), MOTA_OK);
    }
    observe(d, o);
    bool done = s == CONFIRM                     ? o->is_new && !o->testing && o->committed == NEW_SEQ
                : s == UPDATE || s == COMPACTION ? o->has_model && o->is_new && o->testing
                                                 : o->has_model && !o->is_new && !o->testing;
    if (!done)
        fail_msg("%s, cut at write %llu: the retry did not finish it (model %d new %d testing %d committed %llu)",
                 names[s], (unsigned long long)k, o->has_model, o->is_new, o->testing,
                 (unsigned long long)o->committed);
}

/* After the cut and a power-on: the invariants, then a retry to the end state, which survives a reboot. */
static void check(struct mota_posix_device *d, enum scenario s, uint64_t k, bool completed)
{
    struct dev_outcome o, again;
    int ret = dev_boot(d);
    if (ret != MOTA_OK)
        fail_msg("%s, cut at write %llu: reboot failed: %s", names[s], (unsigned long long)k, mota_err_name(ret));
    observe(d, &o);
    if (!o.has_model || o.committed < OLD_SEQ)
        fail_msg("%s, cut at write %llu: no verified model, or the committed one lost", names[s],
                 (unsigned long long)k);
    if (completed && ((s == CONFIRM && o.committed != NEW_SEQ) || (s == ROLLBACK && o.is_new)))
        fail_msg("%s, cut at write %llu: a completed action was lost", names[s], (unsigned long long)k);
    retry(d, s, k, &o);
    assert_int_equal(dev_boot(d), MOTA_OK);
    observe(d, &again);
    assert_int_equal(again.is_new, o.is_new);
}

static jmp_buf powered_off;

static void power_cut(void *ctx)
{
    (void)ctx;
    longjmp(powered_off, 1);
}

/* The dry run's operations: each program's and erase's writes, numbered from the action's start (1: its
 * first), noted by a flash that passes every call on to the driver. */
struct span {
    uint64_t first, last;
    bool every; /* an erase, or a program of a journal record or less: cut at each of its writes */
};
static struct span spans[MAX_OPS];
static size_t n_spans;
static uint64_t action_start;
static struct mota_flash drv;

static void noted(uint64_t before, bool every)
{
    if (part->writes() > before) {
        assert_true(n_spans < MAX_OPS);
        spans[n_spans++] = (struct span){before - action_start + 1, part->writes() - action_start, every};
    }
}

static int rec_read(void *ctx, uint32_t off, void *buf, size_t len)
{
    (void)ctx;
    return drv.read(drv.ctx, off, buf, len);
}

static const uint8_t *rec_map(void *ctx, uint32_t off, size_t len)
{
    (void)ctx;
    return drv.map(drv.ctx, off, len);
}

static int rec_prog(void *ctx, uint32_t off, const void *buf, size_t len)
{
    uint64_t before = part->writes();
    int ret = drv.prog(drv.ctx, off, buf, len);
    (void)ctx;
    noted(before, len <= RECORD);
    return ret;
}

static int rec_erase(void *ctx, uint32_t off)
{
    uint64_t before = part->writes();
    int ret = drv.erase(drv.ctx, off);
    (void)ctx;
    noted(before, true);
    return ret;
}

/* The action from the image, uncut, its operations noted; the writes it took. */
static uint64_t dry_run(struct mota_posix_device *d, enum scenario s, const uint8_t *img)
{
    part->restore(img);
    power_up(d);
    drv = d->flash;
    d->flash.read = rec_read;
    d->flash.prog = rec_prog;
    d->flash.erase = rec_erase;
    d->flash.map = rec_map;
    n_spans = 0;
    action_start = part->writes();
    assert_int_equal(run(d, s), MOTA_OK);
    assert_int_equal(part->violations(), 0);
    d->flash = drv;
    return part->writes() - action_start;
}

/* Cut at write k of op (every, HEAD, TAIL, STRIDE). */
static bool chosen(const struct span *op, uint64_t k)
{
    return op->every || k - op->first < HEAD || op->last - k < TAIL || k % stride == 0;
}

/* One cut at write k from the image, the reboot and its checks. */
static void cut_at(struct mota_posix_device *d, enum scenario s, const uint8_t *img, uint64_t k)
{
    part->restore(img);
    power_up(d);
    part->cut_at(k);
    volatile bool cut = true;
    if (setjmp(powered_off) == 0) {
        int ret = run(d, s);
        cut = false;
        if (ret != MOTA_OK)
            fail_msg("%s: write %llu: failed without a cut: %s", names[s], (unsigned long long)k, mota_err_name(ret));
    }
    if (cut != part->dead())
        fail_msg("%s: write %llu: the power went but the action went on", names[s], (unsigned long long)k);
    power_up(d);
    check(d, s, k, !cut);
    if (part->violations() != 0)
        fail_msg("%s, cut at write %llu: the part saw what a correct driver never does", names[s],
                 (unsigned long long)k);
}

/* The scenario cut at its chosen writes; how many of its writes were cut at, and how many it took. */
static uint64_t sweep(enum scenario s, uint64_t *writes)
{
    uint64_t n = 0;
    part->open(power_cut, NULL);
    struct mota_posix_device *d = dev_on_part();
    prepare(d, s);
    uint8_t *img = part->save();
    *writes = dry_run(d, s, img);
    for (size_t i = 0; i < n_spans; i++)
        for (uint64_t k = spans[i].first; k <= spans[i].last; k++)
            if (chosen(&spans[i], k)) {
                cut_at(d, s, img, k);
                n++;
            }
    free(img);
    dev_free(d);
    part->close();
    return n;
}

static void power_cut_at_the_writes_of_every_flash_operation_leaves_a_verified_model_and_a_clean_part(void **state)
{
    (void)state;
    uint64_t sum = 0, t0 = (uint64_t)clock();
    for (int s = 0; s < N_SCENARIOS; s++) {
        uint64_t writes = 0, n = sweep((enum scenario)s, &writes);
        print_message("%s: %llu writes in %zu operations, cut at %llu of them\n", names[s], (unsigned long long)writes,
                      n_spans, (unsigned long long)n);
        sum += n;
    }
    print_message("%s, %s: %llu cut points (every write of an erase and of a program of up to %u bytes, the first "
                  "%u and last %u of a longer one, every %llu-th write between) in %.1f s; every reboot found a "
                  "verified old or new model, nothing committed lost, every retry completed, the part saw nothing "
                  "a correct driver never does\n",
                  part->name, stride == 1 ? "every write" : "sampled", (unsigned long long)sum, RECORD, HEAD, TAIL,
                  (unsigned long long)stride, (double)((uint64_t)clock() - t0) / CLOCKS_PER_SEC);
}

static int setup(void **state)
{
    (void)state;
    struct container_opts o0 = {
        .seq = 1, .selftest = true, .split = true, .model = {.code_bytes = 80000, .params_bytes = 8000, .fill = 3}};
    struct container_opts o1 = {.seq = OLD_SEQ,
                                .selftest = true,
                                .split = true,
                                .model = {.code_bytes = 24000, .params_bytes = 8000, .fill = 1}};
    struct container_opts o2 = {.seq = NEW_SEQ,
                                .selftest = true,
                                .split = true,
                                .model = {.code_bytes = 28000, .params_bytes = 9000, .fill = 2}};
    dev_keys();
    c0 = make_container(&o0, &l0);
    c1 = make_container(&o1, &l1);
    c2 = make_container(&o2, &l2);
    manifest_digest(c1, l1, d1);
    manifest_digest(c2, l2, d2);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(c0);
    free(c1);
    free(c2);
    return 0;
}

int main(int argc, char **argv)
{
    part = &powercut_part;
    stride = powercut_stride;
    if (argc > 1 && strcmp(argv[1], "every") == 0)
        stride = 1;
    else if (argc > 1)
        return fprintf(stderr, "usage: %s [every]\n", argv[0]), 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(power_cut_at_the_writes_of_every_flash_operation_leaves_a_verified_model_and_a_clean_part),
    };
    return cmocka_run_group_tests_name("agent power cuts on a part's driver", tests, setup, teardown);
}
