/* SPDX-License-Identifier: Apache-2.0 */
/* A UART's receive ring read as the update link's transport (mota/arm.h, struct mota_arm_rx): the same on
 * every family, whatever its UART. */
#include "mota/arm.h"

int mota_arm_rx_read(struct mota_arm_rx *rx, uint8_t *buf, size_t len, uint32_t timeout_ms)
{
    uint64_t deadline = mota_arm_now_us(NULL) + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        __asm__ volatile("cpsid i" ::: "memory");
        rx->drain(rx);
        uint32_t avail = rx->head - rx->tail;
        if (avail == 0 && mota_arm_now_us(NULL) < deadline) {
            /* a pending interrupt ends the WFI even with PRIMASK set: no lost wake-up */
            __asm__ volatile("wfi");
            __asm__ volatile("cpsie i" ::: "memory");
            continue;
        }
        __asm__ volatile("cpsie i" ::: "memory");
        size_t n = avail < len ? avail : len;
        for (size_t i = 0; i < n; i++)
            buf[i] = rx->buf[(rx->tail + i) & (rx->size - 1u)];
        rx->tail += (uint32_t)n;
        return (int)n;
    }
}
