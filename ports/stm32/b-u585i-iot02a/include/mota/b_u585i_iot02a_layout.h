/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The B-U585I-IOT02A's memory as mota uses it: one source for the port (its
 * linker script, ports/stm32/common/stm32.ld.in, and its board.c) and for
 * the host (the b-u585i-iot02a profile of `mota sim`, `mota provision
 * --target`); tests/board/test_stm32_images.py checks the firmware against
 * it. The STM32U585AI (RM0456), TrustZone disabled (TZEN=0, as shipped):
 * 2 MiB of flash at 0x08000000 in two banks of 128 pages of 8 KiB, 16-byte
 * ECC quad-words; SRAM1 and SRAM2 (256 KiB) at 0x20000000, SRAM3 (512 KiB)
 * at 0x20040000. Only macros: the linker script's preprocessor reads it too.
 *
 *   bank 1        0x08000000   1 MiB   firmware
 *   bank 2        0x08100000  16 KiB   the agent's journal (pages 0 and 1)
 *                 0x08104000 496 KiB   slot A (62 pages)
 *                 0x08180000 496 KiB   slot B
 *                 0x081FC000   8 KiB   spare
 *                 0x081FE000   8 KiB   the provisioning record (the last page; the factory writes it)
 *   SRAM1, SRAM2  0x20000000 256 KiB   firmware data, the guard's stack first, the main stack
 *   SRAM3         0x20040000 512 KiB   the models' exec RAM
 * The agent's flash is bank 2 (offsets from 0x08100000): the firmware runs from bank 1 while bank 2
 * erases and programs (read-while-write).
 */
#ifndef MOTA_B_U585I_IOT02A_LAYOUT_H
#define MOTA_B_U585I_IOT02A_LAYOUT_H

#define MOTA_B_U585I_IOT02A_FLASH_BASE 0x08100000 /* the agent's offset 0: bank 2 */
#define MOTA_B_U585I_IOT02A_FLASH_SIZE 0x100000
#define MOTA_B_U585I_IOT02A_FW0_ADDR 0x08000000 /* bank 1, by its CPU address: not in the agent's flash */
#define MOTA_B_U585I_IOT02A_FW0_SIZE 0x100000
#define MOTA_B_U585I_IOT02A_JOURNAL 0x0
#define MOTA_B_U585I_IOT02A_SLOTS 0x4000
#define MOTA_B_U585I_IOT02A_MODELS 1 /* one A/B pair of 496 KiB */
#define MOTA_B_U585I_IOT02A_SLOT_SIZE 0x7C000
#define MOTA_B_U585I_IOT02A_PROVISION 0xFE000
#define MOTA_B_U585I_IOT02A_PROVISION_SIZE 0x2000
#define MOTA_B_U585I_IOT02A_RAM 0x20000000
#define MOTA_B_U585I_IOT02A_RAM_SIZE 0x40000
#define MOTA_B_U585I_IOT02A_EXEC 0x20040000
#define MOTA_B_U585I_IOT02A_EXEC_SIZE 0x80000

#endif
