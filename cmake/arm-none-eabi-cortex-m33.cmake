# SPDX-License-Identifier: Apache-2.0
# Cross build for Cortex-M33 (single-precision FPU, hard float), as on
# STM32U5/L5-class parts and QEMU's mps2-an505 (the default board). Every
# cross tree builds its own mbed TLS and libcbor with these flags
# (cmake/cross-deps.cmake).
set(MOTA_CPU_FLAGS "-mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard")
set(MOTA_DEFAULT_BOARD an505)
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
