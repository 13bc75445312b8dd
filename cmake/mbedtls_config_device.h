/* SPDX-License-Identifier: Apache-2.0 */
/* mbed TLS 2.28 configuration of the device build: SHA-256 and ECDSA P-256
 * verification only, no heap (static arena), no entropy source, no I/O. */
#ifndef MOTA_MBEDTLS_CONFIG_DEVICE_H
#define MOTA_MBEDTLS_CONFIG_DEVICE_H

#define MBEDTLS_HAVE_ASM
#define MBEDTLS_NO_PLATFORM_ENTROPY
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_MEMORY_BUFFER_ALLOC_C
#define MBEDTLS_PLATFORM_NO_STD_FUNCTIONS
#define MBEDTLS_PLATFORM_SNPRINTF_MACRO snprintf
#define MBEDTLS_PLATFORM_PRINTF_ALT
#define MBEDTLS_PLATFORM_EXIT_MACRO(x) ((void)(x))

#define MBEDTLS_SHA256_C
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_ECP_NO_INTERNAL_RNG /* verification handles public data only */
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C

#define MBEDTLS_ECP_WINDOW_SIZE 4
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 1 /* the base point's table, kept in the cached group (crypto.c) */
#define MBEDTLS_MPI_MAX_SIZE 32

#include "mbedtls/check_config.h"

#endif
