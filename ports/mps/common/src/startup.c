/* SPDX-License-Identifier: Apache-2.0 */
/* Armv7-M and Armv8-M vector table, reset, fault handlers. No heap, no stdio. */
#include "mps.h"
#include "mota/err.h"

#include <string.h>

#define STACK_PAINT 0xA5A5A5A5u

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_limit, __stack_top;
extern uint32_t __guard_ram_start, __guard_ram_end; /* bss too: the model's stack and I/O areas (mps.ld) */
int main(void);
void mps_reset_handler(void);
void mps_fault_entry(void);
void mps_fault_report(const uint32_t *frame, uint32_t exc_return);
void mps_default_handler(void);

#define UART_RX_VECTOR(irq) [16u + (irq)] = (uintptr_t)mps_uart_rx_handler,

/* VTOR's reset value is the table's address (the linker script puts it
 * first); it needs the alignment of its size rounded up to a power of two. */
__attribute__((section(".vectors"), used)) static const uintptr_t vectors[16 + MOTA_MPS_N_IRQ] = {
    [0] = (uintptr_t)&__stack_top,         [1] = (uintptr_t)mps_reset_handler,
    [2] = (uintptr_t)mps_nmi_handler,      [3] = (uintptr_t)mps_fault_entry, /* HardFault */
    [4] = (uintptr_t)mps_fault_entry,                                        /* MemManage */
    [5] = (uintptr_t)mps_fault_entry,                                        /* BusFault */
    [6] = (uintptr_t)mps_fault_entry,                                        /* UsageFault */
    [7] = (uintptr_t)mps_fault_entry,                                        /* SecureFault */
    [11] = (uintptr_t)mps_svc_handler,                                       /* guarded model calls (guard.c) */
    [12] = (uintptr_t)mps_default_handler,                                   /* DebugMonitor */
    [14] = (uintptr_t)mps_default_handler,                                   /* PendSV */
    [15] = (uintptr_t)mps_systick_handler, MOTA_MPS_UART_RX_IRQS(UART_RX_VECTOR)};

/* newlib's __errno reaches errno through its 1 KiB reentrancy structure
 * (_impure_ptr); a single-threaded firmware needs one int. libcbor's ldexp
 * is what sets it. */
int *__errno(void);
int *__errno(void)
{
    static int err;
    return &err;
}

void mps_default_handler(void)
{
    mps_reset_announce("fault", 0, SCB_ICSR & 0x1FFu, 0);
}

void mps_reset_handler(void)
{
    SCB_CPACR |= 0xFu << 20; /* CP10, CP11: the FPU the models use */
    __asm__ volatile("dsb\n\tisb");
    memcpy(&__data_start, &__data_load, (size_t)((uint8_t *)&__data_end - (uint8_t *)&__data_start));
    memset(&__bss_start, 0, (size_t)((uint8_t *)&__bss_end - (uint8_t *)&__bss_start));
    memset(&__guard_ram_start, 0, (size_t)((uint8_t *)&__guard_ram_end - (uint8_t *)&__guard_ram_start));
    /* paint the stack below this frame, for the high-water mark */
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (uint32_t *p = &__stack_limit; (uintptr_t)p < sp - 64u; p++)
        *p = STACK_PAINT;
    /* vectors for every IRQ: the table above leaves the rest zero */
    SCB_SHCSR |= (1u << 16) | (1u << 17) | (1u << 18) | (MPS_V8M ? 1u << 19 : 0u); /* MemManage, Bus, Usage,
                                                                                       Secure faults */
    main();
    mps_reset_announce("software", 0, 0, 0);
}

void mota_board_stack_repaint(void)
{
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (uint32_t *p = &__stack_limit; (uintptr_t)p < sp - 64u; p++)
        *p = STACK_PAINT;
}

uint32_t mota_board_stack_size(void)
{
    return (uint32_t)((uintptr_t)&__stack_top - (uintptr_t)&__stack_limit);
}

uint32_t mota_board_stack_unused(void)
{
    const uint32_t *p = &__stack_limit;
    while (p < &__stack_top && *p == STACK_PAINT)
        p++;
    return (uint32_t)((uintptr_t)p - (uintptr_t)&__stack_limit);
}

/* A fault taken while a model runs goes to mps_guard_fault (guard.c),
 * which decides: the model's (the call ends), resumed (the model's registers
 * r4-r11, saved here, and its stacked frame as the decision left them), or
 * the firmware's own, reported here and the board resets. */
__attribute__((naked)) void mps_fault_entry(void)
{
    __asm__ volatile("ldr r0, =mps_guard_active\n\t"
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
                     "bl mps_guard_fault\n\t"
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
                     "b mps_fault_report\n\t"
                     "3:\n\t"
                     "ldr r0, =%c[fault]\n\t"
                     "b mps_guard_unwind\n\t" ::[end] "i"(MPS_GUARD_END),
                     [resume] "i"(MPS_GUARD_RESUME), [fault] "i"(MOTA_ERR_SELFTEST_FAULT));
}

uint32_t mps_fault_address(uint32_t cfsr)
{
    if (cfsr & CFSR_MMARVALID)
        return SCB_MMFAR;
    if (cfsr & CFSR_BFARVALID)
        return SCB_BFAR;
    return 0;
}

/* A fault is reported (stacked PC, fault address, CFSR) on the launcher's
 * log as the reset cause, and the board resets: at the next boot the agent
 * reverts a model on trial (MOTA_ERR_DEVICE_FAULT). */
__attribute__((used)) void mps_fault_report(const uint32_t *frame, uint32_t exc_return)
{
    (void)exc_return;
    uint32_t cfsr = SCB_CFSR;
    /* the stacked PC, when the frame is in the firmware's RAM */
    uint32_t pc = (uintptr_t)frame >= (uintptr_t)&__data_start && (uintptr_t)frame + 32u <= (uintptr_t)&__stack_top
                      ? frame[6]
                      : 0;
    mps_reset_announce("fault", pc, mps_fault_address(cfsr), cfsr | (SCB_HFSR & 0x40000000u));
}
