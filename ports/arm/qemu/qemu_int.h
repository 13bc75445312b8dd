/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the QEMU launcher's files (ports/arm/qemu); not part of the Arm layer's API. */
#ifndef MOTA_ARM_QEMU_INT_H
#define MOTA_ARM_QEMU_INT_H

#include "mota/arm_qemu.h"
#include "semihost.h"

#include <stdbool.h>
#include <stdint.h>

/* ECC on the emulated flash (emu_flash_ecc.c, flash-ecc): off and len in whole program units of a uniform
 * sector size; the window is where the CPU sees the flash */
int qemu_ecc_init(const uint8_t *window, uint32_t unit_size, uint32_t sector_size);
bool qemu_ecc_on(void);
bool qemu_ecc_readable(uint32_t off, uint32_t len);
int qemu_ecc_can_program(uint32_t off, const uint8_t *src, uint32_t len);
int qemu_ecc_programmed(uint32_t off, uint32_t len);
int qemu_ecc_torn(uint32_t off, bool whole_sector);
int qemu_ecc_erased(uint32_t off);

#endif
