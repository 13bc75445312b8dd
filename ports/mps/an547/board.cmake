# SPDX-License-Identifier: Apache-2.0
# Build-time sizes of the an547 firmware: the MPS layer's (2 models, 512-byte
# frames, a window of 12 in an 8 KiB UART RX ring). A product changes them
# here, before the include.
include(${CMAKE_CURRENT_LIST_DIR}/../common/sizes.cmake)
