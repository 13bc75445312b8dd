# SPDX-License-Identifier: Apache-2.0
# Cross build for Cortex-M7 (Armv7E-M, hard float), as on STM32F7/H7-class parts (double-precision FPU) (and the
# boards of this cpu in ports/boards.txt). Every cross tree builds its own mbed TLS,
# libcbor and p256-m with these flags (cmake/cross-deps.cmake).
set(MOTA_CPU_FLAGS "-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard")
set(MOTA_CPU cortex-m7) # its default board: the first of this cpu in ports/boards.txt
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
