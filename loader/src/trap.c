/* SPDX-License-Identifier: Apache-2.0 */
/* Emulated FP_CTRL and STM32 CRC unit for guarded legacy models (mota/trap.h). */
#include "mota/trap.h"

#include "mota/err.h"
#include "mota/le.h"

#include <stddef.h>

#define CRC_DEFAULT_POL 0x04C11DB7u
#define CRC_DEFAULT_INIT 0xFFFFFFFFu
#define CRC_SPAN 0x18u /* DR, IDR, CR, (reserved), INIT, POL */
#define CRC_CR_RESET 0x1u
#define CRC_CR_CONFIG 0xF8u      /* REV_OUT, REV_IN, POLYSIZE */
#define FP_CTRL_IDLE 0x00000260u /* NUM_CODE 6, NUM_LIT 2, ENABLE 0 */

void mota_trap_reset(struct mota_trap_state *t)
{
    *t = (struct mota_trap_state){
        .crc_dr = CRC_DEFAULT_INIT, .crc_init = CRC_DEFAULT_INIT, .crc_pol = CRC_DEFAULT_POL, .fp_ctrl = FP_CTRL_IDLE};
}

bool mota_trap_covers(uint32_t addr)
{
    return addr == MOTA_TRAP_FP_CTRL || (addr >= MOTA_TRAP_CRC_NS && addr < MOTA_TRAP_CRC_NS + CRC_SPAN) ||
           (addr >= MOTA_TRAP_CRC_S && addr < MOTA_TRAP_CRC_S + CRC_SPAN);
}

static uint32_t crc_bits(uint32_t crc, uint32_t data, unsigned bits, uint32_t pol)
{
    crc ^= data << (32u - bits);
    for (unsigned i = 0; i < bits; i++)
        crc = (crc & 0x80000000u) ? (crc << 1) ^ pol : crc << 1;
    return crc;
}

uint32_t mota_trap_crc_word(uint32_t crc, uint32_t word, uint32_t pol)
{
    return crc_bits(crc, word, 32, pol);
}

/* CR: the configuration bits are stored, RESET loads DR with INIT and reads 0 (mota/trap.h). */
static int crc_cr(struct mota_trap_state *t, bool store, uint32_t *val)
{
    if (!store) {
        *val = t->crc_cr;
        return MOTA_OK;
    }
    if (*val & ~(CRC_CR_CONFIG | CRC_CR_RESET))
        return MOTA_ERR_SELFTEST_FAULT; /* reserved bits: a unit this is not */
    t->crc_cr = *val & CRC_CR_CONFIG;
    if (*val & CRC_CR_RESET)
        t->crc_dr = t->crc_init;
    return MOTA_OK;
}

/* DR: a write feeds size*8 bits, MSB first; a read gives the CRC. Only in the default mode. */
static int crc_dr(struct mota_trap_state *t, unsigned size, bool store, uint32_t *val)
{
    if (t->crc_cr != 0)
        return MOTA_ERR_SELFTEST_FAULT; /* another polynomial size or a bit reversal: not computed here */
    uint32_t mask = size == 4 ? 0xFFFFFFFFu : (1u << (8u * size)) - 1u;
    if (store)
        t->crc_dr = crc_bits(t->crc_dr, *val & mask, 8u * size, t->crc_pol);
    else
        *val = t->crc_dr & mask;
    return MOTA_OK;
}

/* A register that only holds what was written: IDR, INIT (which also loads DR, as on the unit), POL. */
static void crc_plain(uint32_t *reg, bool store, uint32_t *val)
{
    if (store)
        *reg = *val;
    else
        *val = *reg;
}

/* One access of `size` bytes to an emulated register: MOTA_OK, or the fault stands. */
static int access(struct mota_trap_state *t, uint32_t addr, unsigned size, bool store, uint32_t *val)
{
    if (addr == MOTA_TRAP_FP_CTRL) {
        if (size != 4)
            return MOTA_ERR_SELFTEST_FAULT;
        if (!store)
            *val = t->fp_ctrl;
        else if (*val & 0x2u) /* KEY: the write takes effect only with it */
            t->fp_ctrl = (t->fp_ctrl & ~1u) | (*val & 1u);
        return MOTA_OK;
    }
    uint32_t reg = addr - (addr >= MOTA_TRAP_CRC_S ? MOTA_TRAP_CRC_S : MOTA_TRAP_CRC_NS);
    if (reg != 0 && (size != 4 || reg % 4 != 0) && !(reg == 4 && size == 1))
        return MOTA_ERR_SELFTEST_FAULT; /* only DR takes narrower accesses (and IDR its byte) */
    switch (reg) {
    case 0x0: return crc_dr(t, size, store, val);
    case 0x4: crc_plain(&t->crc_idr, store, val); return MOTA_OK;
    case 0x8: return crc_cr(t, store, val);
    case 0x10:
        crc_plain(&t->crc_init, store, val);
        if (store)
            t->crc_dr = *val;
        return MOTA_OK;
    case 0x14: crc_plain(&t->crc_pol, store, val); return MOTA_OK;
    default: return MOTA_ERR_SELFTEST_FAULT;
    }
}

/* A decoded load or store of one register. */
struct ldst {
    uint32_t addr;   /* the address it accesses */
    uint32_t wb;     /* the base register's value after writeback */
    unsigned rt, rn; /* transfer and base registers */
    unsigned size;   /* bytes accessed: 1, 2 or 4 */
    unsigned len;    /* bytes of the instruction: 2 or 4 */
    bool store, writeback;
};

/* 32-bit: LDR/STR{B,H}.W with imm12, imm8 (offset, pre/post-indexed) or a shifted register */
static int decode_t32(uint16_t hw1, uint16_t hw2, const uint32_t *r, struct ldst *a)
{
    a->len = 4;
    if ((hw1 & 0xFE00u) != 0xF800u || (hw1 & 0x0100u) != 0)
        return MOTA_ERR_SELFTEST_FAULT; /* not a store or unsigned load of a single register */
    unsigned sz = (hw1 >> 5) & 3u;
    if (sz == 3)
        return MOTA_ERR_SELFTEST_FAULT;
    a->size = 1u << sz;
    a->store = (hw1 & 0x0010u) == 0;
    a->rn = hw1 & 15u;
    a->rt = hw2 >> 12;
    if (hw1 & 0x0080u) { /* imm12 */
        a->addr = r[a->rn] + (hw2 & 0xFFFu);
    } else if (hw2 & 0x0800u) { /* imm8: P U W */
        bool p = hw2 & 0x400u, u = hw2 & 0x200u, w = hw2 & 0x100u;
        uint32_t off = u ? r[a->rn] + (hw2 & 0xFFu) : r[a->rn] - (hw2 & 0xFFu);
        if (!p && !w)
            return MOTA_ERR_SELFTEST_FAULT;
        a->addr = p ? off : r[a->rn];
        a->writeback = w;
        a->wb = off;
    } else if ((hw2 & 0x0FC0u) == 0) { /* register, LSL #0..3 */
        unsigned rm = hw2 & 15u;
        if (rm == 13 || rm == 15)
            return MOTA_ERR_SELFTEST_FAULT;
        a->addr = r[a->rn] + (r[rm] << ((hw2 >> 4) & 3u));
    } else {
        return MOTA_ERR_SELFTEST_FAULT;
    }
    if (a->rn == 15 || a->rt == 13 || a->rt == 15 || (a->writeback && (a->rn == a->rt || a->rn == 13)))
        return MOTA_ERR_SELFTEST_FAULT;
    return MOTA_OK;
}

/* 16-bit: LDR/STR{B,H} with imm5, or with a register offset */
static int decode_t16(uint16_t hw1, const uint32_t *r, struct ldst *a)
{
    a->len = 2;
    a->rt = hw1 & 7u;
    a->rn = (hw1 >> 3) & 7u;
    unsigned imm5 = (hw1 >> 6) & 31u;
    uint32_t base = r[a->rn];
    switch (hw1 & 0xF800u) {
    case 0x6000u: a->store = true, a->size = 4, a->addr = base + imm5 * 4u; break;
    case 0x6800u: a->store = false, a->size = 4, a->addr = base + imm5 * 4u; break;
    case 0x7000u: a->store = true, a->size = 1, a->addr = base + imm5; break;
    case 0x7800u: a->store = false, a->size = 1, a->addr = base + imm5; break;
    case 0x8000u: a->store = true, a->size = 2, a->addr = base + imm5 * 2u; break;
    case 0x8800u: a->store = false, a->size = 2, a->addr = base + imm5 * 2u; break;
    default:
        /* register offset: STR, STRH, STRB, LDR, LDRH, LDRB (not the sign-extending loads) */
        if ((hw1 & 0xF000u) != 0x5000u)
            return MOTA_ERR_SELFTEST_FAULT;
        switch ((hw1 >> 9) & 7u) {
        case 0: a->store = true, a->size = 4; break;
        case 1: a->store = true, a->size = 2; break;
        case 2: a->store = true, a->size = 1; break;
        case 4: a->store = false, a->size = 4; break;
        case 5: a->store = false, a->size = 2; break;
        case 6: a->store = false, a->size = 1; break;
        default: return MOTA_ERR_SELFTEST_FAULT;
        }
        a->addr = base + r[(hw1 >> 6) & 7u];
        break;
    }
    return MOTA_OK;
}

int mota_trap_emulate(struct mota_trap_state *t, struct mota_trap_regs *regs, const uint8_t insn[4],
                      uint32_t fault_addr)
{
    struct ldst a = {.writeback = false, .wb = 0};
    int ret = MOTA_ERR_SELFTEST_FAULT;

    if (t == NULL || regs == NULL || insn == NULL || !mota_trap_covers(fault_addr))
        return MOTA_ERR_SELFTEST_FAULT; /* before anything is read through them */
    uint32_t *r = regs->r;
    uint16_t hw1 = mota_get16(insn), hw2 = mota_get16(insn + 2);
    if ((regs->xpsr & 0x0600FC00u) != 0) /* inside an IT block: stepping over it would break the block */
        return MOTA_ERR_SELFTEST_FAULT;
    if ((hw1 & 0xE000u) == 0xE000u && (hw1 & 0x1800u) != 0)
        ret = decode_t32(hw1, hw2, r, &a);
    else
        ret = decode_t16(hw1, r, &a);
    if (ret != MOTA_OK)
        return ret;
    if (a.addr != fault_addr) /* the fault was not this access to this register */
        return MOTA_ERR_SELFTEST_FAULT;
    uint32_t v = a.store ? r[a.rt] : 0;
    if ((ret = access(t, a.addr, a.size, a.store, &v)) != MOTA_OK)
        return ret;
    if (!a.store)
        r[a.rt] = v;
    if (a.writeback)
        r[a.rn] = a.wb;
    r[15] += a.len;
    t->accesses++;
    return MOTA_OK;
}
