# SPDX-License-Identifier: Apache-2.0
# Build-time sizes of an STM32 board's firmware, for every target of its cross build (the agent's
# structures must be the same size in the libraries and the application). A board's board.cmake may set
# any of them before including this file; docs/porting.md explains each.
if(NOT DEFINED MOTA_AGENT_MAX_MODELS)
  set(MOTA_AGENT_MAX_MODELS 1u)    # one A/B pair on these parts' flash
endif()
if(NOT DEFINED MOTA_LINK_MAX_PAYLOAD)
  set(MOTA_LINK_MAX_PAYLOAD 512u)  # frame payload: RAM for one frame in, one answer out
endif()
if(NOT DEFINED MOTA_STM32_RX_RING)
  set(MOTA_STM32_RX_RING 8192u)    # USART RX ring (a power of two): more than the whole window
endif()
if(NOT DEFINED MOTA_LINK_WINDOW)
  set(MOTA_LINK_WINDOW 12u)        # 12 frames in flight (about 6.3 KiB) fit an 8 KiB ring
endif()
if(NOT DEFINED MOTA_STM32_GUARD_STACK)  # a model's stack under guard (a power of two, for any MPU)
  if(MOTA_VARIANT STREQUAL "min")
    set(MOTA_STM32_GUARD_STACK 1024u) # CPU models of mota build-model's ABI: the test models peak far below
  else()
    set(MOTA_STM32_GUARD_STACK 4096u) # ST's legacy runtimes too
  endif()
endif()
if(NOT DEFINED MOTA_STM32_GUARD_IO)
  if(MOTA_VARIANT STREQUAL "min")
    set(MOTA_STM32_GUARD_IO 2048u) # the test models' largest: 600 bytes in, 1,200 out
  else()
    set(MOTA_STM32_GUARD_IO 4096u) # a model's input and output, the agent's self-test buffer
  endif()
endif()
add_compile_definitions(
  MOTA_AGENT_MAX_MODELS=${MOTA_AGENT_MAX_MODELS}
  MOTA_LINK_MAX_PAYLOAD=${MOTA_LINK_MAX_PAYLOAD}
  MOTA_LINK_WINDOW=${MOTA_LINK_WINDOW}
  MOTA_STM32_RX_RING=${MOTA_STM32_RX_RING}
  MOTA_STM32_GUARD_STACK=${MOTA_STM32_GUARD_STACK}
  MOTA_STM32_GUARD_IO=${MOTA_STM32_GUARD_IO}
  MOTA_ERR_STRINGS=0)              # bare reason codes on the device: the host names them
