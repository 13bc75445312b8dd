/* SPDX-License-Identifier: Apache-2.0 */
/*
 * QEMU mps2-an505 (Arm MPS2+ AN505: IoT Kit, Cortex-M33) for the MPS layer
 * (ports/mps/common): where its peripherals and memories are, in the Secure state it
 * boots in (SAU off: every address is Secure). QEMU 7.2's model, checked on it.
 *
 *   SSRAM1  0x10000000  4 MiB  firmware code (an505.ld)
 *   SSRAM2  0x38000000  2 MiB  firmware data, stack (an505.ld)
 *   SSRAM3  0x38200000  2 MiB  model exec RAM
 *   PSRAM   0x80000000 16 MiB  the emulated NOR flash (no Secure alias needed)
 */
#ifndef MOTA_AN505_BOARD_CONFIG_H
#define MOTA_AN505_BOARD_CONFIG_H

#define MOTA_MPS_FLASH_BASE 0x80000000u
#define MOTA_MPS_EXEC_BASE 0x38200000u
#define MOTA_MPS_EXEC_SIZE (2u * 1024u * 1024u)
#define MOTA_MPS_SYSCLK_HZ 20000000u    /* SysTick on the processor clock */
#define MOTA_MPS_N_IRQ 124u             /* 92 board + 32 IoT Kit interrupts */
#define MOTA_MPS_UART0_BASE 0x50200000u /* Secure alias */
/* UART0's RX interrupt: 32 on QEMU 7.2 (checked: with 33 alone the board
 * only sees bytes at its 1 ms SysTick wake-ups, half the speed), 42 the
 * combined UART interrupt, 33 as other builds number it. The handler only
 * drains RX, so all three lead to it. */
#define MOTA_MPS_UART_RX_IRQS(X) X(32u) X(33u) X(42u)
/* The IoT Kit S32K watchdog (Secure alias; 32 kHz; its interrupt is the NMI). */
#define MOTA_MPS_WDOG_BASE 0x5002E000u
#define MOTA_MPS_WDOG_HZ 32000u

/* The STM32 CRC unit (ST's legacy X-CUBE-AI runtime checks its licence on it): none on QEMU's
 * board, so 0u and the guard traps and emulates the model's accesses (mota/trap.h). A part with the
 * unit gives the address its code uses (on an STM32U5 running Secure, 0x50023000u): the guard then
 * grants the model that 1 KiB page and the CRC callbacks hand it to the model's runtime. */
#define MOTA_MPS_CRC_BASE 0u

#endif
