/* SPDX-License-Identifier: Apache-2.0 */
/* The device agent through the posix port: update flow, trial, rollback, resume. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_fixture.h"

static void expect_active(struct mota_posix_device *d, unsigned m, const uint8_t *c, size_t len, bool testing)
{
    struct mota_agent_model_info info;
    uint8_t md[32];
    manifest_digest(c, len, md);
    assert_int_equal(mota_agent_model_info(&d->device.agent, m, &info), MOTA_OK);
    assert_memory_equal(info.digest, md, 32);
    assert_int_equal(info.testing, testing);
    assert_non_null(info.instance);
    assert_true(info.instance->ram_addr >= DEV_EXEC_ADDR);
}

static void test_update_flow_install_trial_confirm_across_reboots(void **state)
{
    (void)state;
    struct mota_posix_device *d = dev_new(1);
    struct mota_agent_model_info info;
    size_t l1, l2;
    struct container_opts o1 = {.seq = 1, .version = "1.0.0", .selftest = true};
    struct container_opts o2 = {.seq = 2, .version = "2.0.0", .selftest = true, .model = {.fill = 0x22}};
    uint8_t *c1 = make_container(&o1, &l1), *c2 = make_container(&o2, &l2);

    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(mota_agent_model_info(&d->device.agent, 0, &info), MOTA_ERR_NO_MODEL);
    assert_int_equal(send_container(&d->device.agent, c1, l1, 4096), MOTA_OK);
    expect_active(d, 0, c1, l1, true);
    assert_int_equal(d->sim.runs, 1); /* the self-test ran */
    assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
    assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_ERR_NOT_TESTING);

    assert_int_equal(dev_boot(d), MOTA_OK); /* reboot */
    expect_active(d, 0, c1, l1, false);
    assert_int_equal(mota_agent_model_info(&d->device.agent, 0, &info), MOTA_OK);
    assert_int_equal(info.seq, 1);
    assert_int_equal(info.version_len, 5);
    assert_memory_equal(info.version, "1.0.0", 5);
    assert_int_equal(info.install_mode, MOTA_INSTALL_XIP);
    assert_int_equal(info.exec_ram_addr, DEV_EXEC_ADDR);
    assert_int_equal(info.exec_ram_used, 200); /* round8(RW) of the test model */
    assert_int_equal(info.instance->ram_addr, DEV_EXEC_ADDR);
    /* XIP: the code runs from its slot in the memory-mapped flash */
    uint32_t slot_start = DEV_XIP_BASE + d->cfg.models[0].slot_offset[info.slot];
    assert_true(info.instance->rom_addr > slot_start && info.instance->rom_addr < slot_start + DEV_SLOT_SIZE);

    assert_int_equal(send_container(&d->device.agent, c2, l2, 1000), MOTA_OK);
    expect_active(d, 0, c2, l2, true);
    assert_int_equal(dev_boot(d), MOTA_OK); /* trial boot 1 */
    expect_active(d, 0, c2, l2, true);
    assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
    assert_int_equal(dev_boot(d), MOTA_OK);
    expect_active(d, 0, c2, l2, false);
    assert_int_equal(mota_agent_model_info(&d->device.agent, 0, &info), MOTA_OK);
    assert_int_equal(info.seq, 2);
    free(c1);
    free(c2);
    dev_free(d);
}

static void test_unconfirmed_model_is_reverted_after_the_trial_boots(void **state)
{
    (void)state;
    struct mota_posix_device *d = dev_new(1);
    size_t l1, l2;
    struct container_opts o1 = {.seq = 1}, o2 = {.seq = 2, .model = {.fill = 3}};
    uint8_t *c1 = make_container(&o1, &l1), *c2 = make_container(&o2, &l2);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(send_container(&d->device.agent, c1, l1, 777), MOTA_OK);
    assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
    assert_int_equal(send_container(&d->device.agent, c2, l2, 777), MOTA_OK);
    for (int boot = 1; boot <= 3; boot++) {
        assert_int_equal(dev_boot(d), MOTA_OK);
        expect_active(d, 0, c2, l2, true);
    }
    assert_int_equal(dev_boot(d), MOTA_OK); /* the fourth boot without a confirm */
    expect_active(d, 0, c1, l1, false);
    assert_int_equal(mota_agent_last_error(&d->device.agent, 0), MOTA_ERR_TRIAL_EXPIRED);
    /* a watchdog reset during a trial reverts at once */
    assert_int_equal(send_container(&d->device.agent, c2, l2, 777), MOTA_OK);
    d->cause = MOTA_RESET_WATCHDOG;
    assert_int_equal(dev_boot(d), MOTA_OK);
    expect_active(d, 0, c1, l1, false);
    assert_int_equal(mota_agent_last_error(&d->device.agent, 0), MOTA_ERR_WATCHDOG);
    /* and the application can ask for it */
    d->cause = MOTA_RESET_POWER_ON;
    assert_int_equal(send_container(&d->device.agent, c2, l2, 777), MOTA_OK);
    assert_int_equal(mota_agent_rollback(&d->device.agent, 0), MOTA_OK);
    expect_active(d, 0, c1, l1, false);
    assert_int_equal(mota_agent_rollback(&d->device.agent, 0), MOTA_ERR_NOT_TESTING);
    free(c1);
    free(c2);
    dev_free(d);
}

static void test_a_confirmed_model_that_faults_can_be_retired_and_cannot_come_back_at_its_number(void **state)
{
    (void)state;
    struct mota_posix_device *d = dev_new(1);
    size_t l1, l2, l3;
    struct container_opts o1 = {.seq = 1}, o2 = {.seq = 2, .model = {.fill = 3}}, o3 = {.seq = 3, .model = {.fill = 4}};
    uint8_t *c1 = make_container(&o1, &l1), *c2 = make_container(&o2, &l2), *c3 = make_container(&o3, &l3);
    struct mota_agent *a = &d->device.agent;
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(send_container(a, c1, l1, 777), MOTA_OK);
    assert_int_equal(mota_agent_confirm(a, 0), MOTA_OK);
    assert_int_equal(send_container(a, c2, l2, 777), MOTA_OK);
    assert_int_equal(mota_agent_confirm(a, 0), MOTA_OK);
    /* confirmed and healthy: not the application's to drop */
    assert_int_equal(mota_agent_rollback(a, 0), MOTA_ERR_NOT_TESTING);
    expect_active(d, 0, c2, l2, false);
    /* it faults in the application's inference: retired, v1 back, across a reboot */
    assert_int_equal(mota_agent_model_fault(a, 0, MOTA_ERR_SELFTEST_FAULT), MOTA_OK);
    assert_int_equal(mota_agent_rollback(a, 0), MOTA_OK);
    expect_active(d, 0, c1, l1, false);
    assert_int_equal(mota_agent_last_error(a, 0), MOTA_ERR_SELFTEST_FAULT);
    assert_int_equal(dev_boot(d), MOTA_OK);
    expect_active(d, 0, c1, l1, false);
    assert_int_equal(mota_agent_last_error(a, 0), MOTA_ERR_SELFTEST_FAULT);
    /* nothing further back; the retired container is refused at its number; a fix goes in */
    assert_int_equal(mota_agent_model_fault(a, 0, MOTA_ERR_SELFTEST_TIMEOUT), MOTA_OK);
    assert_int_equal(mota_agent_rollback(a, 0), MOTA_ERR_NO_PREVIOUS);
    assert_int_equal(send_container(a, c2, l2, 777), MOTA_ERR_ROLLBACK_SAME_SEQ);
    assert_int_equal(send_container(a, c1, l1, 777), MOTA_ERR_ALREADY_ACTIVE); /* v1 runs: nothing to do */
    assert_int_equal(send_container(a, c3, l3, 777), MOTA_OK);
    expect_active(d, 0, c3, l3, true);
    free(c1);
    free(c2);
    free(c3);
    dev_free(d);
}

static void test_interrupted_upload_resumes_from_the_persisted_offset(void **state)
{
    (void)state;
    struct mota_posix_device *d = dev_new(1);
    size_t len;
    struct container_opts o = {.seq = 5, .model = {.code_bytes = 60000, .params_bytes = 20000}, .split = true};
    uint8_t *c = make_container(&o, &len);
    assert_int_equal(dev_boot(d), MOTA_OK);
    /* 50 KB, then the device resets */
    uint32_t off = 0;
    while (off < 50000) {
        int r = mota_agent_write(&d->device.agent, off, c + off, 1000);
        if (r <= 0)
            fail_msg("write at %u: %s", off, mota_err_name(r));
        off = (uint32_t)r;
    }
    assert_int_equal(dev_boot(d), MOTA_OK);
    uint32_t resume = mota_agent_upload_offset(&d->device.agent);
    assert_true(resume > 40000 && resume <= 50000);
    /* the sender starts over; after the head the agent jumps ahead */
    struct mota_envelope env;
    assert_int_equal(mota_envelope_decode(c, len, &env), MOTA_OK);
    int r = mota_agent_write(&d->device.agent, 0, c, env.head_len + 100);
    assert_int_equal(r, (int)resume);
    mota_posix_flash_reset_counters(&d->pf);
    off = resume;
    while (off < len) {
        size_t n = len - off < 3000 ? len - off : 3000;
        r = mota_agent_write(&d->device.agent, off, c + off, n);
        if (r <= 0)
            fail_msg("write at %u: %s", off, mota_err_name(r));
        off = (uint32_t)r;
    }
    assert_int_equal(off, len);
    expect_active(d, 0, c, len, true);
    /* only what was missing went to flash (plus journal records) */
    assert_true(d->pf.bytes_programmed < (len - resume) + 4096);
    print_message("resumed at %u of %zu bytes; %llu bytes programmed after the reset\n", resume, len,
                  (unsigned long long)d->pf.bytes_programmed);
    /* an offset the agent does not expect is refused */
    assert_int_equal(mota_agent_write(&d->device.agent, 12345, c, 10), MOTA_ERR_UPLOAD_OFFSET);
    free(c);
    dev_free(d);
}

static void test_two_models_each_have_their_own_pair(void **state)
{
    (void)state;
    struct mota_posix_device *d = dev_new(2);
    size_t la, lb, la2;
    struct container_opts a1 = {.seq = 1}, b1 = {.seq = 7, .model = {.c_name = "kws", .fill = 9}};
    struct container_opts a2 = {.seq = 2, .model = {.fill = 4}};
    uint8_t *ca = make_container(&a1, &la), *cb = make_container(&b1, &lb), *ca2 = make_container(&a2, &la2);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(send_container(&d->device.agent, ca, la, 3000), MOTA_OK);
    assert_int_equal(send_container(&d->device.agent, cb, lb, 3000), MOTA_OK);
    assert_int_equal(mota_agent_find_model(&d->device.agent, "kws", 3), 1);
    assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
    assert_int_equal(mota_agent_confirm(&d->device.agent, 1), MOTA_OK);
    assert_int_equal(dev_boot(d), MOTA_OK);
    expect_active(d, 0, ca, la, false);
    expect_active(d, 1, cb, lb, false);
    /* updating one leaves the other alone; the kws sequence floor is its own */
    assert_int_equal(send_container(&d->device.agent, ca2, la2, 3000), MOTA_OK);
    assert_int_equal(mota_agent_rollback(&d->device.agent, 0), MOTA_OK);
    assert_int_equal(dev_boot(d), MOTA_OK);
    expect_active(d, 0, ca, la, false);
    expect_active(d, 1, cb, lb, false);
    struct mota_agent_model_info info;
    assert_int_equal(mota_agent_model_info(&d->device.agent, 1, &info), MOTA_OK);
    assert_int_equal(info.seq, 7);
    assert_int_equal(info.c_name_len, 3);
    free(ca);
    free(cb);
    free(ca2);
    dev_free(d);
}

static void test_rollback_removes_a_first_model_on_trial_and_a_confirmed_first_model_stays(void **state)
{
    (void)state;
    struct mota_posix_device *d = dev_new(1);
    struct mota_agent *a = &d->device.agent;
    struct mota_agent_model_info info;
    size_t l1;
    struct container_opts o1 = {.seq = 1, .selftest = true};
    uint8_t *c1 = make_container(&o1, &l1);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(mota_agent_rollback(a, 0), MOTA_ERR_NOT_TESTING); /* nothing at all */
    assert_int_equal(send_container(a, c1, l1, 1000), MOTA_OK);
    expect_active(d, 0, c1, l1, true);
    /* nothing before it: removed, as its trial's expiry would remove it, and it stays removed */
    assert_int_equal(mota_agent_rollback(a, 0), MOTA_OK);
    assert_int_equal(mota_agent_model_info(a, 0, &info), MOTA_ERR_NO_MODEL);
    assert_int_equal(mota_agent_last_error(a, 0), MOTA_OK);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(mota_agent_model_info(a, 0, &info), MOTA_ERR_NO_MODEL);
    /* nothing was committed: the same container may come again; confirmed, it is all there is */
    assert_int_equal(send_container(a, c1, l1, 1000), MOTA_OK);
    assert_int_equal(mota_agent_confirm(a, 0), MOTA_OK);
    assert_int_equal(mota_agent_model_fault(a, 0, MOTA_ERR_SELFTEST_FAULT), MOTA_OK);
    assert_int_equal(mota_agent_rollback(a, 0), MOTA_ERR_NO_PREVIOUS);
    expect_active(d, 0, c1, l1, false);
    free(c1);
    dev_free(d);
}

static void
test_a_later_install_confirm_or_rollback_clears_the_last_error_and_a_journaled_one_is_of_an_earlier_boot(void **state)
{
    (void)state;
    struct mota_posix_device *d = dev_new(1);
    struct mota_agent *a = &d->device.agent;
    const struct mota_agent_model_state *s = &a->st[0];
    size_t l1, l2, l3, lbad;
    struct container_opts o1 = {.seq = 1}, o2 = {.seq = 2, .model = {.fill = 2}}, o3 = {.seq = 3, .model = {.fill = 3}};
    struct container_opts ob = {.seq = 9, .selftest = true, .model = {.fill = 9}};
    uint8_t *c1 = make_container(&o1, &l1), *c2 = make_container(&o2, &l2), *c3 = make_container(&o3, &l3);
    uint8_t *bad = make_container(&ob, &lbad);
    d->clock_at_zero = false;
    assert_int_equal(dev_boot(d), MOTA_OK);
    /* a self-test that fails: journaled, in this boot */
    d->sim.mode = MOTA_SIM_FAIL;
    assert_int_equal(send_container(a, bad, lbad, 4096), MOTA_ERR_SELFTEST_OUTPUT);
    d->sim.mode = MOTA_SIM_PASS;
    uint64_t now_ms = d->sys.now_us(d->sys.ctx) / 1000u;
    assert_int_equal(s->last_error, MOTA_ERR_SELFTEST_OUTPUT);
    assert_true(s->last_error_this_boot);
    assert_true(s->last_error_ms <= now_ms);
    /* read back from the journal after a reboot: of an earlier boot, its time unknown */
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(s->last_error, MOTA_ERR_SELFTEST_OUTPUT);
    assert_false(s->last_error_this_boot);
    assert_int_equal(s->last_error_ms, 0);
    /* an install clears it, and so does a confirm after a refusal, and a rollback after another */
    assert_int_equal(send_container(a, c1, l1, 4096), MOTA_OK);
    assert_int_equal(s->last_error, MOTA_OK);
    assert_false(s->last_error_this_boot);
    assert_int_equal(send_container(a, c2, l2, 4096), MOTA_ERR_TRIAL_PENDING);
    assert_int_equal(s->last_error, MOTA_ERR_TRIAL_PENDING);
    assert_true(s->last_error_this_boot);
    assert_int_equal(mota_agent_confirm(a, 0), MOTA_OK);
    assert_int_equal(s->last_error, MOTA_OK);
    assert_int_equal(send_container(a, c2, l2, 4096), MOTA_OK);
    assert_int_equal(send_container(a, c3, l3, 4096), MOTA_ERR_TRIAL_PENDING);
    assert_int_equal(mota_agent_rollback(a, 0), MOTA_OK);
    assert_int_equal(s->last_error, MOTA_OK);
    /* and stays cleared across a reboot */
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(mota_agent_last_error(a, 0), MOTA_OK);
    free(c1);
    free(c2);
    free(c3);
    free(bad);
    dev_free(d);
}

static void test_the_previous_model_is_named_until_an_update_erases_its_slot(void **state)
{
    (void)state;
    struct mota_posix_device *d = dev_new(1);
    struct mota_agent *a = &d->device.agent;
    struct mota_agent_previous prev;
    struct mota_agent_model_info info;
    size_t l1, l2, l3;
    struct container_opts o1 = {.seq = 1, .version = "1.0.0"},
                          o2 = {.seq = 2, .version = "2.0.0", .model = {.fill = 2}};
    struct container_opts o3 = {.seq = 3, .model = {.fill = 3}};
    uint8_t *c1 = make_container(&o1, &l1), *c2 = make_container(&o2, &l2), *c3 = make_container(&o3, &l3);
    uint8_t d1[32];
    manifest_digest(c1, l1, d1);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(send_container(a, c1, l1, 4096), MOTA_OK);
    assert_int_equal(mota_agent_previous(a, 0, &prev), MOTA_ERR_NO_PREVIOUS);
    assert_int_equal(mota_agent_confirm(a, 0), MOTA_OK);
    assert_int_equal(send_container(a, c2, l2, 4096), MOTA_OK);
    /* v1, in the other slot, is what a rollback of v2 brings back; a confirm keeps it there */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(mota_agent_previous(a, 0, &prev), MOTA_OK);
        assert_int_equal(mota_agent_model_info(a, 0, &info), MOTA_OK);
        assert_int_equal(prev.seq, 1);
        assert_memory_equal(prev.digest, d1, 32);
        assert_int_equal(prev.slot, 1 - info.slot);
        assert_int_equal(prev.version_len, 5);
        assert_memory_equal(prev.version, "1.0.0", 5);
        assert_int_equal(mota_agent_confirm(a, 0), i == 0 ? MOTA_OK : MOTA_ERR_NOT_TESTING);
    }
    /* the next update's head and first bytes: its slot is erased, v1 is gone for good (across a reboot too) */
    struct mota_envelope env;
    assert_int_equal(mota_envelope_decode(c3, l3, &env), MOTA_OK);
    assert_true(mota_agent_write(a, 0, c3, env.head_len + 64) > 0);
    assert_int_equal(mota_agent_previous(a, 0, &prev), MOTA_ERR_NO_PREVIOUS);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(mota_agent_previous(a, 0, &prev), MOTA_ERR_NO_PREVIOUS);
    assert_int_equal(mota_agent_model_fault(a, 0, MOTA_ERR_SELFTEST_FAULT), MOTA_OK);
    assert_int_equal(mota_agent_rollback(a, 0), MOTA_ERR_NO_PREVIOUS); /* not back to an erased slot */
    expect_active(d, 0, c2, l2, false);
    free(c1);
    free(c2);
    free(c3);
    dev_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_update_flow_install_trial_confirm_across_reboots),
        cmocka_unit_test(test_unconfirmed_model_is_reverted_after_the_trial_boots),
        cmocka_unit_test(test_a_confirmed_model_that_faults_can_be_retired_and_cannot_come_back_at_its_number),
        cmocka_unit_test(test_interrupted_upload_resumes_from_the_persisted_offset),
        cmocka_unit_test(test_two_models_each_have_their_own_pair),
        cmocka_unit_test(test_rollback_removes_a_first_model_on_trial_and_a_confirmed_first_model_stays),
        cmocka_unit_test(
            test_a_later_install_confirm_or_rollback_clears_the_last_error_and_a_journaled_one_is_of_an_earlier_boot),
        cmocka_unit_test(test_the_previous_model_is_named_until_an_update_erases_its_slot),
    };
    return cmocka_run_group_tests_name("agent", tests, NULL, NULL);
}
