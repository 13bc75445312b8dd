# SPDX-License-Identifier: Apache-2.0
# Build-time sizes of the STM32H747I-DISCO firmware: the STM32 layer's, but a 64 KiB USART ring and a window of
# 120 frames (about 62 KiB): while bank 2 erases a 128 KiB sector (up to 4 s) the host keeps sending into the
# ring, so the transfer overlaps the erase (docs/protocol.md, "Flash that takes its time"); DTCM has the room.
set(MOTA_STM32_RX_RING 65536u)
set(MOTA_LINK_WINDOW 120u)
include(${CMAKE_CURRENT_LIST_DIR}/../common/sizes.cmake)
