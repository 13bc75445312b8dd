/* SPDX-License-Identifier: Apache-2.0 */
/*
 * QEMU mps2-an386 (Arm MPS2 AN386, Cortex-M4, Armv7-M: no Security Extension, a
 * PMSAv7 MPU of 8 regions) for the MPS layer (ports/mps/common). QEMU 7.2's
 * model, checked on it (docs/porting.md, "What the Armv7-M boards taught"):
 * CPUID 0x410FC240, MVFR0 0x10110021.
 *
 *   SSRAM1    0x00000000   4 MiB  firmware code (an386.ld; a mirror at 0x00400000)
 *   SSRAM2/3  0x20000000   2 MiB  firmware data, stack (an386.ld; bit-band alias at 0x22000000)
 *   SSRAM2/3  0x20200000   2 MiB  model exec RAM (a power of two, aligned: one MPU region)
 *   PSRAM     0x21000000  16 MiB  the emulated NOR flash
 */
#ifndef MOTA_AN386_BOARD_CONFIG_H
#define MOTA_AN386_BOARD_CONFIG_H

#define MOTA_MPS_FLASH_BASE 0x21000000u
#define MOTA_MPS_EXEC_BASE 0x20200000u
#define MOTA_MPS_EXEC_SIZE (2u * 1024u * 1024u)
#define MOTA_MPS_SYSCLK_HZ 25000000u /* SysTick on the processor clock: 40 instructions a tick under -icount */
#define MOTA_MPS_N_IRQ 32u
#define MOTA_MPS_UART0_BASE 0x40004000u
/* UART0's RX interrupt is line 0 (TX 1, the overrun of UARTs 0-2 is 12), as ARM documents; with another
 * line the board only sees bytes at its 1 ms SysTick wake-ups. */
#define MOTA_MPS_UART_RX_IRQS(X) X(0u)
/* The CMSDK APB watchdog on the 25 MHz system clock (not a 32 kHz one); its interrupt is the NMI. QEMU 7.2
 * runs its counter from power-on: armed at boot, as main.c does, it never expires stale. */
#define MOTA_MPS_WDOG_BASE 0x40008000u
#define MOTA_MPS_WDOG_HZ 25000000u

/* No STM32 CRC unit: the guard traps and emulates a legacy model's accesses (mota/trap.h). On these
 * boards 0x40023000 (an STM32F4/L4's CRC address) is an I2C controller that never faults: the MPU denies
 * it to the model, so the access traps. */
#define MOTA_MPS_CRC_BASE 0u

#endif
