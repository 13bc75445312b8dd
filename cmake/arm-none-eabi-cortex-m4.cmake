# SPDX-License-Identifier: Apache-2.0
# Cross build for Cortex-M4 (Armv7E-M, hard float), as on STM32F4/L4/G4/WB-class parts (single-precision FPU) (and the
# boards of this cpu in ports/boards.txt). Every cross tree builds its own mbed TLS,
# libcbor and p256-m with these flags (cmake/cross-deps.cmake).
set(MOTA_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
set(MOTA_CPU cortex-m4) # its default board: the first of this cpu in ports/boards.txt
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
