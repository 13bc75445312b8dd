/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The NUCLEO-F401RE's memory as mota uses it: one source for the port (its
 * linker script, ports/stm32/common/stm32.ld.in, and its board.c) and for
 * the host (the nucleo-f401re profile of `mota sim`, `mota provision
 * --target`); tests/board/test_stm32_images.py checks the firmware against
 * it. The STM32F401RE: 512 KiB of flash at 0x08000000 in one bank of
 * sectors 4 x 16, 64, 3 x 128 KiB (RM0368); 96 KiB of SRAM at 0x20000000.
 * Only macros: the linker script's preprocessor reads it too.
 *
 *   sector 0      0x08000000  16 KiB  firmware: vector table, first code
 *   sectors 1-2   0x08004000  32 KiB  the agent's journal (two 16 KiB sectors)
 *   sectors 3-4   0x0800C000  80 KiB  firmware: the rest
 *   sector 5      0x08020000 128 KiB  slot A
 *   sector 6      0x08040000 128 KiB  slot B
 *   sector 7      0x08060000 128 KiB  the provisioning record (its first 4 KiB; the factory writes it)
 *   SRAM          0x20000000  64 KiB  firmware data, the guard's stack first, the main stack
 *   SRAM          0x20010000  32 KiB  the model's exec RAM (a power of two aligned to its size: one
 *                                     PMSAv7 MPU region)
 * The agent's flash is the whole array (offsets from 0x08000000): it owns sectors 1, 2, 5, 6 and 7.
 */
#ifndef MOTA_NUCLEO_F401RE_LAYOUT_H
#define MOTA_NUCLEO_F401RE_LAYOUT_H

#define MOTA_NUCLEO_F401RE_FLASH_BASE 0x08000000 /* the agent's offset 0 */
#define MOTA_NUCLEO_F401RE_FLASH_SIZE 0x80000
#define MOTA_NUCLEO_F401RE_FW0 0x0 /* sector 0 */
#define MOTA_NUCLEO_F401RE_FW0_SIZE 0x4000
#define MOTA_NUCLEO_F401RE_JOURNAL 0x4000 /* sectors 1 and 2 */
#define MOTA_NUCLEO_F401RE_FW1 0xC000     /* sectors 3 and 4 */
#define MOTA_NUCLEO_F401RE_FW1_SIZE 0x14000
#define MOTA_NUCLEO_F401RE_SLOTS 0x20000 /* sector 5: slot A; sector 6: slot B */
#define MOTA_NUCLEO_F401RE_MODELS 1      /* one A/B pair: sectors 5 and 6 */
#define MOTA_NUCLEO_F401RE_SLOT_SIZE 0x20000
#define MOTA_NUCLEO_F401RE_PROVISION 0x60000 /* sector 7 */
#define MOTA_NUCLEO_F401RE_PROVISION_SIZE 0x1000
#define MOTA_NUCLEO_F401RE_RAM 0x20000000
#define MOTA_NUCLEO_F401RE_RAM_SIZE 0x10000
#define MOTA_NUCLEO_F401RE_EXEC 0x20010000
#define MOTA_NUCLEO_F401RE_EXEC_SIZE 0x8000

#endif
