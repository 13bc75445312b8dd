/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's power-cut sweep on the STM32F4's driver (flash_f4.c) over its register model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "powercut_part.h"
#include "mota/nucleo_f401re_layout.h"
#include "mota/stm32_flash.h"
#include "stm32f4_flash_model.h"

/* a word's program is a few writes: a cut every 61st */
const uint64_t powercut_stride = 61u;

/* The STM32F401RE of the nucleo-f401re profile (host_tool/src/offline/profiles.c, F401_FLASH). */
static struct f4_model f4;
static const struct mota_stm32f4_flash_cfg *const f401 = &f4_model_f401re;

static void f4_open(void (*on_cut)(void *ctx), void *ctx)
{
    f4_model_init(&f4, f401->base, f401->regs, f401->regions, f401->n_regions);
    f4.on_cut = on_cut;
    f4.on_cut_ctx = ctx;
}

static void f4_close(void)
{
    f4_model_free(&f4);
}

static int f4_driver(struct mota_flash *f)
{
    return mota_stm32f4_flash_init(f, f401);
}

static void f4_power_on(void)
{
    f4_model_power_on(&f4);
}

static void f4_cut_at(uint64_t n)
{
    f4.cut_at = n ? f4.writes + n : 0;
}

static uint64_t f4_writes(void)
{
    return f4.writes;
}

static bool f4_dead(void)
{
    return f4.off;
}

static unsigned f4_violations(void)
{
    bool unlocked = !f4.off && !(f4.cr & (1u << 31)); /* CR.LOCK: every operation locks again */
    return f4.bus_errors + f4.writes_when_busy + f4.reprogrammed + f4.dcrst_enabled + f4.error_flags + unlocked +
           f4.dcache_stale;
}

static const uint8_t *f4_array(void)
{
    return f4.mem;
}

static uint8_t *f4_save(void)
{
    uint8_t *img = malloc(f4.size);
    assert_non_null(img);
    memcpy(img, f4.mem, f4.size);
    return img;
}

static void f4_restore(const uint8_t *img)
{
    memcpy(f4.mem, img, f4.size);
}

const struct powercut_part powercut_part = {
    .name = "STM32F401RE",
    .journal_offset = MOTA_NUCLEO_F401RE_JOURNAL,
    .slot_offset = {MOTA_NUCLEO_F401RE_SLOTS, MOTA_NUCLEO_F401RE_SLOTS + MOTA_NUCLEO_F401RE_SLOT_SIZE},
    .slot_size = MOTA_NUCLEO_F401RE_SLOT_SIZE,
    .open = f4_open,
    .close = f4_close,
    .driver = f4_driver,
    .power_on = f4_power_on,
    .cut_at = f4_cut_at,
    .writes = f4_writes,
    .dead = f4_dead,
    .violations = f4_violations,
    .array = f4_array,
    .save = f4_save,
    .restore = f4_restore};
