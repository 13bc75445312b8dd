/* SPDX-License-Identifier: Apache-2.0 */
/* The emulated FP_CTRL and STM32 CRC unit a guarded legacy model's licence check reaches (mota/trap.h). */
#include "mota/err.h"
#include "mota/trap.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#define CRC MOTA_TRAP_CRC_NS

static void insn16(uint8_t b[4], uint16_t h)
{
    b[0] = (uint8_t)h;
    b[1] = (uint8_t)(h >> 8);
    b[2] = b[3] = 0;
}

static void insn32(uint8_t b[4], uint16_t h1, uint16_t h2)
{
    b[0] = (uint8_t)h1;
    b[1] = (uint8_t)(h1 >> 8);
    b[2] = (uint8_t)h2;
    b[3] = (uint8_t)(h2 >> 8);
}

static struct mota_trap_regs regs(uint32_t r0, uint32_t r1)
{
    struct mota_trap_regs r;
    memset(&r, 0, sizeof(r));
    r.r[0] = r0;
    r.r[1] = r1;
    r.r[15] = 0x60001000u;
    r.xpsr = 1u << 24;
    return r;
}

static void test_crc_matches_the_stm32_unit_on_st_licence_challenge(void **state)
{
    (void)state;
    /* the value ST's legacy runtime expects for its challenge word */
    assert_int_equal(mota_trap_crc_word(0xFFFFFFFFu, 0xF407A5C2u, 0x04C11DB7u), 0xB5E8B5CDu);
}

static void test_st_licence_sequence_runs_through_16_and_32_bit_stores_and_loads(void **state)
{
    (void)state;
    struct mota_trap_state t;
    uint8_t i[4];
    mota_trap_reset(&t);

    /* STR r1, [r0, #8]: CR = 1 (reset) */
    struct mota_trap_regs r = regs(CRC, 1);
    insn16(i, 0x6081);
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC + 8), MOTA_OK);
    assert_int_equal(r.r[15], 0x60001002u);
    /* LDR r2, [r0, #8]: RESET reads back 0 */
    r.r[2] = 0x55;
    insn16(i, 0x6882);
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC + 8), MOTA_OK);
    assert_int_equal(r.r[2], 0);
    /* STR.W r1, [r0, #0]: DR = challenge */
    r.r[1] = 0xF407A5C2u;
    insn32(i, 0xF8C0, 0x1000);
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC), MOTA_OK);
    assert_int_equal(r.r[15], 0x60001008u);
    /* LDR.W r3, [r0] */
    insn32(i, 0xF8D0, 0x3000);
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC), MOTA_OK);
    assert_int_equal(r.r[3], 0xB5E8B5CDu);
    assert_int_equal(t.accesses, 4);
}

static void test_secure_alias_register_offsets_and_writeback_forms(void **state)
{
    (void)state;
    struct mota_trap_state t;
    uint8_t i[4];
    mota_trap_reset(&t);
    /* STR r1, [r0, #4]! through the secure alias: IDR, and r0 written back */
    struct mota_trap_regs r = regs(MOTA_TRAP_CRC_S, 0xA5);
    insn32(i, 0xF840, 0x1F04);
    assert_int_equal(mota_trap_emulate(&t, &r, i, MOTA_TRAP_CRC_S + 4), MOTA_OK);
    assert_int_equal(r.r[0], MOTA_TRAP_CRC_S + 4);
    /* LDRB r1, [r0, #0]: IDR's byte */
    r.r[1] = 0;
    insn16(i, 0x7801);
    assert_int_equal(mota_trap_emulate(&t, &r, i, MOTA_TRAP_CRC_S + 4), MOTA_OK);
    assert_int_equal(r.r[1], 0xA5);
    /* STR r1, [r0, r2] with r0 = base, r2 = 8: CR through the register form */
    r = regs(CRC, 1);
    r.r[2] = 8;
    insn16(i, 0x5081);
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC + 8), MOTA_OK);
    assert_int_equal(t.crc_dr, 0xFFFFFFFFu);
}

static void test_fp_ctrl_enable_changes_only_with_its_key(void **state)
{
    (void)state;
    struct mota_trap_state t;
    uint8_t i[4];
    mota_trap_reset(&t);
    t.fp_ctrl |= 1u;
    struct mota_trap_regs r = regs(MOTA_TRAP_FP_CTRL, t.fp_ctrl & ~1u); /* ST's `&= ~1`: no KEY */
    insn16(i, 0x6001);
    assert_int_equal(mota_trap_emulate(&t, &r, i, MOTA_TRAP_FP_CTRL), MOTA_OK);
    assert_int_equal(t.fp_ctrl & 1u, 1u);
    r.r[1] = 2u; /* KEY, ENABLE 0 */
    assert_int_equal(mota_trap_emulate(&t, &r, i, MOTA_TRAP_FP_CTRL), MOTA_OK);
    assert_int_equal(t.fp_ctrl & 1u, 0u);
}

static void test_everything_else_stays_a_fault_and_leaves_the_registers(void **state)
{
    (void)state;
    struct mota_trap_state t;
    uint8_t i[4];
    mota_trap_reset(&t);
    struct mota_trap_regs r = regs(CRC, 0x18), before;

    /* the fault address is not one of the emulated registers */
    insn16(i, 0x6001);
    before = r;
    assert_int_equal(mota_trap_emulate(&t, &r, i, 0x20000000u), MOTA_ERR_SELFTEST_FAULT);
    /* the instruction does not access the faulting address */
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC + 8), MOTA_ERR_SELFTEST_FAULT);
    /* CR with POLYSIZE bits: another configuration than the one emulated */
    insn16(i, 0x6081);
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC + 8), MOTA_ERR_SELFTEST_FAULT);
    /* LDRD r0, r1, [r2] */
    r.r[2] = CRC;
    before.r[2] = CRC;
    insn32(i, 0xE9D2, 0x0100);
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC), MOTA_ERR_SELFTEST_FAULT);
    /* a halfword to CR, a word to a reserved offset */
    insn16(i, 0x8101); /* STRH r1, [r0, #8] */
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC + 8), MOTA_ERR_SELFTEST_FAULT);
    r.r[0] = CRC + 0xC;
    insn16(i, 0x6001);
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC + 0xC), MOTA_ERR_SELFTEST_FAULT);
    r.r[0] = CRC;
    /* inside an IT block */
    r.xpsr |= 0x0400u;
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC), MOTA_ERR_SELFTEST_FAULT);
    r.xpsr = before.xpsr;
    /* a load into the PC */
    insn32(i, 0xF8D0, 0xF000);
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC), MOTA_ERR_SELFTEST_FAULT);
    assert_memory_equal(&r, &before, sizeof(r));
    assert_int_equal(t.accesses, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc_matches_the_stm32_unit_on_st_licence_challenge),
        cmocka_unit_test(test_st_licence_sequence_runs_through_16_and_32_bit_stores_and_loads),
        cmocka_unit_test(test_secure_alias_register_offsets_and_writeback_forms),
        cmocka_unit_test(test_fp_ctrl_enable_changes_only_with_its_key),
        cmocka_unit_test(test_everything_else_stays_a_fault_and_leaves_the_registers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
