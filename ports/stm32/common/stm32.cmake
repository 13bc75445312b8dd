# SPDX-License-Identifier: Apache-2.0
# The STM32 family's common layer (ports/stm32/common) built for one board, on the Arm layer
# (ports/arm): its port library and the firmware (the shared main of ports/firmware) as ELF, binary and
# Intel HEX, with the board's board_config.h and board_layout.h (its linker script is stm32.ld.in run
# through the preprocessor with them). ports/stm32/<board>/CMakeLists.txt calls
# mota_stm32_board(<board> <series> <device>), series f4, u5, h7 or n6, device ST's defines (STM32F401xE; the
# H747's "STM32H747xx;CORE_CM7": the core it runs on). The N6's firmware runs in the Secure state: its
# sources are built with -mcmse, so that ST's header names the peripherals' secure aliases.
#
# ST's sources are build inputs, never copied: CMSIS-Core, the series' CMSIS device pack (header and
# system file) from MOTA_STM32_SDK, either the layout of ../shared/stm32 (cmsis-core/Include,
# stm32f4/device/...) or an STM32Cube package's (Drivers/CMSIS/...). Without them the board is skipped,
# said once, and the tests that need its firmware say SKIPPED.
set(MOTA_STM32_DIR ${CMAKE_CURRENT_LIST_DIR})
include(${MOTA_STM32_DIR}/../../arm/arm.cmake)
set(MOTA_STM32_SDK "${CMAKE_SOURCE_DIR}/../shared/stm32" CACHE PATH
    "ST's sources for the STM32 boards: ../shared/stm32, or an STM32Cube package (STM32CubeF4, STM32CubeU5)")

# ST's files for a series: <prefix>_CMSIS, <prefix>_DEVICE (include folders), <prefix>_SYSTEM (the system
# file), or <prefix>_MISSING saying what is not there
function(mota_stm32_sdk prefix series)
  string(TOUPPER ${series} up)
  set(sdk ${MOTA_STM32_SDK})
  unset(cmsis CACHE)
  unset(dev CACHE)
  unset(sys CACHE)
  find_path(cmsis core_cm4.h PATHS ${sdk}/cmsis-core/Include ${sdk}/Drivers/CMSIS/Core/Include
            ${sdk}/Drivers/CMSIS/Include NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  find_path(dev stm32${series}xx.h PATHS ${sdk}/stm32${series}/device/Include
            ${sdk}/Drivers/CMSIS/Device/ST/STM32${up}xx/Include NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  set(sysname system_stm32${series}xx.c)
  if(series STREQUAL "n6")
    set(sysname system_stm32n6xx_fsbl.c) # the firmware is the boot ROM's first-stage image (FSBL)
  endif()
  find_file(sys ${sysname} PATHS ${sdk}/stm32${series}/device
            ${sdk}/Drivers/CMSIS/Device/ST/STM32${up}xx/Source/Templates NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  set(missing "")
  if(NOT cmsis)
    string(APPEND missing " CMSIS-Core (core_cm4.h)")
  endif()
  if(NOT dev)
    string(APPEND missing " the STM32${up} device header (stm32${series}xx.h)")
  endif()
  if(NOT sys)
    string(APPEND missing " the STM32${up} system file (${sysname})")
  endif()
  set(${prefix}_CMSIS ${cmsis} PARENT_SCOPE)
  set(${prefix}_DEVICE ${dev} PARENT_SCOPE)
  set(${prefix}_SYSTEM ${sys} PARENT_SCOPE)
  set(${prefix}_MISSING "${missing}" PARENT_SCOPE)
  unset(cmsis CACHE)
  unset(dev CACHE)
  unset(sys CACHE)
endfunction()

function(mota_stm32_board board series device)
  mota_stm32_sdk(st ${series})
  if(st_MISSING)
    message(STATUS "mota: SKIPPED the ${board} firmware: ST's sources are not in MOTA_STM32_SDK=${MOTA_STM32_SDK} "
                   "(missing:${st_MISSING}); point MOTA_STM32_SDK at ../shared/stm32 or an STM32Cube package")
    return()
  endif()
  set(lib mota_hal_${board})
  set(elf mota-${board}.elf)
  set(board_dir ${CMAKE_CURRENT_SOURCE_DIR})
  set(ld ${CMAKE_CURRENT_BINARY_DIR}/${board}.ld)
  # the board's headers, and those of a board it builds on (MOTA_STM32_BOARD_INCLUDES, its board.cmake)
  set(incs ${board_dir} ${board_dir}/include ${MOTA_STM32_BOARD_INCLUDES})
  file(GLOB layout_headers ${board_dir}/*.h ${board_dir}/include/mota/*.h)
  add_custom_command(OUTPUT ${ld}
    COMMAND ${CMAKE_C_COMPILER} -E -P -undef -x c "-I$<JOIN:${incs},;-I>" ${MOTA_STM32_DIR}/stm32.ld.in -o ${ld}
    DEPENDS ${MOTA_STM32_DIR}/stm32.ld.in ${layout_headers} COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_target(${board}_ld DEPENDS ${ld})

  # ST's system file, as ST ships it: without the project's warnings
  add_library(mota_st_${board} OBJECT ${st_SYSTEM})
  target_include_directories(mota_st_${board} PRIVATE ${st_CMSIS} ${st_DEVICE})
  target_compile_definitions(mota_st_${board} PRIVATE ${device})
  if(series STREQUAL "n6")
    # the secure aliases as with -mcmse, without its one entry function's veneer (SECURE_SystemCoreClockUpdate,
    # for a non-secure image this firmware does not have: its attribute is then ignored, said quietly)
    target_compile_options(mota_st_${board} PRIVATE -U__ARM_FEATURE_CMSE -D__ARM_FEATURE_CMSE=3 -Wno-attributes)
  endif()

  mota_arm_sources(arm_src arm_inc)
  set(src ${MOTA_STM32_DIR}/src/startup.c ${MOTA_STM32_DIR}/src/system.c ${MOTA_STM32_DIR}/src/usart.c
      ${MOTA_STM32_DIR}/src/flash.c ${MOTA_STM32_DIR}/src/board.c ${MOTA_STM32_DIR}/src/clock_${series}.c)
  file(STRINGS ${board_dir}/board_config.h qemu REGEX "^#define MOTA_STM32_QEMU 1")
  if(qemu)
    mota_arm_qemu_sources(qemu_src)
    list(APPEND src ${qemu_src})
  else()
    list(APPEND src ${MOTA_STM32_DIR}/src/flash_${series}.c ${MOTA_STM32_DIR}/src/flash_if.c) # the part's own flash driver
  endif()
  add_library(${lib} STATIC ${src} ${arm_src} $<TARGET_OBJECTS:mota_st_${board}>)
  target_compile_options(${lib} PRIVATE ${MOTA_WARNINGS})
  # mota_arm_config.h (the family's, in src/) and board_config.h (the board's) configure the Arm layer
  target_include_directories(${lib} PUBLIC ${MOTA_STM32_DIR}/include ${MOTA_ARM_DIR}/include
                             PRIVATE ${incs} ${MOTA_STM32_DIR}/src ${arm_inc})
  target_include_directories(${lib} SYSTEM PRIVATE ${st_CMSIS} ${st_DEVICE})
  target_compile_definitions(${lib} PUBLIC MOTA_BOARD_NAME="${board}" PRIVATE ${device})
  if(series STREQUAL "n6")
    target_compile_options(${lib} PRIVATE -mcmse)
  endif()
  target_link_libraries(${lib} PUBLIC mota_agent mota_hal mota_base)

  add_executable(${elf} ${MOTA_STM32_DIR}/../../firmware/main.c)
  add_dependencies(${elf} ${board}_ld)
  target_compile_options(${elf} PRIVATE ${MOTA_WARNINGS})
  # max-page-size: segments on 1 KiB, so that none holds the ELF headers below an image whose first address
  # is not on 4 KiB (the N6's at 0x34180400): a debugger loading the ELF writes only the image
  target_link_options(${elf} PRIVATE -nostartfiles -T${ld} -Wl,--gc-sections -Wl,-z,max-page-size=1024
                      -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/mota-${board}.map -Wl,--print-memory-usage)
  # whole-archive: the vector table and handlers live in the port library
  target_link_libraries(${elf} PRIVATE -Wl,--whole-archive ${lib} -Wl,--no-whole-archive mota_agent mota_crypto c gcc)
  set_target_properties(${elf} PROPERTIES LINK_DEPENDS "${ld}")
  # what a programmer takes: the image as bytes from its first address, and as Intel HEX
  add_custom_command(TARGET ${elf} POST_BUILD
    COMMAND ${CMAKE_OBJCOPY} -O binary --gap-fill 0xFF $<TARGET_FILE:${elf}> ${CMAKE_CURRENT_BINARY_DIR}/mota-${board}.bin
    COMMAND ${CMAKE_OBJCOPY} -O ihex $<TARGET_FILE:${elf}> ${CMAKE_CURRENT_BINARY_DIR}/mota-${board}.hex VERBATIM)
endfunction()
