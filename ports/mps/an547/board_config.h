/* SPDX-License-Identifier: Apache-2.0 */
/*
 * QEMU mps3-an547 (Arm MPS3 AN547: SSE-300, Cortex-M55) for the MPS layer
 * (ports/mps/common): where its peripherals and memories are, in the Secure state
 * (SAU off). QEMU 7.2's model, checked on it.
 *
 *   ITCM  0x00000000  512 KiB  firmware code (an547.ld)
 *   DTCM  0x20000000  512 KiB  firmware data, stack (an547.ld)
 *   SRAM  0x01000000    2 MiB  model exec RAM
 *   DDR   0x60000000   16 MiB  the emulated NOR flash
 */
#ifndef MOTA_AN547_BOARD_CONFIG_H
#define MOTA_AN547_BOARD_CONFIG_H

#define MOTA_MPS_FLASH_BASE 0x60000000u
#define MOTA_MPS_EXEC_BASE 0x01000000u
#define MOTA_MPS_EXEC_SIZE (2u * 1024u * 1024u)
#define MOTA_MPS_SYSCLK_HZ 32000000u /* SysTick on the processor clock */
#define MOTA_MPS_N_IRQ 128u          /* 96 board + 32 SSE-300 interrupts */
#define MOTA_MPS_UART0_BASE 0x49303000u
#define MOTA_MPS_UART_RX_IRQS(X) X(33u)
/* The SSE-300 S32K watchdog (Secure alias; 32 kHz slow clock; its interrupt
 * is the NMI). The other SSE-300 watchdog, at 0x48040000, is not modelled. */
#define MOTA_MPS_WDOG_BASE 0x5802E000u
#define MOTA_MPS_WDOG_HZ 32000u

/* The STM32 CRC unit (ST's legacy X-CUBE-AI runtime checks its licence on it): none on QEMU's
 * board, so 0u and the guard traps and emulates the model's accesses (mota/trap.h). A part with the
 * unit gives the address its code uses (on an STM32U5 running Secure, 0x50023000u): the guard then
 * grants the model that 1 KiB page and the CRC callbacks hand it to the model's runtime. */
#define MOTA_MPS_CRC_BASE 0u

#endif
