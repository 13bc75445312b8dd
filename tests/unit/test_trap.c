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
    struct mota_trap_regs r = regs(CRC, 0x102), before; /* CR's reserved bits 1 and 8 */

    /* the fault address is not one of the emulated registers */
    insn16(i, 0x6001);
    before = r;
    assert_int_equal(mota_trap_emulate(&t, &r, i, 0x20000000u), MOTA_ERR_SELFTEST_FAULT);
    /* the instruction does not access the faulting address */
    assert_int_equal(mota_trap_emulate(&t, &r, i, CRC + 8), MOTA_ERR_SELFTEST_FAULT);
    /* CR with reserved bits set: no STM32 CRC unit has them */
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

/* Run one 16-bit instruction against the emulated unit. */
static int step16(struct mota_trap_state *t, struct mota_trap_regs *r, uint16_t insn, uint32_t addr)
{
    uint8_t i[4];
    insn16(i, insn);
    return mota_trap_emulate(t, r, i, addr);
}

static void test_cr_keeps_polysize_and_reversal_bits_and_reads_them_back(void **state)
{
    (void)state;
    struct mota_trap_state t;
    mota_trap_reset(&t);
    static const uint32_t configs[] = {0x08, 0x10, 0x18, 0x20, 0x40, 0x60, 0x80, 0xF8, 0};
    for (size_t k = 0; k < sizeof(configs) / sizeof(configs[0]); k++) {
        struct mota_trap_regs r = regs(CRC, configs[k]);
        assert_int_equal(step16(&t, &r, 0x6081, CRC + 8), MOTA_OK); /* STR r1, [r0, #8] */
        r.r[2] = 0x55;
        assert_int_equal(step16(&t, &r, 0x6882, CRC + 8), MOTA_OK); /* LDR r2, [r0, #8] */
        assert_int_equal(r.r[2], configs[k]);
    }
}

static void test_cr_reset_loads_dr_with_init_reads_zero_and_keeps_the_configuration(void **state)
{
    (void)state;
    struct mota_trap_state t;
    mota_trap_reset(&t);
    struct mota_trap_regs r = regs(CRC, 0x12345678u);
    assert_int_equal(step16(&t, &r, 0x6101, CRC + 0x10), MOTA_OK); /* STR r1, [r0, #16]: INIT */
    r.r[1] = 0xF407A5C2u;
    assert_int_equal(step16(&t, &r, 0x6001, CRC), MOTA_OK); /* DR: one word fed, DR moves away from INIT */
    assert_int_not_equal(t.crc_dr, 0x12345678u);
    r.r[1] = 0x19; /* RESET with POLYSIZE 7 bits */
    assert_int_equal(step16(&t, &r, 0x6081, CRC + 8), MOTA_OK);
    assert_int_equal(step16(&t, &r, 0x6882, CRC + 8), MOTA_OK);
    assert_int_equal(r.r[2], 0x18); /* RESET reads 0, POLYSIZE stays as written */
    r.r[1] = 0;                     /* back to the default mode without another RESET: DR still holds INIT */
    assert_int_equal(step16(&t, &r, 0x6081, CRC + 8), MOTA_OK);
    assert_int_equal(step16(&t, &r, 0x6802, CRC), MOTA_OK); /* LDR r2, [r0, #0] */
    assert_int_equal(r.r[2], 0x12345678u);
}

static void test_dr_in_a_mode_not_emulated_is_a_fault_written_or_read(void **state)
{
    (void)state;
    static const uint32_t configs[] = {0x08, 0x10, 0x18, 0x20, 0x40, 0x60, 0x80};
    for (size_t k = 0; k < sizeof(configs) / sizeof(configs[0]); k++) {
        struct mota_trap_state t;
        mota_trap_reset(&t);
        struct mota_trap_regs r = regs(CRC, configs[k]), before;
        assert_int_equal(step16(&t, &r, 0x6081, CRC + 8), MOTA_OK);
        before = r;
        assert_int_equal(step16(&t, &r, 0x6001, CRC), MOTA_ERR_SELFTEST_FAULT); /* STR r1, [r0] */
        assert_int_equal(step16(&t, &r, 0x7001, CRC), MOTA_ERR_SELFTEST_FAULT); /* STRB r1, [r0] */
        assert_int_equal(step16(&t, &r, 0x6802, CRC), MOTA_ERR_SELFTEST_FAULT); /* LDR r2, [r0] */
        assert_int_equal(step16(&t, &r, 0x8802, CRC), MOTA_ERR_SELFTEST_FAULT); /* LDRH r2, [r0] */
        assert_memory_equal(&r, &before, sizeof(r));
        assert_int_equal(t.crc_dr, 0xFFFFFFFFu);
        r.r[1] = 1; /* CR = 1, a whole word: the default mode again, and DR computes */
        assert_int_equal(step16(&t, &r, 0x6081, CRC + 8), MOTA_OK);
        r.r[1] = 0xF407A5C2u;
        assert_int_equal(step16(&t, &r, 0x6001, CRC), MOTA_OK);
        assert_int_equal(step16(&t, &r, 0x6802, CRC), MOTA_OK);
        assert_int_equal(r.r[2], 0xB5E8B5CDu);
    }
}

/* ST's X-CUBE-AI 7.2 runtime (the U585 model's code at 0xa16-0xa6a and 0x1150-0x1170), instruction for
 * instruction: CR = 0x18 read back to pick the alias, then RESET, the poll, the challenge. */
static void test_st_runtime_alias_probe_then_challenge_as_its_code_makes_them(void **state)
{
    (void)state;
    struct mota_trap_state t;
    mota_trap_reset(&t);
    struct mota_trap_regs r = regs(0, 0);
    r.r[3] = CRC;
    r.r[2] = 24;
    assert_int_equal(step16(&t, &r, 0x609a, CRC + 8), MOTA_OK); /* str r2, [r3, #8] */
    assert_int_equal(step16(&t, &r, 0x689a, CRC + 8), MOTA_OK); /* ldr r2, [r3, #8] */
    assert_int_equal(r.r[2], 24);                               /* this alias answers */
    r.r[2] = 1;
    assert_int_equal(step16(&t, &r, 0x609a, CRC + 8), MOTA_OK); /* str r2, [r3, #8]: RESET */
    assert_int_equal(step16(&t, &r, 0x689a, CRC + 8), MOTA_OK); /* the poll: done at once */
    assert_int_equal(r.r[2], 0);
    r.r[1] = 0xF407A5C2u;
    assert_int_equal(step16(&t, &r, 0x6019, CRC), MOTA_OK); /* str r1, [r3, #0] */
    assert_int_equal(step16(&t, &r, 0x681b, CRC), MOTA_OK); /* ldr r3, [r3, #0] */
    assert_int_equal(r.r[3], 0xB5E8B5CDu);
    /* the same through the base a callback gave (r0, the secure alias here): 0xa3a-0xa4e */
    r = regs(MOTA_TRAP_CRC_S, 0);
    r.r[3] = 1;
    r.r[2] = MOTA_TRAP_CRC_S + 8;
    assert_int_equal(step16(&t, &r, 0x6083, MOTA_TRAP_CRC_S + 8), MOTA_OK); /* str r3, [r0, #8] */
    assert_int_equal(step16(&t, &r, 0x6813, MOTA_TRAP_CRC_S + 8), MOTA_OK); /* ldr r3, [r2, #0] */
    assert_int_equal(r.r[3], 0);
    r.r[2] = 0xF407A5C2u;
    assert_int_equal(step16(&t, &r, 0x6002, MOTA_TRAP_CRC_S), MOTA_OK); /* str r2, [r0, #0] */
    assert_int_equal(step16(&t, &r, 0x6802, MOTA_TRAP_CRC_S), MOTA_OK); /* ldr r2, [r0, #0] */
    assert_int_equal(r.r[2], 0xB5E8B5CDu);
    assert_int_equal(t.accesses, 10); /* six with the probe, four through a given base */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc_matches_the_stm32_unit_on_st_licence_challenge),
        cmocka_unit_test(test_st_licence_sequence_runs_through_16_and_32_bit_stores_and_loads),
        cmocka_unit_test(test_secure_alias_register_offsets_and_writeback_forms),
        cmocka_unit_test(test_fp_ctrl_enable_changes_only_with_its_key),
        cmocka_unit_test(test_everything_else_stays_a_fault_and_leaves_the_registers),
        cmocka_unit_test(test_cr_keeps_polysize_and_reversal_bits_and_reads_them_back),
        cmocka_unit_test(test_cr_reset_loads_dr_with_init_reads_zero_and_keeps_the_configuration),
        cmocka_unit_test(test_dr_in_a_mode_not_emulated_is_a_fault_written_or_read),
        cmocka_unit_test(test_st_runtime_alias_probe_then_challenge_as_its_code_makes_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
