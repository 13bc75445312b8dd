/* SPDX-License-Identifier: Apache-2.0 */
/* mbed TLS 2.28 configuration of the device build: SHA-256 only (the ECDSA verify is p256-m's), no heap,
 * no entropy source, no I/O. */
#ifndef MOTA_MBEDTLS_CONFIG_DEVICE_H
#define MOTA_MBEDTLS_CONFIG_DEVICE_H

#define MBEDTLS_HAVE_ASM
#define MBEDTLS_NO_PLATFORM_ENTROPY

#define MBEDTLS_SHA256_C

#include "mbedtls/check_config.h"

#endif
