/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A model of a Cortex-M7's or Cortex-M55's L1 data cache over one window of device memory (a flash array
 * the CPU reads through the AXI bus), for the host tests of the drivers that change that memory behind the
 * cache's back (an STM32H7's embedded flash, an STM32N6's memory-mapped NOR). The worst case of a real
 * cache: every line the CPU loads stays held (no eviction) until the software drops it by address
 * (SCB's DCIMVAC or DCCIMVAC, written through the parts' access layer); what the CPU sees of a held line
 * is the copy taken at the fill, whatever the memory became since. The window is read-only to the CPU,
 * so no line is ever dirty: a clean is a no-op. Set/way maintenance (DCISW, DCCISW) is accepted and drops
 * nothing: the model cannot tell which addresses a set and way hold, and a driver must invalidate the
 * range it changed by address anyway.
 */
#ifndef MOTA_TEST_DCACHE_MODEL_H
#define MOTA_TEST_DCACHE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DCACHE_MODEL_LINE 32u /* both cores' D-cache line */

/* SCB's cache maintenance registers (ARMv7-M, ARMv8-M with the Main Extension) */
#define DCACHE_MODEL_ICIALLU 0xE000EF50u
#define DCACHE_MODEL_ICIMVAU 0xE000EF58u
#define DCACHE_MODEL_DCIMVAC 0xE000EF5Cu
#define DCACHE_MODEL_DCISW 0xE000EF60u
#define DCACHE_MODEL_DCCMVAU 0xE000EF64u
#define DCACHE_MODEL_DCCMVAC 0xE000EF68u
#define DCACHE_MODEL_DCCSW 0xE000EF6Cu
#define DCACHE_MODEL_DCCIMVAC 0xE000EF70u
#define DCACHE_MODEL_DCCISW 0xE000EF74u

struct dcache_model {
    uint32_t base, size;    /* the cached window (CPU addresses), whole lines */
    const uint8_t *mem;     /* the memory behind it: mem[0] is at base */
    uint8_t *view;          /* what the CPU sees: mem, or the held copy where a line is held */
    uint8_t *held;          /* per line: 1 while held */
    bool enabled;           /* off: every load reads mem, nothing is held */
    unsigned invalidations; /* DCIMVAC/DCCIMVAC writes inside the window */
};

/* empty, enabled */
void dcache_model_init(struct dcache_model *c, uint32_t base, uint32_t size, const uint8_t *mem);
void dcache_model_free(struct dcache_model *c);
/* power on: empty */
void dcache_model_reset(struct dcache_model *c);
/* the CPU loads [addr, addr + len) inside the window: lines not held are filled from mem (an unlimited
 * cache: the worst case); dst gets what the CPU sees (dst NULL: a fetch) */
void dcache_model_load(struct dcache_model *c, uint32_t addr, void *dst, size_t len);
/* the model changed mem[addr - base .. + len): view follows it where no line is held */
void dcache_model_changed(struct dcache_model *c, uint32_t addr, size_t len);
/* a write of v to the SCB register at reg: true if it is a cache maintenance register the model handles
 * (DCIMVAC, DCCIMVAC: the line holding v dropped; the cleans, DCISW, DCCISW, ICIALLU, ICIMVAU: accepted,
 * nothing dropped), false otherwise */
bool dcache_model_scb_write(struct dcache_model *c, uint32_t reg, uint32_t v);
/* what map sees at addr */
const uint8_t *dcache_model_view(const struct dcache_model *c, uint32_t addr);
/* held lines whose bytes differ from mem */
unsigned dcache_model_stale(const struct dcache_model *c);

#endif
