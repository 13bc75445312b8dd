/* SPDX-License-Identifier: Apache-2.0 */
/* Reading the few Thumb-2 shapes of ST's generated model code (Arm ARM v8-M,
 * chapter C2: the encodings named below). Bounded by [lo, hi). */
#include "thumb.h"

#include "mota/le.h"

#include <stddef.h>

#define SCAN_MAX 160u /* instructions read from one function */

/* One instruction at off: its size (2 or 4), or 0 past the code. */
static unsigned fetch(const struct mota_thumb_code *c, uint32_t off, uint16_t *h1, uint16_t *h2)
{
    if (off < c->lo || off % 2 != 0 || (uint64_t)off + 2 > c->hi)
        return 0;
    *h1 = mota_get16(c->img + off);
    *h2 = 0;
    if ((*h1 >> 11) < 0x1D)
        return 2;
    if ((uint64_t)off + 4 > c->hi)
        return 0;
    *h2 = mota_get16(c->img + off + 2);
    return 4;
}

/* LDR (literal) T1 `ldr rt,[pc,#imm8*4]`: the word it loads, bounded. */
static bool ldr_literal(const struct mota_thumb_code *c, uint32_t off, uint16_t h, unsigned *rt, uint32_t *word)
{
    if ((h & 0xF800) != 0x4800)
        return false;
    uint32_t lit = ((off + 4) & ~3u) + (h & 0xFFu) * 4;
    if (lit < c->lo || (uint64_t)lit + 4 > c->hi)
        return false;
    *rt = (h >> 8) & 7;
    *word = mota_get32(c->img + lit);
    return true;
}

/* LDR (register) T2 `ldr.w rt,[r9,rm]`, no shift */
static bool ldr_r9(uint16_t h1, uint16_t h2, unsigned rt, unsigned rm)
{
    return h1 == 0xF859 && h2 == (uint16_t)(rt << 12 | rm);
}

bool mota_thumb_getter(const struct mota_thumb_code *c, uint32_t fn, uint32_t *lit, bool *null)
{
    uint16_t a, b, x, y;
    unsigned rt = 0, n = fetch(c, fn, &a, &b);
    *null = false;
    if (n == 2 && a == 0x2000) { /* movs r0,#0; bx lr */
        *null = fetch(c, fn + 2, &x, &y) == 2 && x == 0x4770;
        return *null;
    }
    if (n != 2 || !ldr_literal(c, fn, a, &rt, lit))
        return false;
    if (fetch(c, fn + 2, &a, &b) != 4 || !ldr_r9(a, b, 0, rt))
        return false;
    return fetch(c, fn + 6, &x, &y) == 2 && x == 0x4770;
}

/* Past the prologue instructions a stub may interleave: push, sub sp,#imm. */
static uint32_t skip_frame(const struct mota_thumb_code *c, uint32_t off)
{
    uint16_t h, h2;
    for (unsigned i = 0; i < 4 && fetch(c, off, &h, &h2) == 2 && ((h & 0xFE00) == 0xB400 || (h & 0xFF80) == 0xB080);
         i++)
        off += 2;
    return off;
}

bool mota_thumb_callback_stub(const struct mota_thumb_code *c, uint32_t fn, uint32_t *got, unsigned *slot)
{
    uint16_t h, h2;
    unsigned ra = 0;
    uint32_t off = skip_frame(c, fn);
    if (fetch(c, off, &h, &h2) != 2 || !ldr_literal(c, off, h, &ra, got))
        return false;
    off = skip_frame(c, off + 2);
    if (fetch(c, off, &h, &h2) != 4 || !ldr_r9(h, h2, ra, ra))
        return false;
    off += 4;
    /* LDR (immediate) T1 `ldr ra,[ra,#16]`: the callback table of rt_ctx */
    if (fetch(c, off, &h, &h2) != 2 || h != (0x6900 | ra << 3 | ra))
        return false;
    off += 2;
    if (fetch(c, off, &h, &h2) == 2 && (h & 0xF500) == 0xB100 && (h & 7) == ra) /* cbz/cbnz ra */
        off += 2;
    if (fetch(c, off, &h, &h2) != 2 || (h & 0xF800) != 0x6800 || ((h >> 3) & 7) != ra)
        return false;
    *slot = (h >> 6) & 0x1F; /* ldr rb,[ra,#4*slot] */
    return true;
}

/* B T4 / BL T1 target (signed 25-bit offset from off + 4), inside the code */
static bool branch_target(const struct mota_thumb_code *c, uint32_t off, uint16_t h1, uint16_t h2, uint32_t *t)
{
    uint32_t s = (h1 >> 10) & 1, i1 = !(((h2 >> 13) & 1) ^ s), i2 = !(((h2 >> 11) & 1) ^ s);
    int32_t imm = (int32_t)(s << 24 | i1 << 23 | i2 << 22 | (h1 & 0x3FFu) << 12 | (h2 & 0x7FFu) << 1);
    if (s)
        imm -= 1 << 25;
    int64_t target = (int64_t)off + 4 + imm;
    if (target < c->lo || target >= c->hi)
        return false;
    *t = (uint32_t)target;
    return true;
}

unsigned mota_thumb_calls(const struct mota_thumb_code *c, uint32_t fn, uint32_t *targets, unsigned max)
{
    unsigned found = 0;
    uint32_t off = fn;
    for (unsigned i = 0; i < SCAN_MAX && found < max; i++) {
        uint16_t h1, h2;
        unsigned n = fetch(c, off, &h1, &h2);
        if (n == 0)
            break;
        if (n == 2 && ((h1 & 0xFF87) == 0x4700 || (h1 & 0xFF00) == 0xBD00 || (h1 & 0xF800) == 0xE000))
            break; /* bx rm, pop {..., pc}, b.n: the function ends (or leaves straight code) */
        if (n == 4 && ((h1 == 0xE8BD && (h2 & 0x8000)) || (h1 == 0xF85D && (h2 & 0xF000) == 0xF000)))
            break; /* ldmia.w sp!, {..., pc}; ldr.w pc, [sp], #4 */
        if (n == 4 && (h1 & 0xF800) == 0xF000 && (h2 & 0xD000) == 0xD000 &&
            branch_target(c, off, h1, h2, &targets[found]))
            found++; /* bl */
        else if (n == 4 && (h1 & 0xF800) == 0xF000 && (h2 & 0xD000) == 0x9000) {
            if (branch_target(c, off, h1, h2, &targets[found]))
                found++; /* b.w: a tail call ends the function */
            break;
        }
        off += n;
    }
    return found;
}

/* What the struct scan knows of a register: nothing, a constant, or SP plus an offset. */
enum { R_UNK = 0, R_CONST, R_SP };
struct reg {
    uint8_t kind;
    int32_t v;
};

struct scan {
    struct reg r[16];
    int32_t sp;     /* SP relative to its value on entry */
    bool have_base; /* a call f(sp + k, 0, n) was seen: the struct is at sp + k */
    int32_t base;
    bool done, found; /* stop; the byte was found */
    uint8_t value;
};

static void set(struct scan *s, unsigned r, uint8_t kind, int32_t v)
{
    if (r == 13 || r == 15) {
        s->done = true; /* SP or PC written in a way not followed */
        return;
    }
    s->r[r].kind = kind;
    s->r[r].v = v;
}

static void unknown(struct scan *s, unsigned r)
{
    set(s, r, R_UNK, 0);
}

/* A byte store to [rn + imm] of rt: the NodeType when it is the first to the struct's start. */
static void store_byte(struct scan *s, unsigned rt, unsigned rn, int32_t imm)
{
    int32_t addr;
    if (rn == 13)
        addr = s->sp + imm;
    else if (s->r[rn].kind == R_SP)
        addr = s->r[rn].v + imm;
    else
        return;
    if (!s->have_base || addr != s->base)
        return;
    s->done = true;
    if (rt != 13 && rt != 15 && s->r[rt].kind == R_CONST && s->r[rt].v >= 0 && s->r[rt].v <= 0xFF) {
        s->found = true;
        s->value = (uint8_t)s->r[rt].v;
    }
}

static void narrow_misc(struct scan *s, uint16_t h)
{
    if ((h & 0xFE00) == 0xB400) /* push */
        s->sp -= 4 * (__builtin_popcount(h & 0xFFu) + ((h >> 8) & 1));
    else if ((h & 0xFF80) == 0xB080) /* sub sp,#imm7*4 */
        s->sp -= 4 * (h & 0x7F);
    else if ((h & 0xFF80) == 0xB000) /* add sp,#imm7*4 */
        s->sp += 4 * (h & 0x7F);
    else
        s->done = true; /* pop, cbz, it, bkpt...: leaves the straight path */
}

/* 16-bit data processing and loads/stores (Arm ARM C2.3) */
static void narrow(struct scan *s, uint16_t h)
{
    unsigned lo3 = h & 7, rd8 = (h >> 8) & 7;
    if ((h & 0xFFC0) == 0x0000) { /* movs rd, rm */
        s->r[lo3] = s->r[(h >> 3) & 7];
    } else if (h < 0x2000) { /* shifts, add/sub register or imm3 */
        unknown(s, lo3);
    } else if ((h & 0xF800) == 0x2000) { /* movs rd,#imm8 */
        set(s, rd8, R_CONST, h & 0xFF);
    } else if ((h & 0xF800) == 0x2800) { /* cmp */
    } else if ((h & 0xF000) == 0x3000) { /* adds/subs rd,#imm8 */
        int32_t d = (h & 0x0800) ? -(int32_t)(h & 0xFF) : (int32_t)(h & 0xFF);
        if (s->r[rd8].kind != R_UNK)
            s->r[rd8].v += d;
    } else if ((h & 0xFC00) == 0x4000) { /* ALU: tst, cmp, cmn write nothing */
        unsigned op = (h >> 6) & 0xF;
        if (op != 8 && op != 10 && op != 11)
            unknown(s, lo3);
    } else if ((h & 0xFF00) == 0x4600) { /* mov rd, rm (high registers) */
        unsigned rd = ((h >> 4) & 8) | lo3, rm = (h >> 3) & 0xF;
        struct reg v = rm == 13 ? (struct reg){R_SP, s->sp} : s->r[rm];
        set(s, rd, v.kind, v.v);
    } else if ((h & 0xFF00) == 0x4400) { /* add rd, rm (high registers) */
        unknown(s, ((h >> 4) & 8) | lo3);
    } else if ((h & 0xFF00) == 0x4500) {                           /* cmp (high registers) */
    } else if ((h & 0xF800) == 0x4800 || (h & 0xF800) == 0x9800) { /* ldr literal, ldr [sp] */
        unknown(s, rd8);
    } else if ((h & 0xF000) == 0x5000) { /* register offset: str, strh, strb write nothing */
        if (((h >> 9) & 7) >= 3)
            unknown(s, lo3);
    } else if ((h & 0xF800) == 0x7000) { /* strb rt,[rn,#imm5] */
        store_byte(s, lo3, (h >> 3) & 7, (h >> 6) & 0x1F);
    } else if ((h & 0xF800) == 0x6000 || (h & 0xF800) == 0x8000 || (h & 0xF800) == 0x9000) { /* str, strh */
    } else if ((h & 0xF800) == 0x6800 || (h & 0xF800) == 0x7800 || (h & 0xF800) == 0x8800) { /* loads */
        unknown(s, lo3);
    } else if ((h & 0xF800) == 0xA800) { /* add rd, sp, #imm8*4 */
        set(s, rd8, R_SP, s->sp + 4 * (h & 0xFF));
    } else if ((h & 0xF000) == 0xB000) {
        narrow_misc(s, h);
    } else {
        s->done = true; /* branches, ldm/stm, adr... */
    }
}

/* bl: the first call f(sp + k, 0, n) zeroes the struct and returns its address */
static void call(struct scan *s)
{
    if (!s->have_base && s->r[0].kind == R_SP && s->r[1].kind == R_CONST && s->r[1].v == 0 && s->r[2].kind == R_CONST &&
        s->r[2].v > 0) { /* memset(sp + k, 0, size) */
        s->have_base = true;
        s->base = s->r[0].v;
    } else {
        unknown(s, 0);
    }
    unknown(s, 1);
    unknown(s, 2);
    unknown(s, 3);
    unknown(s, 12);
    unknown(s, 14);
}

/* 32-bit loads and stores (Arm ARM C2.4): strb.w, ldr.w, strd, ldrd */
static void wide_memory(struct scan *s, uint16_t h1, uint16_t h2)
{
    unsigned rn = h1 & 0xF, rt = h2 >> 12;
    if ((h1 & 0xFE40) == 0xE840) { /* strd/ldrd */
        if (h1 & 0x20)
            unknown(s, rn); /* writeback */
        if (h1 & 0x10) {
            unknown(s, rt);
            unknown(s, (h2 >> 8) & 0xF);
        }
    } else if ((h1 & 0xFFF0) == 0xF880) { /* strb.w rt,[rn,#imm12] */
        store_byte(s, rt, rn, h2 & 0xFFF);
    } else if ((h1 & 0xFF10) == 0xF800 && (h1 & 0x0080) == 0) { /* store, imm8 or register form */
        if ((h2 & 0x0900) == 0x0900)
            unknown(s, rn);               /* writeback */
    } else if ((h1 & 0xFF10) == 0xF800) { /* str.w/strh.w rt,[rn,#imm12] */
    } else if ((h1 & 0xFE10) == 0xF810) { /* loads */
        unknown(s, rt);
        if ((h1 & 0x0080) == 0 && (h2 & 0x0900) == 0x0900)
            unknown(s, rn);
    } else {
        s->done = true; /* ldm/stm, exclusives, table branches */
    }
}

/* ThumbExpandImm (Arm ARM, "Modified immediate constants") of i:imm3:imm8 */
static uint32_t expand_imm(uint16_t h1, uint16_t h2)
{
    uint32_t imm12 = ((h1 >> 10) & 1u) << 11 | ((h2 >> 12) & 7u) << 8 | (h2 & 0xFFu), x = imm12 & 0xFF;
    if ((imm12 >> 10) == 0) {
        switch ((imm12 >> 8) & 3) {
        case 0: return x;
        case 1: return x << 16 | x;
        case 2: return x << 24 | x << 8;
        default: return x << 24 | x << 16 | x << 8 | x;
        }
    }
    uint32_t v = 0x80 | (imm12 & 0x7F), rot = imm12 >> 7;
    return v >> rot | v << (32 - rot); /* rot is 8..31 */
}

static void wide(struct scan *s, uint16_t h1, uint16_t h2)
{
    unsigned rd = (h2 >> 8) & 0xF;
    if ((h1 & 0xF800) == 0xF000 && (h2 & 0xD000) == 0xD000) {
        call(s);
    } else if ((h1 & 0xFBEF) == 0xF04F && (h2 & 0x8000) == 0) { /* mov.w rd, #const */
        set(s, rd, R_CONST, (int32_t)expand_imm(h1, h2));
    } else if ((h1 & 0xFBF0) == 0xF240 && (h2 & 0x8000) == 0) { /* movw rd, #imm16 */
        set(s, rd, R_CONST,
            (int32_t)((h1 & 0xFu) << 12 | ((h1 >> 10) & 1u) << 11 | ((h2 >> 12) & 7u) << 8 | (h2 & 0xFFu)));
    } else if ((h1 & 0xF800) == 0xF000 && (h2 & 0x8000) == 0) { /* data processing, (modified) immediate */
        if (rd != 15)
            unknown(s, rd); /* rd 15: tst, teq, cmp, cmn */
    } else if ((h1 & 0xFE00) == 0xEA00 || (h1 & 0xFE00) == 0xFA00 || (h1 & 0xFF00) == 0xFB00) {
        if (rd != 15) /* data processing, register; multiplies */
            unknown(s, rd);
    } else if ((h1 & 0xFE00) == 0xE800 || (h1 & 0xFE00) == 0xF800) {
        wide_memory(s, h1, h2);
    } else {
        s->done = true; /* branches, coprocessor, system */
    }
}

bool mota_thumb_first_struct_byte(const struct mota_thumb_code *c, uint32_t fn, uint8_t *value)
{
    struct scan s = {0};
    uint32_t off = fn;
    for (unsigned i = 0; i < SCAN_MAX && !s.done; i++) {
        uint16_t h1, h2;
        unsigned n = fetch(c, off, &h1, &h2);
        if (n == 0)
            break;
        if (n == 2)
            narrow(&s, h1);
        else
            wide(&s, h1, h2);
        off += n;
    }
    if (s.found)
        *value = s.value;
    return s.found;
}
