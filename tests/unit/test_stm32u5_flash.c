/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32U5 flash driver (ports/stm32/common/src/flash_u5.c), the source that goes on the part, run
 * against the register model of the U5's flash interface and ICACHE (stm32u5_flash_model.h) on the
 * U585's two banks of 128 pages of 8 KiB: every operation unlocks with the keys and locks again, programs
 * each quad-word once with its four words in order and interrupts masked, names a page by its bank and
 * number, waits for BSY and WDW, reports the part's error flags and clears them, invalidates the ICACHE
 * after each program and erase, reads through the ECC check (a torn quad-word is MOTA_ERR_FLASH_ECC, its
 * NMI the driver's), and a power cut at any write leaves what the part would and the next boot recovers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "mota/err.h"
#include "mota/stm32_flash.h"
#include "stm32_io.h"
#include "stm32u5_flash_model.h"

#define KIB 1024u
#define MIB (1024u * KIB)
#define PAGE (8u * KIB)
#define BANK2 MIB /* the model's offset of the board's flash (bank 2) */
#define LOCK (1u << 31)
#define NSSR_ERRORS 0x20FAu
#define ECCD (1u << 31)

static uint64_t clock_us;
static uint64_t now(void *ctx)
{
    (void)ctx;
    return clock_us += 10; /* every look at the clock is 10 us later: a bounded wait ends */
}

/* the B-U585I-IOT02A's: bank 2 (stm32u5_flash_model.h) */
static const struct mota_stm32u5_flash_cfg *const bank2 = &u5_model_bank2;

/* the whole part, across both banks */
static const struct mota_stm32u5_flash_cfg whole = {
    .base = MOTA_STM32U5_FLASH_BASE,
    .size = 2 * MIB,
    .regs = MOTA_STM32U5_FLASH_REGS,
    .icache = MOTA_STM32U5_ICACHE_REGS,
    .erase_typ_us = 1500,
    .erase_max_us = 5000,
    .now_us = now,
};

struct fx {
    struct u5_model m;
    struct mota_flash f, all; /* bank 2, the whole part */
};

static int setup(void **state)
{
    static struct fx fx;
    u5_model_init(&fx.m, MOTA_STM32U5_FLASH_REGS, MOTA_STM32U5_ICACHE_REGS);
    assert_int_equal(mota_stm32u5_flash_init(&fx.f, bank2), MOTA_OK);
    assert_int_equal(mota_stm32u5_flash_init(&fx.all, &whole), MOTA_OK);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    struct fx *fx = *state;
    u5_model_free(&fx->m);
    return 0;
}

static void pattern(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)((i * 131u + seed * 7u) ^ (i >> 8));
}

/* what a correct driver never makes the part see, and what it leaves */
static void no_violation(const struct u5_model *m)
{
    assert_int_equal(m->bus_errors, 0);
    assert_int_equal(m->writes_when_busy, 0);
    assert_int_equal(m->reprogrammed, 0);
    assert_int_equal(m->unmasked_writes, 0);
    assert_int_equal(m->partial_quad_words, 0);
    assert_int_equal(m->faults, 0);
    assert_int_equal(m->stray, 0);
    assert_int_equal(m->error_flags, 0);
    assert_int_equal(m->nssr & NSSR_ERRORS, 0);
    assert_int_equal(m->eccr & ECCD, 0);
    assert_true(m->nscr & LOCK); /* locked again */
    assert_int_equal(u5_model_stale(m), 0);
}

static void the_driver_describes_the_part_as_the_profile_does(void **state)
{
    struct fx *fx = *state;
    struct mota_flash f;
    struct mota_stm32u5_flash_cfg bad = *bank2;
    assert_int_equal(fx->f.size, MIB);
    assert_int_equal(fx->f.xip_base, 0x08100000u);
    assert_int_equal(fx->f.prog_size, 16);
    assert_int_equal(fx->f.prog_block, 16);
    assert_int_equal(fx->f.erased_value, 0xFF);
    assert_int_equal(fx->f.flags, MOTA_FLASH_PROGRAM_ONCE);
    assert_int_equal(fx->f.n_regions, 1);
    assert_int_equal(fx->f.regions[0].count, 128);
    assert_int_equal(fx->f.regions[0].sector_size, PAGE);
    assert_int_equal(mota_flash_erase_max_us(&fx->f, 300 * KIB), 5000);
    assert_int_equal(fx->all.regions[0].count, 256);
    /* not whole pages of the part, or no clock */
    const uint32_t bases[] = {0x08100100u, 0x07FFE000u, 0x08102000u, 0x08200000u};
    for (unsigned i = 0; i < 4; i++) {
        bad.base = bases[i];
        assert_int_equal(mota_stm32u5_flash_init(&f, &bad), MOTA_ERR_ARG);
    }
    bad = *bank2;
    bad.size = 4 * KIB;
    assert_int_equal(mota_stm32u5_flash_init(&f, &bad), MOTA_ERR_ARG);
    bad.size = 0;
    assert_int_equal(mota_stm32u5_flash_init(&f, &bad), MOTA_ERR_ARG);
    bad = *bank2;
    bad.now_us = NULL;
    assert_int_equal(mota_stm32u5_flash_init(&f, &bad), MOTA_ERR_ARG);
}

static void erase_program_and_read_back_in_both_banks_with_the_keys_and_the_lock(void **state)
{
    struct fx *fx = *state;
    static uint8_t in[4096], out[4096];
    const uint32_t offs[] = {0, MIB - PAGE, MIB, 2 * MIB - PAGE};
    for (unsigned i = 0; i < 4; i++) {
        pattern(in, sizeof(in), i);
        assert_int_equal(fx->all.erase(fx->all.ctx, offs[i]), MOTA_OK);
        assert_int_equal(fx->all.prog(fx->all.ctx, offs[i] + 1024, in, sizeof(in)), MOTA_OK);
        assert_int_equal(fx->all.read(fx->all.ctx, offs[i] + 1024, out, sizeof(out)), MOTA_OK);
        assert_memory_equal(in, out, sizeof(in));
        assert_memory_equal(fx->all.map(fx->all.ctx, offs[i] + 1024, sizeof(in)), in, sizeof(in));
    }
    /* one program across the banks' boundary */
    pattern(in, 64, 9);
    assert_int_equal(fx->all.prog(fx->all.ctx, MIB - 32, in, 64), MOTA_OK);
    assert_int_equal(fx->all.read(fx->all.ctx, MIB - 32, out, 64), MOTA_OK);
    assert_memory_equal(in, out, 64);
    assert_int_equal(fx->m.erases, 4);
    assert_int_equal(fx->m.programs, 4 * sizeof(in) / 16 + 4); /* one program a quad-word */
    assert_int_equal(fx->m.irq_offs, fx->m.programs);          /* masked around each one's four words */
    assert_int_equal(fx->m.unlocks, 9);                        /* the key sequence once an operation */
    no_violation(&fx->m);
}

static void a_page_erase_names_the_page_by_its_bank_and_number(void **state)
{
    struct fx *fx = *state;
    const uint32_t pages[] = {0, 1, 126, 127, 128, 129, 200, 254, 255};
    u5_model_fill(&fx->m, 0, U5_MODEL_SIZE, 0x5A);
    for (unsigned i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
        uint32_t p = pages[i];
        assert_int_equal(fx->all.erase(fx->all.ctx, p * PAGE), MOTA_OK);
        assert_int_equal(fx->m.last_page, (int)p);
        for (uint32_t k = p * PAGE; k < (p + 1) * PAGE; k++)
            assert_int_equal(fx->m.mem[k], 0xFF);
        if (p + 1 < U5_MODEL_PAGES && (i + 1 == sizeof(pages) / sizeof(pages[0]) || pages[i + 1] != p + 1))
            assert_int_equal(fx->m.mem[(p + 1) * PAGE], 0x5A); /* the next page untouched */
    }
    assert_int_equal(fx->m.mem[2 * PAGE], 0x5A);
    assert_int_equal(fx->m.mem[125 * PAGE + PAGE - 1], 0x5A);
    /* the board's flash: offset 0 is bank 2's page 0 */
    assert_int_equal(fx->f.erase(fx->f.ctx, 0), MOTA_OK);
    assert_int_equal(fx->m.last_page, 128);
    assert_int_equal(fx->f.erase(fx->f.ctx, 37 * PAGE), MOTA_OK);
    assert_int_equal(fx->m.last_page, 128 + 37);
    no_violation(&fx->m);
}

static void misaligned_programmed_or_outside_units_are_refused_before_the_interface_is_touched(void **state)
{
    struct fx *fx = *state;
    uint8_t w[48], ff[16];
    pattern(w, sizeof(w), 3);
    memset(ff, 0xFF, sizeof(ff));
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 32), MOTA_OK);
    uint64_t writes = fx->m.writes;
    assert_int_equal(fx->f.prog(fx->f.ctx, 40, w, 16), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(fx->f.prog(fx->f.ctx, 32, w, 8), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB - 16, w, 32), MOTA_ERR_FLASH_BOUNDS);
    assert_int_equal(fx->f.erase(fx->f.ctx, PAGE + 4096), MOTA_ERR_FLASH_ALIGN); /* not a page's start */
    assert_int_equal(fx->f.erase(fx->f.ctx, MIB), MOTA_ERR_FLASH_BOUNDS);
    assert_int_equal(fx->f.read(fx->f.ctx, MIB - 8, w, 16), MOTA_ERR_FLASH_BOUNDS);
    assert_null(fx->f.map(fx->f.ctx, MIB - 8, 16));
    assert_int_equal(fx->m.writes, writes); /* not even the ECC flags */
    /* a programmed quad-word: found by reading it, before the keys */
    unsigned unlocks = fx->m.unlocks;
    assert_int_equal(fx->f.prog(fx->f.ctx, 16, w, 16), MOTA_ERR_FLASH_NOT_ERASED);
    assert_int_equal(fx->f.prog(fx->f.ctx, 32, w, 48), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 48), MOTA_ERR_FLASH_NOT_ERASED);
    /* ... wherever it lies in the range: the last quad-word of a longer program */
    uint8_t big[96];
    pattern(big, sizeof(big), 7);
    assert_int_equal(fx->f.prog(fx->f.ctx, 256 + 80, big, 16), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, 256, big, sizeof(big)), MOTA_ERR_FLASH_NOT_ERASED);
    assert_int_equal(fx->m.unlocks, unlocks + 2);
    no_violation(&fx->m);
    /* one programmed with 0xFF reads erased: the part refuses its second program, and says so */
    assert_int_equal(fx->f.prog(fx->f.ctx, 128, ff, 16), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, 128, ff, 16), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.reprogrammed, 1);
    assert_int_equal(fx->m.nssr & NSSR_ERRORS, 0);
    assert_true(fx->m.nscr & LOCK);
}

static void an_interface_the_keys_cannot_unlock_fails_each_operation_before_it_reaches_the_array(void **state)
{
    struct fx *fx = *state;
    uint8_t w[16], r[16];
    pattern(w, sizeof(w), 5);
    fx->m.key_locked_out = true; /* a wrong key earlier in this boot: LOCK stays until the next reset */
    assert_int_equal(fx->f.prog(fx->f.ctx, PAGE, w, 16), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->f.erase(fx->f.ctx, PAGE), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.programs + fx->m.erases + fx->m.irq_offs, 0); /* not a word of the array written */
    assert_int_equal(fx->m.nssr & NSSR_ERRORS, 0);
    assert_int_equal(fx->f.read(fx->f.ctx, PAGE, r, 16), MOTA_OK);
    for (unsigned i = 0; i < 16; i++)
        assert_int_equal(r[i], 0xFF);
    assert_true(fx->m.nscr & LOCK);
}

static void every_error_flag_of_the_part_fails_its_operation_and_is_cleared_for_the_next(void **state)
{
    struct fx *fx = *state;
    /* OPERR, PROGERR, WRPERR, PGAERR, SIZERR, PGSERR, OPTWERR */
    const uint32_t flags[] = {1u << 1, 1u << 3, 1u << 4, 1u << 5, 1u << 6, 1u << 7, 1u << 13};
    uint8_t w[16], r[16];
    pattern(w, sizeof(w), 5);
    for (unsigned i = 0; i < 7; i++) {
        fx->m.inject = flags[i];
        assert_int_equal(fx->f.prog(fx->f.ctx, 16 * i, w, 16), MOTA_ERR_FLASH_IO);
        assert_int_equal(fx->m.nssr & NSSR_ERRORS, 0);
        assert_true(fx->m.nscr & LOCK);
        fx->m.inject = flags[i];
        assert_int_equal(fx->f.erase(fx->f.ctx, PAGE), MOTA_ERR_FLASH_IO);
        assert_int_equal(fx->m.nssr & NSSR_ERRORS, 0);
        assert_true(fx->m.nscr & LOCK);
        assert_int_equal(fx->f.prog(fx->f.ctx, PAGE + 16 * i, w, 16), MOTA_OK); /* the next one works */
    }
    /* a write-protected page (bank 2's page 5) */
    fx->m.wrp[128 + 5] = 1;
    assert_int_equal(fx->f.erase(fx->f.ctx, 5 * PAGE), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->f.prog(fx->f.ctx, 5 * PAGE, w, 16), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.nssr & NSSR_ERRORS, 0);
    /* a flag left by an earlier boot does not fail the next operation: cleared first */
    fx->m.nssr |= 1u << 7;
    assert_int_equal(fx->f.prog(fx->f.ctx, 2 * PAGE, w, 16), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, 2 * PAGE, r, 16), MOTA_OK);
    assert_memory_equal(w, r, 16);
    assert_int_equal(fx->m.bus_errors + fx->m.writes_when_busy + fx->m.reprogrammed + fx->m.stray, 0);
}

static void a_quad_word_that_does_not_take_its_program_is_reported_by_its_read_back(void **state)
{
    struct fx *fx = *state;
    uint8_t w[48], r[16];
    pattern(w, sizeof(w), 6);
    fx->m.worn = BANK2 + 32 + 1; /* the third: two bits stay 1, the part flags nothing */
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 48), MOTA_ERR_FLASH_IO);
    assert_true(fx->m.nscr & LOCK);
    assert_int_equal(fx->f.read(fx->f.ctx, 32, r, 16), MOTA_ERR_FLASH_ECC);
    assert_int_equal(fx->m.faults, 0);
}

static void a_torn_quad_word_reads_as_an_ecc_error_taken_by_the_driver_until_its_page_is_erased(void **state)
{
    struct fx *fx = *state;
    uint8_t w[64], r[64];
    pattern(w, sizeof(w), 7);
    fx->m.eccr |= 1u << 24; /* ECCIE, the board's: kept */
    assert_int_equal(fx->f.prog(fx->f.ctx, PAGE, w, 64), MOTA_OK);
    u5_model_tear(&fx->m, BANK2 + PAGE + 16);
    assert_int_equal(fx->f.read(fx->f.ctx, PAGE, r, 64), MOTA_ERR_FLASH_ECC);
    assert_int_equal(fx->m.nmis, 1);
    assert_int_equal(fx->m.faults, 0); /* the NMI was the driver's */
    assert_int_equal(fx->m.eccr & ECCD, 0);
    assert_true(fx->m.eccr & (1u << 24));
    assert_int_equal(fx->f.read(fx->f.ctx, PAGE + 8, r, 16), MOTA_ERR_FLASH_ECC); /* its first half */
    assert_int_equal(fx->f.read(fx->f.ctx, PAGE, r, 16), MOTA_OK);                /* its neighbours read */
    assert_memory_equal(r, w, 16);
    assert_int_equal(fx->f.read(fx->f.ctx, PAGE + 32, r, 32), MOTA_OK);
    assert_memory_equal(r, w + 32, 32);
    assert_int_equal(fx->f.prog(fx->f.ctx, PAGE + 16, w, 16), MOTA_ERR_FLASH_ECC); /* not programmed over */
    assert_int_equal(fx->m.programs, 4);
    assert_int_equal(fx->f.erase(fx->f.ctx, PAGE), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, PAGE, r, 64), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, PAGE, w, 64), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, PAGE, r, 64), MOTA_OK);
    assert_memory_equal(r, w, 64);
    assert_int_equal(fx->m.faults, 0);
}

static void an_ecc_error_outside_a_driver_read_is_a_fault_and_does_not_fail_the_next_read(void **state)
{
    struct fx *fx = *state;
    uint8_t w[32], r[32];
    pattern(w, sizeof(w), 8);
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 32), MOTA_OK);
    u5_model_tear(&fx->m, BANK2 + 16);
    /* code run in place, or a mapped read, of the torn unit: the driver declines the NMI */
    assert_non_null(fx->f.map(fx->f.ctx, 0, 32));
    u5_model_fetch(&fx->m, BANK2, 32);
    assert_int_equal(fx->m.faults, 1);
    assert_true(fx->m.eccr & ECCD);
    assert_false(mota_stm32u5_flash_nmi());
    /* the flag it left is not the next read's */
    assert_int_equal(fx->f.read(fx->f.ctx, 0, r, 16), MOTA_OK);
    assert_memory_equal(r, w, 16);
    assert_int_equal(fx->m.faults, 1);
}

static void a_single_error_the_ecc_corrects_is_not_a_failure(void **state)
{
    struct fx *fx = *state;
    uint8_t w[32], r[32];
    pattern(w, sizeof(w), 9);
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 32), MOTA_OK);
    fx->m.single = BANK2 + 16 + 1;
    assert_int_equal(fx->f.erase(fx->f.ctx, PAGE), MOTA_OK); /* the ICACHE forgets the lines */
    assert_int_equal(fx->f.read(fx->f.ctx, 0, r, 32), MOTA_OK);
    assert_memory_equal(r, w, 32);
    assert_true(fx->m.eccr & (1u << 30)); /* ECCC */
    assert_int_equal(fx->m.nmis, 0);
}

static void a_part_that_stays_busy_times_out_with_the_interface_locked(void **state)
{
    struct fx *fx = *state;
    uint8_t w[16] = {0};
    fx->m.stuck = true;
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 16), MOTA_ERR_TIMEOUT);
    assert_int_equal(fx->f.erase(fx->f.ctx, 0), MOTA_ERR_TIMEOUT);
    assert_true(fx->m.nscr & LOCK);
    assert_int_equal(fx->m.programs + fx->m.erases, 0);
    /* an ICACHE that never ends its invalidation is not waited for forever either */
    fx->m.stuck = false;
    fx->m.icache_reads = UINT32_MAX;
    assert_int_equal(fx->f.erase(fx->f.ctx, 0), MOTA_ERR_TIMEOUT);
    assert_true(fx->m.nscr & LOCK);
}

static void the_icache_is_invalidated_after_an_erase_and_after_a_program(void **state)
{
    struct fx *fx = *state;
    uint8_t w[32], r[32], ff[32];
    pattern(w, sizeof(w), 10);
    memset(ff, 0xFF, sizeof(ff));
    assert_int_equal(fx->f.prog(fx->f.ctx, 2 * PAGE, w, 32), MOTA_OK);
    u5_model_fetch(&fx->m, BANK2 + 2 * PAGE, 32); /* code or a mapped read holds its lines */
    assert_int_equal(fx->f.erase(fx->f.ctx, 2 * PAGE), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, 2 * PAGE, r, 32), MOTA_OK);
    assert_memory_equal(r, ff, 32);
    assert_memory_equal(fx->f.map(fx->f.ctx, 2 * PAGE, 32), ff, 32);
    /* the erased lines held between the erase and the program */
    u5_model_fetch(&fx->m, BANK2 + 2 * PAGE, 32);
    assert_int_equal(fx->f.prog(fx->f.ctx, 2 * PAGE, w, 32), MOTA_OK);
    assert_memory_equal(fx->f.map(fx->f.ctx, 2 * PAGE, 32), w, 32);
    assert_int_equal(fx->f.read(fx->f.ctx, 2 * PAGE, r, 32), MOTA_OK);
    assert_memory_equal(r, w, 32);
    assert_int_equal(fx->m.invalidations, 3);
    no_violation(&fx->m);
    /* a bypassed ICACHE holds nothing: left alone; and a board without one has it never touched */
    mota_stm32_io_write32(MOTA_STM32U5_ICACHE_REGS, 0); /* the board turns it off */
    assert_int_equal(fx->f.erase(fx->f.ctx, 2 * PAGE), MOTA_OK);
    struct mota_stm32u5_flash_cfg none = *bank2;
    struct mota_flash f;
    none.icache = 0;
    assert_int_equal(mota_stm32u5_flash_init(&f, &none), MOTA_OK);
    assert_int_equal(f.erase(f.ctx, 3 * PAGE), MOTA_OK);
    assert_int_equal(f.prog(f.ctx, 3 * PAGE, w, 32), MOTA_OK);
    assert_int_equal(fx->m.invalidations, 3);
    no_violation(&fx->m);
}

/* What the quad-words of a cut program hold, read after power-on: programmed ones before the one cut, that
 * one torn (its fourth word was the cut) or erased, erased ones after it. */
static void check_cut_program(struct fx *fx, uint32_t at, const uint8_t *w, unsigned n, unsigned *torn)
{
    uint8_t r[16], ff[16];
    bool before = true, after = false; /* before the cut quad-word, after it */
    memset(ff, 0xFF, sizeof(ff));
    for (unsigned q = 0; q < n; q++) {
        int ret = fx->f.read(fx->f.ctx, at + 16 * q, r, 16);
        unsigned s = fx->m.qw[(BANK2 + at) / 16 + q];
        if (s == U5_QW_TORN) {
            assert_true(before);
            assert_int_equal(ret, MOTA_ERR_FLASH_ECC);
            (*torn)++;
            before = false;
            continue;
        }
        assert_int_equal(ret, MOTA_OK);
        if (s == U5_QW_PROGRAMMED) {
            assert_true(before && !after);
            assert_memory_equal(r, w + 16 * q, 16);
        } else {
            assert_memory_equal(r, ff, 16);
            before = false;
            after = true;
        }
    }
}

/* a program of three quad-words, cut at each write to the part in turn; after power-on the reads say
 * what the part holds (never a fault) and the driver erases and programs again as on a fresh part */
static void a_power_cut_at_any_write_of_a_program_leaves_each_quad_word_whole_erased_or_torn(void **state)
{
    struct fx *fx = *state;
    uint8_t w[48], r[48];
    const uint32_t at = 3 * PAGE;
    unsigned torn = 0;
    pattern(w, sizeof(w), 11);
    uint64_t w0 = fx->m.writes;
    assert_int_equal(fx->f.prog(fx->f.ctx, at, w, 48), MOTA_OK);
    uint64_t total = fx->m.writes - w0;
    assert_true(total >= 16);
    for (uint64_t cut = 1; cut <= total; cut++) {
        u5_model_power_on(&fx->m);
        assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
        fx->m.cut_at = fx->m.writes + cut;
        (void)fx->f.prog(fx->f.ctx, at, w, 48);
        assert_true(fx->m.off);
        u5_model_power_on(&fx->m);
        check_cut_program(fx, at, w, 3, &torn);
        assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
        assert_int_equal(fx->f.prog(fx->f.ctx, at, w, 48), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, at, r, 48), MOTA_OK);
        assert_memory_equal(r, w, 48);
    }
    assert_int_equal(torn, 3); /* each quad-word's fourth word was a cut once */
    assert_int_equal(fx->m.faults + fx->m.bus_errors + fx->m.writes_when_busy + fx->m.reprogrammed, 0);
}

/* an erase of a page of old contents, cut at each write: the page is old, wholly torn (every quad-word an
 * ECC error until erased) or erased; the next boot's erase makes it whole */
static void a_power_cut_at_any_write_of_an_erase_leaves_the_page_old_torn_or_erased(void **state)
{
    struct fx *fx = *state;
    uint8_t r[16], old[16], ff[16];
    const uint32_t at = 4 * PAGE;
    unsigned seen[3] = {0};
    memset(old, 0x5A, sizeof(old));
    memset(ff, 0xFF, sizeof(ff));
    uint64_t w0 = fx->m.writes;
    assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
    uint64_t total = fx->m.writes - w0;
    assert_true(total >= 5);
    for (uint64_t cut = 1; cut <= total; cut++) {
        u5_model_fill(&fx->m, BANK2 + at, PAGE, 0x5A);
        u5_model_power_on(&fx->m);
        fx->m.cut_at = fx->m.writes + cut;
        (void)fx->f.erase(fx->f.ctx, at);
        assert_true(fx->m.off);
        u5_model_power_on(&fx->m);
        int first = fx->f.read(fx->f.ctx, at, r, 16);
        unsigned kind = first != MOTA_OK ? 1u : (memcmp(r, old, 16) == 0 ? 0u : 2u);
        seen[kind]++;
        for (uint32_t q = 0; q < PAGE; q += 16) {
            int ret = fx->f.read(fx->f.ctx, at + q, r, 16);
            assert_int_equal(ret, kind == 1 ? MOTA_ERR_FLASH_ECC : MOTA_OK);
            if (kind != 1)
                assert_memory_equal(r, kind == 0 ? old : ff, 16);
        }
        assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, at + PAGE - 16, r, 16), MOTA_OK);
        assert_memory_equal(r, ff, 16);
    }
    assert_int_equal(seen[1], 1); /* the cut at STRT */
    assert_true(seen[0] >= 2 && seen[2] >= 1);
    assert_int_equal(fx->m.faults + fx->m.bus_errors + fx->m.writes_when_busy, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_driver_describes_the_part_as_the_profile_does, setup, teardown),
        cmocka_unit_test_setup_teardown(erase_program_and_read_back_in_both_banks_with_the_keys_and_the_lock, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_page_erase_names_the_page_by_its_bank_and_number, setup, teardown),
        cmocka_unit_test_setup_teardown(
            misaligned_programmed_or_outside_units_are_refused_before_the_interface_is_touched, setup, teardown),
        cmocka_unit_test_setup_teardown(
            an_interface_the_keys_cannot_unlock_fails_each_operation_before_it_reaches_the_array, setup, teardown),
        cmocka_unit_test_setup_teardown(every_error_flag_of_the_part_fails_its_operation_and_is_cleared_for_the_next,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_quad_word_that_does_not_take_its_program_is_reported_by_its_read_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            a_torn_quad_word_reads_as_an_ecc_error_taken_by_the_driver_until_its_page_is_erased, setup, teardown),
        cmocka_unit_test_setup_teardown(an_ecc_error_outside_a_driver_read_is_a_fault_and_does_not_fail_the_next_read,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_single_error_the_ecc_corrects_is_not_a_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(a_part_that_stays_busy_times_out_with_the_interface_locked, setup, teardown),
        cmocka_unit_test_setup_teardown(the_icache_is_invalidated_after_an_erase_and_after_a_program, setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_power_cut_at_any_write_of_a_program_leaves_each_quad_word_whole_erased_or_torn, setup, teardown),
        cmocka_unit_test_setup_teardown(a_power_cut_at_any_write_of_an_erase_leaves_the_page_old_torn_or_erased, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
