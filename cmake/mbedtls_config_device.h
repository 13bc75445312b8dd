/* SPDX-License-Identifier: Apache-2.0 */
/* mbed TLS 2.28 configuration of the device build: SHA-256 and the AES block (the modes are mota's own,
 * crypto/src/cipher.c; the ECDSA verify is p256-m's), no heap, no entropy source, no I/O. */
#ifndef MOTA_MBEDTLS_CONFIG_DEVICE_H
#define MOTA_MBEDTLS_CONFIG_DEVICE_H

#define MBEDTLS_HAVE_ASM
#define MBEDTLS_NO_PLATFORM_ENTROPY

#define MBEDTLS_SHA256_C
#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES   /* its tables in flash, not built in RAM at the first call */
#define MBEDTLS_AES_FEWER_TABLES /* one table of each, rotated: 6 KiB less flash */
#if defined(MOTA_SHA256_SMALLER) && MOTA_SHA256_SMALLER
#define MBEDTLS_SHA256_SMALLER /* the rounds in a loop (cmake/features.cmake) */
#endif

#include "mbedtls/check_config.h"

#endif
