/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32N6570-DK's flash driver (ports/stm32/common/src/flash_n6.c), the source that goes on the part,
 * run against the model of XSPI2, the MX66UW1G45G behind it and the M55's D-cache (stm32n6_flash_model.h)
 * over the board's 16 MiB of the NOR: init brings the NOR from any mode to octal DTR and XSPI2 to
 * memory-mapped mode; every program and erase leaves that mode by an abort, latches a write enable,
 * programs inside 256-byte pages, waits for the NOR with a bound, reports P_FAIL and E_FAIL, returns to
 * memory-mapped mode and drops the D-cache's lines it changed; the window is read only in memory-mapped
 * mode; a power cut inside an erase or a program leaves what the NOR would, and the next boot recovers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "mota/err.h"
#include "mota/stm32n6_nor.h"
#include "stm32_io.h"
#include "stm32n6_flash_model.h"

#define KIB 1024u
#define MIB (1024u * KIB)
#define SECTOR (4u * KIB)
#define FIRST MIB /* the NOR's address of the agent's offset 0 */
#define XSPI_CR (MOTA_STM32N6_XSPI2_REGS + 0x000u)
#define FMODE_MMAP (3u << 28)

static const struct mota_stm32n6_nor_cfg *const dk = &n6_model_dk;

struct fx {
    struct n6_model m;
    struct mota_flash f;
};

static int setup(void **state)
{
    static struct fx fx;
    n6_model_init(&fx.m, FIRST, 16 * MIB, true);
    assert_int_equal(mota_stm32n6_nor_init(&fx.f, dk), MOTA_OK);
    *state = &fx;
    return 0;
}

/* the model alone: a NOR at power-on, the driver not set up */
static int setup_cold(void **state)
{
    static struct fx fx;
    n6_model_init(&fx.m, FIRST, 16 * MIB, true);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    struct fx *fx = *state;
    n6_model_free(&fx->m);
    return 0;
}

static void pattern(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)((i * 131u + seed * 7u) ^ (i >> 8));
}

static bool memory_mapped(const struct n6_model *m)
{
    return (m->cr & (3u << 28)) == FMODE_MMAP && m->mode == N6_DOPI && !(m->sr & N6_SR_WEL);
}

/* what a correct driver never makes the part see, and what it leaves at rest */
static void no_violation(const struct n6_model *m)
{
    assert_int_equal(m->wrong_mode, 0);
    assert_int_equal(m->bad_phases, 0);
    assert_int_equal(m->no_wel, 0);
    assert_int_equal(m->while_wip, 0);
    assert_int_equal(m->while_busy, 0);
    assert_int_equal(m->overruns, 0);
    assert_int_equal(m->window_outside, 0);
    assert_int_equal(m->unbarriered, 0);
    assert_int_equal(m->disabled, 0);
    assert_int_equal(m->stray, 0);
    assert_int_equal(m->tefs, 0);
    assert_true(memory_mapped(m));
    assert_int_equal(dcache_model_stale(&m->dcache), 0);
}

static void the_driver_describes_the_nor_as_the_host_profile_does(void **state)
{
    struct fx *fx = *state;
    struct mota_flash f;
    struct mota_stm32n6_nor_cfg bad = *dk;
    assert_int_equal(fx->f.size, 16 * MIB);
    assert_int_equal(fx->f.xip_base, 0x70100000u);
    assert_int_equal(fx->f.prog_size, 16);
    assert_int_equal(fx->f.prog_block, 256);
    assert_int_equal(fx->f.prog_typ_us, 150);
    assert_int_equal(fx->f.prog_max_us, 750);
    assert_int_equal(fx->f.erased_value, 0xFF);
    assert_int_equal(fx->f.flags, 0); /* a NOR: no ECC, no program-once rule, the CPU not stalled */
    assert_int_equal(fx->f.n_regions, 1);
    assert_int_equal(fx->f.regions[0].count, 4096);
    assert_int_equal(fx->f.regions[0].sector_size, SECTOR);
    assert_int_equal(mota_flash_erase_max_us(&fx->f, 300 * KIB), 400000);
    /* not whole sectors of the NOR, no clock, a prescaler XSPI2 does not have: nothing touched */
    uint64_t writes = fx->m.writes;
    const uint32_t bases[] = {0x70100100u, 0x6FFFF000u, 0x77000000u + 0x1000u};
    for (unsigned i = 0; i < 3; i++) {
        bad.base = bases[i];
        assert_int_equal(mota_stm32n6_nor_init(&f, &bad), MOTA_ERR_ARG);
    }
    bad = *dk;
    bad.size = 6 * KIB;
    assert_int_equal(mota_stm32n6_nor_init(&f, &bad), MOTA_ERR_ARG);
    bad.size = 0;
    assert_int_equal(mota_stm32n6_nor_init(&f, &bad), MOTA_ERR_ARG);
    bad = *dk;
    bad.now_us = NULL;
    assert_int_equal(mota_stm32n6_nor_init(&f, &bad), MOTA_ERR_ARG);
    bad = *dk;
    bad.prescaler = 256;
    assert_int_equal(mota_stm32n6_nor_init(&f, &bad), MOTA_ERR_ARG);
    assert_int_equal(fx->m.writes, writes);
}

static void init_brings_a_nor_at_power_on_in_spi_mode_to_octal_dtr_and_memory_mapped_mode(void **state)
{
    struct fx *fx = *state;
    uint8_t r[16], ff[16];
    memset(ff, 0xFF, sizeof(ff));
    assert_int_equal(fx->m.mode, N6_SPI);
    assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_OK);
    assert_int_equal(fx->m.mode, N6_DOPI);
    assert_int_equal(fx->m.dc, 0);                  /* 20 dummy cycles */
    assert_int_equal(fx->m.dcr1 >> 24 & 7u, 1);     /* Macronix */
    assert_int_equal(fx->m.dcr1 >> 16 & 0x1Fu, 26); /* 2^27 bytes: 128 MiB */
    assert_int_equal(fx->m.dcr2 & 0xFFu, dk->prescaler);
    assert_int_equal(fx->m.resets, 1); /* the SPI form: the others are noise to a NOR in SPI */
    assert_int_equal(fx->m.foreign_resets, 4);
    assert_int_equal(fx->f.read(fx->f.ctx, 0, r, 16), MOTA_OK);
    assert_memory_equal(r, ff, 16);
    assert_memory_equal(fx->f.map(fx->f.ctx, 16 * MIB - 16, 16), ff, 16);
    no_violation(&fx->m);
}

static void init_brings_a_nor_the_boot_rom_left_in_octal_dtr_or_spi_back_through_a_reset(void **state)
{
    struct fx *fx = *state;
    uint8_t w[64], r[64];
    pattern(w, sizeof(w), 1);
    for (int octal = 0; octal < 2; octal++) {
        n6_model_power_on(&fx->m);
        n6_model_left_by_boot_rom(&fx->m, octal);
        fx->m.reset_recovery = 3; /* the NOR ignores the first commands after its reset */
        fx->m.sr |= N6_SR_WEL;
        assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_OK);
        assert_int_equal(fx->m.resets, (unsigned)octal + 1u);
        assert_int_equal(fx->f.prog(fx->f.ctx, 4096u * (unsigned)octal, w, 64), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, 4096u * (unsigned)octal, r, 64), MOTA_OK);
        assert_memory_equal(r, w, 64);
        no_violation(&fx->m);
    }
}

static void init_refuses_a_nor_that_is_not_an_mx66uw1g45g_or_does_not_answer(void **state)
{
    struct fx *fx = *state;
    fx->m.id = 0x1940C2u; /* another Macronix */
    assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.mode, N6_SPI); /* not switched */
    fx->m.id = N6_MODEL_ID;
    fx->m.reset_recovery = UINT32_MAX; /* never answers */
    assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.wrong_mode + fx->m.bad_phases + fx->m.while_busy + fx->m.stray, 0);
}

static void init_clears_block_protection_and_refuses_one_it_cannot_clear(void **state)
{
    struct fx *fx = *state;
    uint8_t w[16];
    pattern(w, sizeof(w), 2);
    fx->m.sr = 0x3Cu | 0x40u; /* every BP bit, QE kept */
    assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_OK);
    assert_int_equal(fx->m.sr & N6_SR_BP, 0);
    assert_int_equal(fx->m.sr & 0x40u, 0x40u);
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 16), MOTA_OK);
    no_violation(&fx->m);
    /* SRWD with WP# held low: the status register does not change */
    n6_model_power_on(&fx->m);
    fx->m.sr = N6_SR_SRWD | 0x04u;
    fx->m.wp_low = true;
    assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.sr & N6_SR_BP, 0x04u);
    /* the individual block protection mode (WPSEL, one-time programmable): refused */
    n6_model_power_on(&fx->m);
    fx->m.wp_low = false;
    fx->m.sr = 0;
    fx->m.scur = N6_SCUR_WPSEL;
    assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.no_wel + fx->m.wrong_mode + fx->m.bad_phases + fx->m.while_busy, 0);
}

static void a_program_lands_and_reads_back_through_read_and_map(void **state)
{
    struct fx *fx = *state;
    static uint8_t w[4096], r[4096];
    const uint32_t offs[] = {0, 0x10000, 0x800000, 16 * MIB - 4096};
    for (unsigned i = 0; i < 4; i++) {
        pattern(w, sizeof(w), i);
        assert_int_equal(fx->f.prog(fx->f.ctx, offs[i], w, sizeof(w)), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, offs[i], r, sizeof(r)), MOTA_OK);
        assert_memory_equal(r, w, sizeof(w));
        assert_memory_equal(fx->f.map(fx->f.ctx, offs[i], sizeof(w)), w, sizeof(w));
        assert_memory_equal(fx->m.mem + offs[i], w, sizeof(w)); /* the NOR itself */
    }
    assert_int_equal(fx->m.programs, 4 * 16); /* a page at a time */
    assert_int_equal(fx->m.last_prog, FIRST + 16 * MIB - 256);
    assert_int_equal(fx->m.wrens, 4 * 16 + 2); /* each page's, and init's two */
    no_violation(&fx->m);
}

static void a_program_across_a_page_boundary_is_split_at_it(void **state)
{
    struct fx *fx = *state;
    uint8_t w[608], r[608];
    pattern(w, sizeof(w), 3);
    /* 0xF0 .. 0x350: 16 bytes of page 0, pages 1 and 2, 80 bytes of page 3 */
    assert_int_equal(fx->f.prog(fx->f.ctx, 0xF0, w, sizeof(w)), MOTA_OK);
    assert_int_equal(fx->m.programs, 4);
    assert_int_equal(fx->m.last_prog, FIRST + 0x300);
    assert_int_equal(fx->m.last_prog_len, 0x50);
    assert_int_equal(fx->f.read(fx->f.ctx, 0xF0, r, sizeof(r)), MOTA_OK);
    assert_memory_equal(r, w, sizeof(w));
    for (unsigned i = 0; i < 0xF0; i++) /* nothing wrapped to the page's start */
        assert_int_equal(fx->m.mem[i], 0xFF);
    assert_int_equal(fx->m.mem[0x350], 0xFF);
    no_violation(&fx->m);
}

static void an_erase_gives_0xff_on_exactly_one_sector(void **state)
{
    struct fx *fx = *state;
    uint8_t r[SECTOR];
    n6_model_fill(&fx->m, FIRST, 4 * SECTOR, 0x5A);
    n6_model_fetch(&fx->m, FIRST, 4 * SECTOR); /* the D-cache holds the old bytes */
    assert_int_equal(fx->f.erase(fx->f.ctx, SECTOR), MOTA_OK);
    assert_int_equal(fx->m.last_erase, FIRST + SECTOR);
    assert_int_equal(fx->m.erases, 1);
    assert_int_equal(fx->f.read(fx->f.ctx, SECTOR, r, SECTOR), MOTA_OK);
    for (unsigned i = 0; i < SECTOR; i++)
        assert_int_equal(r[i], 0xFF);
    assert_int_equal(fx->m.mem[SECTOR - 1], 0x5A);
    assert_int_equal(fx->m.mem[2 * SECTOR], 0x5A);
    assert_int_equal(fx->f.map(fx->f.ctx, SECTOR - 1, 1)[0], 0x5A);
    assert_int_equal(fx->f.map(fx->f.ctx, 2 * SECTOR, 1)[0], 0x5A);
    assert_int_equal(fx->f.erase(fx->f.ctx, 16 * MIB - SECTOR), MOTA_OK);
    assert_int_equal(fx->m.last_erase, FIRST + 16 * MIB - SECTOR);
    no_violation(&fx->m);
}

static void misaligned_or_outside_requests_are_refused_before_xspi2_is_touched(void **state)
{
    struct fx *fx = *state;
    uint8_t w[48];
    pattern(w, sizeof(w), 4);
    uint64_t writes = fx->m.writes;
    assert_int_equal(fx->f.prog(fx->f.ctx, 8, w, 16), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(fx->f.prog(fx->f.ctx, 16, w, 8), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(fx->f.prog(fx->f.ctx, 16 * MIB - 16, w, 32), MOTA_ERR_FLASH_BOUNDS);
    assert_int_equal(fx->f.erase(fx->f.ctx, SECTOR + 512), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(fx->f.erase(fx->f.ctx, 16 * MIB), MOTA_ERR_FLASH_BOUNDS);
    assert_int_equal(fx->f.read(fx->f.ctx, 16 * MIB - 8, w, 16), MOTA_ERR_FLASH_BOUNDS);
    assert_int_equal(fx->f.read(fx->f.ctx, UINT32_MAX, w, 16), MOTA_ERR_FLASH_BOUNDS);
    assert_null(fx->f.map(fx->f.ctx, 16 * MIB - 8, 16));
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 0), MOTA_OK);
    assert_int_equal(fx->m.writes, writes);
    /* a range not erased: found through the window, before XSPI2 leaves memory-mapped mode */
    assert_int_equal(fx->f.prog(fx->f.ctx, 32, w, 16), MOTA_OK);
    writes = fx->m.writes;
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 48), MOTA_ERR_FLASH_NOT_ERASED);
    assert_int_equal(fx->m.writes, writes);
    no_violation(&fx->m);
}

static void p_fail_and_e_fail_are_reported_as_flash_io_and_the_next_operation_works(void **state)
{
    struct fx *fx = *state;
    uint8_t w[32], r[32];
    pattern(w, sizeof(w), 5);
    fx->m.inject = N6_SCUR_P_FAIL;
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 32), MOTA_ERR_FLASH_IO);
    assert_true(memory_mapped(&fx->m));
    fx->m.inject = N6_SCUR_E_FAIL;
    assert_int_equal(fx->f.erase(fx->f.ctx, SECTOR), MOTA_ERR_FLASH_IO);
    assert_true(memory_mapped(&fx->m));
    assert_int_equal(fx->f.prog(fx->f.ctx, 64, w, 32), MOTA_OK);
    assert_int_equal(fx->f.erase(fx->f.ctx, SECTOR), MOTA_OK);
    assert_int_equal(fx->f.read(fx->f.ctx, 64, r, 32), MOTA_OK);
    assert_memory_equal(r, w, 32);
    /* block protection set behind the driver's back: the NOR refuses, and says so */
    fx->m.sr |= 0x3Cu;
    assert_int_equal(fx->f.prog(fx->f.ctx, 128, w, 32), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->f.erase(fx->f.ctx, 0), MOTA_ERR_FLASH_IO);
    no_violation(&fx->m);
}

static void a_write_enable_that_does_not_latch_fails_before_the_nor_is_asked_to_program(void **state)
{
    struct fx *fx = *state;
    uint8_t w[32];
    pattern(w, sizeof(w), 6);
    fx->m.wren_deaf = true;
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 32), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->f.erase(fx->f.ctx, 0), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.no_wel, 0); /* no program or erase sent without WEL */
    assert_int_equal(fx->m.programs + fx->m.erases, 0);
    no_violation(&fx->m);
}

static void a_byte_that_does_not_take_its_program_is_reported_by_the_read_back(void **state)
{
    struct fx *fx = *state;
    uint8_t w[64];
    memset(w, 0x00, sizeof(w));
    fx->m.worn = FIRST + 300 + 1; /* bit 0 stays 1, P_FAIL clear */
    assert_int_equal(fx->f.prog(fx->f.ctx, 256, w, 64), MOTA_ERR_FLASH_IO);
    no_violation(&fx->m);
}

static void a_nor_stuck_busy_times_out_and_xspi2_is_back_in_memory_mapped_mode(void **state)
{
    struct fx *fx = *state;
    uint8_t w[16] = {0};
    fx->m.stuck = true;
    assert_int_equal(fx->f.prog(fx->f.ctx, 0, w, 16), MOTA_ERR_TIMEOUT);
    assert_int_equal(fx->m.cr & (3u << 28), FMODE_MMAP);
    assert_false(fx->m.polling); /* the automatic polling aborted */
    /* still busy: the next operation is refused (its write enable does not latch) */
    assert_int_equal(fx->f.erase(fx->f.ctx, 0), MOTA_ERR_FLASH_IO);
    assert_int_equal(fx->m.erases, 0);
    n6_model_power_on(&fx->m); /* the power cycled: its page torn */
    fx->m.stuck = false;
    assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_OK);
    fx->m.stuck = true;
    assert_int_equal(fx->f.erase(fx->f.ctx, 0), MOTA_ERR_TIMEOUT);
    assert_int_equal(fx->m.cr & (3u << 28), FMODE_MMAP);
    assert_int_equal(fx->m.while_busy + fx->m.bad_phases + fx->m.overruns, 0);
    /* stuck in init's register writes */
    n6_model_power_on(&fx->m);
    fx->m.stuck = true;
    assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_ERR_TIMEOUT);
}

static void the_window_is_read_only_in_memory_mapped_mode_and_xspi2_idles_before_each_command(void **state)
{
    struct fx *fx = *state;
    static uint8_t w[1024], r[1024];
    pattern(w, sizeof(w), 7);
    for (unsigned i = 0; i < 8; i++) {
        assert_int_equal(fx->f.read(fx->f.ctx, 0, r, 64), MOTA_OK); /* XSPI2 busy with its prefetch */
        assert_int_equal(fx->f.prog(fx->f.ctx, 0x2000 + 1024 * i, w, sizeof(w)), MOTA_OK);
        assert_true(memory_mapped(&fx->m));
    }
    assert_int_equal(fx->f.erase(fx->f.ctx, 0x2000), MOTA_OK);
    assert_true(fx->m.aborts >= 9);
    no_violation(&fx->m);
}

static void no_dcache_line_is_stale_after_a_program_or_an_erase(void **state)
{
    struct fx *fx = *state;
    uint8_t w[96], r[96], ff[96];
    pattern(w, sizeof(w), 8);
    memset(ff, 0xFF, sizeof(ff));
    assert_int_equal(fx->f.prog(fx->f.ctx, 2 * SECTOR, w, 96), MOTA_OK);
    n6_model_fetch(&fx->m, FIRST + 2 * SECTOR, SECTOR); /* code or a mapped read holds the lines */
    assert_int_equal(fx->f.erase(fx->f.ctx, 2 * SECTOR), MOTA_OK);
    assert_int_equal(dcache_model_stale(&fx->m.dcache), 0);
    assert_memory_equal(fx->f.map(fx->f.ctx, 2 * SECTOR, 96), ff, 96);
    n6_model_fetch(&fx->m, FIRST + 2 * SECTOR, SECTOR); /* the erased lines held */
    assert_int_equal(fx->f.prog(fx->f.ctx, 2 * SECTOR + 16, w, 64), MOTA_OK);
    assert_int_equal(dcache_model_stale(&fx->m.dcache), 0);
    assert_memory_equal(fx->f.map(fx->f.ctx, 2 * SECTOR + 16, 64), w, 64);
    assert_int_equal(fx->f.read(fx->f.ctx, 2 * SECTOR + 16, r, 64), MOTA_OK);
    assert_memory_equal(r, w, 64);
    no_violation(&fx->m);
    /* a board whose D-cache does not cache the window: no maintenance */
    struct mota_stm32n6_nor_cfg nocache = *dk;
    nocache.dcache = false;
    fx->m.dcache.enabled = false;
    unsigned inv = fx->m.dcache.invalidations;
    assert_int_equal(mota_stm32n6_nor_init(&fx->f, &nocache), MOTA_OK);
    assert_int_equal(fx->f.erase(fx->f.ctx, 3 * SECTOR), MOTA_OK);
    assert_int_equal(fx->f.prog(fx->f.ctx, 3 * SECTOR, w, 96), MOTA_OK);
    assert_int_equal(fx->m.dcache.invalidations, inv);
    no_violation(&fx->m);
}

static void a_power_cut_inside_a_program_leaves_some_bits_cleared_and_the_next_boot_recovers(void **state)
{
    struct fx *fx = *state;
    uint8_t w[512], r[512], ff[512];
    const uint32_t at = 5 * SECTOR;
    unsigned torn = 0;
    pattern(w, sizeof(w), 9);
    memset(ff, 0xFF, sizeof(ff));
    uint64_t w0 = fx->m.writes;
    assert_int_equal(fx->f.prog(fx->f.ctx, at, w, sizeof(w)), MOTA_OK);
    uint64_t total = fx->m.writes - w0;
    for (uint64_t cut = 1; cut <= total; cut++) {
        n6_model_power_on(&fx->m);
        assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_OK);
        assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
        fx->m.cut_at = fx->m.writes + cut;
        (void)fx->f.prog(fx->f.ctx, at, w, sizeof(w));
        assert_true(fx->m.off);
        n6_model_power_on(&fx->m);
        assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, at, r, sizeof(r)), MOTA_OK);
        for (size_t i = 0; i < sizeof(r); i++) /* a NOR: bits only cleared, where the data has them clear */
            assert_int_equal(r[i] & w[i], w[i]);
        if (memcmp(r, w, 256) != 0 && memcmp(r, ff, 256) != 0)
            torn++;
        assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
        assert_int_equal(fx->f.prog(fx->f.ctx, at, w, sizeof(w)), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, at, r, sizeof(r)), MOTA_OK);
        assert_memory_equal(r, w, sizeof(r));
        no_violation(&fx->m);
    }
    assert_true(torn >= 1); /* a cut while the first page was programming */
}

static void a_power_cut_inside_an_erase_leaves_the_sector_partly_erased_and_an_erase_makes_it_whole(void **state)
{
    struct fx *fx = *state;
    uint8_t r[SECTOR];
    const uint32_t at = 6 * SECTOR;
    unsigned kinds[3] = {0}; /* old, partly erased, erased */
    uint64_t w0 = fx->m.writes;
    assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
    uint64_t total = fx->m.writes - w0;
    for (uint64_t cut = 1; cut <= total; cut++) {
        n6_model_power_on(&fx->m);
        assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_OK);
        n6_model_fill(&fx->m, FIRST + at, SECTOR, 0x5A);
        fx->m.cut_at = fx->m.writes + cut;
        (void)fx->f.erase(fx->f.ctx, at);
        assert_true(fx->m.off);
        n6_model_power_on(&fx->m);
        assert_int_equal(mota_stm32n6_nor_init(&fx->f, dk), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, at, r, SECTOR), MOTA_OK);
        unsigned old = 0, erased = 0;
        for (unsigned i = 0; i < SECTOR; i++) {
            old += r[i] == 0x5A;
            erased += r[i] == 0xFF;
        }
        kinds[old == SECTOR ? 0 : erased == SECTOR ? 2 : 1]++;
        assert_int_equal(fx->f.erase(fx->f.ctx, at), MOTA_OK);
        assert_int_equal(fx->f.read(fx->f.ctx, at, r, SECTOR), MOTA_OK);
        for (unsigned i = 0; i < SECTOR; i++)
            assert_int_equal(r[i], 0xFF);
        no_violation(&fx->m);
    }
    assert_true(kinds[0] >= 1 && kinds[1] >= 1 && kinds[2] >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_driver_describes_the_nor_as_the_host_profile_does, setup, teardown),
        cmocka_unit_test_setup_teardown(init_brings_a_nor_at_power_on_in_spi_mode_to_octal_dtr_and_memory_mapped_mode,
                                        setup_cold, teardown),
        cmocka_unit_test_setup_teardown(init_brings_a_nor_the_boot_rom_left_in_octal_dtr_or_spi_back_through_a_reset,
                                        setup_cold, teardown),
        cmocka_unit_test_setup_teardown(init_refuses_a_nor_that_is_not_an_mx66uw1g45g_or_does_not_answer, setup_cold,
                                        teardown),
        cmocka_unit_test_setup_teardown(init_clears_block_protection_and_refuses_one_it_cannot_clear, setup_cold,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_program_lands_and_reads_back_through_read_and_map, setup, teardown),
        cmocka_unit_test_setup_teardown(a_program_across_a_page_boundary_is_split_at_it, setup, teardown),
        cmocka_unit_test_setup_teardown(an_erase_gives_0xff_on_exactly_one_sector, setup, teardown),
        cmocka_unit_test_setup_teardown(misaligned_or_outside_requests_are_refused_before_xspi2_is_touched, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(p_fail_and_e_fail_are_reported_as_flash_io_and_the_next_operation_works, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_write_enable_that_does_not_latch_fails_before_the_nor_is_asked_to_program,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_byte_that_does_not_take_its_program_is_reported_by_the_read_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_nor_stuck_busy_times_out_and_xspi2_is_back_in_memory_mapped_mode, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            the_window_is_read_only_in_memory_mapped_mode_and_xspi2_idles_before_each_command, setup, teardown),
        cmocka_unit_test_setup_teardown(no_dcache_line_is_stale_after_a_program_or_an_erase, setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_power_cut_inside_a_program_leaves_some_bits_cleared_and_the_next_boot_recovers, setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_power_cut_inside_an_erase_leaves_the_sector_partly_erased_and_an_erase_makes_it_whole, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
