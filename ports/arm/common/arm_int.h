/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the Arm layer's files; not part of its interface (mota/arm.h): the System Control
 * Block's registers, and how the fault entry, SysTick and the guard hand a running model over. */
#ifndef MOTA_ARM_INT_H
#define MOTA_ARM_INT_H

#include "mota/arm.h"
#include "mota_arm_config.h"

#include <stdbool.h>
#include <stdint.h>

#ifndef MOTA_ARM_SYSCLK_HZ
#error "MOTA_ARM_SYSCLK_HZ: SysTick's processor clock, in mota_arm_config.h (mota/arm.h)"
#endif
#ifndef MOTA_ARM_CRC_BASE
#error "MOTA_ARM_CRC_BASE: the part's STM32 CRC unit, 0u if it has none, in mota_arm_config.h (mota/arm.h)"
#endif
#ifndef MOTA_ARM_GUARD_STACK
#error "MOTA_ARM_GUARD_STACK: a model's stack under guard, in mota_arm_config.h (mota/arm.h)"
#endif
#ifndef MOTA_ARM_GUARD_IO
#error "MOTA_ARM_GUARD_IO: a model's I/O area, in mota_arm_config.h (mota/arm.h)"
#endif

#define REG(a) (*(volatile uint32_t *)(a))
#define SCB_CPUID REG(0xE000ED00u)
#define SCB_ICSR REG(0xE000ED04u)
#define SCB_CCR REG(0xE000ED14u)
#define SCB_SHCSR REG(0xE000ED24u)
#define SCB_CFSR REG(0xE000ED28u)
#define SCB_HFSR REG(0xE000ED2Cu)
#define SCB_MMFAR REG(0xE000ED34u)
#define SCB_BFAR REG(0xE000ED38u)
#define SCB_ID_PFR1 REG(0xE000ED44u)
#define SCB_CPACR REG(0xE000ED88u)
#define SCB_SFSR REG(0xE000EDE4u)
#define SCB_CPUID_NS REG(0xE002ED00u)
#define MPU_CTRL REG(0xE000ED94u) /* the same on PMSAv7 and Armv8-M */
#define FPU_FPCCR REG(0xE000EF34u)
#define FPU_MVFR0 REG(0xE000EF40u)
#define CFSR_MMARVALID (1u << 7)
#define CFSR_BFARVALID (1u << 15)

extern volatile uint32_t mota_arm_guard_active; /* a model runs */
/*
 * The one decision on a fault taken while a model runs (fault.c's entry calls it with the exception's
 * EXC_RETURN and number, and the model's r4-r11 as saved there; r0-r3, r12, lr, pc are in its stacked
 * frame): NOT_MODEL, the firmware's own (reported, the board resets); END, the model's: the call ends
 * with MOTA_ERR_SELFTEST_FAULT; RESUME, the model continues (registers and frame as left).
 */
enum { MOTA_ARM_GUARD_NOT_MODEL = 0, MOTA_ARM_GUARD_END = 1, MOTA_ARM_GUARD_RESUME = 2 };
int mota_arm_guard_on_fault(uint32_t exc_return, uint32_t ipsr, uint32_t *r4_r11);
/* SysTick: whether a running model is past its deadline */
bool mota_arm_guard_overdue(uint32_t exc_return);
/* leave the model with r0 as the call's result (naked: jumped to, never called) */
void mota_arm_guard_unwind(void);

#endif
