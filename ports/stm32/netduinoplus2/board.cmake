# SPDX-License-Identifier: Apache-2.0
# QEMU netduinoplus2 runs the NUCLEO-F401RE port: its sizes.
include(${CMAKE_CURRENT_LIST_DIR}/../nucleo-f401re/board.cmake)
# its headers (board_config.h, board_layout.h) include the F401's
set(MOTA_STM32_BOARD_INCLUDES ${CMAKE_CURRENT_LIST_DIR}/../nucleo-f401re/include)
