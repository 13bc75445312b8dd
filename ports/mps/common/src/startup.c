/* SPDX-License-Identifier: Apache-2.0 */
/* The MPS boards' vector table and reset: the Arm layer's handlers (mota/arm.h), the family's NMI
 * (its watchdog) and UART interrupts. No heap, no stdio. */
#include "mps.h"

#include <string.h>

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_top;
int main(void);
void mps_reset_handler(void);
void mps_default_handler(void);

#define UART_RX_VECTOR(irq) [16u + (irq)] = (uintptr_t)mps_uart_rx_handler,

/* VTOR's reset value is the table's address (the linker script puts it
 * first); it needs the alignment of its size rounded up to a power of two. */
__attribute__((section(".vectors"), used)) static const uintptr_t vectors[16 + MOTA_MPS_N_IRQ] = {
    MOTA_ARM_CORE_VECTORS(&__stack_top, mps_reset_handler, mps_nmi_handler, mps_default_handler),
    MOTA_MPS_UART_RX_IRQS(UART_RX_VECTOR)};

void mps_default_handler(void)
{
    mota_qemu_reset("fault", 0, SCB_ICSR & 0x1FFu, 0);
}

void mps_reset_handler(void)
{
    mota_arm_fpu_enable(); /* first: newlib's memcpy may use it */
    memcpy(&__data_start, &__data_load, (size_t)((uint8_t *)&__data_end - (uint8_t *)&__data_start));
    memset(&__bss_start, 0, (size_t)((uint8_t *)&__bss_end - (uint8_t *)&__bss_start));
    mota_arm_core_init(); /* the guard's RAM, the stack painted, the fault handlers on */
    main();
    mota_qemu_reset("software", 0, 0, 0);
}
