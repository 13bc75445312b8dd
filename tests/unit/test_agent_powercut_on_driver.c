/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's power-cut sweep (test_agent_powerfail.c's, there on the posix flash simulator) on a part's
 * own flash driver over a register model of the part: here the STM32F4's (ports/stm32/common/src/flash_f4.c
 * over stm32f4_flash_model.h), laid out as the nucleo-f401re profile (the journal in sectors 1 and 2, slot A
 * in sector 5, slot B in sector 6). The model counts every register and array write, finer than the
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
#include "mota/stm32_flash.h"
#ifdef MOTA_POWERCUT_U5
#include "mota/b_u585i_iot02a_layout.h"
#include "stm32u5_flash_model.h"
#else
#include "mota/nucleo_f401re_layout.h"
#include "stm32f4_flash_model.h"
#endif

#define KIB 1024u
/* The writes cut at: every write of an erase and of a program of one journal record or less (the agent's
 * commit points), an operation's first HEAD (the unlock, the setup, the first word) and last TAIL (the last
 * word, the lock), and between, every STRIDE-th of the action (prime, and counted across operations: the cut
 * moves through the words of the payload's programs) */
#define HEAD 4u
#define TAIL 2u
#define STRIDE 61u     /* the F4's; the U5's payload programs take about as many writes a byte: */
#define STRIDE_U5 127u /* a cut every 127th, and the same part of CI's time (its model is slower to restore) */
#define RECORD 64u     /* the journal's record */
#define OLD_SEQ 2u     /* the model the device runs before the update */
#define NEW_SEQ 3u
#define MAX_OPS 8192u

/*
 * A part's flash driver over the part's model, as the sweep drives it. Each model is the access layer
 * (stm32_io.h) its driver is built against, so each part's sweep is its own executable: another part adds
 * its instance of this beside f4_part and picks it in main.
 */
struct powercut_part {
    const char *name;
    uint32_t journal_offset, slot_offset[2], slot_size; /* the board's layout on it */
    /* the part, erased; on_cut(ctx) is called at the write that cuts the power, and does not return */
    void (*open)(void (*on_cut)(void *ctx), void *ctx);
    void (*close)(void);
    int (*driver)(struct mota_flash *f); /* its driver, set up as the firmware does at boot */
    void (*power_on)(void);              /* registers at reset, the array as the cut left it */
    void (*cut_at)(uint64_t n);          /* the power goes at the n-th write from now (0: never) */
    uint64_t (*writes)(void);            /* register and array writes so far */
    bool (*dead)(void);
    unsigned (*violations)(void);  /* what the part saw that a correct driver never does, counted at rest */
    const uint8_t *(*array)(void); /* the array from the agent's offset 0 */
    uint8_t *(*save)(void);        /* the part's state as it survives a power cut (malloc'd) */
    void (*restore)(const uint8_t *img);
};

#ifndef MOTA_POWERCUT_U5
/* The STM32F401RE of the nucleo-f401re profile (host_tool/src/offline/profiles.c, F401_FLASH). */
static struct f4_model f4;
static const struct mota_stm32f4_flash_cfg *const f401 = &f4_model_f401re;

static void f4_open(void (*on_cut)(void *ctx), void *ctx)
{
    f4_model_init(&f4, f401->base, f401->regs, f401->regions, f401->n_regions);
    f4.on_cut = on_cut;
    f4.on_cut_ctx = ctx;
}

static void f4_close(void)
{
    f4_model_free(&f4);
}

static int f4_driver(struct mota_flash *f)
{
    return mota_stm32f4_flash_init(f, f401);
}

static void f4_power_on(void)
{
    f4_model_power_on(&f4);
}

static void f4_cut_at(uint64_t n)
{
    f4.cut_at = n ? f4.writes + n : 0;
}

static uint64_t f4_writes(void)
{
    return f4.writes;
}

static bool f4_dead(void)
{
    return f4.off;
}

static unsigned f4_violations(void)
{
    bool unlocked = !f4.off && !(f4.cr & (1u << 31)); /* CR.LOCK: every operation locks again */
    return f4.bus_errors + f4.writes_when_busy + f4.reprogrammed + f4.dcrst_enabled + f4.error_flags + unlocked +
           f4.dcache_stale;
}

static const uint8_t *f4_array(void)
{
    return f4.mem;
}

static uint8_t *f4_save(void)
{
    uint8_t *img = malloc(f4.size);
    assert_non_null(img);
    memcpy(img, f4.mem, f4.size);
    return img;
}

static void f4_restore(const uint8_t *img)
{
    memcpy(f4.mem, img, f4.size);
}

static const struct powercut_part f4_part = {
    .name = "STM32F401RE",
    .journal_offset = MOTA_NUCLEO_F401RE_JOURNAL,
    .slot_offset = {MOTA_NUCLEO_F401RE_SLOTS, MOTA_NUCLEO_F401RE_SLOTS + MOTA_NUCLEO_F401RE_SLOT_SIZE},
    .slot_size = MOTA_NUCLEO_F401RE_SLOT_SIZE,
    .open = f4_open,
    .close = f4_close,
    .driver = f4_driver,
    .power_on = f4_power_on,
    .cut_at = f4_cut_at,
    .writes = f4_writes,
    .dead = f4_dead,
    .violations = f4_violations,
    .array = f4_array,
    .save = f4_save,
    .restore = f4_restore};
#define THE_PART f4_part
#else
/* The STM32U585's bank 2 of the b-u585i-iot02a profile (mota/b_u585i_iot02a_layout.h: the journal in pages 0
 * and 1, slots A and B of 62 pages each), its ICACHE on: 16-byte quad-words programmed once, a torn one an
 * ECC error its driver's read reports. */
#define BANK2 (1024u * 1024u) /* the agent's offset 0 in the part's array */
static struct u5_model u5;

static void u5_open(void (*on_cut)(void *ctx), void *ctx)
{
    u5_model_init(&u5, MOTA_STM32U5_FLASH_REGS, MOTA_STM32U5_ICACHE_REGS);
    u5.on_cut = on_cut;
    u5.on_cut_ctx = ctx;
}

static void u5_close(void)
{
    u5_model_free(&u5);
}

static int u5_driver(struct mota_flash *f)
{
    return mota_stm32u5_flash_init(f, &u5_model_bank2);
}

static void u5_power_on(void)
{
    u5_model_power_on(&u5);
}

static void u5_cut_at(uint64_t n)
{
    u5.cut_at = n ? u5.writes + n : 0;
}

static uint64_t u5_writes(void)
{
    return u5.writes;
}

static bool u5_dead(void)
{
    return u5.off;
}

static unsigned u5_violations(void)
{
    bool unlocked = !u5.off && !(u5.nscr & (1u << 31)); /* NSCR.LOCK: every operation locks again */
    return u5.bus_errors + u5.writes_when_busy + u5.reprogrammed + u5.unmasked_writes + u5.partial_quad_words +
           u5.faults + u5.stray + u5.error_flags + unlocked + u5_model_stale(&u5);
}

static const uint8_t *u5_array(void)
{
    return u5.mem + BANK2;
}

/* the array and each quad-word's state (erased, programmed, torn): what survives a cut */
static uint8_t *u5_save(void)
{
    uint8_t *img = malloc(U5_MODEL_SIZE + U5_MODEL_SIZE / U5_MODEL_QW);
    assert_non_null(img);
    memcpy(img, u5.mem, U5_MODEL_SIZE);
    memcpy(img + U5_MODEL_SIZE, u5.qw, U5_MODEL_SIZE / U5_MODEL_QW);
    return img;
}

static void u5_restore(const uint8_t *img)
{
    memcpy(u5.mem, img, U5_MODEL_SIZE);
    memcpy(u5.qw, img + U5_MODEL_SIZE, U5_MODEL_SIZE / U5_MODEL_QW);
}

static const struct powercut_part u5_part = {
    .name = "STM32U585 bank 2",
    .journal_offset = MOTA_B_U585I_IOT02A_JOURNAL,
    .slot_offset = {MOTA_B_U585I_IOT02A_SLOTS, MOTA_B_U585I_IOT02A_SLOTS + MOTA_B_U585I_IOT02A_SLOT_SIZE},
    .slot_size = MOTA_B_U585I_IOT02A_SLOT_SIZE,
    .open = u5_open,
    .close = u5_close,
    .driver = u5_driver,
    .power_on = u5_power_on,
    .cut_at = u5_cut_at,
    .writes = u5_writes,
    .dead = u5_dead,
    .violations = u5_violations,
    .array = u5_array,
    .save = u5_save,
    .restore = u5_restore};
#define THE_PART u5_part
#endif

static const struct powercut_part *part;

enum scenario { UPDATE, CONFIRM, ROLLBACK, EXPIRY, COMPACTION, N_SCENARIOS };
static const char *names[] = {"update", "confirm", "rollback", "trial expiry", "update with journal compaction"};

/* c0: an earlier model, larger than half a slot, left in the slot the update goes to (a torn erase of it
 * leaves its end); c1: the old model; c2: the new one */
static uint8_t *c0, *c1, *c2;
static size_t l0, l1, l2;
static uint8_t d1[32], d2[32];
#ifdef MOTA_POWERCUT_U5
static uint64_t stride = STRIDE_U5;
#else
static uint64_t stride = STRIDE;
#endif

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
    part = &THE_PART;
    if (argc > 1 && strcmp(argv[1], "every") == 0)
        stride = 1;
    else if (argc > 1)
        return fprintf(stderr, "usage: %s [every]\n", argv[0]), 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(power_cut_at_the_writes_of_every_flash_operation_leaves_a_verified_model_and_a_clean_part),
    };
    return cmocka_run_group_tests_name("agent power cuts on a part's driver", tests, setup, teardown);
}
