/* SPDX-License-Identifier: Apache-2.0 */
/* An STM32's vector table and reset: the Arm layer's handlers (mota/arm.h), the NMI, the USART's RX
 * interrupt; the table has the part's every interrupt (MOTA_STM32_N_IRQ, from ST's device header), each
 * but the USART's a fault. Reset runs ST's SystemInit (the CMSIS device pack's system file: the FPU, the
 * clock at its reset state, VTOR) first, as ST's start-up files do. No heap, no stdio. */
#include "stm32.h"

#include <string.h>

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_top;
int main(void);
void stm32_reset_handler(void);
void stm32_reset(void);
void stm32_default_handler(void);
void stm32_nmi_handler(void);
void stm32_usart_handler(void);

/* VTOR takes the table's address (the linker script puts it first), aligned to its size rounded up to a
 * power of two (512 bytes on an F401, 1 KiB on a U5: .vectors' alignment) */
#define IRQ(n) [16 + (n)]
/* every interrupt defaults to the fault handler, then the USART's is named: a deliberate override */
#pragma GCC diagnostic ignored "-Woverride-init"
__attribute__((section(".vectors"), used)) static const uintptr_t vectors[16 + MOTA_STM32_N_IRQ] = {
    MOTA_ARM_CORE_VECTORS(&__stack_top, stm32_reset_handler, stm32_nmi_handler, stm32_default_handler),
    [16 ... 16 + MOTA_STM32_N_IRQ - 1] = (uintptr_t)stm32_default_handler,
    IRQ(MOTA_STM32_USART_IRQn) = (uintptr_t)stm32_usart_handler};

void stm32_default_handler(void)
{
    mota_arm_port_reset("fault", 0, SCB->ICSR & SCB_ICSR_VECTACTIVE_Msk, 0);
}

void stm32_nmi_handler(void)
{
    stm32_nmi();
}

void stm32_usart_handler(void)
{
    stm32_usart_irq();
}

/* The stack the linker script gives, whoever started the firmware: the core loads SP from the table at a
 * reset, but the N6's boot ROM branches to its first-stage image, and a debugger may set only PC. On
 * Armv8-M the main stack's limit too (a stack overflow then faults, before it reaches .bss), and no
 * process stack limit left from before. */
__attribute__((naked)) void stm32_reset_handler(void)
{
    __asm volatile(
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
        "ldr r0, =__stack_limit\n\t"
        "msr msplim, r0\n\t"
        "movs r0, #0\n\t"
        "msr psplim, r0\n\t"
#endif
        "ldr r0, =__stack_top\n\t"
        "msr msp, r0\n\t"
        "b stm32_reset\n\t");
}

/* used: only the handler's assembly names it, which link-time optimisation does not see */
__attribute__((used)) void stm32_reset(void)
{
    SystemInit(); /* ST's: the FPU on (newlib's memcpy may use it), VTOR */
    mota_arm_fpu_enable();
    SCB->VTOR = (uint32_t)(uintptr_t)vectors;
    memcpy(&__data_start, &__data_load, (size_t)((uint8_t *)&__data_end - (uint8_t *)&__data_start));
    memset(&__bss_start, 0, (size_t)((uint8_t *)&__bss_end - (uint8_t *)&__bss_start));
    mota_arm_core_init(); /* the guard's RAM, the stack painted, the fault handlers on */
    main();
    mota_arm_port_reset("software", 0, 0, 0);
}
