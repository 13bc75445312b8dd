/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The flash interface as every STM32 has it, whatever its registers' offsets and bits (F4, U5, and one
 * per bank on an H7): the key sequence that clears LOCK, the busy flags waited for with a bound, the
 * error flags taken and cleared by writing them. The part's drivers (flash_f4.c, flash_u5.c) describe
 * their registers with a struct stm32_flash_if; every access goes through stm32_io.h.
 */
#ifndef MOTA_STM32_FLASH_IF_H
#define MOTA_STM32_FLASH_IF_H

#include <stddef.h>
#include <stdint.h>

struct stm32_flash_if {
    uint32_t keyr, sr, cr;         /* the registers' addresses */
    uint32_t ccr;                  /* where SR's flags are cleared by writing them: the H7's CCRx; 0: SR itself */
    uint32_t busy;                 /* SR: an operation runs (BSY; the U5's WDW; the H7's QW and WBNE) */
    uint32_t errors, eop;          /* SR: every error flag of the part; end of operation */
    uint32_t lock;                 /* CR: LOCK */
    uint64_t (*now_us)(void *ctx); /* the bound of every wait: twice the part's longest time, and 1 ms */
    void *clock_ctx;
};

/* Ready for a new operation: not busy (MOTA_ERR_TIMEOUT), the flags of an earlier one (or of a boot cut
 * short) cleared, for the part refuses an operation while one is set, and the interface unlocked by the
 * key sequence (MOTA_ERR_FLASH_IO if LOCK stays: a wrong sequence locks it until the next reset). */
int stm32_flash_begin(const struct stm32_flash_if *f, uint32_t limit_us);
/* The operation just started has ended (MOTA_ERR_TIMEOUT if the part stays busy) without an error flag
 * (MOTA_ERR_FLASH_IO); the flags it set are cleared. */
int stm32_flash_done(const struct stm32_flash_if *f, uint32_t limit_us);
/* The operation's bits off and the interface locked again, in one write of CR, whatever happened. */
void stm32_flash_end(const struct stm32_flash_if *f);

/* The CPU's read of len bytes of the array at the CPU address at, through the part's ECC check (ctx: the
 * driver's configuration): MOTA_OK, or MOTA_ERR_FLASH_ECC where a unit is torn. */
typedef int (*stm32_flash_copy_fn)(const void *ctx, void *dst, uint32_t at, size_t len);
/* [at, at + len) read through copy, a few bytes at a time (the stack), against want, or against the erased
 * 0xFF where want is NULL (a unit takes one program per erase: the parts with ECC check before a program).
 * MOTA_OK; where a byte differs, MOTA_ERR_FLASH_NOT_ERASED (want NULL) or MOTA_ERR_FLASH_IO (a read back:
 * a torn or worn unit, copy's error included, is one too); else copy's error. */
int stm32_flash_compare(stm32_flash_copy_fn copy, const void *ctx, uint32_t at, const uint8_t *want, size_t len);

#endif
