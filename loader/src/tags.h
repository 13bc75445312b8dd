/* SPDX-License-Identifier: Apache-2.0 */
/* NBIN words: a 4-bit segment tag over a 28-bit offset, little-endian
 * (mota/le.h). Private to loader/. */
#ifndef MOTA_LOADER_TAGS_H
#define MOTA_LOADER_TAGS_H

#include "mota/le.h"

#include <stdint.h>

#define TAG(x) ((uint32_t)(x) >> 28)
#define OFF(x) ((uint32_t)(x)&0x0FFFFFFFu)

#endif
