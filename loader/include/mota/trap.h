/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Emulation of the few peripheral accesses ST's legacy X-CUBE-AI runtime
 * makes from inside a model: its licence check clears FP_CTRL.ENABLE (the
 * Flash Patch unit, 0xE0002000) and computes one CRC on the STM32 CRC unit
 * (0x40023000, secure alias 0x50023000), looping forever if the answer is
 * wrong. A guarded model cannot reach either (it runs unprivileged, the MPU
 * grants it only its own memory), and the QEMU boards have no CRC unit: the
 * port's fault handler hands the faulting access to mota_trap_emulate(),
 * which applies it to this emulated state and steps over the instruction.
 *
 * Only single loads and stores of a byte, halfword or word (the Thumb forms
 * compilers emit for volatile register accesses) to those registers are
 * emulated. Anything else stays a fault.
 *
 * CR is modelled as RM0456 (STM32U5) describes it: POLYSIZE (bits 4:3),
 * REV_IN (6:5) and REV_OUT (7) are stored and read back; RESET (bit 0)
 * loads DR with INIT and reads 0 (the unit's reset completes at once) and
 * leaves the other bits as the write set them: on the part RESET does not
 * clear them, and ST's runtime never relies on it (it writes CR = 1, a
 * whole word, which sets them to 0). That runtime (X-CUBE-AI 7.2) writes
 * CR = 0x18 and reads it back to tell which alias answers, then resets and
 * computes in the default mode. Only that default mode (32-bit polynomial,
 * no bit reversal) is computed: DR written or read while CR selects another
 * one, or a write of CR's reserved bits, stays a fault.
 */
#ifndef MOTA_TRAP_H
#define MOTA_TRAP_H

#include <stdbool.h>
#include <stdint.h>

#define MOTA_TRAP_FP_CTRL 0xE0002000u
#define MOTA_TRAP_CRC_NS 0x40023000u /* STM32 CRC unit, non-secure alias */
#define MOTA_TRAP_CRC_S 0x50023000u  /* and its secure alias */

/* The emulated registers: fresh (mota_trap_reset) for every guarded call. */
struct mota_trap_state {
    uint32_t crc_dr, crc_idr, crc_init, crc_pol;
    uint32_t crc_cr; /* POLYSIZE, REV_IN, REV_OUT as last written (RESET reads 0) */
    uint32_t fp_ctrl;
    uint32_t accesses; /* emulated so far */
};

void mota_trap_reset(struct mota_trap_state *t);

/* Whether an access to addr would be emulated (fault triage, before decoding). */
bool mota_trap_covers(uint32_t addr);

/*
 * Emulate the access that faulted: regs holds the model's registers (r[13]
 * its SP, r[15] the faulting instruction's address) and xPSR, insn the four
 * bytes at that address (read by the caller from the model's own code),
 * fault_addr the address the fault reported. On MOTA_OK the load has
 * written its register (or the store its value), any base write-back is
 * done and r[15] points past the instruction; on anything else (not one of
 * these registers, an unsupported instruction or width, inside an IT block)
 * regs is untouched and the fault stands.
 */
struct mota_trap_regs {
    uint32_t r[16];
    uint32_t xpsr;
};
int mota_trap_emulate(struct mota_trap_state *t, struct mota_trap_regs *regs, const uint8_t insn[4],
                      uint32_t fault_addr);

/* The STM32 CRC unit's step: one 32-bit word, MSB first, polynomial pol. */
uint32_t mota_trap_crc_word(uint32_t crc, uint32_t word, uint32_t pol);

#endif /* MOTA_TRAP_H */
