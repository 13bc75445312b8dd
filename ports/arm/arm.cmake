# SPDX-License-Identifier: Apache-2.0
# The Arm layer (ports/arm, mota/arm.h) for a family's build: its sources, with the MPU of the core the
# toolchain file's -mcpu names (PMSAv7 on the Armv7-M cores, else Armv8-M's), and its include folders.
# The family compiles them into its board library, with its mota_arm_config.h on the include path.
set(MOTA_ARM_DIR ${CMAKE_CURRENT_LIST_DIR})

# mota_arm_sources(<sources var> <private includes var>)
function(mota_arm_sources src inc)
  if(MOTA_CPU_FLAGS MATCHES "cortex-m(3|4|7)([^0-9]|$)")
    set(mpu ${MOTA_ARM_DIR}/v7m/mpu.c)
  else()
    set(mpu ${MOTA_ARM_DIR}/v8m/mpu.c)
  endif()
  set(${src} ${MOTA_ARM_DIR}/common/core.c ${MOTA_ARM_DIR}/common/clock.c ${MOTA_ARM_DIR}/common/fault.c
      ${MOTA_ARM_DIR}/common/guard.c ${MOTA_ARM_DIR}/common/infer.c ${MOTA_ARM_DIR}/common/port.c ${MOTA_ARM_DIR}/common/rx.c ${mpu} PARENT_SCOPE)
  set(${inc} ${MOTA_ARM_DIR}/common PARENT_SCOPE)
endfunction()

# mota_arm_qemu_sources(<sources var>): the launcher's side of a board on QEMU (mota/arm_qemu.h:
# semihosting, the launcher's arguments and log, the emulated flash), for a family's QEMU boards only
function(mota_arm_qemu_sources src)
  set(${src} ${MOTA_ARM_DIR}/qemu/launcher.c ${MOTA_ARM_DIR}/qemu/emu_flash.c ${MOTA_ARM_DIR}/qemu/emu_flash_ecc.c PARENT_SCOPE)
endfunction()
