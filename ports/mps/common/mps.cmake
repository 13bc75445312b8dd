# SPDX-License-Identifier: Apache-2.0
# The MPS family's common layer (ports/mps/common) built for one board:
# its port library and the firmware, with the board's board_config.h
# (addresses, IRQ numbers, clock) and linker script from the board's folder.
# ports/mps/<board>/CMakeLists.txt calls mota_mps_board(<board>); the
# firmware is boards/<board>/mota-<board>.elf in the build tree.
set(MOTA_MPS_DIR ${CMAKE_CURRENT_LIST_DIR})

function(mota_mps_board board)
  set(lib mota_hal_${board})
  set(elf mota-${board}.elf)
  set(ld ${CMAKE_CURRENT_SOURCE_DIR}/${board}.ld)
  # the guard's MPU: PMSAv7 on the Armv7-M cores (the toolchain file's -mcpu), else Armv8-M's
  if(MOTA_CPU_FLAGS MATCHES "cortex-m(3|4|7)([^0-9]|$)")
    set(mpu mpu_pmsav7.c)
  else()
    set(mpu mpu_armv8m.c)
  endif()
  add_library(${lib} STATIC ${MOTA_MPS_DIR}/src/startup.c ${MOTA_MPS_DIR}/src/console.c ${MOTA_MPS_DIR}/src/system.c ${MOTA_MPS_DIR}/src/uart.c
              ${MOTA_MPS_DIR}/src/flash.c ${MOTA_MPS_DIR}/src/flash_ecc.c ${MOTA_MPS_DIR}/src/board.c
              ${MOTA_MPS_DIR}/src/guard.c ${MOTA_MPS_DIR}/src/${mpu})
  target_compile_options(${lib} PRIVATE ${MOTA_WARNINGS})
  target_include_directories(${lib} PUBLIC ${MOTA_MPS_DIR}/include PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(${lib} PUBLIC MOTA_BOARD_NAME="${board}")
  target_link_libraries(${lib} PUBLIC mota_agent mota_hal mota_base)

  add_executable(${elf} ${MOTA_MPS_DIR}/firmware/main.c)
  target_compile_options(${elf} PRIVATE ${MOTA_WARNINGS})
  # the board's script gives MEMORY and includes the layer's sections (mps.ld)
  target_link_options(${elf} PRIVATE -nostartfiles -L${MOTA_MPS_DIR} -T${ld} -Wl,--gc-sections
                      -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/mota-${board}.map -Wl,--print-memory-usage)
  # whole-archive: the vector table and handlers live in the port library
  target_link_libraries(${elf} PRIVATE -Wl,--whole-archive ${lib} -Wl,--no-whole-archive mota_agent mota_crypto c gcc)
  set_target_properties(${elf} PROPERTIES LINK_DEPENDS "${ld};${MOTA_MPS_DIR}/mps.ld")
endfunction()
