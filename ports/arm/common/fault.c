/* SPDX-License-Identifier: Apache-2.0 */
/* The fault entry of every Cortex-M port: a fault of a guarded model ends its call (guard.c), a fault of
 * the firmware is reported as the reset cause and the board resets. */
#include "arm_int.h"
#include "mota/err.h"

extern uint32_t __data_start, __stack_top;
void mota_arm_fault_report(const uint32_t *frame, uint32_t exc_return);

/* A fault taken while a model runs goes to mota_arm_guard_on_fault (guard.c),
 * which decides: the model's (the call ends), resumed (the model's registers
 * r4-r11, saved here, and its stacked frame as the decision left them), or
 * the firmware's own, reported here and the board resets. */
__attribute__((naked)) void mota_arm_fault_entry(void)
{
    __asm__ volatile("ldr r0, =mota_arm_guard_active\n\t"
                     "ldr r0, [r0]\n\t"
                     "cbz r0, 2f\n\t"
                     "ldr r1, =0xE000EF34\n\t" /* FPCCR.LSPACT: nothing of the model's is stacked from here */
                     "ldr r2, [r1]\n\t"
                     "bic r2, r2, #1\n\t"
                     "str r2, [r1]\n\t"
                     "push {r3-r11, lr}\n\t" /* ten words: MSP stays 8-byte aligned */
                     "mov r0, lr\n\t"
                     "mrs r1, ipsr\n\t"
                     "add r2, sp, #4\n\t" /* the model's r4-r11 */
                     "bl mota_arm_guard_on_fault\n\t"
                     "cmp r0, %[end]\n\t"
                     "beq 3f\n\t"
                     "pop {r3-r11, lr}\n\t"
                     "cmp r0, %[resume]\n\t"
                     "it eq\n\t"
                     "bxeq lr\n\t"
                     "2:\n\t"
                     "tst lr, #4\n\t"
                     "ite eq\n\t"
                     "mrseq r0, msp\n\t"
                     "mrsne r0, psp\n\t"
                     "mov r1, lr\n\t"
                     "push {r4, lr}\n\t" /* EXC_RETURN kept: a report that returns (a fault the family took)
                                           * returns from the exception */
                     "bl mota_arm_fault_report\n\t"
                     "pop {r4, pc}\n\t"
                     "3:\n\t"
                     "ldr r0, =%c[fault]\n\t"
                     "b mota_arm_guard_unwind\n\t" ::[end] "i"(MOTA_ARM_GUARD_END),
                     [resume] "i"(MOTA_ARM_GUARD_RESUME), [fault] "i"(MOTA_ERR_SELFTEST_FAULT));
}

uint32_t mota_arm_fault_address(uint32_t cfsr)
{
    if (cfsr & CFSR_MMARVALID)
        return SCB_MMFAR;
    if (cfsr & CFSR_BFARVALID)
        return SCB_BFAR;
    return 0;
}

/* A fault is reported (stacked PC, fault address, CFSR) as the reset cause (mota_arm_port_reset), and the
 * board resets: at the next boot the agent reverts a model on trial (MOTA_ERR_DEVICE_FAULT). */
__attribute__((used)) void mota_arm_fault_report(const uint32_t *frame, uint32_t exc_return)
{
    (void)exc_return;
    uint32_t cfsr = SCB_CFSR;
#ifdef MOTA_ARM_BUS_FAULT_HOOK
    /* the family's first word on a bus fault (an H7's flash read of a torn word): taken, the fault
     * returns (to the entry, which pops EXC_RETURN into pc) */
    if ((cfsr & 0xFF00u) != 0 && MOTA_ARM_BUS_FAULT_HOOK((uint32_t *)(uintptr_t)frame, cfsr))
        return;
#endif
    /* the stacked PC, when the frame is in the firmware's RAM */
    uint32_t pc = (uintptr_t)frame >= (uintptr_t)&__data_start && (uintptr_t)frame + 32u <= (uintptr_t)&__stack_top
                      ? frame[6]
                      : 0;
    mota_arm_port_reset("fault", pc, mota_arm_fault_address(cfsr), cfsr | (SCB_HFSR & 0x40000000u));
}
