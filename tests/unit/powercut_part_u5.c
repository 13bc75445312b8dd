/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's power-cut sweep on the STM32U5's driver (flash_u5.c) over its register model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "powercut_part.h"
#include "mota/b_u585i_iot02a_layout.h"
#include "mota/stm32_flash.h"
#include "stm32u5_flash_model.h"

/* the payload programs take about as many writes a byte as the F4's: a cut every 127th, and the same part of
 * CI's time (its model is slower to restore) */
const uint64_t powercut_stride = 127u;

/* The STM32U585's bank 2 of the b-u585i-iot02a profile (mota/b_u585i_iot02a_layout.h: the journal in pages 0
 * and 1, slots A and B of 62 pages each), its ICACHE on: 16-byte quad-words programmed once, a torn one an
 * ECC error its driver's read reports. */
#define BANK2 (1024u * 1024u) /* the agent's offset 0 in the part's array */
static struct u5_model u5;

static void u5_open(void (*on_cut)(void *ctx), void *ctx)
{
    u5_model_init(&u5, MOTA_STM32U5_FLASH_REGS, MOTA_STM32U5_ICACHE_REGS);
    u5.on_cut = on_cut;
    u5.on_cut_ctx = ctx;
}

static void u5_close(void)
{
    u5_model_free(&u5);
}

static int u5_driver(struct mota_flash *f)
{
    return mota_stm32u5_flash_init(f, &u5_model_bank2);
}

static void u5_power_on(void)
{
    u5_model_power_on(&u5);
}

static void u5_cut_at(uint64_t n)
{
    u5.cut_at = n ? u5.writes + n : 0;
}

static uint64_t u5_writes(void)
{
    return u5.writes;
}

static bool u5_dead(void)
{
    return u5.off;
}

static unsigned u5_violations(void)
{
    bool unlocked = !u5.off && !(u5.nscr & (1u << 31)); /* NSCR.LOCK: every operation locks again */
    return u5.bus_errors + u5.writes_when_busy + u5.reprogrammed + u5.unmasked_writes + u5.partial_quad_words +
           u5.faults + u5.stray + u5.error_flags + unlocked + u5_model_stale(&u5);
}

static const uint8_t *u5_array(void)
{
    return u5.mem + BANK2;
}

/* the array and each quad-word's state (erased, programmed, torn): what survives a cut */
static uint8_t *u5_save(void)
{
    uint8_t *img = malloc(U5_MODEL_SIZE + U5_MODEL_SIZE / U5_MODEL_QW);
    assert_non_null(img);
    memcpy(img, u5.mem, U5_MODEL_SIZE);
    memcpy(img + U5_MODEL_SIZE, u5.qw, U5_MODEL_SIZE / U5_MODEL_QW);
    return img;
}

static void u5_restore(const uint8_t *img)
{
    memcpy(u5.mem, img, U5_MODEL_SIZE);
    memcpy(u5.qw, img + U5_MODEL_SIZE, U5_MODEL_SIZE / U5_MODEL_QW);
}

const struct powercut_part powercut_part = {
    .name = "STM32U585 bank 2",
    .journal_offset = MOTA_B_U585I_IOT02A_JOURNAL,
    .slot_offset = {MOTA_B_U585I_IOT02A_SLOTS, MOTA_B_U585I_IOT02A_SLOTS + MOTA_B_U585I_IOT02A_SLOT_SIZE},
    .slot_size = MOTA_B_U585I_IOT02A_SLOT_SIZE,
    .open = u5_open,
    .close = u5_close,
    .driver = u5_driver,
    .power_on = u5_power_on,
    .cut_at = u5_cut_at,
    .writes = u5_writes,
    .dead = u5_dead,
    .violations = u5_violations,
    .array = u5_array,
    .save = u5_save,
    .restore = u5_restore};
