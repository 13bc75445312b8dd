/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's power-cut sweep on the STM32N6570-DK's driver (flash_n6.c) over its model of XSPI2 and the
 * MX66UW1G45G, the M55's D-cache on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "powercut_part.h"
#include "mota/stm32n6570_dk_layout.h"
#include "mota/stm32n6_nor.h"
#include "stm32n6_flash_model.h"

/* a page's program takes about a hundred writes of XSPI2's registers (abort, write enable, its status, the
 * command, its 64 words, the polling, the security register, back to memory-mapped mode): about as many
 * writes a byte as the U5's; a prime stride */
const uint64_t powercut_stride = 131u;

/* The layout's journal and slot offsets (mota/stm32n6570_dk_layout.h), the slots shortened from 8 MiB -
 * 64 KiB to 128 KiB (the sweep's models are under 100 KiB) so that the model holds only the NOR's first
 * 8 MiB + 128 KiB of the agent's range, which it saves, restores and powers on at every cut: the sweep
 * then takes well under a minute in a RelWithDebInfo build. The driver is given that range too. */
#define SLOT_SIZE 0x20000u
#define SPAN (MOTA_STM32N6570_DK_SLOTS + MOTA_STM32N6570_DK_SLOT_SIZE + SLOT_SIZE) /* slot B's end */
#define FIRST (MOTA_STM32N6570_DK_FLASH_BASE - MOTA_STM32N6_XSPI2_WINDOW)          /* the agent's offset 0 */

static struct n6_model n6;
static struct mota_stm32n6_nor_cfg cfg;

static void n6_open(void (*on_cut)(void *ctx), void *ctx)
{
    n6_model_init(&n6, FIRST, SPAN, true);
    n6.on_cut = on_cut;
    n6.on_cut_ctx = ctx;
    cfg = n6_model_dk;
    cfg.size = SPAN;
}

static void n6_close(void)
{
    n6_model_free(&n6);
}

static int n6_driver(struct mota_flash *f)
{
    return mota_stm32n6_nor_init(f, &cfg);
}

static void n6_power_on(void)
{
    n6_model_power_on(&n6);
}

static void n6_cut_at(uint64_t n)
{
    n6.cut_at = n ? n6.writes + n : 0;
}

static uint64_t n6_writes(void)
{
    return n6.writes;
}

static bool n6_dead(void)
{
    return n6.off;
}

static unsigned n6_violations(void)
{
    /* at rest: memory-mapped, no write enable left latched */
    bool astray = !n6.off && ((n6.cr >> 28) != 3u || n6.mode != N6_DOPI || (n6.sr & N6_SR_WEL));
    return n6_model_violations(&n6) + astray + dcache_model_stale(&n6.dcache);
}

static const uint8_t *n6_array(void)
{
    return n6.mem;
}

/* the NOR's array: what survives a cut */
static uint8_t *n6_save(void)
{
    uint8_t *img = malloc(SPAN);
    assert_non_null(img);
    memcpy(img, n6.mem, SPAN);
    return img;
}

static void n6_restore(const uint8_t *img)
{
    memcpy(n6.mem, img, SPAN);
}

const struct powercut_part powercut_part = {
    .name = "STM32N6570-DK's MX66UW1G45G behind XSPI2",
    .journal_offset = MOTA_STM32N6570_DK_JOURNAL,
    .slot_offset = {MOTA_STM32N6570_DK_SLOTS, MOTA_STM32N6570_DK_SLOTS + MOTA_STM32N6570_DK_SLOT_SIZE},
    .slot_size = SLOT_SIZE,
    .open = n6_open,
    .close = n6_close,
    .driver = n6_driver,
    .power_on = n6_power_on,
    .cut_at = n6_cut_at,
    .writes = n6_writes,
    .dead = n6_dead,
    .violations = n6_violations,
    .array = n6_array,
    .save = n6_save,
    .restore = n6_restore};
