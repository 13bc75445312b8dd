# SPDX-License-Identifier: Apache-2.0
# What every Arm cross build shares (arm-none-eabi-gcc, static libraries, no
# host paths); a CPU's toolchain file sets MOTA_CPU_FLAGS and MOTA_DEFAULT_BOARD,
# then includes this one.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar)
set(CMAKE_RANLIB arm-none-eabi-ranlib)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
# -fstack-usage: per-function frame sizes (.su files) for the stack budget
set(CMAKE_C_FLAGS_INIT "${MOTA_CPU_FLAGS} -ffunction-sections -fdata-sections -fstack-usage -fcallgraph-info=su")
# -DMOTA_LTO=ON: the image optimised whole at link time (about 3 KB less in a min build); gcc-ar and gcc-ranlib
# keep the libraries' LTO objects. Its map names no module: bench-board.sh --footprint attributes the non-LTO
# build's.
if(MOTA_LTO)
  string(APPEND CMAKE_C_FLAGS_INIT " -flto")
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-flto=auto")
  set(CMAKE_AR arm-none-eabi-gcc-ar)
  set(CMAKE_RANLIB arm-none-eabi-gcc-ranlib)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
