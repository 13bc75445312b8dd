# SPDX-License-Identifier: Apache-2.0
# Build-time sizes of the an500 firmware: the MPS layer's. A product changes them here,
# before the include.
include(${CMAKE_CURRENT_LIST_DIR}/../common/sizes.cmake)
