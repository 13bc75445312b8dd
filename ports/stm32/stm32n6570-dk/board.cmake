# SPDX-License-Identifier: Apache-2.0
# Build-time sizes of the STM32N6570-DK firmware: the STM32 layer's (an 8 KiB USART ring, a window of 12
# frames). A product changes them here, before the include.
include(${CMAKE_CURRENT_LIST_DIR}/../common/sizes.cmake)
