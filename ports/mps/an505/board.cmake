# SPDX-License-Identifier: Apache-2.0
# Build-time sizes of this board's firmware: the MPS layer's (the
# UART is faster here, about 25 KiB/s, but the window already hides the
# round trips). A product changes them here, before the include.
include(${CMAKE_CURRENT_LIST_DIR}/../common/sizes.cmake)
