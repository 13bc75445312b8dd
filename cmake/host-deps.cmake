# Host dependencies: Debian's -dev packages (scripts/setup.sh installs them).
find_path(MBEDTLS_INCLUDE_DIR mbedtls/sha256.h REQUIRED)
find_library(MBEDCRYPTO_LIBRARY mbedcrypto REQUIRED)
add_library(mota_dep_mbedtls INTERFACE)
target_include_directories(mota_dep_mbedtls SYSTEM INTERFACE ${MBEDTLS_INCLUDE_DIR})
target_link_libraries(mota_dep_mbedtls INTERFACE ${MBEDCRYPTO_LIBRARY})

find_path(CBOR_INCLUDE_DIR cbor.h REQUIRED)
find_library(CBOR_LIBRARY cbor REQUIRED)
add_library(mota_dep_cbor INTERFACE)
target_include_directories(mota_dep_cbor SYSTEM INTERFACE ${CBOR_INCLUDE_DIR})
target_link_libraries(mota_dep_cbor INTERFACE ${CBOR_LIBRARY})

# OpenSSL's libcrypto: the host's SHA-256 (crypto/src/sha256_openssl.c)
find_path(OPENSSL_SHA_INCLUDE_DIR openssl/sha.h REQUIRED)
find_library(OPENSSL_CRYPTO_LIB crypto REQUIRED)
add_library(mota_dep_openssl INTERFACE)
target_include_directories(mota_dep_openssl SYSTEM INTERFACE ${OPENSSL_SHA_INCLUDE_DIR})
target_link_libraries(mota_dep_openssl INTERFACE ${OPENSSL_CRYPTO_LIB})

# liblz4: the host's encoder of compressed payloads (mota pack --compress); the device decodes
# with container/src/lz4.c
find_path(LZ4_INCLUDE_DIR lz4frame.h REQUIRED)
find_library(LZ4_LIBRARY lz4 REQUIRED)
add_library(mota_dep_lz4 INTERFACE)
target_include_directories(mota_dep_lz4 SYSTEM INTERFACE ${LZ4_INCLUDE_DIR})
target_link_libraries(mota_dep_lz4 INTERFACE ${LZ4_LIBRARY})

# zlib: the host's CRC-32 (hal/src/crc32.c); the device keeps its own small table
find_path(ZLIB_H_DIR zlib.h REQUIRED)
find_library(ZLIB_LIB z REQUIRED)
add_library(mota_dep_zlib INTERFACE)
target_include_directories(mota_dep_zlib SYSTEM INTERFACE ${ZLIB_H_DIR})
target_link_libraries(mota_dep_zlib INTERFACE ${ZLIB_LIB})
