/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reset and the reset cause, the independent watchdog, the unique id, the console and the NMI of an
 * STM32 (the clock is the Arm layer's SysTick).
 * - The reset cause: the RCC's reset flags (RCC_CSR: IWDGRSTF a watchdog, SFTRSTF a reset the firmware
 *   asked for, else power-on, the reset pin or a brown-out), read once and cleared; a reset the firmware
 *   asked for after a fault leaves its last words in RAM that start-up does not clear (.noinit; on the N6,
 *   whose RAM a reset does not keep, in the TAMP backup registers), which
 *   tell a fault from a software reset and where it happened.
 * - The IWDG on the LSI (prescaler 256), its reload counted for the LSI at its fastest
 *   (MOTA_STM32_LSI_MAX_HZ: the F401's runs at 17 to 47 kHz), so that the period the guard is told is
 *   the shortest the part may have; never shorter than the board's longest erase allows
 *   (MOTA_STM32_WATCHDOG_MIN_MS: nothing kicks it while a single-bank F4 erases a 128 KiB sector for up
 *   to 4 s). It has no counter to read: the time left is counted from the last kick.
 * - The console: the virtual COM port the link uses, each piece of text between NUL bytes, so that the
 *   link's receiver (COBS: a NUL ends a frame) drops it as one bad frame, and a terminal shows it.
 * On QEMU (MOTA_STM32_QEMU: QEMU's STM32F405 machine models no RCC, IWDG or unique id) the launcher gives the
 * reset cause and hears the last words (mota/arm_qemu.h), and a watchdog on SysTick stands in for the IWDG.
 */
#include "stm32.h"

#include "mota/ms.h"

#include "mota/err.h"

#include <string.h>

bool stm32_wait(volatile const uint32_t *reg, uint32_t mask, uint32_t want, uint32_t tries)
{
    for (uint32_t i = 0; i < tries; i++)
        if ((*reg & mask) == want)
            return true;
    return false;
}

static uint32_t wdog_period_ms; /* 0: not running */
static uint64_t wdog_kicked_us;

uint32_t stm32_watchdog_period_ms(void)
{
    return wdog_period_ms;
}

uint32_t mota_arm_port_watchdog_left_ms(void)
{
    if (wdog_period_ms == 0)
        return 0xFFFFFFFFu;
    uint64_t since = mota_ms_of_us(mota_arm_now_us(NULL) - wdog_kicked_us);
    return since >= wdog_period_ms ? 0 : wdog_period_ms - (uint32_t)since;
}

static void system_reset(void *ctx)
{
    (void)ctx;
    mota_arm_port_reset("software", 0, 0, 0);
}

static enum mota_reset_cause boot_cause;

static enum mota_reset_cause reset_cause(void *ctx)
{
    (void)ctx;
    return boot_cause;
}

#if MOTA_STM32_QEMU
/* ---- on QEMU: the launcher's ---- */

static volatile bool wdog_expired;

static void cause_read(struct mota_board_boot *boot)
{
    const struct mota_qemu_args *a = &mota_qemu_args;
    *boot = (struct mota_board_boot){a->cause, a->fault_pc, a->fault_addr, a->fault_cfsr};
}

void mota_board_watchdog_start(uint32_t timeout_ms)
{
    wdog_kicked_us = mota_arm_now_us(NULL);
    wdog_period_ms = timeout_ms < MOTA_STM32_WATCHDOG_MIN_MS ? MOTA_STM32_WATCHDOG_MIN_MS : timeout_ms;
}

static void watchdog_kick(void *ctx)
{
    (void)ctx;
    wdog_kicked_us = mota_arm_now_us(NULL);
}

/* Each millisecond (SysTick): a watchdog not kicked for its period resets the board unannounced, which
 * the launcher takes for a watchdog reset, as the IWDG's would be. */
void stm32_qemu_watchdog_tick(void)
{
    if (wdog_period_ms == 0 || wdog_expired || mota_arm_port_watchdog_left_ms() != 0)
        return;
    wdog_expired = true;
    mota_board_log(MOTA_BOARD_TAG "watchdog expired: the board resets\n");
    NVIC_SystemReset();
}

void mota_arm_port_reset(const char *cause, uint32_t pc, uint32_t addr, uint32_t cfsr)
{
    mota_qemu_reset(cause, pc, addr, cfsr);
}

bool stm32_uid(uint8_t id[12])
{
    (void)id;
    return false;
}

#else
/* ---- on the part ---- */

#define WORDS_MAGIC 0x6D6F7461u /* "mota" */
struct last_words {
    uint32_t magic, cause, pc, addr, cfsr;
};
#ifdef MOTA_STM32_LAST_WORDS_TAMP
/* The N6's RAM does not keep them across a reset: the backup domain's TAMP registers do (its bus clock on,
 * its write protection off: board_config.h) */
#define words (*(volatile struct last_words *)&TAMP->BKP0R)
static void words_open(void)
{
    MOTA_STM32_LAST_WORDS_TAMP();
}
#else
static volatile struct last_words words __attribute__((section(".noinit")));
static void words_open(void)
{
}
#endif

static void cause_read(struct mota_board_boot *boot)
{
    uint32_t csr = MOTA_STM32_RESET_FLAGS;
    memset(boot, 0, sizeof(*boot));
    words_open();
    if (csr & MOTA_STM32_RESET_IWDG) {
        boot->cause = MOTA_RESET_WATCHDOG;
    } else if ((csr & MOTA_STM32_RESET_SOFTWARE) && words.magic == WORDS_MAGIC) {
        *boot = (struct mota_board_boot){(enum mota_reset_cause)words.cause, words.pc, words.addr, words.cfsr};
    } else if (csr & MOTA_STM32_RESET_SOFTWARE) {
        boot->cause = MOTA_RESET_SOFTWARE; /* a debugger's, or one without last words */
    } else {
        boot->cause = MOTA_RESET_POWER_ON; /* power-on, the reset pin (the ST-LINK's too), a brown-out */
    }
    words.magic = 0;
    MOTA_STM32_RESET_FLAGS |= MOTA_STM32_RESET_CLEAR;
}

#define IWDG_KEY_START 0xCCCCu
#define IWDG_KEY_ACCESS 0x5555u
#define IWDG_KEY_RELOAD 0xAAAAu

void mota_board_watchdog_start(uint32_t timeout_ms)
{
    /* the counts for the period at the LSI's fastest (the part's datasheet): a slower LSI only lengthens it */
    uint32_t ms = timeout_ms < MOTA_STM32_WATCHDOG_MIN_MS ? MOTA_STM32_WATCHDOG_MIN_MS : timeout_ms;
    /* in 32 bits (no 64-bit division on the device): past a minute the counts are at their most anyway */
    _Static_assert(60000ull * MOTA_STM32_LSI_MAX_HZ + 256u * 1000u < 0x100000000ull, "the LSI's count in 32 bits");
    ms = ms < 60000u ? ms : 60000u;
    uint32_t want = (ms * MOTA_STM32_LSI_MAX_HZ + 256u * 1000u - 1u) / (256u * 1000u);
    uint32_t counts = want > 0xFFFu ? 0xFFFu : want;
    MOTA_STM32_IWDG->KR = IWDG_KEY_START; /* it starts the LSI too */
    MOTA_STM32_IWDG->KR = IWDG_KEY_ACCESS;
    MOTA_STM32_IWDG->PR = 6u; /* / 256 */
    MOTA_STM32_IWDG->RLR = counts;
    /* the new values reach the LSI's domain within a few of its periods; bounded all the same */
    if (!stm32_wait(&MOTA_STM32_IWDG->SR, 0x7u, 0, 1000000u))
        mota_board_log(MOTA_BOARD_TAG "watchdog: its prescaler and reload were not taken\n");
    MOTA_STM32_IWDG->KR = IWDG_KEY_RELOAD;
    wdog_kicked_us = mota_arm_now_us(NULL);
    wdog_period_ms = counts * 256u * 1000u / MOTA_STM32_LSI_MAX_HZ; /* the shortest (0xFFF * 256,000 fits) */
}

static void watchdog_kick(void *ctx)
{
    (void)ctx;
    if (wdog_period_ms == 0)
        return;
    MOTA_STM32_IWDG->KR = IWDG_KEY_RELOAD;
    wdog_kicked_us = mota_arm_now_us(NULL);
}

/* The Arm layer's last words: said on the console, kept for the next boot's reset cause, then the reset. */
void mota_arm_port_reset(const char *cause, uint32_t pc, uint32_t addr, uint32_t cfsr)
{
    /* "fault" or "software": compared without newlib's strcmp (0.7 KB on Armv7-M) */
    bool fault = memcmp(cause, "fault", sizeof("fault")) == 0;
    mota_board_log(MOTA_BOARD_TAG "reset ");
    mota_board_log(cause);
    mota_board_log("\n");
    if (fault) {
        mota_board_log_hex(MOTA_BOARD_TAG "fault pc ", pc);
        mota_board_log_hex(MOTA_BOARD_TAG "fault address ", addr);
    }
    words_open();
    words.cause = fault ? MOTA_RESET_FAULT : MOTA_RESET_SOFTWARE;
    words.pc = pc;
    words.addr = addr;
    words.cfsr = cfsr;
    words.magic = WORDS_MAGIC;
    NVIC_SystemReset();
}

/* three word reads (the N6's is in BSEC, its clock on first: board_config.h) */
bool stm32_uid(uint8_t id[12])
{
#ifdef MOTA_STM32_UID_CLOCK_ON
    MOTA_STM32_UID_CLOCK_ON();
#endif
    for (unsigned i = 0; i < 3u; i++) {
        uint32_t w = ((volatile const uint32_t *)UID_BASE)[i];
        memcpy(id + 4u * i, &w, 4);
    }
    return true;
}

void mota_board_log(const char *s)
{
    static const char nul = 0;
    stm32_usart_put(&nul, 1);
    stm32_usart_put(s, strlen(s));
    stm32_usart_put(&nul, 1);
}
#endif

#if MOTA_STM32_SERIES_H7 && !MOTA_STM32_QEMU
static void cm4_check(void);
#endif

void stm32_system_init(struct mota_system *s, struct mota_board_boot *boot)
{
#if MOTA_STM32_SERIES_H7 && !MOTA_STM32_QEMU
    cm4_check();
#endif
    cause_read(boot);
    boot_cause = boot->cause;
    s->now_us = mota_arm_now_us;
    s->reset = system_reset;
    s->reset_cause = reset_cause;
    s->watchdog_kick = watchdog_kick;
    s->ctx = NULL;
}

#if MOTA_STM32_SERIES_H7
/* A bus fault on an H7: a flash read's ECC double error is the driver's when its read caused it (the read
 * then fails). Only a data access's (PRECISERR, IMPRECISERR): a fetch (IBUSERR) or a stacking error
 * (STKERR, UNSTKERR, LSPERR) is a fault of the firmware, whatever the driver reads. A precise one's load
 * is skipped (its destination keeps what it held: the read's bytes are not used), and the IT block it
 * may sit in (memcpy's tail) moves on with it; an imprecise one has completed already. */
#define CFSR_BUS_MASK 0xFF00u
#define CFSR_IBUSERR (1u << 8)
#define CFSR_PRECISERR (1u << 9)
#define CFSR_IMPRECISERR (1u << 10)
#define CFSR_STACKING ((1u << 11) | (1u << 12) | (1u << 13)) /* UNSTKERR, STKERR, LSPERR */
#define CFSR_BFARVALID (1u << 15)
#define HFSR_FORCED (1u << 30)

/* xPSR's IT state after one instruction of an IT block (ITSTATE: xPSR[15:10] IT[7:2], xPSR[26:25] IT[1:0];
 * the Armv7-M ITAdvance) */
static uint32_t it_advance(uint32_t xpsr)
{
    uint32_t it = (xpsr >> 25 & 3u) | (xpsr >> 10 & 0x3Fu) << 2;
    if (it == 0)
        return xpsr;
    it = (it & 7u) == 0 ? 0u : (it & 0xE0u) | (it << 1 & 0x1Fu);
    return (xpsr & ~(3u << 25 | 0x3Fu << 10)) | (it & 3u) << 25 | (it >> 2) << 10;
}

bool stm32_bus_fault(uint32_t *frame, uint32_t cfsr)
{
    uint32_t bfar = SCB->BFAR; /* read before BFARVALID is cleared */
    if ((cfsr & (CFSR_IBUSERR | CFSR_STACKING)) || !(cfsr & (CFSR_PRECISERR | CFSR_IMPRECISERR)))
        return false;
    if (!mota_stm32h7_flash_bus_fault((cfsr & CFSR_BFARVALID) ? bfar : 0u))
        return false;
    SCB->CFSR = cfsr & CFSR_BUS_MASK; /* write one to clear */
    if (SCB->HFSR & HFSR_FORCED)
        SCB->HFSR = HFSR_FORCED; /* escalated to a HardFault: taken all the same */
    if (cfsr & CFSR_PRECISERR) {
        uint16_t op = *(const uint16_t *)(uintptr_t)frame[6];
        frame[6] += (op & 0xF800u) >= 0xE800u ? 4u : 2u; /* a 32-bit Thumb instruction, or a 16-bit one */
        frame[7] = it_advance(frame[7]);
    }
    return true;
}

/* The M4 boots from bank 2 (the agent's journal) unless BCM4 is cleared: said at each boot. */
static void cm4_check(void)
{
    if (FLASH->OPTSR_CUR & FLASH_OPTSR_BCM4)
        mota_board_log(MOTA_BOARD_TAG "the Cortex-M4 boots too (option byte BCM4 set): clear it "
                                      "(STM32_Programmer_CLI -ob BCM4=0)\n");
}
#endif

/* The NMI: on a U5 the flash's ECC double error, which the flash driver takes when its read caused it;
 * anything else is a fault of the firmware. */
void stm32_nmi(void)
{
#if MOTA_STM32_SERIES_U5 && !MOTA_STM32_QEMU
    if (mota_stm32u5_flash_nmi())
        return;
#endif
    mota_arm_port_reset("fault", 0, 2u /* the NMI's exception number */, 0);
}
