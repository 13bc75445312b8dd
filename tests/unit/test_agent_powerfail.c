/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Power-loss sweeps: for an update, a confirm and a rollback, cut the power
 * before every flash operation in turn (then, in a second sweep, tear every
 * operation: half a program, half an erase), reboot the agent and check:
 * on each kind of flash (the argument): "nor" (4 KiB sectors), "mixed" (4, 16, 64 and 128 KiB
 * sectors) and "ecc" (16-byte units programmed once per erase, a torn one unreadable: every journal,
 * resume and verification read meets it), with the slot erased progressively:
 *   - the device holds a valid, verified model, the old or the new one,
 *     never a mix (the agent re-validates signature and digests at boot);
 *   - nothing committed is lost;
 *   - retrying the interrupted action completes it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "agent_fixture.h"

enum scenario {
    FIRST_INSTALL,
    UPDATE,
    CONFIRM,
    ROLLBACK,
    EXPIRY,
    COMPACTION,
    FIRST_ROLLBACK,
    COMPRESSED,
    DEFLATED,
    LZMA,
    DELTA,
    CTR,
    DEFLATED_GCM,
    DELTA_GCM,
    N_SCENARIOS
};
static const char *names[] = {"first install",
                              "update",
                              "confirm",
                              "rollback",
                              "trial expiry",
                              "update with journal compaction",
                              "rollback of a first model on trial",
                              "update with compressed payloads and journal compaction",
                              "update with deflated payloads",
                              "update with LZMA payloads",
                              "update with a delta from the running model (LZMA)",
                              "update with AES-CTR payloads",
                              "update with deflated, then AES-GCM payloads",
                              "update with a delta, LZMA, then AES-GCM"};
#define TRANSFORMED(s) ((s) >= COMPRESSED)
/* records left in the journal sector before the deflated GCM update: it compacts inside its payloads (a
 * mutation that drops the GHASH record from a snapshot is caught with 12 or 14, not with 10 or 16) */
#define FREE_GCM 14u
/* the scenarios that may end, correctly, with no model at all */
#define MAY_HAVE_NONE(s) ((s) == FIRST_INSTALL || (s) == FIRST_ROLLBACK)

static uint8_t *c1, *c2, *c3, *c4; /* c3, c4: a larger model, LZ4 and deflate payloads, resumed at blocks */
static size_t l1, l2, l3, l4;
static uint8_t d1[32], d2[32], d3[32], d4[32];
static uint8_t *ce[2], de[2][32]; /* CTR, deflate + GCM */
static size_t le[2];
static uint8_t *cz, dz[32], *cd[2], dd[2][32]; /* LZMA; the deltas (plain, GCM) */
static size_t lz, ld[2];
static uint8_t *c0, d0[32]; /* the model the deltas are from, installed first */
static size_t l0;
#define FROM_DELTA(s) ((s) == DELTA || (s) == DELTA_GCM)
static unsigned g_resumes; /* retries that resumed inside an AES-GCM payload with its journaled GHASH state */
static uint8_t *cn, *dn;   /* the new container of the scenario being swept */
static unsigned z_resumes; /* retries that resumed inside a compressed payload */
static size_t ln;
static char cut_kind;
static uint32_t cut_off, cut_len;

/* Send the container from offset 0, as a host does after any failure. */
static int upload(struct mota_posix_device *d, const uint8_t *c, size_t len)
{
    return send_container(&d->device.agent, c, len, 2048);
}

/* The action under test, from boot on. A power cut never returns into it: the flash simulator unwinds
 * to sweep(), which powers the device on again, as littlefs's and MCUboot's simulators do. */
static int run(struct mota_posix_device *d, enum scenario s)
{
    int ret = dev_boot(d);
    if (ret != MOTA_OK)
        return ret;
    switch (s) {
    case FIRST_INSTALL:
    case UPDATE:
    case COMPACTION:
    case COMPRESSED:
    case DEFLATED:
    case LZMA:
    case DELTA:
    case CTR:
    case DEFLATED_GCM:
    case DELTA_GCM: return upload(d, cn, ln);
    case CONFIRM: return mota_agent_confirm(&d->device.agent, 0);
    case ROLLBACK:
    case FIRST_ROLLBACK: return mota_agent_rollback(&d->device.agent, 0);
    default: return MOTA_OK; /* the boot itself reverts the expired trial */
    }
}

static const uint8_t *dold; /* the old model of the scenario being swept */

static void observe(struct mota_posix_device *d, struct dev_outcome *o)
{
    if (!dev_observe(d, dold, dn, o))
        fail_msg("active model is neither the old nor the new one");
}

/* The state each scenario starts from, as a flash image. */
static uint8_t *prepare(enum scenario s)
{
    struct mota_posix_device *d = dev_new(1);
    assert_int_equal(dev_boot(d), MOTA_OK);
    if (!MAY_HAVE_NONE(s)) {
        assert_int_equal(FROM_DELTA(s) ? upload(d, c0, l0) : upload(d, c1, l1), MOTA_OK);
        assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
    }
    if (s == CONFIRM || s == ROLLBACK || s == EXPIRY || s == FIRST_ROLLBACK)
        assert_int_equal(upload(d, cn, ln), MOTA_OK);
    if (s == EXPIRY) /* the trial has used all its boots */
        for (int b = 0; b < 3; b++)
            assert_int_equal(dev_boot(d), MOTA_OK);
    if (s == COMPACTION || s == COMPRESSED || s == DEFLATED_GCM) { /* these compact the journal too */
        /* fill the journal sector with aborted uploads, so the update compacts it */
        struct mota_envelope env;
        assert_int_equal(mota_envelope_decode(cn, ln, &env), MOTA_OK);
        /* the deflated GCM update compacts in the middle of its payloads, with a GHASH state to keep */
        uint32_t free_left = s == DEFLATED_GCM ? FREE_GCM : 6;
        while (d->device.agent.journal.next < 4096 / 64 - free_left) {
            assert_true(mota_agent_write(&d->device.agent, 0, cn, env.head_len + 64) > 0);
            assert_int_equal(mota_agent_abort(&d->device.agent), MOTA_OK);
        }
    }
    uint8_t *img = dev_flash_save(d);
    dev_free(d);
    return img;
}

/* After the cut and a reboot: the invariants, then a retry to the end state. */
static void check(struct mota_posix_device *d, enum scenario s, uint64_t op, bool completed)
{
    struct dev_outcome o;
    int ret = dev_boot(d);
    if (ret != MOTA_OK)
        fail_msg("%s, cut at op %llu: reboot failed: %s", names[s], (unsigned long long)op, mota_err_name(ret));
    observe(d, &o);
    if (!MAY_HAVE_NONE(s) && !o.has_model)
        fail_msg("%s, cut at op %llu: no valid model after the reboot", names[s], (unsigned long long)op);
    if (s == FIRST_ROLLBACK && o.has_model && !(o.is_new && o.testing))
        fail_msg("%s, cut at op %llu: a model other than the one on trial", names[s], (unsigned long long)op);
    if (s == FIRST_ROLLBACK && completed && o.has_model)
        fail_msg("%s, cut at op %llu: a completed removal was lost", names[s], (unsigned long long)op);
    if (!MAY_HAVE_NONE(s) && o.committed < 1)
        fail_msg("%s, cut at op %llu: the committed sequence number was lost", names[s], (unsigned long long)op);
    if (s == CONFIRM && completed && o.committed != 2)
        fail_msg("confirm, cut at op %llu: a completed confirm was lost", (unsigned long long)op);
    if (s == ROLLBACK && completed && o.is_new)
        fail_msg("rollback, cut at op %llu: a completed rollback was lost", (unsigned long long)op);
    if (!o.has_model && !MAY_HAVE_NONE(s))
        fail_msg("%s: no model", names[s]);

    /* retry what was interrupted; a compressed payload resumes at a block boundary inside it */
    const struct mota_agent_model_state *st = &d->device.agent.st[0];
    if (TRANSFORMED(s) && st->upload_state == MOTA_UPLOAD_ERASED && st->upload_plain > 0)
        z_resumes++;
    if (TRANSFORMED(s) && st->upload_state == MOTA_UPLOAD_ERASED && st->upload_ghash_at == st->upload_offset)
        g_resumes++;
    /* every resume point inside an AES-GCM payload has its GHASH state, through compactions too */
    if ((s == DEFLATED_GCM || s == DELTA_GCM) && st->upload_state == MOTA_UPLOAD_ERASED && st->upload_plain > 0 &&
        st->upload_ghash_at != st->upload_offset)
        fail_msg("%s, cut at op %llu: a resume point at %u without its GHASH state", names[s], (unsigned long long)op,
                 st->upload_offset);
    switch (s) {
    case FIRST_INSTALL:
    case UPDATE:
    case COMPACTION:
    case COMPRESSED:
    case DEFLATED:
    case LZMA:
    case DELTA:
    case CTR:
    case DEFLATED_GCM:
    case DELTA_GCM:
        if (!(o.is_new && o.testing)) {
            ret = upload(d, cn, ln);
            if (ret != MOTA_OK)
                fail_msg("%s, cut at op %llu (%c 0x%x+%u): retry failed: %s", names[s], (unsigned long long)op,
                         cut_kind, cut_off, cut_len, mota_err_name(ret));
        }
        observe(d, &o);
        if (!(o.has_model && o.is_new && o.testing))
            fail_msg("%s, cut at op %llu: the retry did not install the new model (model %d new %d testing %d, "
                     "upload state %d offset %u, last error %s)",
                     names[s], (unsigned long long)op, o.has_model, o.is_new, o.testing,
                     d->device.agent.st[0].upload_state, d->device.agent.st[0].upload_offset,
                     mota_err_name(mota_agent_last_error(&d->device.agent, 0)));
        break;
    case CONFIRM:
        if (o.testing && o.is_new)
            assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
        observe(d, &o);
        if (!(o.is_new && !o.testing && o.committed == 2))
            fail_msg("confirm, cut at op %llu: not confirmed after the retry (new %d testing %d)",
                     (unsigned long long)op, o.is_new, o.testing);
        break;
    default: /* rollback, trial expiry, the first model's removal */
        if (o.testing)
            assert_int_equal(mota_agent_rollback(&d->device.agent, 0), MOTA_OK);
        observe(d, &o);
        if (o.is_new || o.testing)
            fail_msg("%s, cut at op %llu: still on the new model after the retry", names[s], (unsigned long long)op);
        if (s == FIRST_ROLLBACK && (o.has_model || mota_agent_upload_offset(&d->device.agent) != 0))
            fail_msg("%s, cut at op %llu: something is left after the retry", names[s], (unsigned long long)op);
        break;
    }
    /* and the state survives one more reboot */
    assert_int_equal(dev_boot(d), MOTA_OK);
    struct dev_outcome again;
    observe(d, &again);
    assert_int_equal(again.is_new, o.is_new);
}

static jmp_buf powered_off;

static void power_cut(void *ctx)
{
    (void)ctx;
    longjmp(powered_off, 1);
}

static uint64_t sweep(enum scenario s, bool torn)
{
    cn = s == COMPRESSED ? c3 : s == DEFLATED ? c4 : s == CTR || s == DEFLATED_GCM ? ce[s - CTR] : c2;
    ln = s == COMPRESSED ? l3 : s == DEFLATED ? l4 : s == CTR || s == DEFLATED_GCM ? le[s - CTR] : l2;
    dn = s == COMPRESSED ? d3 : s == DEFLATED ? d4 : s == CTR || s == DEFLATED_GCM ? de[s - CTR] : d2;
    if (s == LZMA)
        cn = cz, ln = lz, dn = dz;
    if (FROM_DELTA(s))
        cn = cd[s == DELTA_GCM], ln = ld[s == DELTA_GCM], dn = dd[s == DELTA_GCM];
    dold = FROM_DELTA(s) ? d0 : d1;
    uint8_t *img = prepare(s);
    struct mota_posix_device *d = dev_new(1);
    mota_posix_flash_on_cut(&d->pf, power_cut, NULL);
    /* dry run: how many program/erase operations the action takes */
    dev_flash_restore(d, img);
    uint64_t before = d->pf.ops;
    assert_int_equal(run(d, s), MOTA_OK);
    uint64_t total = d->pf.ops - before;
    for (uint64_t k = 1; k <= total; k++) {
        dev_flash_restore(d, img);
        mota_posix_flash_power_on(&d->pf);
        mota_posix_flash_cut(&d->pf, k, torn);
        volatile bool cut = true;
        if (setjmp(powered_off) == 0) {
            int ret = run(d, s);
            cut = false;
            if (ret != MOTA_OK)
                fail_msg("%s: op %llu: failed without a cut: %s", names[s], (unsigned long long)k, mota_err_name(ret));
        }
        if (cut != d->pf.dead)
            fail_msg("%s: op %llu: the power went but the action went on", names[s], (unsigned long long)k);
        cut_kind = d->pf.cut_kind;
        cut_off = d->pf.cut_off;
        cut_len = d->pf.cut_len;
        mota_posix_flash_power_on(&d->pf);
        check(d, s, k, !cut);
    }
    dev_free(d);
    free(img);
    return total;
}

static int setup(void **state)
{
    (void)state;
    struct container_opts o1 = {
        .seq = 1, .selftest = true, .split = true, .model = {.code_bytes = 24000, .params_bytes = 8000, .fill = 1}};
    struct container_opts o2 = {
        .seq = 2, .selftest = true, .split = true, .model = {.code_bytes = 28000, .params_bytes = 9000, .fill = 2}};
    dev_keys();
    c1 = make_container(&o1, &l1);
    c2 = make_container(&o2, &l2);
    /* 56 KB of model-like code and 9 KB of params: a few 16 KiB progress steps of compressed stream */
    struct container_opts o3 = {.seq = 2,
                                .selftest = true,
                                .split = true,
                                .compress = MOTA_DECOMP_LZ4,
                                .model = {.code_bytes = 56000, .params_bytes = 9000, .fill = 3, .noise = true}};
    c3 = make_container(&o3, &l3);
    manifest_digest(c3, l3, d3);
    o3.compress = MOTA_DECOMP_DEFLATE;
    c4 = make_container(&o3, &l4);
    manifest_digest(c4, l4, d4);
    manifest_digest(c1, l1, d1);
    manifest_digest(c2, l2, d2);
    /* encrypted: the update's model with AES-CTR to the device's P-256 key, the larger one deflated, then
     * AES-GCM to its KEK */
    struct container_opts oe[2] = {o2, o3};
    oe[0].encrypt = MOTA_ENC_A128CTR;
    oe[0].enc_ecdh = true;
    oe[1].encrypt = MOTA_ENC_A128GCM;
    oe[1].compress = MOTA_DECOMP_DEFLATE;
    oe[1].model.code_bytes = 40000; /* two 16 KiB steps of stream: resume points inside, fewer cut points */
    for (int i = 0; i < 2; i++) {
        ce[i] = make_container(&oe[i], &le[i]);
        manifest_digest(ce[i], le[i], de[i]);
    }
    /* LZMA: the larger model, 4 KiB blocks (a resume point each) */
    struct container_opts oz = o3;
    oz.compress = MOTA_DECOMP_LZMA;
    oz.model.code_bytes = 40000;
    cz = make_container(&oz, &lz);
    manifest_digest(cz, lz, dz);
    /* deltas: a model like the larger one, then that model with 3000 bytes of its code moved a little and
     * its params the same: a delta from the first, as pack --delta-from writes it; the second AES-GCM too */
    struct container_opts o0 = oz;
    o0.seq = 1;
    o0.compress = 0;
    c0 = make_container(&o0, &l0);
    manifest_digest(c0, l0, d0);
    struct container_opts od[2] = {oz, oz};
    for (int i = 0; i < 2; i++) {
        od[i].model.tweak = 3000;
        od[i].delta_from = &o0.model;
        od[i].encrypt = i == 1 ? MOTA_ENC_A128GCM : 0;
        cd[i] = make_container(&od[i], &ld[i]);
        manifest_digest(cd[i], ld[i], dd[i]);
    }
    print_message("delta containers: %zu and %zu bytes (the full LZMA one: %zu)\n", ld[0], ld[1], lz);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(c1);
    free(c2);
    free(c3);
    free(c4);
    for (int i = 0; i < 2; i++) {
        free(ce[i]);
        free(cd[i]);
    }
    free(cz);
    free(c0);
    return 0;
}

/* The encrypted scenarios where what they add (a cipher state to resume; the GHASH state of the point below
 * a torn unit's sectors) meets what the flash does: their power cuts on NOR flash, their torn operations on
 * ECC flash (what a torn unit costs there is a resume from below it). The sectors' sizes, which the mixed
 * flash is about, do not change it. */
static bool encrypted_cuts, encrypted_tears;

static void run_sweeps(bool torn)
{
    uint64_t n[N_SCENARIOS] = {0}, sum = 0;
    int n_scenarios = (torn ? encrypted_tears : encrypted_cuts) ? N_SCENARIOS : CTR;
    for (int s = 0; s < n_scenarios; s++) {
        n[s] = sweep((enum scenario)s, torn);
        sum += n[s];
    }
    char each[1024];
    size_t at = 0;
    for (int s = 0; s < n_scenarios && at < sizeof(each); s++)
        at += (size_t)snprintf(each + at, sizeof(each) - at, "%s%s %llu", s ? ", " : "", names[s],
                               (unsigned long long)n[s]);
    print_message("%s sweep: %llu cut points (%s); every reboot found a verified old or new model (or, for a first "
                  "model, the one on trial or none), nothing committed lost, every retry completed\n",
                  torn ? "torn-operation" : "power-cut", (unsigned long long)sum, each);
    print_message("%u retries resumed inside a compressed or encrypted payload at a journaled boundary, %u of them "
                  "inside an AES-GCM payload with its journaled GHASH state\n",
                  z_resumes, g_resumes);
    assert_true(z_resumes > 0 && (g_resumes > 0 || n_scenarios <= DEFLATED_GCM));
    z_resumes = g_resumes = 0;
}

static void test_power_cut_before_every_flash_operation(void **state)
{
    (void)state;
    run_sweeps(false);
}

static void test_every_flash_operation_torn(void **state)
{
    (void)state;
    run_sweeps(true);
}

int main(int argc, char **argv)
{
    const char *kind = argc > 1 ? argv[1] : "nor";
    encrypted_cuts = strcmp(kind, "nor") == 0;
    encrypted_tears = strcmp(kind, "ecc") == 0;
    if (strcmp(kind, "mixed") == 0)
        dev_part = &dev_part_mixed;
    else if (strcmp(kind, "ecc") == 0)
        dev_part = &dev_part_ecc;
    else if (strcmp(kind, "nor") != 0)
        return fprintf(stderr, "usage: test_agent_powerfail [nor|mixed|ecc]\n"), 2;
    print_message("flash: %s\n", kind);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_cut_before_every_flash_operation),
        cmocka_unit_test(test_every_flash_operation_torn),
    };
    return cmocka_run_group_tests_name("agent power loss", tests, setup, teardown);
}
