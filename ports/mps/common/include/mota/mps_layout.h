/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The MPS family's flash layout (Arm MPS2/MPS3 FPGA boards as QEMU 7.2
 * models them), shared by the firmware and the host's launcher (`mota sim
 * --target`, `mota provision`), which creates and provisions the flash
 * file. The emulated NOR flash is the family's, not a board's: a 16 MiB RAM
 * window of the board (MOTA_MPS_FLASH_BASE in board_config.h) stands in for
 * a memory-mapped part, with this layout:
 *   0x000000  the agent's journal (2 sectors)
 *   0x002000  A/B slot pairs, one per provisioned model, equal sizes (on Armv7-M
 *            from the first boundary of their size, a power of two: board.c)
 *   0xFFF000  the provisioning record (last sector), written by the factory
 */
#ifndef MOTA_MPS_LAYOUT_H
#define MOTA_MPS_LAYOUT_H

#define MOTA_MPS_FLASH_SIZE (16u * 1024u * 1024u)
#define MOTA_MPS_SECTOR 4096u
#define MOTA_MPS_PROG 16u
#define MOTA_MPS_JOURNAL 0u
#define MOTA_MPS_SLOTS (2u * MOTA_MPS_SECTOR)
#define MOTA_MPS_PROVISION (MOTA_MPS_FLASH_SIZE - MOTA_MPS_SECTOR)

#endif /* MOTA_MPS_LAYOUT_H */
