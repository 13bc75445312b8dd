/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32H747I-DISCO's memory as mota uses it: one source for the port (its
 * linker script, ports/stm32/common/stm32.ld.in, and its board.c) and for
 * the host (the stm32h747i-disco profile of `mota sim`, `mota provision
 * --target`); tests/board/test_stm32_images.py checks the firmware against
 * it. The STM32H747XI (RM0399), run by its Cortex-M7 (the M4 gated: BCM4
 * cleared, docs/boards/stm32h747i-disco.md): 2 MiB of flash at 0x08000000 in
 * two banks of 8 sectors of 128 KiB, 32-byte flash words with ECC; DTCM
 * (128 KiB) at 0x20000000, AXI SRAM (512 KiB) at 0x24000000. Only macros:
 * the linker script's preprocessor reads it too.
 *
 *   bank 1 sectors 0-6  0x08000000 896 KiB  firmware
 *   bank 1 sector 7     0x080E0000 128 KiB  the provisioning record (its first 4 KiB; the factory writes it)
 *   bank 2 sectors 0-1  0x08100000 256 KiB  the agent's journal (two 128 KiB sectors: the part has no smaller)
 *   bank 2 sectors 2-4  0x08140000 384 KiB  slot A
 *   bank 2 sectors 5-7  0x081A0000 384 KiB  slot B
 *   DTCM                0x20000000 128 KiB  firmware data, the guard's stack first, the main stack
 *   AXI SRAM            0x24000000 512 KiB  the models' exec RAM (cached: the loader cleans it)
 * The agent's flash is the whole array (offsets from 0x08000000), each bank driven through its own
 * registers: the firmware runs from bank 1 while bank 2 erases and programs (read-while-write).
 */
#ifndef MOTA_STM32H747I_DISCO_LAYOUT_H
#define MOTA_STM32H747I_DISCO_LAYOUT_H

#define MOTA_STM32H747I_DISCO_FLASH_BASE 0x08000000 /* the agent's offset 0 */
#define MOTA_STM32H747I_DISCO_FLASH_SIZE 0x200000
#define MOTA_STM32H747I_DISCO_FW0_ADDR 0x08000000 /* bank 1 */
#define MOTA_STM32H747I_DISCO_FW0_SIZE 0xE0000
#define MOTA_STM32H747I_DISCO_PROVISION 0xE0000 /* bank 1, sector 7 */
#define MOTA_STM32H747I_DISCO_PROVISION_SIZE 0x20000
#define MOTA_STM32H747I_DISCO_JOURNAL 0x100000 /* bank 2, sectors 0 and 1 */
#define MOTA_STM32H747I_DISCO_SLOTS 0x140000
#define MOTA_STM32H747I_DISCO_MODELS 1 /* one A/B pair of 384 KiB */
#define MOTA_STM32H747I_DISCO_SLOT_SIZE 0x60000
#define MOTA_STM32H747I_DISCO_RAM 0x20000000 /* DTCM */
#define MOTA_STM32H747I_DISCO_RAM_SIZE 0x20000
#define MOTA_STM32H747I_DISCO_EXEC 0x24000000 /* AXI SRAM */
#define MOTA_STM32H747I_DISCO_EXEC_SIZE 0x80000

#endif
