/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The state journal's GHASH records (agent/src/journal.c, docs/agent.md "The journal"): an AES-GCM payload's
 * resume point is a GHASH record, then its PROGRESS record; the pair survives a reload, a cut between the
 * two leaves the older pair in force, and so does every compaction, including the one the PROGRESS record
 * itself causes when its GHASH record filled the sector.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_fixture.h"
#include "journal.h" /* agent/src: the journal's records */

struct jfix {
    struct mota_posix_device *d;
    struct mota_journal j;
    struct mota_agent_model_state st[1];
    uint32_t key_floor;
};

/* A journal over the test device's two journal sectors, loaded from flash (formatted when blank). */
static void open_journal(struct jfix *f)
{
    memset(f->st, 0, sizeof(f->st));
    f->key_floor = 0;
    mota_journal_setup(&f->j, f->d->cfg.port->flash, f->d->cfg.port->sys, f->d->cfg.journal_offset, 1, f->st,
                       &f->key_floor);
    assert_int_equal(mota_journal_load(&f->j), MOTA_OK);
}

static void append(struct jfix *f, enum jrec_type type, uint32_t value, uint8_t fill)
{
    struct jrec r;
    mota_journal_rec(&r, type, 0);
    r.value = value;
    r.value2 = value / 2;
    memset(r.digest, fill, sizeof(r.digest));
    if (type == J_UPLOAD_BEGIN) {
        r.slot = 1;
        r.value = 1u << 20;
        r.value2 = 1000;
    }
    assert_int_equal(mota_journal_append(&f->j, &r), MOTA_OK);
}

/* A resume point at offset: its GHASH state (fill), then its PROGRESS record. */
static void resume_point(struct jfix *f, uint32_t offset, uint8_t fill)
{
    append(f, J_UPLOAD_GHASH, offset, fill);
    append(f, J_UPLOAD_PROGRESS, offset, fill);
}

static void expect_point(const struct jfix *f, uint32_t offset, uint8_t fill)
{
    uint8_t want[16];
    memset(want, fill, sizeof(want));
    assert_int_equal(f->st[0].upload_offset, offset);
    assert_int_equal(f->st[0].upload_ghash_at, offset);
    assert_memory_equal(f->st[0].upload_ghash, want, 16);
}

static void test_a_resume_point_keeps_its_ghash_state_through_a_reload_and_a_cut_between_the_pair(void **state)
{
    (void)state;
    struct jfix f = {.d = dev_new(1)};
    open_journal(&f);
    append(&f, J_UPLOAD_BEGIN, 0, 0);
    append(&f, J_UPLOAD_ERASED, 65536, 0);
    resume_point(&f, 17408, 0x11);
    open_journal(&f);
    expect_point(&f, 17408, 0x11);
    append(&f, J_UPLOAD_GHASH, 34816, 0x22); /* the power goes before its PROGRESS record */
    open_journal(&f);
    expect_point(&f, 17408, 0x11);
    append(&f, J_UPLOAD_PROGRESS, 40000, 0x33); /* a resume point of a payload without GHASH */
    open_journal(&f);
    assert_int_equal(f.st[0].upload_offset, 40000);
    assert_int_equal(f.st[0].upload_ghash_at, MOTA_JOURNAL_NO_GHASH);
    dev_free(f.d);
}

/* Wherever the sector ends (the GHASH record last in it, its PROGRESS record first after the compaction, or
 * any other place), the resume point after a reload is the last pair, with its state. */
static void test_every_compaction_keeps_the_resume_points_ghash_state(void **state)
{
    (void)state;
    for (unsigned pad = 0; pad < 4; pad++) {
        struct jfix f = {.d = dev_new(1)};
        open_journal(&f);
        append(&f, J_UPLOAD_BEGIN, 0, 0);
        for (unsigned i = 0; i < pad; i++)
            append(&f, J_UPLOAD_ERASED, 4096u * (i + 1), 0);
        for (uint32_t k = 1; k <= 80; k++) { /* more than a sector of 64 records: compactions on the way */
            resume_point(&f, 1024u * k, (uint8_t)k);
            open_journal(&f);
            expect_point(&f, 1024u * k, (uint8_t)k);
            append(&f, J_UPLOAD_GHASH, 1024u * k + 512u, 0xEE); /* then a cut before its PROGRESS record */
            open_journal(&f);
            expect_point(&f, 1024u * k, (uint8_t)k);
        }
        dev_free(f.d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_resume_point_keeps_its_ghash_state_through_a_reload_and_a_cut_between_the_pair),
        cmocka_unit_test(test_every_compaction_keeps_the_resume_points_ghash_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
