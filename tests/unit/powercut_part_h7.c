/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's power-cut sweep on the STM32H7's driver (flash_h7.c) over its register model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "powercut_part.h"
#include "mota/stm32h747i_disco_layout.h"
#include "mota/stm32_flash.h"
#include "stm32h7_flash_model.h"

/* a flash word takes nine writes (its eight words, its flags' clearing): a cut every 7th moves through each
 * word's writes, in about half the U5's time (the model has no ICACHE to restore, and the array's sectors
 * are few) */
const uint64_t powercut_stride = 7u;

/* The STM32H747's whole array as the stm32h747i-disco gives it to the agent (mota/stm32h747i_disco_layout.h:
 * the journal in bank 2's sectors 0 and 1, slots A and B of three sectors each), the M7's D-cache on:
 * 32-byte flash words programmed once, a torn one an ECC error its driver's read takes through the bus
 * fault. */
static struct h7_model h7;

static void h7_open(void (*on_cut)(void *ctx), void *ctx)
{
    h7_model_init(&h7, MOTA_STM32H7_FLASH_REGS, true);
    h7.on_cut = on_cut;
    h7.on_cut_ctx = ctx;
}

static void h7_close(void)
{
    h7_model_free(&h7);
}

static int h7_driver(struct mota_flash *f)
{
    return mota_stm32h7_flash_init(f, &h7_model_disco);
}

static void h7_power_on(void)
{
    h7_model_power_on(&h7);
}

static void h7_cut_at(uint64_t n)
{
    h7.cut_at = n ? h7.writes + n : 0;
}

static uint64_t h7_writes(void)
{
    return h7.writes;
}

static bool h7_dead(void)
{
    return h7.off;
}

static unsigned h7_violations(void)
{
    return h7_model_violations(&h7);
}

static const uint8_t *h7_array(void)
{
    return h7.mem; /* the agent's offset 0 is the array's */
}

/* the array and each flash word's state (erased, programmed, torn): what survives a cut */
static uint8_t *h7_save(void)
{
    uint8_t *img = malloc(H7_MODEL_SIZE + H7_MODEL_SIZE / H7_MODEL_WORD);
    assert_non_null(img);
    memcpy(img, h7.mem, H7_MODEL_SIZE);
    memcpy(img + H7_MODEL_SIZE, h7.word, H7_MODEL_SIZE / H7_MODEL_WORD);
    return img;
}

static void h7_restore(const uint8_t *img)
{
    memcpy(h7.mem, img, H7_MODEL_SIZE);
    memcpy(h7.word, img + H7_MODEL_SIZE, H7_MODEL_SIZE / H7_MODEL_WORD);
}

const struct powercut_part powercut_part = {
    .name = "STM32H747 (stm32h747i-disco's layout, D-cache on)",
    .journal_offset = MOTA_STM32H747I_DISCO_JOURNAL,
    .slot_offset = {MOTA_STM32H747I_DISCO_SLOTS, MOTA_STM32H747I_DISCO_SLOTS + MOTA_STM32H747I_DISCO_SLOT_SIZE},
    .slot_size = MOTA_STM32H747I_DISCO_SLOT_SIZE,
    .open = h7_open,
    .close = h7_close,
    .driver = h7_driver,
    .power_on = h7_power_on,
    .cut_at = h7_cut_at,
    .writes = h7_writes,
    .dead = h7_dead,
    .violations = h7_violations,
    .array = h7_array,
    .save = h7_save,
    .restore = h7_restore};
