/* SPDX-License-Identifier: Apache-2.0 */
/* Calls into a relocatable model on Cortex-M: r9 must hold the model's RW
 * base while it runs (ST's -msingle-pic-base -mpic-register=r9 code model),
 * and the caller's r9 must survive. */
#include "mota/loader.h"

uint32_t mota_model_call(const struct mota_installed *m, unsigned index, uint32_t a0, uint32_t a1, uint32_t a2)
{
    if (m == NULL || index >= m->n_entries)
        return 0xFFFFFFFFu;
    register uint32_t r0 __asm__("r0") = a0;
    register uint32_t r1 __asm__("r1") = a1;
    register uint32_t r2 __asm__("r2") = a2;
    register uint32_t fn __asm__("r4") = m->entries[index];
    register uint32_t base __asm__("r5") = m->ram_addr;
    /* two registers pushed keep the stack 8-byte aligned (AAPCS) */
    __asm__ volatile("push {r9, r10}\n\t"
                     "mov r9, r5\n\t"
                     "blx r4\n\t"
                     "pop {r9, r10}"
                     : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(fn), "+r"(base)
                     :
                     : "r3", "r12", "lr", "memory", "cc", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",
                       "s10", "s11", "s12", "s13", "s14", "s15");
    return r0;
}
