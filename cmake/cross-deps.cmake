# SPDX-License-Identifier: Apache-2.0
# Device dependencies compiled from Debian's source packages, unpacked by
# scripts/fetch-cross-deps.sh into .deps/src (pinned SHA-256). Only the parts
# the device path uses are built: mbed TLS 2.28's SHA-256 and AES block, p256-m (from mbed
# TLS 3.6.6) for the ECDSA P-256 verify, and libcbor's streaming decoder and
# encoders.
set(MOTA_DEPS_SRC ${CMAKE_SOURCE_DIR}/.deps/src CACHE PATH "unpacked dependency sources")
foreach(dep mbedtls mbedtls36 libcbor)
  if(NOT EXISTS ${MOTA_DEPS_SRC}/${dep}/.unpacked)
    message(FATAL_ERROR "run scripts/fetch-cross-deps.sh first (${dep} is missing)")
  endif()
endforeach()

set(MBED ${MOTA_DEPS_SRC}/mbedtls)
add_library(mota_dep_mbedtls_lib STATIC ${MBED}/library/sha256.c ${MBED}/library/aes.c ${MBED}/library/platform_util.c)
# the AES block at -O2: the cost of CTR and GCM per byte is mostly its (docs/porting.md)
set_source_files_properties(${MBED}/library/aes.c PROPERTIES COMPILE_OPTIONS -O2)
target_include_directories(mota_dep_mbedtls_lib SYSTEM PUBLIC ${MBED}/include ${CMAKE_SOURCE_DIR}/cmake)
target_compile_definitions(mota_dep_mbedtls_lib PUBLIC MBEDTLS_CONFIG_FILE="mbedtls_config_device.h")
# SHA-256 at -Os is as fast on Cortex-M55 as at -O2 (without MBEDTLS_SHA256_SMALLER): 42 instructions/byte
target_compile_options(mota_dep_mbedtls_lib PRIVATE -Os -w)
if(MOTA_SHA256_SMALLER) # cmake/features.cmake: on in the min build
  target_compile_definitions(mota_dep_mbedtls_lib PUBLIC MOTA_SHA256_SMALLER=1)
endif()
add_library(mota_dep_mbedtls INTERFACE)
target_link_libraries(mota_dep_mbedtls INTERFACE mota_dep_mbedtls_lib)

# p256-m: the verify at -O2 (13.3 M instructions on Cortex-M55, 3.8 KB; -Os is 16.5 M, 2.4 KB:
# docs/porting.md). It is compiled against 3.6.6's own headers (its zeroize and the PSA random source of
# its signing, which the device never links: --gc-sections), and only crypto/ sees its header.
set(P256M ${MOTA_DEPS_SRC}/mbedtls36/3rdparty/p256-m/p256-m)
add_library(mota_dep_p256m_lib STATIC ${P256M}/p256-m.c)
target_include_directories(mota_dep_p256m_lib PRIVATE ${MOTA_DEPS_SRC}/mbedtls36/include)
target_include_directories(mota_dep_p256m_lib SYSTEM INTERFACE ${P256M})
target_compile_definitions(mota_dep_p256m_lib PRIVATE MBEDTLS_PSA_P256M_DRIVER_ENABLED)
target_compile_options(mota_dep_p256m_lib PRIVATE -O2 -w)
add_library(mota_dep_p256m INTERFACE)
target_link_libraries(mota_dep_p256m INTERFACE mota_dep_p256m_lib mota_dep_mbedtls_lib)

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

