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
