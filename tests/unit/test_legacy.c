/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Driving a legacy X-CUBE-AI model through its own API (mota/legacy.h),
 * against a fake model on the host: a device memory array, and entry points
 * written in C that behave like ST's (create, init_v2, report, run), or
 * misbehave the way a hostile or broken model would.
 */
#include "mota/err.h"
#include "mota/legacy.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#define BASE 0x20000000u
#define MEM 0x10000u
#define CTX (BASE + 0x100u)
#define WEIGHTS (BASE + 0x1000u)
#define ACTS (BASE + 0x2000u)
#define MODEL (BASE + 0x3000u) /* the model's own data: strings, buffer descriptors, its network */
#define IO (BASE + 0x8000u)
#define IO_SIZE 1024u
#define NET (MODEL + 0x800u)

static uint8_t mem[MEM];

enum misbehave {
    GOOD,
    CREATE_FAILS,
    INPUTS_OUTSIDE,
    NO_INPUTS,
    ACTS_TOO_LARGE,
    NAME_UNTERMINATED,
    RUN_FAILS,
    CALL_FAULTS,
    CHANGES_DESCRIPTOR
};
static enum misbehave how;
static unsigned calls[8];

static uint8_t *at(uint32_t addr)
{
    return mem + (addr - BASE);
}

static void w32(uint32_t addr, uint32_t v)
{
    memcpy(at(addr), &v, 4);
}

static uint32_t r32(uint32_t addr)
{
    uint32_t v;
    memcpy(&v, at(addr), 4);
    return v;
}

static void buffer(uint32_t addr, uint32_t format, uint32_t elements)
{
    memset(at(addr), 0, 28);
    w32(addr, format);
    w32(addr + 16, elements);
}

static int call(void *ctx, unsigned entry, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t *ret)
{
    (void)ctx;
    calls[entry]++;
    if (how == CALL_FAULTS && entry == MOTA_LEGACY_RUN)
        return MOTA_ERR_SELFTEST_FAULT;
    switch (entry) {
    case MOTA_LEGACY_CREATE:
        if (how == CREATE_FAILS) {
            *ret = 0x33u | 0x10u << 8; /* CREATE_FAILED, NETWORK */
            return MOTA_OK;
        }
        w32(a0, NET);
        *ret = 0;
        return MOTA_OK;
    case MOTA_LEGACY_INIT_V2: /* the weights and activations the driver passes */
        *ret = a0 == NET && r32(a1) == WEIGHTS && r32(a2) == ACTS;
        return MOTA_OK;
    case MOTA_LEGACY_REPORT: {
        assert_int_equal(a0, NET);
        uint8_t *r = at(a1);
        memset(r, 0, 124);
        strcpy((char *)at(MODEL), "tiny");
        strcpy((char *)at(MODEL + 16), "Nov 23 2026 10:00:00");
        strcpy((char *)at(MODEL + 48), "ST.AI 7.2.0");
        if (how == NAME_UNTERMINATED)
            memset(at(MEM - 8 + BASE), 'x', 8);
        w32(a1 + 0, how == NAME_UNTERMINATED ? BASE + MEM - 8 : MODEL);
        w32(a1 + 12, MODEL + 16);
        w32(a1 + 24, MODEL + 48);
        r[28] = 7, r[29] = 2, r[30] = 0;
        w32(a1 + 44, 10672);
        r[48] = how == NO_INPUTS ? 0 : 2; /* two inputs */
        r[50] = 1;
        buffer(MODEL + 0x100, 0x00840440u, 3);      /* S8 x3 */
        buffer(MODEL + 0x100 + 28, 0x00840840u, 2); /* S16 x2 */
        buffer(MODEL + 0x200, 0x00840440u, 5);      /* S8 x5 */
        w32(a1 + 52, how == INPUTS_OUTSIDE ? 0x30000000u : MODEL + 0x100);
        w32(a1 + 56, MODEL + 0x200);
        w32(a1 + 60, 0xA1FACADEu);
        buffer(MODEL + 0x300, 0x00040440u, 42); /* weights, U8 */
        buffer(MODEL + 0x340, 0x00040440u, how == ACTS_TOO_LARGE ? 4096 : 64);
        w32(a1 + 64, 1u << 16), w32(a1 + 68, MODEL + 0x300);
        w32(a1 + 72, 1u << 16), w32(a1 + 76, MODEL + 0x340);
        *ret = 1;
        return MOTA_OK;
    }
    case MOTA_LEGACY_RUN: {
        if (how == CHANGES_DESCRIPTOR)
            w32(MODEL + 0x100 + 16, 99);
        /* out[i] = sum of inputs + i, reading through the descriptors' data pointers */
        const uint8_t *in0 = at(r32(a1 + 4)), *in1 = at(r32(a1 + 28 + 4));
        int8_t *out = (int8_t *)at(r32(a2 + 4));
        int sum = 0;
        for (int i = 0; i < 3; i++)
            sum += (int8_t)in0[i];
        for (int i = 0; i < 4; i++)
            sum += in1[i];
        for (int i = 0; i < 5; i++)
            out[i] = (int8_t)(sum + i);
        *ret = how == RUN_FAILS ? 0 : 1;
        return MOTA_OK;
    }
    default: fail_msg("unexpected entry %u", entry); return MOTA_ERR_SELFTEST_RUN;
    }
    (void)a2;
}

/* the model owns its memory, not what lies beyond */
static const void *peek(void *ctx, uint32_t addr, uint32_t len)
{
    (void)ctx;
    if (addr < BASE || (uint64_t)addr + len > (uint64_t)BASE + MEM)
        return NULL;
    return at(addr);
}

static const struct mota_legacy_env env = {
    .call = call, .peek = peek, .io = mem + (IO - BASE), .io_addr = IO, .io_size = IO_SIZE};

static struct mota_installed model(void)
{
    struct mota_installed m;
    memset(&m, 0, sizeof(m));
    m.family = MOTA_NBIN_FAMILY_LEGACY;
    m.n_entries = 11;
    m.ctx_addr = CTX;
    m.param0_addr = WEIGHTS;
    m.acts_addr = ACTS;
    m.acts_size = 64;
    return m;
}

static int setup(void **state)
{
    (void)state;
    memset(mem, 0, sizeof(mem));
    memset(calls, 0, sizeof(calls));
    how = GOOD;
    return 0;
}

static void test_open_reports_the_model_and_run_feeds_every_input_and_output(void **state)
{
    (void)state;
    struct mota_installed m = model();
    struct mota_legacy_about a;
    uint32_t h = 0;
    assert_int_equal(mota_legacy_open(&env, &m, &h, &a), MOTA_OK);
    assert_int_equal(h, NET);
    assert_string_equal(a.name, "tiny");
    assert_string_equal(a.compiled, "Nov 23 2026 10:00:00");
    assert_string_equal(a.tool_revision, "ST.AI 7.2.0");
    assert_int_equal(a.tool_version, 0x070200);
    assert_int_equal(a.n_macc, 10672);
    assert_int_equal(a.n_inputs, 2);
    assert_int_equal(a.in_bytes, 3 + 4);
    assert_int_equal(a.out_bytes, 5);
    assert_int_equal(a.weights_size, 42);
    assert_int_equal(a.acts_size, 64);

    uint8_t in[7] = {1, 2, 3, 4, 0, 0, 0}, out[5];
    assert_int_equal(mota_legacy_run(&env, h, &a, in, sizeof(in), out, sizeof(out)), MOTA_OK);
    for (int i = 0; i < 5; i++)
        assert_int_equal(out[i], 10 + i);
    assert_int_equal(mota_legacy_run(&env, h, &a, in, 6, out, sizeof(out)), MOTA_ERR_SELFTEST_RUN);
    assert_int_equal(calls[MOTA_LEGACY_RUN], 1);
}

static void test_a_refusing_or_lying_model_gets_its_reason(void **state)
{
    (void)state;
    static const struct {
        enum misbehave how;
        int want;
    } cases[] = {
        {CREATE_FAILS, MOTA_ERR_SELFTEST_API},         {INPUTS_OUTSIDE, MOTA_ERR_SELFTEST_REPORT},
        {NO_INPUTS, MOTA_ERR_SELFTEST_REPORT},         {ACTS_TOO_LARGE, MOTA_ERR_SELFTEST_REPORT},
        {NAME_UNTERMINATED, MOTA_ERR_SELFTEST_REPORT},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        setup(NULL);
        how = cases[i].how;
        struct mota_installed m = model();
        struct mota_legacy_about a;
        uint32_t h;
        assert_int_equal(mota_legacy_open(&env, &m, &h, &a), cases[i].want);
    }
}

static void test_run_failures_fault_and_a_changed_descriptor_are_reported(void **state)
{
    (void)state;
    static const struct {
        enum misbehave how;
        int want;
    } cases[] = {
        {RUN_FAILS, MOTA_ERR_SELFTEST_API},
        {CALL_FAULTS, MOTA_ERR_SELFTEST_FAULT},
        {CHANGES_DESCRIPTOR, MOTA_OK}, /* changed during this run: caught at the next */
    };
    uint8_t in[7] = {0}, out[5];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        setup(NULL);
        struct mota_installed m = model();
        struct mota_legacy_about a;
        uint32_t h;
        assert_int_equal(mota_legacy_open(&env, &m, &h, &a), MOTA_OK);
        how = cases[i].how;
        assert_int_equal(mota_legacy_run(&env, h, &a, in, sizeof(in), out, sizeof(out)), cases[i].want);
        if (how == CHANGES_DESCRIPTOR)
            assert_int_equal(mota_legacy_run(&env, h, &a, in, sizeof(in), out, sizeof(out)), MOTA_ERR_SELFTEST_REPORT);
    }
}

static void test_sizes_of_tensor_formats(void **state)
{
    (void)state;
    assert_int_equal(mota_legacy_tensor_bytes(0x00840440u, 10), 10);         /* S8 */
    assert_int_equal(mota_legacy_tensor_bytes(0x01821040u, 10), 40);         /* FLOAT (7.x) */
    assert_int_equal(mota_legacy_tensor_bytes(0x008400C0u, 10), 2);          /* S1, packed */
    assert_int_equal(mota_legacy_tensor_bytes(0x00000040u, 10), 0);          /* NONE */
    assert_int_equal(mota_legacy_tensor_bytes(0x00841040u, 0x40000000u), 0); /* overflows 32 bits */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_open_reports_the_model_and_run_feeds_every_input_and_output, setup),
        cmocka_unit_test_setup(test_a_refusing_or_lying_model_gets_its_reason, setup),
        cmocka_unit_test_setup(test_run_failures_fault_and_a_changed_descriptor_are_reported, setup),
        cmocka_unit_test_setup(test_sizes_of_tensor_formats, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
