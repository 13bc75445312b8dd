/* SPDX-License-Identifier: Apache-2.0 */
/* The Arm layer's build-time configuration for an MPS board (mota/arm.h): from the board's
 * board_config.h and the family's sizes (sizes.cmake). */
#ifndef MOTA_ARM_CONFIG_H
#define MOTA_ARM_CONFIG_H

#include "board_config.h"

#define MOTA_ARM_SYSCLK_HZ MOTA_MPS_SYSCLK_HZ
#define MOTA_ARM_CRC_BASE MOTA_MPS_CRC_BASE
#define MOTA_ARM_GUARD_STACK MOTA_MPS_GUARD_STACK
#define MOTA_ARM_GUARD_IO MOTA_MPS_GUARD_IO /* a CPU model's input and output; the agent's self-test buffer */

#endif
