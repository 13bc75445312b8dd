/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The STM32N6570-DK's memory as mota uses it: one source for the port (its
 * linker script, ports/stm32/common/stm32.ld.in, and its board.c) and for
 * the host (the stm32n6570-dk profile of `mota sim`, `mota provision
 * --target`); tests/board/test_stm32_images.py checks the firmware against
 * it. The STM32N657X0 (RM0486) has no internal flash: the firmware is the
 * first-stage boot loader (FSBL) the boot ROM copies from the octal NOR
 * (an MX66UW1G45G, 128 MiB, behind XSPI2, mapped at 0x70000000) into
 * AXISRAM2 and runs there; the agent's flash is the NOR, read through
 * XSPI2's memory-mapped window, written through its indirect mode. Only
 * macros: the linker script's preprocessor reads it too.
 *
 *   NOR 0x70000000          1 MiB  the firmware as the boot ROM reads it (ST's header, then the image)
 *   NOR 0x70100000          8 KiB  the agent's journal (two 4 KiB sectors)
 *   NOR 0x70110000  8 MiB - 64 KiB slot A
 *   NOR 0x70900000  8 MiB - 64 KiB slot B
 *   NOR 0x710FF000          4 KiB  the provisioning record (the agent's last sector; the factory writes it)
 *   AXISRAM1 0x34000000     1 MiB  the models' exec RAM
 *   AXISRAM2 0x34180400   255 KiB  the firmware's code, where the boot ROM loads it (ST's FSBL address)
 *   AXISRAM2 0x341C0000   256 KiB  firmware data, the guard's stack first, the main stack
 * The agent's flash is 16 MiB of the NOR from 0x70100000 (offsets from there). Addresses are the
 * secure aliases: the boot ROM starts the FSBL in the Secure state.
 */
#ifndef MOTA_STM32N6570_DK_LAYOUT_H
#define MOTA_STM32N6570_DK_LAYOUT_H

#define MOTA_STM32N6570_DK_FLASH_BASE 0x70100000 /* the agent's offset 0: the NOR at 1 MiB */
#define MOTA_STM32N6570_DK_FLASH_SIZE 0x1000000
#define MOTA_STM32N6570_DK_BOOT_IMAGE 0x70000000 /* where the boot ROM reads the FSBL: the NOR's start */
#define MOTA_STM32N6570_DK_BOOT_IMAGE_SIZE 0x100000
#define MOTA_STM32N6570_DK_FW0_ADDR 0x34180400 /* where the boot ROM loads it, after ST's 1 KiB header */
#define MOTA_STM32N6570_DK_FW0_SIZE 0x3FC00
#define MOTA_STM32N6570_DK_JOURNAL 0x0
#define MOTA_STM32N6570_DK_SLOTS 0x10000
#define MOTA_STM32N6570_DK_MODELS 1 /* one A/B pair of 8 MiB - 64 KiB (ST's yolov8n is 3.2 MiB) */
#define MOTA_STM32N6570_DK_SLOT_SIZE 0x7F0000
#define MOTA_STM32N6570_DK_PROVISION 0xFFF000
#define MOTA_STM32N6570_DK_PROVISION_SIZE 0x1000
#define MOTA_STM32N6570_DK_RAM 0x341C0000
#define MOTA_STM32N6570_DK_RAM_SIZE 0x40000
#define MOTA_STM32N6570_DK_EXEC 0x34000000 /* AXISRAM1 */
#define MOTA_STM32N6570_DK_EXEC_SIZE 0x100000

#endif
