/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32H7 flash driver (ports/stm32/common/src/flash_h7.c), the source that goes on the part, run
 * against the register model of the H747's flash interface and the Cortex-M7's D-cache
 * (stm32h7_flash_model.h) on its two banks of 8 sectors of 128 KiB: every operation unlocks its bank with
 * the keys and locks it again, programs each flash word once with its eight words in a row, names a
 * sector by its bank's registers and its number in the bank, waits for QW, BSY and WBNE, reports the
 * part's error flags and clears them through CCR, drops the D-cache's lines over what changed, reads
 * through the ECC check (a torn flash word is MOTA_ERR_FLASH_ECC, its bus fault the driver's), and a
 * power cut at any write leaves what the part would and the next boot recovers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "mota/err.h"
#include "mota/stm32_flash.h"
#include "stm32h7_flash_model.h"

#define KIB 1024u
#define MIB (1024u * KIB)
#define SECTOR (128u * KIB)
#define LOCK (1u << 0)
#define SR_ERRORS 0x1FEE0000u /* every flag but EOP, CRCEND and the busy ones */
#define DBECCERR (1u << 26)
#define SNECCERR (1u << 25)
#define PSIZE_X32 2u

static uint64_t clock_us;
static uint64_t now(void *ctx)
{
    (void)ctx;
    return clock_us += 10; /* every look at the clock is 10 us later: a bounded wait ends */
}

/* the STM32H747I-DISCO's: the whole array (stm32h7_flash_model.h) */
static const struct mota_stm32h7_flash_cfg *const disco = &h7_model_disco;

/* bank 2 alone, as a board that gives the agent only its update bank would */
static const struct mota_stm32h7_flash_cfg bank2 = {
    .base = MOTA_STM32H7_FLASH_BASE + MIB,
    .size = MIB,
    .regs = MOTA_STM32H7_FLASH_REGS,
    .dcache = true,
    .erase_typ_us = 1100000,
    .erase_max_us = 4000000,
    .prog_typ_us = 130,
    .prog_max_us = 130,
    .now_us = now,
};

struct fx {
    struct h7_model m;
    struct mota_flash f, b2; /* the whole array, bank 2 */
};

static int setup(void **state)
{
    static struct fx fx;
    h7_model_init(&fx.m, MOTA_STM32H7_FLASH_REGS, true);
    assert_int_equal(mota_stm32h7_flash_init(&fx.f, disco), MOTA_OK);
    assert_int_equal(mota_stm32h7_flash_init(&fx.b2, &bank2), MOTA_OK);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    struct fx *fx = *state;
    h7_model_free(&fx->m);
    return 0;
}

static void pattern(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)((i * 131u + seed * 7u) ^ (i >> 8));
}

/* what a correct driver never makes the part see, and what it leaves */
static void no_violation(const struct h7_model *m)
{
    assert_int_equal(m->bus_errors, 0);
    assert_int_equal(m->writes_when_busy, 0);
    assert_int_equal(m->reprogrammed, 0);
    assert_int_equal(m->partial_words, 0);
    assert_int_equal(m->sr_writes, 0);
    assert_int_equal(m->reserved_bits, 0);
    assert_int_equal(m->faults, 0);
    assert_int_equal(m->stray, 0);
    assert_int_equal(m->error_flags, 0);
    for (unsigned b = 0; b < 2; b++) {
        assert_int_equal(m->bank[b].sr & SR_ERRORS, 0);
        assert_int_equal(m->bank[b].wmask, 0);
        assert_true(m->bank[b].cr & LOCK); /* locked again */
    }
    assert_false(m->unsynced);
    assert_int_equal(h7_model_stale(m), 0);
    assert_int_equal(h7_model_violations(m), 0);
}

static void the_driver_describes_the_part_as_the_profile_does_and_refuses_ranges_it_cannot_serve(void **state)
{
    struct fx *fx = *state;
    struct mota_flash f;
    struct mota_stm32h7_flash_cfg bad = bank2;
    assert_int_equal(fx->f.size, 2 * MIB);
    assert_int_equal(fx->f.xip_base, 0x08000000u);
    assert_int_equal(fx->f.prog_size, 32);
    assert_int_equal(fx->f.prog_block, 32);
    assert_int_equal(fx->f.prog_typ_us, 130);
    assert_int_equal(fx->f.erased_value, 0xFF);
    assert_int_equal(fx->f.flags, MOTA_FLASH_PROGRAM_ONCE);
    assert_int_equal(fx->f.n_regions, 1);
    assert_int_equal(fx->f.regions[0].count, 16);
    assert_int_equal(fx->f.regions[0].sector_size, SECTOR);
    assert_int_equal(fx->f.regions[0].erase_typ_us, 1100000);
    assert_int_equal(mota_flash_erase_max_us(&fx->f, 300 * KIB), 4000000);
    assert_int_equal(fx->b2.xip_base, 0x08100000u);
    assert_int_equal(fx->b2.regions[0].count, 8);
    /* not whole sectors of the part, or no clock */
    const uint32_t bases[] = {0x08100100u, 0x07FE0000u, 0x08110000u, 0x08200000u, 0x08120000u};
    for (unsigned i = 0; i < 5; i++) {
        bad.base = bases[i];
        assert_int_equal(mota_stm32h7_flash_init(&f, &bad), MOTA_ERR_ARG);
    }
    bad = bank2;
    bad.size = 64 * KIB;
    assert_int_equal(mota_stm32h7_flash_init(&f, &bad), MOTA_ERR_ARG);
    bad.size = 0;
    assert_int_equal(mota_stm32h7_flash_init(&f, &bad), MOTA_ERR_ARG);
    bad.size = 2 * MIB; /* past the array's end */
    assert_int_equal(mota_stm32h7_flash_init(&f, &bad), MOTA_ERR_ARG);
    bad = bank2;
    bad.now_us = NULL;
    assert_int_equal(mota_stm32h7_flash_init(&f, &bad), MOTA_ERR_ARG);
    assert_int_equal(mota_stm32h7_flash_init(&f, NULL), MOTA_ERR_ARG);
    assert_int_equal(fx->m.writes, 0);
}

static void programs_land_in_both_banks_through_each_banks_own_registers(void **state)
{
    struct fx *fx = *state;
    static uint8_t in[4096], out[4096];
    const uint32_t offs[] = {0, MIB - SECTOR, MIB, 2 * MIB - SECTOR};
    for (unsigned i = 0; i < 4; i++) {
        pattern(in, sizeof(in), i);
        assert_int_equal(fx->f.erase(fx->f.ctx, offs[i]), MOTA_OK);
        assert_int_equal(fx->f.prog(fx->f.ctx, offs[i] + 1024, in, sizeof(in)), MOTA_OK);
        assert_memory_equal(fx->m.mem + offs[i] + 1024, in, sizeof(in)); /* in the array itself */
        assert_int_equal(fx->f.read(fx->f.ctx, offs[i] + 1024, out, sizeof(out)), MOTA_OK);
        assert_memory_equal(in, out, sizeof(in));
        assert_memory_equal(fx->f.map(fx->f.ctx, offs[i] + 1024, sizeof(in)), in, sizeof(in));
    }
    /* each bank programmed and erased through its registers, one unlock an operation */
    assert_int_equal(fx->m.bank[0].programs, 2 * sizeof(in) / 32);
    assert_int_equal(fx->m.bank[1].programs, 2 * sizeof(in) / 32);
    assert_int_equal(fx->m.bank[0].erases, 2);
    assert_int_equal(fx->m.bank[1].erases, 2);
    assert_int_equal(fx->m.bank[0].unlocks, 4);
    assert_int_equal(fx->m.bank[1].unlocks, 4);
    assert_int_equal(fx->m.bank[1].last_psize, PSIZE_X32);
    /* one program across the banks' boundary: each half through its bank */
    pattern(in, 128, 9);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB - 64, in, 128), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, MIB - 64, out, 128), MOTA_OK);
    assert_memory_equal(in, out, 128);
    assert_memory_equal(fx->m.mem + MIB - 64, in, 128);
    assert_int_equal(fx->m.bank[0].programs, 2 * sizeof(in) / 32 + 2);
    assert_int_equal(fx->m.bank[1].programs, 2 * sizeof(in) / 32 + 2);
    assert_int_equal(fx->m.bank[0].unlocks + fx->m.bank[1].unlocks, 10);
    /* bank 2 alone: its offset 0 is the array's 1 MiB */
    pattern(in, 64, 10);
    assert_int_equal(fx->b2.prog(fx->b2.ctx, SECTOR, in, 64), MOTA_OK);
    assert_memory_equal(fx->m.mem + MIB + SECTOR, in, 64);
    assert_int_equal(fx->m.bank[1].programs, 2 * sizeof(in) / 32 + 4);
    no_violation(&fx->m);
}

static void a_sector_erase_names_the_sector_by_its_bank_and_number_and_touches_only_it(void **state)
{
    struct fx *fx = *state;
    const uint32_t sectors[] = {0, 1, 6, 7, 8, 9, 12, 14, 15};
    h7_model_fill(&fx->m, 0, H7_MODEL_SIZE, 0x5A);
    for (unsigned i = 0; i < sizeof(sectors) / sizeof(sectors[0]); i++) {
        uint32_t s = sectors[i];
        unsigned before[2] = {fx->m.bank[0].erases, fx->m.bank[1].erases};
        assert_int_equal(fx->f.erase(fx->f.ctx, s * SECTOR), MOTA_OK);
        assert_int_equal(fx->m.last_sector, (int)s);
        assert_int_equal(fx->m.bank[s / 8].erases, before[s / 8] + 1); /* through its bank's registers */
        assert_int_equal(fx->m.bank[1 - s / 8].erases, before[1 - s / 8]);
        assert_int_equal(fx->m.bank[s / 8].last_psize, PSIZE_X32);
        for (uint32_t k = s * SECTOR; k < (s + 1) * SECTOR; k++)
            assert_int_equal(fx->m.mem[k], 0xFF);
    }
    /* the sectors not named kept their contents, to their first and last byte */
    const uint32_t kept[] = {2, 5, 10, 11, 13};
    for (unsigned i = 0; i < 5; i++) {
        assert_int_equal(fx->m.mem[kept[i] * SECTOR], 0x5A);
        assert_int_equal(fx->m.mem[(kept[i] + 1) * SECTOR - 1], 0x5A);
    }
    /* bank 2 alone: its offset 0 is bank 2's sector 0 */
    assert_int_equal(fx->b2.erase(fx->b2.ctx, 2 * SECTOR), MOTA_OK);
    assert_int_equal(fx->m.last_sector, 8 + 2);
    assert_int_equal(fx->m.mem[8 * SECTOR + 2 * SECTOR], 0xFF);
    assert_int_equal(fx->m.mem[8 * SECTOR + 3 * SECTOR], 0x5A);
    no_violation(&fx->m);
}

static void misaligned_programmed_or_outside_units_are_refused_before_the_interface_is_touched(void **state)
{
    struct fx *fx = *state;
    uint8_t w[96], ff[32];
    pattern(w, sizeof(w), 3);
    memset(ff, 0xFF, sizeof(ff));
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB, w, 64), MOTA_OK);
    uint64_t writes = fx->m.writes;
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 80, w, 32), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 64, w, 16), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(fx->f.prog(fx->f.ctx, 2 * MIB - 32, w, 64), MOTA_ERR_FLASH_BOUNDS);
    assert_int_equal(fx->f.erase(fx->f.ctx, SECTOR + 4096), MOTA_ERR_FLASH_ALIGN); /* not a sector's start */
    assert_int_equal(fx->f.erase(fx->f.ctx, 2 * MIB), MOTA_ERR_FLASH_BOUNDS);
    assert_int_equal(fx->f.read(fx->f.ctx, 2 * MIB - 8, w, 16), MOTA_ERR_FLASH_BOUNDS);
    assert_null(fx->f.map(fx->f.ctx, 2 * MIB - 8, 16));
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 0), MOTA_OK);
    assert_int_equal(fx->m.writes, writes); /* not even the ECC flags */
    /* a programmed flash word, even one byte of it: found by reading it, before the keys */
    unsigned unlocks = fx->m.bank[1].unlocks;
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 32, w, 32), MOTA_ERR_FLASH_NOT_ERASED);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 64, w, 96), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB, w, 96), MOTA_ERR_FLASH_NOT_ERASED);
    memset(w, 0xFF, sizeof(w));
    w[95] = 0xFE; /* the last byte of the last word differs */
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 160, w, 96), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 192, w + 32, 64), MOTA_ERR_FLASH_NOT_ERASED);
    assert_int_equal(fx->m.bank[1].unlocks, unlocks + 2);
    no_violation(&fx->m);
    /* one programmed with 0xFF reads erased: its second program garbles its ECC bits, and the read back
     * says so */
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 4096, ff, 32), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 4096, ff, 32), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.reprogrammed, 1);
    assert_int_equal(fx->f.read(fx->f.ctx, MIB + 4096, w, 32), MOTA_ERR_FLASH_ECC);
    assert_int_equal(fx->m.faults, 0);
    assert_true(fx->m.bank[1].cr & LOCK);
}

static void a_bank_the_keys_cannot_unlock_fails_each_operation_before_it_reaches_the_array(void **state)
{
    struct fx *fx = *state;
    uint8_t w[32], r[32];
    pattern(w, sizeof(w), 5);
    fx->m.bank[1].key_locked_out = true; /* a wrong key earlier in this boot: LOCK stays until the next reset */
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + SECTOR, w, 32), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->f.erase(fx->f.ctx, MIB + SECTOR), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.programs + fx->m.erases + fx->m.error_flags, 0); /* not a word of the array written */
    assert_int_equal(fx->m.bank[1].wmask, 0);
    assert_int_equal(fx->f.read(fx->f.ctx, MIB + SECTOR, r, 32), MOTA_OK);
    for (unsigned i = 0; i < 32; i++)
        assert_int_equal(r[i], 0xFF);
    assert_true(fx->m.bank[1].cr & LOCK);
    /* the other bank has its own lock */
    assert_int_equal(fx->f.prog(fx->f.ctx, SECTOR, w, 32), MOTA_OK);
    assert_int_equal(fx->m.bank[0].unlocks, 1);
    assert_true(fx->m.bank[0].cr & LOCK);
}

static void every_error_flag_of_the_part_fails_its_operation_and_is_cleared_through_ccr(void **state)
{
    struct fx *fx = *state;
    /* WRPERR, PGSERR, STRBERR, INCERR, OPERR */
    const uint32_t flags[] = {1u << 17, 1u << 18, 1u << 19, 1u << 21, 1u << 22};
    uint8_t w[32], r[32];
    pattern(w, sizeof(w), 5);
    for (unsigned b = 0; b < 2; b++) {
        uint32_t base = b * MIB;
        for (unsigned i = 0; i < 5; i++) {
            fx->m.inject = flags[i];
            assert_int_equal(fx->f.prog(fx->f.ctx, base + 32 * i, w, 32), MOTA_ERR_FLASH_IO);
            assert_int_equal(fx->m.bank[b].sr & SR_ERRORS, 0);
            assert_true(fx->m.bank[b].cr & LOCK);
            fx->m.inject = flags[i];
            assert_int_equal(fx->f.erase(fx->f.ctx, base + SECTOR), MOTA_ERR_FLASH_IO);
            assert_int_equal(fx->m.bank[b].sr & SR_ERRORS, 0);
            assert_true(fx->m.bank[b].cr & LOCK);
            assert_int_equal(fx->f.prog(fx->f.ctx, base + SECTOR + 32 * i, w, 32), MOTA_OK); /* the next works */
        }
    }
    /* a write-protected sector (bank 2's sector 5) */
    fx->m.wrp[8 + 5] = 1;
    assert_int_equal(fx->f.erase(fx->f.ctx, MIB + 5 * SECTOR), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 5 * SECTOR, w, 32), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.bank[1].sr & SR_ERRORS, 0);
    /* a flag left by an earlier boot does not fail the next operation: cleared first */
    fx->m.bank[1].sr |= 1u << 18;
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 2 * SECTOR, w, 32), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, MIB + 2 * SECTOR, r, 32), MOTA_OK);
    assert_memory_equal(w, r, 32);
    /* SR is read only: every flag went through CCR */
    assert_int_equal(fx->m.sr_writes, 0);
    assert_int_equal(fx->m.bus_errors + fx->m.writes_when_busy + fx->m.reprogrammed + fx->m.stray, 0);
    assert_int_equal(fx->m.partial_words, 0);
}

static void a_flash_word_that_does_not_take_its_program_is_reported_by_its_read_back(void **state)
{
    struct fx *fx = *state;
    uint8_t w[96], r[32];
    pattern(w, sizeof(w), 6);
    fx->m.worn = MIB + 64 + 1; /* the third: two bits stay 1, the part flags nothing */
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB, w, 96), MOTA_ERR_FLASH_IO);
    assert_true(fx->m.bank[1].cr & LOCK);
    assert_int_equal(fx->f.read(fx->f.ctx, MIB + 64, r, 32), MOTA_ERR_FLASH_ECC);
    assert_int_equal(fx->m.faults, 0);
}

static void a_torn_flash_word_reads_as_an_ecc_error_taken_through_the_bus_fault_until_its_sector_is_erased(void **state)
{
    struct fx *fx = *state;
    uint8_t w[128], r[128];
    pattern(w, sizeof(w), 7);
    for (unsigned bfar = 0; bfar < 2; bfar++) {
        const uint32_t at = MIB + 3 * SECTOR;
        unsigned faults = fx->m.bus_faults;
        fx->m.bfar_invalid = bfar == 1; /* the hook is given 0: ECC_FAR alone names the word */
        assert_int_equal(fx->f.erase(fx->f.ctx, 3 * SECTOR + MIB), MOTA_OK);
        assert_int_equal(fx->f.prog(fx->f.ctx, at, w, 128), MOTA_OK);
        h7_model_tear(&fx->m, at + 32);
        assert_int_equal(fx->f.read(fx->f.ctx, at, r, 128), MOTA_ERR_FLASH_ECC);
        assert_int_equal(fx->m.bus_faults, faults + 1);
        assert_int_equal(fx->m.faults, 0);                                          /* the bus fault was the driver's */
        assert_int_equal(fx->m.bank[1].sr & DBECCERR, 0);                           /* and its flag cleared */
        assert_int_equal(fx->f.read(fx->f.ctx, at + 40, r, 8), MOTA_ERR_FLASH_ECC); /* inside it */
        assert_int_equal(fx->f.read(fx->f.ctx, at + 8, r, 32), MOTA_ERR_FLASH_ECC); /* its first bytes */
        assert_int_equal(fx->f.read(fx->f.ctx, at, r, 32), MOTA_OK);                /* its neighbours read */
        assert_memory_equal(r, w, 32);
        assert_int_equal(fx->f.read(fx->f.ctx, at + 64, r, 64), MOTA_OK);
        assert_memory_equal(r, w + 64, 64);
        assert_int_equal(fx->f.prog(fx->f.ctx, at + 32, w, 32), MOTA_ERR_FLASH_ECC); /* not programmed over */
        assert_int_equal(fx->m.faults, 0);
        assert_int_equal(fx->m.bank[1].sr & DBECCERR, 0);
    }
    /* two torn words in one read: both faults the driver's */
    const uint32_t at = MIB + 4 * SECTOR;
    assert_int_equal(fx->f.prog(fx->f.ctx, at, w, 128), MOTA_OK);
    h7_model_tear(&fx->m, at);
    h7_model_tear(&fx->m, at + 96);
    unsigned faults = fx->m.bus_faults;
    assert_int_equal(fx->f.read(fx->f.ctx, at, r, 128), MOTA_ERR_FLASH_ECC);
    assert_int_equal(fx->m.bus_faults, faults + 2);
    assert_int_equal(fx->m.faults, 0);
    /* a read across the banks' boundary: each bank's error through its own registers */
    assert_int_equal(fx->f.erase(fx->f.ctx, MIB - SECTOR), MOTA_OK);
    assert_int_equal(fx->f.erase(fx->f.ctx, MIB), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB - 64, w, 128), MOTA_OK);
    for (unsigned i = 0; i < 2; i++) {
        h7_model_tear(&fx->m, i == 0 ? MIB + 32 : MIB - 32);
        faults = fx->m.bus_faults;
        assert_int_equal(fx->f.read(fx->f.ctx, MIB - 64, r, 128), MOTA_ERR_FLASH_ECC);
        assert_int_equal(fx->m.bus_faults, faults + 1); /* the read stops at its first bank's failure */
        assert_int_equal(fx->m.faults, 0);
    }
    /* erased, the sector reads and programs again */
    assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, at, r, 128), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, at, w, 128), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, at, r, 128), MOTA_OK);
    assert_memory_equal(r, w, 128);
    no_violation(&fx->m);
}

static void the_bus_fault_hook_declines_an_ecc_error_outside_a_driver_read(void **state)
{
    struct fx *fx = *state;
    uint8_t w[64], r[64];
    pattern(w, sizeof(w), 8);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB, w, 64), MOTA_OK);
    h7_model_tear(&fx->m, MIB + 32);
    /* no read runs: never the driver's */
    assert_false(mota_stm32h7_flash_bus_fault(0));
    assert_false(mota_stm32h7_flash_bus_fault(0x08100020u));
    /* code run in place, or a mapped read, of the torn word: the driver declines the bus fault */
    assert_non_null(fx->f.map(fx->f.ctx, MIB, 64));
    h7_model_fetch(&fx->m, MIB, 64);
    assert_int_equal(fx->m.faults, 1);
    assert_true(fx->m.bank[1].sr & DBECCERR);
    /* the flag it left is not the next read's, even of that word once its sector is erased */
    assert_int_equal(fx->f.read(fx->f.ctx, MIB, r, 32), MOTA_OK);
    assert_memory_equal(r, w, 32);
    h7_model_fetch(&fx->m, MIB + 32, 4);
    assert_int_equal(fx->m.faults, 2);
    fx->m.bank[1].sr |= DBECCERR; /* left by the fault */
    assert_int_equal(fx->f.erase(fx->f.ctx, MIB), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB, w, 64), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, MIB, r, 64), MOTA_OK);
    assert_memory_equal(r, w, 64);
    /* an interrupt handler loading a torn word while a driver read of another range runs, in either
     * bank, with BFAR valid or not: the handler's fault, and the read succeeds */
    h7_model_tear(&fx->m, MIB + 2 * SECTOR);
    h7_model_tear(&fx->m, 2 * SECTOR);
    const uint32_t loads[] = {MIB + 2 * SECTOR, 2 * SECTOR};
    unsigned faults = fx->m.faults;
    for (unsigned i = 0; i < 4; i++) {
        fx->m.bfar_invalid = i >= 2;
        fx->m.interrupt_load = loads[i % 2] + 1;
        assert_int_equal(fx->f.read(fx->f.ctx, MIB, r, 64), MOTA_OK);
        assert_memory_equal(r, w, 64);
        assert_int_equal(fx->m.faults, ++faults);
        assert_int_equal(fx->m.interrupt_load, 0);
    }
}

static void a_single_error_the_ecc_corrects_is_not_a_failure(void **state)
{
    struct fx *fx = *state;
    uint8_t w[64], r[128];
    pattern(w, sizeof(w), 9);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB, w, 64), MOTA_OK);
    fx->m.single = MIB + 32 + 1;
    h7_model_power_on(&fx->m); /* the D-cache forgets the lines */
    assert_int_equal(fx->f.read(fx->f.ctx, MIB, r, 64), MOTA_OK);
    assert_memory_equal(r, w, 64);
    assert_true(fx->m.bank[1].sr & SNECCERR);
    assert_int_equal(fx->m.bus_faults, 0);
    /* a program after it is not failed by it */
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 64, w, 64), MOTA_OK);
    /* ECC_FAR keeps the first error's word while a flag is set: the single error a read saw does not hide
     * the next read's double error, nor one after it in the same read */
    h7_model_power_on(&fx->m);
    assert_int_equal(fx->f.read(fx->f.ctx, MIB + 32, r, 32), MOTA_OK);
    assert_true(fx->m.bank[1].sr & SNECCERR);
    h7_model_tear(&fx->m, MIB + 96);
    assert_int_equal(fx->f.read(fx->f.ctx, MIB + 96, r, 32), MOTA_ERR_FLASH_ECC);
    h7_model_power_on(&fx->m);
    assert_int_equal(fx->f.read(fx->f.ctx, MIB, r, 128), MOTA_ERR_FLASH_ECC);
    assert_int_equal(fx->m.bus_faults, 2);
    assert_int_equal(fx->m.faults, 0);
}

static void a_part_that_stays_busy_times_out_with_the_interface_locked(void **state)
{
    struct fx *fx = *state;
    uint8_t w[32] = {0};
    fx->m.stuck = true;
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB, w, 32), MOTA_ERR_TIMEOUT);
    assert_int_equal(fx->f.erase(fx->f.ctx, MIB), MOTA_ERR_TIMEOUT);
    assert_true(fx->m.bank[1].cr & LOCK);
    assert_int_equal(fx->m.programs + fx->m.erases, 0);
    /* one that never ends a flash word's program */
    fx->m.stuck = false;
    fx->m.prog_reads = UINT32_MAX;
    uint64_t t0 = clock_us;
    assert_int_equal(fx->b2.prog(fx->b2.ctx, 0, w, 32), MOTA_ERR_TIMEOUT);
    assert_true(fx->m.bank[1].cr & LOCK);
    assert_int_equal(fx->m.programs, 1);
    assert_true(clock_us - t0 < 100000); /* bounded by the word's time, not the erase's */
}

static void the_d_cache_holds_no_stale_line_after_an_erase_or_a_program(void **state)
{
    struct fx *fx = *state;
    uint8_t w[96], r[96], ff[96];
    const uint32_t at = MIB + 2 * SECTOR;
    pattern(w, sizeof(w), 10);
    memset(ff, 0xFF, sizeof(ff));
    assert_int_equal(fx->f.prog(fx->f.ctx, at, w, 96), MOTA_OK);
    h7_model_fetch(&fx->m, at, 96);               /* a mapped read holds its lines */
    h7_model_fetch(&fx->m, at + SECTOR - 32, 32); /* and the sector's last */
    h7_model_fetch(&fx->m, at + SECTOR, 32);      /* and the next sector's first */
    h7_model_fill(&fx->m, at + SECTOR, 32, 0x11); /* ... which changes: not the driver's to drop */
    assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, at, r, 96), MOTA_OK);
    assert_memory_equal(r, ff, 96);
    assert_memory_equal(fx->f.map(fx->f.ctx, at, 96), ff, 96);
    assert_memory_equal(fx->f.map(fx->f.ctx, at + SECTOR - 32, 32), ff, 32);
    assert_int_equal(h7_model_stale(&fx->m), 1);               /* the next sector's line, held across */
    assert_int_equal(fx->m.dc.invalidations, 3 + SECTOR / 32); /* the program's three lines, the sector's */
    dcache_model_reset(&fx->m.dc);
    /* the erased lines held between the erase and the program, and past its end */
    h7_model_fetch(&fx->m, at, 128);
    assert_int_equal(fx->f.prog(fx->f.ctx, at, w, 96), MOTA_OK);
    assert_memory_equal(fx->f.map(fx->f.ctx, at, 96), w, 96);
    assert_int_equal(fx->f.read(fx->f.ctx, at, r, 96), MOTA_OK);
    assert_memory_equal(r, w, 96);
    assert_int_equal(fx->m.dc.invalidations, 3 + SECTOR / 32 + 3); /* its three lines */
    assert_false(fx->m.unsynced);                                  /* each time with the barrier after */
    no_violation(&fx->m);
    /* a board whose D-cache is off has no line dropped */
    struct mota_stm32h7_flash_cfg off = bank2;
    struct mota_flash f;
    off.dcache = false;
    dcache_model_reset(&fx->m.dc);
    fx->m.dc.enabled = false;
    assert_int_equal(mota_stm32h7_flash_init(&f, &off), MOTA_OK);
    assert_int_equal(f.erase(f.ctx, 3 * SECTOR), MOTA_OK);
    assert_int_equal(f.prog(f.ctx, 3 * SECTOR, w, 96), MOTA_OK);
    assert_int_equal(f.read(f.ctx, 3 * SECTOR, r, 96), MOTA_OK);
    assert_memory_equal(r, w, 96);
    assert_int_equal(fx->m.dc.invalidations, 3 + SECTOR / 32 + 3);
    no_violation(&fx->m);
}

static void a_flash_word_is_written_as_its_eight_words_in_a_row_to_its_own_address(void **state)
{
    struct fx *fx = *state;
    uint8_t w[288];
    pattern(w, sizeof(w), 12);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB, w, 32), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, MIB + 32, w + 32, 256), MOTA_OK);
    assert_int_equal(fx->m.array_writes, 8 * 9); /* no word written twice, none left in the buffer */
    assert_int_equal(fx->m.bank[1].programs, 9);
    assert_memory_equal(fx->m.mem + MIB, w, sizeof(w));
    no_violation(&fx->m);
}

/* What the flash words of a cut program hold, read after power-on: programmed ones before the one cut,
 * that one torn (its eighth word was the cut) or erased, erased ones after it. */
static void check_cut_program(struct fx *fx, uint32_t at, const uint8_t *w, unsigned n, unsigned *torn)
{
    uint8_t r[32], ff[32];
    bool before = true, after = false; /* before the cut flash word, after it */
    memset(ff, 0xFF, sizeof(ff));
    for (unsigned q = 0; q < n; q++) {
        int ret = fx->f.read(fx->f.ctx, at + 32 * q, r, 32);
        unsigned s = fx->m.word[at / 32 + q];
        if (s == H7_WORD_TORN) {
            assert_true(before);
            assert_int_equal(ret, MOTA_ERR_FLASH_ECC);
            (*torn)++;
            before = false;
            continue;
        }
        assert_int_equal(ret, MOTA_OK);
        if (s == H7_WORD_PROGRAMMED) {
            assert_true(before && !after);
            assert_memory_equal(r, w + 32 * q, 32);
        } else {
            assert_memory_equal(r, ff, 32);
            before = false;
            after = true;
        }
    }
}

/* a program of three flash words, cut at each write to the part in turn; after power-on the reads say
 * what the part holds (never a fault) and the driver erases and programs again as on a fresh part */
static void a_power_cut_at_any_write_of_a_program_leaves_each_flash_word_whole_erased_or_torn(void **state)
{
    struct fx *fx = *state;
    uint8_t w[96], r[96];
    const uint32_t at = MIB + 3 * SECTOR;
    unsigned torn = 0;
    pattern(w, sizeof(w), 11);
    uint64_t w0 = fx->m.writes;
    assert_int_equal(fx->f.prog(fx->f.ctx, at, w, 96), MOTA_OK);
    uint64_t total = fx->m.writes - w0;
    assert_true(total >= 24);
    for (uint64_t cut = 1; cut <= total; cut++) {
        h7_model_power_on(&fx->m);
        assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
        fx->m.cut_at = fx->m.writes + cut;
        (void)fx->f.prog(fx->f.ctx, at, w, 96);
        assert_true(fx->m.off);
        h7_model_power_on(&fx->m);
        check_cut_program(fx, at, w, 3, &torn);
        assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
        assert_int_equal(fx->f.prog(fx->f.ctx, at, w, 96), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, at, r, 96), MOTA_OK);
        assert_memory_equal(r, w, 96);
    }
    assert_int_equal(torn, 3); /* each flash word's eighth word was a cut once */
    assert_int_equal(fx->m.faults + fx->m.bus_errors + fx->m.writes_when_busy + fx->m.reprogrammed, 0);
}

/* an erase of a sector of old contents, cut at each write: the sector is old, wholly torn (every flash word
 * an ECC error until erased) or erased; the next boot's erase makes it whole */
static void a_power_cut_at_any_write_of_an_erase_leaves_the_sector_old_torn_or_erased(void **state)
{
    struct fx *fx = *state;
    uint8_t r[32], old[32], ff[32];
    const uint32_t at = MIB + 4 * SECTOR;
    unsigned seen[3] = {0};
    memset(old, 0x5A, sizeof(old));
    memset(ff, 0xFF, sizeof(ff));
    uint64_t w0 = fx->m.writes;
    assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
    uint64_t total = fx->m.writes - w0;
    assert_true(total >= 5);
    for (uint64_t cut = 1; cut <= total; cut++) {
        h7_model_fill(&fx->m, at, SECTOR, 0x5A);
        h7_model_power_on(&fx->m);
        fx->m.cut_at = fx->m.writes + cut;
        (void)fx->f.erase(fx->f.ctx, at);
        assert_true(fx->m.off);
        h7_model_power_on(&fx->m);
        int first = fx->f.read(fx->f.ctx, at, r, 32);
        unsigned kind = first != MOTA_OK ? 1u : (memcmp(r, old, 32) == 0 ? 0u : 2u);
        seen[kind]++;
        for (uint32_t q = 0; q < SECTOR; q += 4096) {
            int ret = fx->f.read(fx->f.ctx, at + q + 32 * (q / 4096), r, 32);
            assert_int_equal(ret, kind == 1 ? MOTA_ERR_FLASH_ECC : MOTA_OK);
            if (kind != 1)
                assert_memory_equal(r, kind == 0 ? old : ff, 32);
        }
        assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, at + SECTOR - 32, r, 32), MOTA_OK);
        assert_memory_equal(r, ff, 32);
    }
    assert_int_equal(seen[1], 1); /* the cut at START */
    assert_true(seen[0] >= 2 && seen[2] >= 1);
    assert_int_equal(fx->m.faults + fx->m.bus_errors + fx->m.writes_when_busy, 0);
}

#define TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(the_driver_describes_the_part_as_the_profile_does_and_refuses_ranges_it_cannot_serve),
        TEST(programs_land_in_both_banks_through_each_banks_own_registers),
        TEST(a_sector_erase_names_the_sector_by_its_bank_and_number_and_touches_only_it),
        TEST(misaligned_programmed_or_outside_units_are_refused_before_the_interface_is_touched),
        TEST(a_bank_the_keys_cannot_unlock_fails_each_operation_before_it_reaches_the_array),
        TEST(every_error_flag_of_the_part_fails_its_operation_and_is_cleared_through_ccr),
        TEST(a_flash_word_that_does_not_take_its_program_is_reported_by_its_read_back),
        TEST(a_torn_flash_word_reads_as_an_ecc_error_taken_through_the_bus_fault_until_its_sector_is_erased),
        TEST(the_bus_fault_hook_declines_an_ecc_error_outside_a_driver_read),
        TEST(a_single_error_the_ecc_corrects_is_not_a_failure),
        TEST(a_part_that_stays_busy_times_out_with_the_interface_locked),
        TEST(the_d_cache_holds_no_stale_line_after_an_erase_or_a_program),
        TEST(a_flash_word_is_written_as_its_eight_words_in_a_row_to_its_own_address),
        TEST(a_power_cut_at_any_write_of_a_program_leaves_each_flash_word_whole_erased_or_torn),
        TEST(a_power_cut_at_any_write_of_an_erase_leaves_the_sector_old_torn_or_erased),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
