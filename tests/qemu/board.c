/* SPDX-License-Identifier: Apache-2.0 */
/* mps3-an547 board support for the test firmware: vectors, reset, UART0,
 * SysTick (instruction counts under -icount), semihosting exit. */
#include "board.h"

#include <stdint.h>
#include <string.h>

#define UART0 0x49303000u
#define REG(a) (*(volatile uint32_t *)(a))
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define SCB_CPACR REG(0xE000ED88u)
#define SCB_ICSR REG(0xE000ED04u)

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_top;
int main(void);
void reset_handler(void);
void fault_handler(void);
void systick_handler(void);

static volatile uint32_t systick_wraps;

__attribute__((section(".vectors"), used)) static const uintptr_t vectors[16] = {
    (uintptr_t)&__stack_top,
    (uintptr_t)reset_handler,
    (uintptr_t)fault_handler,
    (uintptr_t)fault_handler,
    (uintptr_t)fault_handler,
    (uintptr_t)fault_handler,
    (uintptr_t)fault_handler,
    0,
    0,
    0,
    0,
    (uintptr_t)fault_handler,
    0,
    0,
    (uintptr_t)fault_handler,
    (uintptr_t)systick_handler,
};

void reset_handler(void)
{
    SCB_CPACR |= 0xFu << 20; /* CP10, CP11: the FPU the models use */
    __asm__ volatile("dsb\n\tisb");
    memcpy(&__data_start, &__data_load, (size_t)((uint8_t *)&__data_end - (uint8_t *)&__data_start));
    memset(&__bss_start, 0, (size_t)((uint8_t *)&__bss_end - (uint8_t *)&__bss_start));
    REG(UART0 + 0x10) = 16; /* BAUDDIV */
    REG(UART0 + 0x08) = 1;  /* TX enable */
    board_exit(main());
}

void uart_putc(char c)
{
    while (REG(UART0 + 0x04) & 1)
        ;
    REG(UART0) = (uint32_t)(uint8_t)c;
}

void uart_puts(const char *s)
{
    while (*s)
        uart_putc(*s++);
}

void uart_hex(uint32_t v)
{
    static const char hex[] = "0123456789abcdef";
    uart_puts("0x");
    for (int i = 28; i >= 0; i -= 4)
        uart_putc(hex[(v >> i) & 0xf]);
}

void uart_dec(uint32_t v)
{
    char b[12];
    int n = 0;
    do {
        b[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        uart_putc(b[--n]);
}

void uart_int(int32_t v)
{
    if (v < 0) {
        uart_putc('-');
        uart_dec((uint32_t)(-(int64_t)v));
    } else {
        uart_dec((uint32_t)v);
    }
}

unsigned check_failures;

void unhex(const char *h, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t v = 0;
        for (int k = 0; k < 2; k++) {
            char c = h[2 * i + k];
            v = (uint8_t)(v << 4 | (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10));
        }
        out[i] = v;
    }
}

void check(const char *what, int got, int want)
{
    uart_puts(got == want ? "ok   " : "FAIL ");
    uart_puts(what);
    uart_puts(": ");
    uart_int(got);
    uart_puts("\n");
    check_failures += got != want;
}

static int semihost(int op, void *arg)
{
    register int r0 __asm__("r0") = op;
    register void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void board_exit(int code)
{
    uint32_t args[2] = {0x20026u /* ADP_Stopped_ApplicationExit */, (uint32_t)code};
    semihost(0x20 /* SYS_EXIT_EXTENDED */, args);
    for (;;)
        __asm__ volatile("wfi");
}

void fault_handler(void)
{
    uart_puts("\r\nFAULT: ICSR=");
    uart_hex(SCB_ICSR);
    uart_puts("\r\n");
    board_exit(99);
}

/* SysTick on the CPU clock: under -icount shift=0 one tick is 31.25
 * instructions (qemu-an547-notes.md 4); a full 24-bit period per wrap. */
void systick_handler(void)
{
    systick_wraps++;
}

void ticks_start(void)
{
    SYST_CSR = 0;
    SYST_RVR = 0x00FFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 5; /* CPU clock, enable; the first reading counts only after the reload */
    while (SYST_CVR == 0)
        ;
    SCB_ICSR = 1u << 25; /* PENDSTCLR */
    systick_wraps = 0;
    SYST_CSR = 7; /* and now with the wrap interrupt */
}

uint64_t ticks_now(void)
{
    uint32_t w1, v, w2;
    do {
        w1 = systick_wraps;
        v = SYST_CVR;
        w2 = systick_wraps;
    } while (w1 != w2);
    return (uint64_t)w1 * 0x1000000u + (0x00FFFFFFu - v);
}
