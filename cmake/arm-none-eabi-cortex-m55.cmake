# SPDX-License-Identifier: Apache-2.0
# Cross build for Cortex-M55 (hard float, MVE), as used on STM32N6 and on
# QEMU's mps3-an547 (the default board). Every cross tree builds its own
# mbed TLS and libcbor with these flags (cmake/cross-deps.cmake).
set(MOTA_CPU_FLAGS "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard")
set(MOTA_DEFAULT_BOARD an547)
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
