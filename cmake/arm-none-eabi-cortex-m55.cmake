# SPDX-License-Identifier: Apache-2.0
# Cross build for Cortex-M55 (hard float, MVE), as used on STM32N6 (and the boards
# of this cpu in ports/boards.txt). Every cross tree builds its own
# mbed TLS and libcbor with these flags (cmake/cross-deps.cmake).
set(MOTA_CPU_FLAGS "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard")
set(MOTA_CPU cortex-m55) # its default board: the first of this cpu in ports/boards.txt
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
