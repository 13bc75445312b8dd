# SPDX-License-Identifier: Apache-2.0
# Build-time features of the device library (docs/porting.md, "Features chosen at build time"). Each is
# on in the full build; a product turns off what it does not need, and the device then refuses a
# container that asks for it with a reason of its own, before any erase (HELLO key 17 tells the host,
# which refuses first); the agent's own optional parts change what the device says or keeps, never what it
# accepts. MOTA_VARIANT=min is the smallest build the boards are measured in: one model, CPU models of the
# NBIN v8 family only, none of the features but invoke, SHA-256 rolled up, a 1 KiB head buffer, 256-byte
# frames, a 1 KiB model stack and a 2 KiB I/O area (a family's sizes.cmake); the guard and invoke stay.
set(MOTA_VARIANT "full" CACHE STRING "full, or min (sets the features and the model count below)")
set_property(CACHE MOTA_VARIANT PROPERTY STRINGS full min)
if(MOTA_VARIANT STREQUAL "min")
  set(_on OFF)
  set(_small ON)
  if(NOT DEFINED MOTA_AGENT_MAX_MODELS)
    set(MOTA_AGENT_MAX_MODELS 1u)
  endif()
  if(NOT DEFINED MOTA_HEAD_BUFFER)
    set(MOTA_HEAD_BUFFER 1024u) # one model's head without long texts (mota pack writes about 0.6 KiB)
  endif()
  if(NOT DEFINED MOTA_LINK_MAX_PAYLOAD)
    set(MOTA_LINK_MAX_PAYLOAD 256u) # a frame in and an answer out of 256 bytes: one model's HELLO fits
  endif()
elseif(MOTA_VARIANT STREQUAL "full")
  set(_on ON)
  set(_small OFF)
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
# the agent's own parts a small part can do without (each reported in HELLO's feature bits)
option(MOTA_FEATURE_DETAIL "refusal details: the facts behind a refusal as text in its answer" ${_on})
option(MOTA_FEATURE_ERRLOG "the recent-errors ring (ERRORS, mota status's recent errors)" ${_on})
option(MOTA_FEATURE_RESUME "an upload resumes where a reset or a lost link left it (else from the start)" ${_on})
option(MOTA_FEATURE_PAGES "HELLO and STATUS in parts, a few models an answer (else all in one, cut to fit)" ${_on})
option(MOTA_FEATURE_HISTORY "the journal's diagnostics: errors journaled and kept across compactions and boots" ${_on})
option(MOTA_FEATURE_RETIRE "the trial's extras: ROLLBACK retires a confirmed model that faulted since boot" ${_on})
# a size knob, not a feature (nothing is refused): mbed TLS's SHA-256 with its 64 rounds in a loop
option(MOTA_SHA256_SMALLER "SHA-256's rounds rolled up (MBEDTLS_SHA256_SMALLER): 1.2 KB less flash, slower per byte"
       ${_small})
if(NOT DEFINED MOTA_HEAD_BUFFER)
  set(MOTA_HEAD_BUFFER 2048u) # the firmware's container head buffer (HELLO's head capacity; the host checks first)
endif()
add_compile_definitions(MOTA_HEAD_BUFFER=${MOTA_HEAD_BUFFER})
foreach(f LZ4 DEFLATE LZMA DELTA CBOR_CROSSCHECK LEGACY TRAP EPOCHS INVOKE DECRYPT DETAIL ERRLOG RESUME PAGES HISTORY
          RETIRE)
  if(MOTA_FEATURE_${f})
    add_compile_definitions(MOTA_FEATURE_${f}=1)
  else()
    add_compile_definitions(MOTA_FEATURE_${f}=0)
  endif()
endforeach()
