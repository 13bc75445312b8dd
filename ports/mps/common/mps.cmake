# SPDX-License-Identifier: Apache-2.0
# The MPS family's common layer (ports/mps/common) built for one board, on
# the Arm layer (ports/arm): its port library and the firmware (the shared
# main of ports/firmware), with the board's board_config.h (addresses, IRQ
# numbers, clock) and linker script from the board's folder.
# ports/mps/<board>/CMakeLists.txt calls mota_mps_board(<board>); the
# firmware is boards/<board>/mota-<board>.elf in the build tree.
set(MOTA_MPS_DIR ${CMAKE_CURRENT_LIST_DIR})
include(${MOTA_MPS_DIR}/../../arm/arm.cmake)

function(mota_mps_board board)
  set(lib mota_hal_${board})
  set(elf mota-${board}.elf)
  set(ld ${CMAKE_CURRENT_SOURCE_DIR}/${board}.ld)
  mota_arm_sources(arm_src arm_inc)
  mota_arm_qemu_sources(qemu_src)
  add_library(${lib} STATIC ${MOTA_MPS_DIR}/src/startup.c ${MOTA_MPS_DIR}/src/system.c ${MOTA_MPS_DIR}/src/uart.c
              ${MOTA_MPS_DIR}/src/board.c ${arm_src} ${qemu_src})
  target_compile_options(${lib} PRIVATE ${MOTA_WARNINGS})
  # mota_arm_config.h (the family's, in src/) and board_config.h (the board's) configure the Arm layer
  target_include_directories(${lib} PUBLIC ${MOTA_MPS_DIR}/include ${MOTA_ARM_DIR}/include
                             PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${MOTA_MPS_DIR}/src ${arm_inc})
  target_compile_definitions(${lib} PUBLIC MOTA_BOARD_NAME="${board}")
  target_link_libraries(${lib} PUBLIC mota_agent mota_hal mota_base)

  add_executable(${elf} ${MOTA_MPS_DIR}/../../firmware/main.c)
  target_compile_options(${elf} PRIVATE ${MOTA_WARNINGS})
  # the board's script gives MEMORY and includes the layer's sections (mps.ld)
  target_link_options(${elf} PRIVATE -nostartfiles -L${MOTA_MPS_DIR} -T${ld} -Wl,--gc-sections
                      -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/mota-${board}.map -Wl,--print-memory-usage)
  # whole-archive: the vector table and handlers live in the port library
  target_link_libraries(${elf} PRIVATE -Wl,--whole-archive ${lib} -Wl,--no-whole-archive mota_agent mota_crypto c gcc)
  set_target_properties(${elf} PROPERTIES LINK_DEPENDS "${ld};${MOTA_MPS_DIR}/mps.ld")
endfunction()
