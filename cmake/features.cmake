# SPDX-License-Identifier: Apache-2.0
# Build-time features of the device library (docs/porting.md, "Features chosen at build time"). Each is
# on in the full build; a product turns off what it does not need, and the device then refuses a
# container that asks for it with a reason of its own, before any erase (HELLO key 17 tells the host,
# which refuses first). MOTA_VARIANT=min is the smallest build the boards are measured in: one model, CPU
# models of the NBIN v8 family only, no decompressor, no decryption, no epoch summary, a 2 KiB model stack (a board's
# sizes.cmake); the guard and invoke stay.
set(MOTA_VARIANT "full" CACHE STRING "full, or min (sets the features and the model count below)")
set_property(CACHE MOTA_VARIANT PROPERTY STRINGS full min)
if(MOTA_VARIANT STREQUAL "min")
  set(_on OFF)
  if(NOT DEFINED MOTA_AGENT_MAX_MODELS)
    set(MOTA_AGENT_MAX_MODELS 1u)
  endif()
elseif(MOTA_VARIANT STREQUAL "full")
  set(_on ON)
else()
  message(FATAL_ERROR "MOTA_VARIANT=${MOTA_VARIANT}: full or min")
endif()
option(MOTA_FEATURE_LZ4 "the LZ4 decoder for compressed payloads" ${_on})
option(MOTA_FEATURE_DEFLATE "the deflate decoder for compressed payloads (1.6 KiB of state)" ${_on})
option(MOTA_FEATURE_LZMA "the LZMA decoder for compressed payloads (6.7 KiB of state)" ${_on})
option(MOTA_FEATURE_DELTA "delta payloads: the patcher (768 bytes of regions)" ${_on})
option(MOTA_FEATURE_CBOR_CROSSCHECK "libcbor's decoder checks each CBOR item again (defence in depth, 2.2 KB)" ${_on})
option(MOTA_FEATURE_LEGACY "X-CUBE-AI legacy models (the ai_rel_network API)" ${_on})
option(MOTA_FEATURE_TRAP "the legacy licence check's FP_CTRL and CRC accesses emulated by the guard" ${_on})
option(MOTA_FEATURE_EPOCHS "the Neural-ART epoch summary in HELLO and STATUS (model key 17)" ${_on})
option(MOTA_FEATURE_INVOKE "INVOKE, INPUT, RUN and OUTPUT: running the model over the link" ON)
option(MOTA_FEATURE_DECRYPT "encrypted payloads: AES-128 GCM and CTR, key unwrap, ECDH on P-256" ${_on})
foreach(f LZ4 DEFLATE LZMA DELTA CBOR_CROSSCHECK LEGACY TRAP EPOCHS INVOKE DECRYPT)
  if(MOTA_FEATURE_${f})
    add_compile_definitions(MOTA_FEATURE_${f}=1)
  else()
    add_compile_definitions(MOTA_FEATURE_${f}=0)
  endif()
endforeach()
