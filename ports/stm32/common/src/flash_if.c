/* SPDX-License-Identifier: Apache-2.0 */
/* The flash interface every STM32 shares (flash_if.h): unlock, bounded waits, error flags. */
#include "flash_if.h"

#include "mota/err.h"
#include "stm32_io.h"

#define KEY1 0x45670123u
#define KEY2 0xCDEF89ABu

/* not busy within limit_us; MOTA_ERR_TIMEOUT if the interface stays busy (a part that never ends its
 * operation is not waited for forever) */
static int wait_ready(const struct stm32_flash_if *f, uint32_t limit_us)
{
    uint64_t end = f->now_us(f->clock_ctx) + (uint64_t)limit_us * 2u + 1000u;
    while (mota_stm32_io_read32(f->sr) & f->busy) {
        if (f->now_us(f->clock_ctx) > end)
            return MOTA_ERR_TIMEOUT;
    }
    return MOTA_OK;
}

/* The flags of the operation just done: cleared (write one, to SR or its CCR), MOTA_ERR_FLASH_IO if any
 * error was set. */
static int take_errors(const struct stm32_flash_if *f)
{
    uint32_t sr = mota_stm32_io_read32(f->sr);
    if (sr & (f->errors | f->eop))
        mota_stm32_io_write32(f->ccr != 0 ? f->ccr : f->sr, sr & (f->errors | f->eop));
    return (sr & f->errors) ? MOTA_ERR_FLASH_IO : MOTA_OK;
}

int stm32_flash_begin(const struct stm32_flash_if *f, uint32_t limit_us)
{
    int ret = wait_ready(f, limit_us);
    if (ret != MOTA_OK)
        return ret;
    (void)take_errors(f); /* not this operation's */
    if (mota_stm32_io_read32(f->cr) & f->lock) {
        mota_stm32_io_write32(f->keyr, KEY1);
        mota_stm32_io_write32(f->keyr, KEY2);
        if (mota_stm32_io_read32(f->cr) & f->lock)
            return MOTA_ERR_FLASH_IO;
    }
    return MOTA_OK;
}

int stm32_flash_done(const struct stm32_flash_if *f, uint32_t limit_us)
{
    int ret = wait_ready(f, limit_us);
    return ret == MOTA_OK ? take_errors(f) : ret;
}

void stm32_flash_end(const struct stm32_flash_if *f)
{
    mota_stm32_io_write32(f->cr, f->lock);
}

#define CHUNK 64u /* bytes compared at a time (stack) */

int stm32_flash_compare(stm32_flash_copy_fn copy, const void *ctx, uint32_t at, const uint8_t *want, size_t len)
{
    uint8_t now[CHUNK];
    for (size_t i = 0; i < len; i += CHUNK) {
        size_t n = len - i < CHUNK ? len - i : CHUNK;
        int ret = copy(ctx, now, at + (uint32_t)i, n);
        if (ret != MOTA_OK)
            return want != NULL ? MOTA_ERR_FLASH_IO : ret;
        for (size_t k = 0; k < n; k++)
            if (now[k] != (want != NULL ? want[i + k] : 0xFFu))
                return want != NULL ? MOTA_ERR_FLASH_IO : MOTA_ERR_FLASH_NOT_ERASED;
    }
    return MOTA_OK;
}
