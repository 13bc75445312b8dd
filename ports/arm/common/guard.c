/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Guarded model calls: a model is third-party code. It runs unprivileged,
 * on its own stack, with the MPU granting it only its flash slot (code and
 * params), its exec RAM (RW data, activations), one I/O buffer and its
 * stack; everything else (the agent, the journal, the provisioning record,
 * the peripherals) faults (the MPU: v8m/mpu.c, v7m/mpu.c). A fault or an overrun of the time budget ends the
 * call, not the device: the handler unwinds to the caller with a reason code.
 *
 * Mechanism: the caller enters with SVC #0, whose handler saves the caller's
 * callee-saved registers and returns into the model in unprivileged thread
 * mode on the guard stack (PSP; PSPLIM on Armv8-M). The model returns to a stub in
 * its own executable region that issues SVC #1. SVC #1, a fault taken from
 * the model, or SysTick past the deadline all leave through mota_arm_guard_unwind():
 * MSP back to the SVC #0 frame, the result in its r0, the caller's registers
 * restored, and an exception return that resumes the caller after its SVC.
 */
#include "arm_int.h"
#include "mota/err.h"
#include "mota/features.h"
#include "mota/trap.h"

#include <string.h>

#define CCR_DIV_0_TRP (1u << 4)
#define FPCCR FPU_FPCCR
#define FPCCR_LSPEN (1u << 30)
/* SHCSR pending bits: UsageFault, MemManage, BusFault, SVCall, SecureFault */
#define SHCSR_PENDED ((1u << 12) | (1u << 13) | (1u << 14) | (1u << 15) | (1u << 20))

/* Saved at SVC #0, restored by the unwind: r4-r11, s16-s31, EXC_RETURN, MSP,
 * FPSCR (the model may change rounding or flush-to-zero: not for the agent). */
struct guard_ctx {
    uint32_t r[8];
    uint32_t s[16];
    uint32_t exc_return;
    uint32_t msp;
    uint32_t fpscr;
};
_Static_assert(__builtin_offsetof(struct guard_ctx, msp) == 100 && __builtin_offsetof(struct guard_ctx, fpscr) == 104,
               "the offsets the handlers use");

/* `used` on what only the handlers' asm names: a link-time-optimised build keeps it (porting.md) */
__attribute__((used)) struct guard_ctx mota_arm_guard_ctx;
__attribute__((used)) volatile uint32_t mota_arm_guard_active;
__attribute__((used)) uint32_t mota_arm_guard_r9;
static volatile uint64_t guard_deadline_us;
static uint32_t guard_ret;
static const struct mota_arm_guard_call *guard_pending;        /* the call SVC #0 may enter, once */
__attribute__((used)) const uint32_t mota_arm_guard_zeros[32]; /* global: LTO would rename a static */
static struct mota_arm_guard_fault guard_fault;
static const struct mota_arm_guard_call *guard_current; /* the call running */
#if MOTA_FEATURE_LEGACY && MOTA_FEATURE_TRAP
static struct mota_trap_state guard_trap; /* its emulated peripherals, fresh per call */
#endif

/* The model's stack: its own MPU region, with PSPLIM at its base (Armv8-M) or a no-access region below it
 * (PMSAv7). First in RAM (the linker script), so nothing the model is granted lies below it. */
#define GUARD_STACK MOTA_ARM_GUARD_STACK /* mota_arm_config.h */
_Static_assert((GUARD_STACK & (GUARD_STACK - 1u)) == 0 && GUARD_STACK >= 1024u, "a power of two, 1 KiB or more");
static uint8_t guard_stack[GUARD_STACK]
    __attribute__((section(".bss.guard_stack"), aligned(MOTA_ARM_REGION_ALIGN(GUARD_STACK))));

void mota_arm_guard_exit_stub(void);

/* Where the model returns to: executable by unprivileged code, nothing else in it. */
__attribute__((naked, section(".guard_exit"), aligned(32))) void mota_arm_guard_exit_stub(void)
{
    __asm__ volatile("svc #1\n\t"
                     "b .\n\t");
}
extern uint32_t __guard_exit_start, __guard_exit_end;

/* The CRC unit a legacy model's licence check is given (mota/loader.h crc_acquire): the board's own,
 * granted to the model; else the address the guard emulates (mota/trap.h). */
#define GUARD_CRC_BASE (MOTA_ARM_CRC_BASE != 0u ? MOTA_ARM_CRC_BASE : MOTA_TRAP_CRC_NS)

/* ST's CRC-unit callbacks (rt_ctx acquire_crc_cb, release_crc_cb), which the model's runtime calls
 * from the model: in the exit stub's region, the only firmware code unprivileged code may run. They
 * touch no memory, so they need no other grant. */
__attribute__((section(".guard_exit.crc"), noinline)) uint32_t mota_arm_guard_crc_acquire(void)
{
    return GUARD_CRC_BASE;
}

__attribute__((section(".guard_exit.crc"), noinline)) void mota_arm_guard_crc_release(uint32_t base)
{
    (void)base; /* the unit is the model's for its whole call: nothing to hand back */
}

/* Called from the SVC #0 handler: the model's first frame on its stack. Returns EXC_RETURN. */
uint32_t mota_arm_guard_enter(const uint32_t *caller_frame);
__attribute__((used)) uint32_t mota_arm_guard_enter(const uint32_t *caller_frame)
{
    const struct mota_arm_guard_call *c = (const struct mota_arm_guard_call *)(uintptr_t)caller_frame[0];
    if (c == NULL || c != guard_pending) /* an SVC #0 left pending by a model, or from anywhere else */
        mota_arm_port_reset("fault", caller_frame[6], caller_frame[0], 0);
    guard_pending = NULL;
    uint32_t *sp = (uint32_t *)(uintptr_t)((uintptr_t)guard_stack + GUARD_STACK - 32u);
    sp[0] = c->a0;
    sp[1] = c->a1;
    sp[2] = c->a2;
    sp[3] = 0;
    sp[4] = 0;
    sp[5] = (uint32_t)(uintptr_t)&__guard_exit_start | 1u; /* lr: the exit stub */
    sp[6] = c->fn & ~1u;                                   /* pc */
    sp[7] = 1u << 24;                                      /* xPSR: Thumb */
    mota_arm_guard_r9 = c->r9;
#if MOTA_ARM_V8M
    __asm__ volatile("msr psplim, %0" ::"r"((uint32_t)(uintptr_t)guard_stack) : "memory");
#endif
    __asm__ volatile("msr psp, %0\n\t"
                     "msr control, %1\n\t" /* nPRIV: the model runs unprivileged */
                     "isb" ::"r"(sp),
                     "r"(1u)
                     : "memory");
    mota_arm_guard_active = 1;
    return 0xFFFFFFFDu; /* thread mode, PSP, Secure, basic frame */
}

/* SVC: #0 from the caller enters the model; #1 from the model's exit stub ends the call. */
__attribute__((naked)) void mota_arm_svc_handler(void)
{
    __asm__ volatile("tst lr, #4\n\t"
                     "bne 1f\n\t"
                     /* SVC #0 on MSP: save the caller, enter the model */
                     "ldr r12, =mota_arm_guard_ctx\n\t"
                     "stmia r12!, {r4-r11}\n\t"
                     "vstmia r12!, {s16-s31}\n\t"
                     "str lr, [r12], #4\n\t"
                     "mrs r0, msp\n\t"
                     "str r0, [r12], #4\n\t"
                     "vmrs r1, fpscr\n\t"
                     "str r1, [r12]\n\t"
                     "bl mota_arm_guard_enter\n\t"
                     /* nothing of the agent's in the model's registers */
                     "ldr r1, =mota_arm_guard_zeros\n\t"
                     "vldmia r1, {s0-s31}\n\t"
                     "movs r1, #0\n\t"
                     "vmsr fpscr, r1\n\t"
                     "mov r2, r1\n\t"
                     "mov r3, r1\n\t"
                     "mov r4, r1\n\t"
                     "mov r5, r1\n\t"
                     "mov r6, r1\n\t"
                     "mov r7, r1\n\t"
                     "mov r8, r1\n\t"
                     "mov r10, r1\n\t"
                     "mov r11, r1\n\t"
                     "mov r12, r1\n\t"
                     "ldr r1, =mota_arm_guard_r9\n\t"
                     "ldr r9, [r1]\n\t"
                     "bx r0\n\t"
                     /* SVC from the model: its return value, then unwind with MOTA_OK */
                     "1:\n\t"
                     "mrs r0, psp\n\t"
                     "bl mota_arm_guard_returned\n\t"
                     "b mota_arm_guard_unwind\n\t" ::
                         : "memory");
}

/* The model returned to the stub (anything else issuing SVC is a fault). */
int mota_arm_guard_returned(const uint32_t *model_frame);
__attribute__((used)) int mota_arm_guard_returned(const uint32_t *model_frame)
{
    uint32_t pc = model_frame[6];
    /* the stub's own SVC (its region also holds the CRC callbacks, which have none) */
    if (pc != (uint32_t)(uintptr_t)&__guard_exit_start + 2u) {
        guard_fault = (struct mota_arm_guard_fault){.kind = MOTA_ARM_FAULT_SVC, .pc = pc};
        return MOTA_ERR_SELFTEST_FAULT;
    }
    guard_ret = model_frame[0];
    return MOTA_OK;
}

/* Leave the model with r0 as the call's result: never returns to the interrupted code. */
__attribute__((naked, used)) void mota_arm_guard_unwind(void)
{
    __asm__ volatile(
        /* the model's lazily stacked FP state is abandoned, not saved */
        "ldr r1, =0xE000EF34\n\t"
        "ldr r2, [r1]\n\t"
        "bic r2, r2, #1\n\t"
        "str r2, [r1]\n\t"
        "movs r1, #0\n\t"
        "msr control, r1\n\t" /* privileged again, no FP context */
        "isb\n\t"
        "ldr r1, =mota_arm_guard_active\n\t"
        "movs r2, #0\n\t"
        "str r2, [r1]\n\t"
        /* exceptions the model left pending (one raised while another was being stacked) die with it */
        "ldr r1, =0xE000ED24\n\t"
        "ldr r2, [r1]\n\t"
        "bic r2, r2, #0xF000\n\t"
        "bic r2, r2, #0x100000\n\t"
        "str r2, [r1]\n\t"
        "ldr r12, =mota_arm_guard_ctx\n\t"
        "ldr r1, [r12, #104]\n\t"
        "vmsr fpscr, r1\n\t"
        "ldr r1, [r12, #100]\n\t" /* the SVC #0 frame on MSP: the result goes in its r0 */
        "msr msp, r1\n\t"
        "str r0, [r1]\n\t"
        "ldmia r12!, {r4-r11}\n\t"
        "vldmia r12!, {s16-s31}\n\t"
        "ldr lr, [r12]\n\t"
        "bx lr\n\t" ::
            : "memory");
}

/* Whether a fault (or SysTick) interrupted the model: thread mode, or the
 * Non-secure state a BXNS reaches, while a model runs. */
static bool from_model(uint32_t exc_return)
{
    return mota_arm_guard_active && !((exc_return & 0x8u) == 0 && (exc_return & 0x40u) != 0);
}

#if MOTA_FEATURE_LEGACY && MOTA_FEATURE_TRAP
static bool within_range(uint32_t a, uint32_t n, uint32_t base, uint32_t end)
{
    return a >= base && a < end && n <= end - a;
}

/* A trapped access to the FP_CTRL or STM32 CRC registers a legacy model's
 * licence check makes (mota/trap.h): applied to the model's registers (the
 * stacked frame and r4-r11) and stepped over. False: the fault stands. */
static bool emulate(uint32_t exc_return, uint32_t cfsr, uint32_t psp, uint32_t *r4_r11)
{
    const struct mota_arm_guard_call *c = guard_current;
    uint32_t addr = mota_arm_fault_address(cfsr);
    if (c == NULL || !(cfsr & (CFSR_MMARVALID | CFSR_BFARVALID)) || !mota_trap_covers(addr) ||
        !within_range(psp, 32u, (uint32_t)(uintptr_t)guard_stack, (uint32_t)(uintptr_t)guard_stack + GUARD_STACK))
        return false;
    uint32_t *frame = (uint32_t *)(uintptr_t)psp, pc = frame[6];
    /* the instruction is read from the model's own code, nowhere else */
    uint32_t code = c->ram_exec ? c->ram_base : c->code_base, code_end = c->ram_exec ? c->ram_end : c->code_end;
    uint8_t insn[4] = {0};
    if (!within_range(pc, 2u, code, code_end))
        return false;
    memcpy(insn, (const void *)(uintptr_t)pc, 2);
    if ((insn[1] & 0xE0u) == 0xE0u && (insn[1] & 0x18u) != 0) { /* the first half of a 32-bit instruction */
        if (!within_range(pc, 4u, code, code_end))
            return false;
        memcpy(insn + 2, (const void *)(uintptr_t)(pc + 2u), 2);
    }
    struct mota_trap_regs r;
    for (unsigned i = 0; i < 4; i++)
        r.r[i] = frame[i];
    for (unsigned i = 0; i < 8; i++)
        r.r[4 + i] = r4_r11[i];
    r.r[12] = frame[4];
    /* the SP before the exception: the frame (basic, or with the FP state) and its alignment pad */
    r.r[13] = psp + ((exc_return & 0x10u) ? 32u : 104u) + (((frame[7] >> 9) & 1u) ? 4u : 0u);
    r.r[14] = frame[5];
    r.r[15] = pc;
    r.xpsr = frame[7];
    if (mota_trap_emulate(&guard_trap, &r, insn, addr) != MOTA_OK)
        return false;
    for (unsigned i = 0; i < 4; i++)
        frame[i] = r.r[i];
    for (unsigned i = 0; i < 8; i++)
        r4_r11[i] = r.r[4 + i];
    frame[4] = r.r[12];
    frame[6] = r.r[15];
    SCB_CFSR = cfsr; /* handled: write one to clear */
    return true;
}

uint32_t mota_arm_guard_emulated(void)
{
    return guard_trap.accesses;
}
#else
/* no licence check to emulate in this build (MOTA_FEATURE_LEGACY or _TRAP 0): every fault stands; a legacy
 * model's check then needs the part's own CRC unit granted (MOTA_ARM_CRC_BASE) */
static bool emulate(uint32_t exc_return, uint32_t cfsr, uint32_t psp, uint32_t *r4_r11)
{
    (void)exc_return, (void)cfsr, (void)psp, (void)r4_r11;
    return false;
}

uint32_t mota_arm_guard_emulated(void)
{
    return 0;
}
#endif

/* The one decision on a fault while a model runs (mota/arm.h): an access the
 * port emulates resumes the model; every other fault of the model ends its
 * call. */
__attribute__((used)) int mota_arm_guard_on_fault(uint32_t exc_return, uint32_t ipsr, uint32_t *r4_r11)
{
    if (!from_model(exc_return))
        return MOTA_ARM_GUARD_NOT_MODEL;
#if MOTA_ARM_V8M
    SCB_SFSR = SCB_SFSR;
#endif
    uint32_t cfsr = SCB_CFSR, psp, pc = 0;
    __asm__ volatile("mrs %0, psp" : "=r"(psp));
    if (emulate(exc_return, cfsr, psp, r4_r11))
        return MOTA_ARM_GUARD_RESUME;
    /* the stacked PC, when the frame is inside the guard stack (it may not have been stacked) */
    if (psp >= (uint32_t)(uintptr_t)guard_stack && psp + 32u <= (uint32_t)(uintptr_t)guard_stack + GUARD_STACK &&
        (cfsr & ((1u << 4) | (1u << 12) | (1u << 20))) == 0) /* MSTKERR, STKERR, STKOF */
        pc = ((const uint32_t *)(uintptr_t)psp)[6];
    guard_fault =
        (struct mota_arm_guard_fault){.kind = ipsr, .pc = pc, .cfsr = cfsr, .addr = mota_arm_fault_address(cfsr)};
    SCB_CFSR = cfsr; /* write one to clear */
    SCB_HFSR = SCB_HFSR;
    return MOTA_ARM_GUARD_END;
}

/* SysTick: a model past its deadline is stopped where it is. */
__attribute__((used)) bool mota_arm_guard_overdue(uint32_t exc_return)
{
    /* its deadline, or the watchdog about to expire whatever the tick count says: a verdict, not a reset */
    if (!from_model(exc_return) ||
        (mota_arm_now_us(NULL) < guard_deadline_us && mota_arm_port_watchdog_left_ms() > 150u))
        return false;
    guard_fault = (struct mota_arm_guard_fault){.kind = MOTA_ARM_FAULT_TIMEOUT};
    return true;
}

/* The MPU off after a guarded call: nothing else runs unprivileged (the grant is per architecture: mpu.c). */
void mota_arm_mpu_off(void)
{
    MPU_CTRL = 0;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

int mota_arm_guard_call(const struct mota_arm_guard_call *c, uint32_t *ret, struct mota_arm_guard_fault *fault)
{
    guard_fault = (struct mota_arm_guard_fault){0};
    if (!mota_arm_mpu_grant(c, (uint32_t)(uintptr_t)guard_stack, GUARD_STACK))
        return MOTA_ERR_SELFTEST_RUN; /* what it owns is not one region each on this MPU: it does not run */
    guard_current = c;
#if MOTA_FEATURE_LEGACY && MOTA_FEATURE_TRAP
    mota_trap_reset(&guard_trap);
#endif
    guard_ret = 0;
    guard_deadline_us = mota_arm_now_us(NULL) + (c->budget_us ? c->budget_us : 1);
    uint32_t ccr = SCB_CCR;
    SCB_CCR = ccr | CCR_DIV_0_TRP; /* a division by zero in the model traps */
    guard_pending = c;
    uint32_t fpccr = FPCCR;
    FPCCR = fpccr & ~FPCCR_LSPEN; /* a model's FP state is stacked at once, never lazily from a handler */
    register uint32_t r0 __asm__("r0") = (uint32_t)(uintptr_t)c; /* set here: no call may come between */
    __asm__ volatile("dsb\n\tisb\n\tsvc #0" : "+r"(r0)::"r1", "r2", "r3", "r12", "lr", "memory", "cc");
    int result = (int)r0; /* the register variable is r0 only at the asm */
    guard_pending = NULL;
    guard_current = NULL;
    FPCCR = fpccr;
    SCB_CCR = ccr;
    mota_arm_mpu_off();
    *ret = guard_ret;
    if (fault != NULL)
        *fault = guard_fault;
    return result;
}
