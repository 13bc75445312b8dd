/* SPDX-License-Identifier: Apache-2.0 */
#ifndef MOTA_TEST_BOARD_H
#define MOTA_TEST_BOARD_H

#include <stddef.h>
#include <stdint.h>

void uart_putc(char c);
void uart_puts(const char *s);
void uart_hex(uint32_t v);
void uart_dec(uint32_t v);
void uart_int(int32_t v);
void board_exit(int code) __attribute__((noreturn));
void ticks_start(void);
uint64_t ticks_now(void);

/* for the vector tests: n bytes from hex; one "ok"/"FAIL" line per check, the failures counted */
void unhex(const char *h, uint8_t *out, size_t n);
void check(const char *what, int got, int want);
extern unsigned check_failures;

#endif
