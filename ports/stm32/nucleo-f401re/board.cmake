# SPDX-License-Identifier: Apache-2.0
# Build-time sizes of the NUCLEO-F401RE firmware: 64 KiB of RAM for it, so a 4 KiB USART ring and a link
# window of 6 frames (about 3.1 KiB) in it; the rest the STM32 layer's. A product changes them here.
set(MOTA_STM32_RX_RING 4096u)
set(MOTA_LINK_WINDOW 6u)
include(${CMAKE_CURRENT_LIST_DIR}/../common/sizes.cmake)
