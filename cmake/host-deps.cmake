# SPDX-License-Identifier: Apache-2.0
# Host dependencies: Debian's -dev packages (scripts/setup.sh installs them), each an interface
# target mota_dep_NAME that carries its include directory and library.
function(mota_host_dep name header lib)
  find_path(MOTA_DEP_${name}_INCLUDE ${header} REQUIRED)
  find_library(MOTA_DEP_${name}_LIBRARY ${lib} REQUIRED)
  add_library(mota_dep_${name} INTERFACE)
  target_include_directories(mota_dep_${name} SYSTEM INTERFACE ${MOTA_DEP_${name}_INCLUDE})
  target_link_libraries(mota_dep_${name} INTERFACE ${MOTA_DEP_${name}_LIBRARY})
endfunction()

mota_host_dep(mbedtls mbedtls/sha256.h mbedcrypto) # signatures and keys; the device's crypto too
mota_host_dep(cbor cbor.h cbor)
mota_host_dep(openssl openssl/sha.h crypto)        # the host's SHA-256 (crypto/src/sha256_openssl.c)
mota_host_dep(lz4 lz4frame.h lz4)                  # pack --compress=lz4's encoder; devices decode with lz4.c
mota_host_dep(zlib zlib.h z)                       # the host's CRC-32 and pack --compress's deflate encoder
mota_host_dep(divsufsort divsufsort.h divsufsort)  # the delta diff's suffix array of the old image
mota_host_dep(lzma lzma.h lzma)                    # pack --compress=lzma's encoder (devices decode with lzma.c)
