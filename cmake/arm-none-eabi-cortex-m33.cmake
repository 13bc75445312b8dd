# SPDX-License-Identifier: Apache-2.0
# Cross build for Cortex-M33 (single-precision FPU, hard float), as on
# STM32U5/L5-class parts (and the
# boards of this cpu in ports/boards.txt). Every
# cross tree builds its own mbed TLS and libcbor with these flags
# (cmake/cross-deps.cmake).
set(MOTA_CPU_FLAGS "-mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard")
set(MOTA_CPU cortex-m33) # its default board: the first of this cpu in ports/boards.txt
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
