/* SPDX-License-Identifier: Apache-2.0 */
/* The few Thumb-2 code shapes the epoch report reads (epochs.c). Private to
 * loader/. Every read is bounded by the code's end; a shape not recognised
 * is "not found", never a guess. */
#ifndef MOTA_LOADER_THUMB_H
#define MOTA_LOADER_THUMB_H

#include <stdbool.h>
#include <stdint.h>

struct mota_thumb_code {
    const uint8_t *img; /* the file: code is at file offset = address */
    uint32_t lo, hi;    /* code lies in [lo, hi): past the header, below ro_size */
};

/* A getter `ldr rX,[pc,#k]; ldr.w r0,[r9,rX]; bx lr`: *lit = the RW offset it
 * loads (a GOT word). `movs r0,#0; bx lr`: *null = true. Else false. */
bool mota_thumb_getter(const struct mota_thumb_code *c, uint32_t fn, uint32_t *lit, bool *null);

/* A callback stub that loads slot *slot of the table at [rt_ctx + 16]: its
 * first GOT load is at RW offset *got (the caller checks it holds rt_ctx). */
bool mota_thumb_callback_stub(const struct mota_thumb_code *c, uint32_t fn, uint32_t *got, unsigned *slot);

/* The direct call (bl) and tail-call (b.w) targets of the function at fn, in
 * order, until its first return; at most max. Returns how many. */
unsigned mota_thumb_calls(const struct mota_thumb_code *c, uint32_t fn, uint32_t *targets, unsigned max);

/* The constant byte the function at fn stores first at the start of the
 * stack struct it zeroes with a call f(p, 0, n): a SW kernel's NodeType. */
bool mota_thumb_first_struct_byte(const struct mota_thumb_code *c, uint32_t fn, uint8_t *value);

#endif
