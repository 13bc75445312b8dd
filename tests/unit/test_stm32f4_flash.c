/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32F4 flash driver (ports/stm32/common/src/flash_f4.c), the source that goes on the part, run
 * against the register model of the F4's flash interface (stm32f4_flash_model.h) on an STM32F401RE's
 * sectors (4 x 16, 64, 3 x 128 KiB): every operation unlocks with the keys and locks again, programs each
 * word once at PSIZE x32, waits for BSY, reports the part's error flags and clears them, resets the ART's
 * caches after an erase, and a power cut at any write leaves what the part would and the next boot recovers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "mota/err.h"
#include "mota/stm32_flash.h"
#include "stm32f4_flash_model.h"

#define KIB 1024u

static const struct mota_stm32f4_flash_cfg *const f401 = &f4_model_f401re;

struct fx {
    struct f4_model m;
    struct mota_flash f;
};

static int setup(void **state)
{
    static struct fx fx;
    f4_model_init(&fx.m, f401->base, f401->regs, f401->regions, f401->n_regions);
    assert_int_equal(mota_stm32f4_flash_init(&fx.f, f401), MOTA_OK);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    struct fx *fx = *state;
    f4_model_free(&fx->m);
    return 0;
}

static void pattern(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)((i * 131u + seed * 7u) ^ (i >> 8));
}

/* what a correct driver never makes the part see */
static void no_violation(const struct f4_model *m)
{
    assert_int_equal(m->bus_errors, 0);
    assert_int_equal(m->writes_when_busy, 0);
    assert_int_equal(m->reprogrammed, 0);
    assert_int_equal(m->dcrst_enabled, 0);
    assert_int_equal(m->error_flags, 0);
    assert_true(m->cr & (1u << 31)); /* locked again */
}

static void the_driver_describes_the_part_as_the_profile_does(void **state)
{
    struct fx *fx = *state;
    assert_int_equal(fx->f.size, 512 * KIB);
    assert_int_equal(fx->f.prog_size, 4);
    assert_int_equal(fx->f.flags, MOTA_FLASH_STALLS_CPU);
    uint32_t start, size;
    assert_int_equal(mota_flash_sector(&fx->f, 70 * KIB, &start, &size), MOTA_OK);
    assert_int_equal(start, 64 * KIB);
    assert_int_equal(size, 64 * KIB);
    assert_int_equal(mota_flash_erase_max_us(&fx->f, 300 * KIB), 4000000);
}

static void erase_program_and_read_back_every_sector_size_with_the_keys_and_the_lock(void **state)
{
    struct fx *fx = *state;
    static uint8_t in[4096], out[4096];
    const uint32_t offs[] = {16 * KIB, 64 * KIB, 384 * KIB};
    for (unsigned i = 0; i < 3; i++) {
        pattern(in, sizeof(in), i);
        assert_int_equal(fx->f.erase(fx->f.ctx, offs[i]), MOTA_OK);
        assert_int_equal(fx->f.prog(fx->f.ctx, offs[i] + 1024, in, sizeof(in)), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, offs[i] + 1024, out, sizeof(out)), MOTA_OK);
        assert_memory_equal(in, out, sizeof(in));
        assert_memory_equal(fx->f.map(fx->f.ctx, offs[i] + 1024, sizeof(in)), in, sizeof(in));
    }
    assert_int_equal(fx->m.erases, 3);
    assert_int_equal(fx->m.programs, 3 * sizeof(in) / 4); /* one write a word */
    assert_int_equal(fx->m.unlocks, 6);                   /* the key sequence once an operation */
    no_violation(&fx->m);
}

static void misaligned_or_programmed_bytes_are_refused_before_any_write_to_the_part(void **state)
{
    struct fx *fx = *state;
    uint8_t w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_int_equal(fx->f.prog(fx->f.ctx, 16 * KIB, w, 8), MOTA_OK);
    uint64_t writes = fx->m.writes;
    assert_int_equal(fx->f.prog(fx->f.ctx, 16 * KIB + 2, w, 4), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(fx->f.prog(fx->f.ctx, 16 * KIB + 8, w, 6), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(fx->f.prog(fx->f.ctx, 16 * KIB + 4, w, 4), MOTA_ERR_FLASH_NOT_ERASED);
    assert_int_equal(fx->f.prog(fx->f.ctx, 16 * KIB - 4, w, 8), MOTA_ERR_FLASH_NOT_ERASED); /* its second word */
    assert_int_equal(fx->f.prog(fx->f.ctx, 512 * KIB - 4, w, 8), MOTA_ERR_FLASH_BOUNDS);
    assert_int_equal(fx->f.erase(fx->f.ctx, 16 * KIB + 4096), MOTA_ERR_FLASH_ALIGN); /* not a sector's start */
    assert_int_equal(fx->f.erase(fx->f.ctx, 512 * KIB), MOTA_ERR_FLASH_BOUNDS);
    assert_int_equal(fx->m.writes, writes);
    no_violation(&fx->m);
}

static void an_interface_the_keys_cannot_unlock_fails_each_operation_before_it_reaches_the_array(void **state)
{
    struct fx *fx = *state;
    uint8_t w[4] = {0x12, 0x34, 0x56, 0x78}, r[4];
    fx->m.key_locked_out = true; /* a wrong key earlier in this boot: LOCK stays until the next reset */
    assert_int_equal(fx->f.prog(fx->f.ctx, 16 * KIB, w, 4), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->f.erase(fx->f.ctx, 16 * KIB), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.programs + fx->m.erases, 0);
    assert_int_equal(fx->m.sr & 0x1F2u, 0); /* nothing was attempted: no error flag */
    assert_int_equal(fx->f.read(fx->f.ctx, 16 * KIB, r, 4), MOTA_OK);
    assert_int_equal(r[0] & r[1] & r[2] & r[3], 0xFF);
    assert_true(fx->m.cr & (1u << 31));
}

static void an_error_flag_of_the_part_fails_its_operation_and_is_cleared_for_the_next(void **state)
{
    struct fx *fx = *state;
    uint8_t w[4] = {0x12, 0x34, 0x56, 0x78}, r[4];
    fx->m.wrp = 1u << 5; /* sector 5 (128 KiB at 128 KiB) write-protected */
    assert_int_equal(fx->f.erase(fx->f.ctx, 128 * KIB), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->f.prog(fx->f.ctx, 128 * KIB, w, 4), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.sr & 0x1F2u, 0); /* WRPERR taken and cleared */
    assert_true(fx->m.cr & (1u << 31));
    /* a flag left by an earlier boot (PGSERR) does not fail the next operation: cleared first */
    fx->m.sr |= 1u << 7;
    assert_int_equal(fx->f.prog(fx->f.ctx, 32 * KIB, w, 4), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, 32 * KIB, r, 4), MOTA_OK);
    assert_memory_equal(w, r, 4);
    assert_int_equal(fx->m.bus_errors + fx->m.writes_when_busy + fx->m.reprogrammed, 0);
}

static void a_word_that_does_not_take_its_program_is_reported_by_its_read_back(void **state)
{
    struct fx *fx = *state;
    uint8_t w[8] = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};
    fx->m.worn = 48 * KIB + 4 + 1; /* the second word: bit 0 stays 1, the part flags nothing */
    assert_int_equal(fx->f.prog(fx->f.ctx, 48 * KIB, w, 8), MOTA_ERR_FLASH_IO);
    assert_true(fx->m.cr & (1u << 31));
}

static void a_part_that_stays_busy_times_out_with_the_interface_locked(void **state)
{
    struct fx *fx = *state;
    uint8_t w[4] = {0};
    fx->m.stuck = true;
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 4), MOTA_ERR_TIMEOUT);
    assert_int_equal(fx->f.erase(fx->f.ctx, 0), MOTA_ERR_TIMEOUT);
    assert_true(fx->m.cr & (1u << 31));
    assert_int_equal(fx->m.programs + fx->m.erases, 0);
}

static void an_erase_resets_the_data_cache_that_held_the_sector(void **state)
{
    struct fx *fx = *state;
    assert_int_equal(fx->f.erase(fx->f.ctx, 256 * KIB), MOTA_OK);
    assert_false(fx->m.dcache_stale);
    assert_true(fx->m.acr & (1u << 10)); /* and enabled again */
    no_violation(&fx->m);
}

/* an erase and a program of two words, cut at each write to the part in turn: the sector is old, erased,
 * half erased, or erased with the words programmed or one torn; after power-on the driver erases and
 * programs again as on a fresh part */
static void a_power_cut_at_any_write_leaves_what_the_part_would_and_the_next_boot_recovers(void **state)
{
    struct fx *fx = *state;
    uint8_t w[8] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77}, r[8];
    const uint32_t at = 16 * KIB;
    uint64_t total;
    memset(fx->m.mem + at, 0x5A, 16 * KIB); /* the sector's old contents */
    uint64_t w0 = fx->m.writes;
    assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, at, w, 8), MOTA_OK);
    total = fx->m.writes - w0;
    assert_true(total >= 10);
    for (uint64_t cut = 1; cut <= total; cut++) {
        memset(fx->m.mem + at, 0x5A, 16 * KIB);
        f4_model_power_on(&fx->m);
        fx->m.cut_at = fx->m.writes + cut;
        (void)fx->f.erase(fx->f.ctx, at);
        (void)fx->f.prog(fx->f.ctx, at, w, 8);
        assert_true(fx->m.off);
        /* what the part holds: the old sector, half or wholly erased, and at most the words written */
        const uint8_t *s = fx->m.mem + at;
        bool old = s[16 * KIB - 1] == 0x5A, half = s[0] != 0x5A && old;
        for (uint32_t i = 8; i < 16 * KIB; i++)
            assert_true(s[i] == (old && !(half && i < 8 * KIB) ? 0x5A : 0xFF));
        for (uint32_t i = 0; i < 8; i++)
            assert_true(s[i] == (old && !half ? 0x5A : 0xFF) || (s[i] & w[i]) == w[i]);
        /* the next boot: the same operations succeed */
        f4_model_power_on(&fx->m);
        assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
        assert_int_equal(fx->f.prog(fx->f.ctx, at, w, 8), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, at, r, 8), MOTA_OK);
        assert_memory_equal(r, w, 8);
    }
    assert_int_equal(fx->m.bus_errors + fx->m.writes_when_busy + fx->m.dcrst_enabled, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_driver_describes_the_part_as_the_profile_does, setup, teardown),
        cmocka_unit_test_setup_teardown(erase_program_and_read_back_every_sector_size_with_the_keys_and_the_lock, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(misaligned_or_programmed_bytes_are_refused_before_any_write_to_the_part, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            an_interface_the_keys_cannot_unlock_fails_each_operation_before_it_reaches_the_array, setup, teardown),
        cmocka_unit_test_setup_teardown(an_error_flag_of_the_part_fails_its_operation_and_is_cleared_for_the_next,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_word_that_does_not_take_its_program_is_reported_by_its_read_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_part_that_stays_busy_times_out_with_the_interface_locked, setup, teardown),
        cmocka_unit_test_setup_teardown(an_erase_resets_the_data_cache_that_held_the_sector, setup, teardown),
        cmocka_unit_test_setup_teardown(a_power_cut_at_any_write_leaves_what_the_part_would_and_the_next_boot_recovers,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
