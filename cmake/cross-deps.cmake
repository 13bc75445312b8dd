# SPDX-License-Identifier: Apache-2.0
# Device dependencies compiled from Debian's source packages, unpacked by
# scripts/fetch-cross-deps.sh into .deps/src (pinned SHA-256). Only the parts
# the device path uses are built: mbed TLS's SHA-256/ECDSA-verify stack with a
# static heap, and libcbor's streaming decoder and encoders.
set(MOTA_DEPS_SRC ${CMAKE_SOURCE_DIR}/.deps/src CACHE PATH "unpacked dependency sources")
if(NOT EXISTS ${MOTA_DEPS_SRC}/mbedtls/.unpacked OR NOT EXISTS ${MOTA_DEPS_SRC}/libcbor/.unpacked)
  message(FATAL_ERROR "run scripts/fetch-cross-deps.sh first")
endif()

set(MBED ${MOTA_DEPS_SRC}/mbedtls)
add_library(mota_dep_mbedtls_lib STATIC
  ${MBED}/library/sha256.c ${MBED}/library/ecdsa.c ${MBED}/library/ecp.c ${MBED}/library/ecp_curves.c
  ${MBED}/library/bignum.c ${MBED}/library/asn1parse.c ${MBED}/library/asn1write.c
  ${MBED}/library/platform.c ${MBED}/library/platform_util.c ${MBED}/library/memory_buffer_alloc.c
  ${MBED}/library/constant_time.c)
target_include_directories(mota_dep_mbedtls_lib SYSTEM PUBLIC ${MBED}/include ${CMAKE_SOURCE_DIR}/cmake)
target_compile_definitions(mota_dep_mbedtls_lib PUBLIC MBEDTLS_CONFIG_FILE="mbedtls_config_device.h")
target_compile_options(mota_dep_mbedtls_lib PRIVATE -Os -w)
# the verify's inner loops at -O2: the signature check is the agent's largest cost (bench-board.sh);
# SHA-256 stays -Os, which is as fast on Cortex-M55 (without MBEDTLS_SHA256_SMALLER)
set_source_files_properties(${MBED}/library/bignum.c ${MBED}/library/ecp.c ${MBED}/library/ecp_curves.c
                            PROPERTIES COMPILE_OPTIONS -O2)
add_library(mota_dep_mbedtls INTERFACE)
target_link_libraries(mota_dep_mbedtls INTERFACE mota_dep_mbedtls_lib)

set(CBOR ${MOTA_DEPS_SRC}/libcbor/src)
set(CBOR_VERSION_MAJOR 0)
set(CBOR_VERSION_MINOR 10)
set(CBOR_VERSION_PATCH 2)
set(CBOR_BUFFER_GROWTH 2)
set(CBOR_MAX_STACK_SIZE 2048)
set(CBOR_PRETTY_PRINTER OFF)
set(CBOR_RESTRICT_SPECIFIER restrict)
set(CBOR_INLINE_SPECIFIER inline)
configure_file(${CBOR}/cbor/configuration.h.in ${CMAKE_BINARY_DIR}/cbor-gen/cbor/configuration.h)
file(WRITE ${CMAKE_BINARY_DIR}/cbor-gen/cbor/cbor_export.h
     "#ifndef CBOR_EXPORT_H\n#define CBOR_EXPORT_H\n#define CBOR_EXPORT\n#endif\n")
add_library(mota_dep_cbor_lib STATIC
  ${CBOR}/cbor/streaming.c ${CBOR}/cbor/encoding.c ${CBOR}/cbor/internal/encoders.c
  ${CBOR}/cbor/internal/loaders.c ${CBOR}/cbor/callbacks.c)
target_include_directories(mota_dep_cbor_lib SYSTEM PUBLIC ${CBOR} ${CMAKE_BINARY_DIR}/cbor-gen)
target_compile_options(mota_dep_cbor_lib PRIVATE -Os -w)
add_library(mota_dep_cbor INTERFACE)
target_link_libraries(mota_dep_cbor INTERFACE mota_dep_cbor_lib)

# crypto: mbed TLS allocates inside bignum/ECP; on the device it gets a
# caller-provided arena instead of a heap (mota_crypto_setup).
set(MOTA_DEVICE_DEFINES MOTA_CRYPTO_STATIC_ARENA)
