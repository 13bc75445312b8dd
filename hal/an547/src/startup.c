/* an547: vector table, reset, fault handlers. No heap, no stdio. */
#include "board_private.h"
#include "mota/err.h"

#include <string.h>

#define SCB_SHCSR REG(0xE000ED24u)
#define SCB_CFSR REG(0xE000ED28u)
#define SCB_HFSR REG(0xE000ED2Cu)
#define SCB_MMFAR REG(0xE000ED34u)
#define SCB_BFAR REG(0xE000ED38u)
#define STACK_PAINT 0xA5A5A5A5u
#define N_IRQ 128u /* 96 board + 32 SSE-300 interrupts */

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_limit, __stack_top;
int main(void);
void an547_reset_handler(void);
void an547_fault_entry(void);
void an547_fault_report(const uint32_t *frame, uint32_t exc_return);
void an547_default_handler(void);

__attribute__((section(".vectors"), used)) static const uintptr_t vectors[16 + N_IRQ] = {
    [0] = (uintptr_t)&__stack_top,
    [1] = (uintptr_t)an547_reset_handler,
    [2] = (uintptr_t)an547_nmi_handler,
    [3] = (uintptr_t)an547_fault_entry,  /* HardFault */
    [4] = (uintptr_t)an547_fault_entry,  /* MemManage */
    [5] = (uintptr_t)an547_fault_entry,  /* BusFault */
    [6] = (uintptr_t)an547_fault_entry,  /* UsageFault */
    [7] = (uintptr_t)an547_fault_entry,  /* SecureFault */
    [11] = (uintptr_t)an547_svc_handler, /* guarded model calls (guard.c) */
    [12] = (uintptr_t)an547_default_handler, /* DebugMonitor */
    [14] = (uintptr_t)an547_default_handler, /* PendSV */
    [15] = (uintptr_t)an547_systick_handler,
    [16 + 33] = (uintptr_t)an547_uart0_rx_handler,
};

/* newlib's __errno reaches errno through its 1 KiB reentrancy structure
 * (_impure_ptr); a single-threaded firmware needs one int. libcbor's ldexp
 * is what sets it. */
int *__errno(void);
int *__errno(void)
{
    static int err;
    return &err;
}

void an547_default_handler(void)
{
    an547_reset_announce("fault", 0, SCB_ICSR & 0x1FFu, 0);
}

void an547_reset_handler(void)
{
    SCB_CPACR |= 0xFu << 20; /* CP10, CP11: the FPU the models use */
    __asm__ volatile("dsb\n\tisb");
    memcpy(&__data_start, &__data_load, (size_t)((uint8_t *)&__data_end - (uint8_t *)&__data_start));
    memset(&__bss_start, 0, (size_t)((uint8_t *)&__bss_end - (uint8_t *)&__bss_start));
    /* paint the stack below this frame, for the high-water mark */
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (uint32_t *p = &__stack_limit; (uintptr_t)p < sp - 64u; p++)
        *p = STACK_PAINT;
    /* vectors for every IRQ: the table above leaves the rest zero */
    SCB_SHCSR |= (1u << 16) | (1u << 17) | (1u << 18) | (1u << 19); /* MemManage, Bus, Usage, Secure faults */
    main();
    an547_reset_announce("software", 0, 0, 0);
}

void mota_an547_stack_repaint(void)
{
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (uint32_t *p = &__stack_limit; (uintptr_t)p < sp - 64u; p++)
        *p = STACK_PAINT;
}

uint32_t mota_an547_stack_size(void)
{
    return (uint32_t)((uintptr_t)&__stack_top - (uintptr_t)&__stack_limit);
}

uint32_t mota_an547_stack_unused(void)
{
    const uint32_t *p = &__stack_limit;
    while (p < &__stack_top && *p == STACK_PAINT)
        p++;
    return (uint32_t)((uintptr_t)p - (uintptr_t)&__stack_limit);
}

/* A fault taken from a guarded model (thread mode, or the Non-secure state
 * a BXNS reaches, while a model runs) ends that call (guard.c); any other is
 * reported and resets the board. The model's FP state is dropped first. */
__attribute__((naked)) void an547_fault_entry(void)
{
    __asm__ volatile("ldr r0, =an547_guard_active\n\t"
                     "ldr r0, [r0]\n\t"
                     "cbz r0, 2f\n\t"
                     "ldr r1, =0xE000EF34\n\t" /* FPCCR.LSPACT */
                     "ldr r2, [r1]\n\t"
                     "bic r2, r2, #1\n\t"
                     "str r2, [r1]\n\t"
                     "mov r4, lr\n\t" /* r4-r11 are the model's: the unwind restores the caller's */
                     "mov r0, lr\n\t"
                     "mrs r1, ipsr\n\t"
                     "bl an547_guard_fault\n\t"
                     "mov lr, r4\n\t"
                     "cbz r0, 2f\n\t"
                     "ldr r0, =%c0\n\t"
                     "b an547_guard_unwind\n\t"
                     "2:\n\t"
                     "tst lr, #4\n\t"
                     "ite eq\n\t"
                     "mrseq r0, msp\n\t"
                     "mrsne r0, psp\n\t"
                     "mov r1, lr\n\t"
                     "b an547_fault_report\n\t" ::"i"(MOTA_ERR_SELFTEST_FAULT));
}

/* A fault is reported (stacked PC, fault address, CFSR) on the launcher's
 * log as the reset cause, and the board resets: at the next boot the agent
 * reverts a model on trial (MOTA_ERR_DEVICE_FAULT). */
void an547_fault_report(const uint32_t *frame, uint32_t exc_return)
{
    (void)exc_return;
    uint32_t cfsr = SCB_CFSR, addr = 0;
    if (cfsr & (1u << 7)) /* MMARVALID */
        addr = SCB_MMFAR;
    else if (cfsr & (1u << 15)) /* BFARVALID */
        addr = SCB_BFAR;
    uint32_t pc = ((uintptr_t)frame >= 0x20000000u && (uintptr_t)frame < (uintptr_t)&__stack_top) ? frame[6] : 0;
    an547_reset_announce("fault", pc, addr, cfsr | (SCB_HFSR & 0x40000000u));
}
