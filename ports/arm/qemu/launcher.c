/* SPDX-License-Identifier: Apache-2.0 */
/* The launcher's side of a board on QEMU (mota/arm_qemu.h): its arguments (the semihosting command line),
 * the log (the semihosting console, QEMU's stderr, which the launcher reads) and the last words before a
 * reset. Below the drivers and the bring-up, which all use them. */
#include "mota/arm_qemu.h"
#include "mota/err.h"
#include "semihost.h"

#include <string.h>
struct mota_qemu_args mota_qemu_args;
static char cmdline[512];

/* ---- the launcher's arguments: "mota-BOARD flash=F reset=CAUSE [cut=N] [torn] [hang-on-trial] [measure-stack] [fault=PC:ADDR:CFSR] [flash-timing=typ|max] [flash-ecc]" ---- */

static uint32_t parse_num(const char *p, const char *end, int base)
{
    uint32_t v = 0;
    for (; p < end; p++) {
        uint32_t d = *p >= '0' && *p <= '9'                     ? (uint32_t)(*p - '0')
                     : (*p | 0x20) >= 'a' && (*p | 0x20) <= 'f' ? (uint32_t)((*p | 0x20) - 'a' + 10)
                                                                : 99u;
        if (d >= (uint32_t)base)
            break;
        v = v * (uint32_t)base + d;
    }
    return v;
}

static bool word_is(const char *w, size_t n, const char *key, const char **val)
{
    size_t k = strlen(key);
    if (n < k || memcmp(w, key, k) != 0)
        return false;
    *val = w + k;
    return true;
}

int mota_qemu_args_parse(void)
{
    int32_t len = sh_cmdline(cmdline, sizeof(cmdline) - 1);
    if (len < 0)
        return MOTA_ERR_IO;
    cmdline[len] = 0;
    for (char *w = cmdline; *w;) {
        char *e = w;
        while (*e && *e != ' ')
            e++;
        size_t n = (size_t)(e - w);
        const char *v;
        if (word_is(w, n, "flash=", &v)) {
            mota_qemu_args.flash = v;
            mota_qemu_args.flash_len = (uint32_t)(e - v);
        } else if (word_is(w, n, "reset=", &v)) {
            mota_qemu_args.cause = memcmp(v, "software", 8) == 0   ? MOTA_RESET_SOFTWARE
                                   : memcmp(v, "watchdog", 8) == 0 ? MOTA_RESET_WATCHDOG
                                   : memcmp(v, "fault", 5) == 0    ? MOTA_RESET_FAULT
                                                                   : MOTA_RESET_POWER_ON;
        } else if (word_is(w, n, "cut=", &v)) {
            mota_qemu_args.cut_at_op = parse_num(v, e, 10);
        } else if (n == 4 && memcmp(w, "torn", 4) == 0) {
            mota_qemu_args.torn = 1;
        } else if (n == 13 && memcmp(w, "hang-on-trial", 13) == 0) {
            mota_qemu_args.hang_on_trial = 1;
        } else if (n == 13 && memcmp(w, "measure-stack", 13) == 0) {
            mota_qemu_args.measure_stack = 1;
        } else if (n == 9 && memcmp(w, "flash-ecc", 9) == 0) {
            mota_qemu_args.flash_ecc = 1;
        } else if (word_is(w, n, "flash-timing=", &v)) {
            mota_qemu_args.flash_timing = memcmp(v, "max", 3) == 0 ? 2 : memcmp(v, "typ", 3) == 0 ? 1 : 0;
        } else if (word_is(w, n, "fault=", &v)) {
            /* ':' separated: QEMU's -semihosting-config splits its arguments at commas */
            const char *c1 = memchr(v, ':', (size_t)(e - v));
            const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
            mota_qemu_args.fault_pc = parse_num(v, e, 16);
            mota_qemu_args.fault_addr = c1 ? parse_num(c1 + 1, e, 16) : 0;
            mota_qemu_args.fault_cfsr = c2 ? parse_num(c2 + 1, e, 16) : 0;
        }
        w = *e ? e + 1 : e;
        *e = 0; /* terminate the value in place */
    }
    return MOTA_OK;
}

/* ---- the log: the semihosting console (QEMU's stderr, which the launcher reads) ---- */

void mota_board_log(const char *s)
{
    semihost(SH_WRITE0, s);
}


/* ---- the last words before a reset ---- */
static void put_hex(char *p, uint32_t v)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 8; i++)
        p[i] = hex[(v >> (28 - 4 * i)) & 0xF];
}

void mota_qemu_reset(const char *cause, uint32_t pc, uint32_t addr, uint32_t cfsr)
{
    /* "mota-BOARD: reset CAUSE pc=XXXXXXXX addr=XXXXXXXX cfsr=XXXXXXXX" */
    char line[96] = MOTA_BOARD_TAG "reset ";
    size_t n = strlen(line), c = strlen(cause);
    memcpy(line + n, cause, c);
    n += c;
    memcpy(line + n, " pc=", 4);
    put_hex(line + n + 4, pc);
    memcpy(line + n + 12, " addr=", 6);
    put_hex(line + n + 18, addr);
    memcpy(line + n + 26, " cfsr=", 6);
    put_hex(line + n + 32, cfsr);
    line[n + 40] = '\n';
    line[n + 41] = 0;
    mota_board_log(line);
    __asm__ volatile("dsb");
    *(volatile uint32_t *)0xE000ED0Cu = 0x05FA0004u; /* AIRCR: SYSRESETREQ */
    __asm__ volatile("dsb");
    for (;;)
        __asm__ volatile("wfi");
}
