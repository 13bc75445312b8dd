/*
 * Platform interfaces the device agent uses (and nothing else does): flash,
 * byte-stream transport, time, reset and an optional watchdog. Each is a
 * config struct of callbacks with an opaque context, littlefs style; zeroed
 * optional members mean "not provided". All callbacks return MOTA_OK (0) or
 * a negative enum mota_err code, unless stated otherwise.
 */
#ifndef MOTA_HAL_H
#define MOTA_HAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * NOR flash (one device or partition, offsets from its start).
 * - read: any offset and length inside the device.
 * - prog: off and len multiples of prog_size (len may cover several units:
 *   the port splits it at page boundaries); every byte programmed must be
 *   erased (erased_value) before: NOR bits only go from 1 to 0.
 * - erase: one sector; off a multiple of sector_size.
 * - map (optional): a pointer to memory-mapped (XIP-able) flash contents, and
 *   xip_base its CPU address; without it models install in COPY mode only.
 */
struct mota_flash {
    int (*read)(void *ctx, uint32_t off, void *buf, size_t len);
    int (*prog)(void *ctx, uint32_t off, const void *buf, size_t len);
    int (*erase)(void *ctx, uint32_t off);
    const uint8_t *(*map)(void *ctx, uint32_t off, size_t len);
    uint32_t xip_base;
    uint32_t size;
    uint32_t sector_size;
    uint32_t prog_size;
    uint8_t erased_value;
    void *ctx;
};

/*
 * Byte stream (UART, USB CDC, pty, TCP, stdio).
 * - read: up to len bytes, waiting at most timeout_ms; returns the count
 *   (0 on timeout) or a negative code (MOTA_ERR_TRANSPORT when closed).
 * - write: all len bytes; MOTA_OK or a negative code.
 */
struct mota_transport {
    int (*read)(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms);
    int (*write)(void *ctx, const uint8_t *buf, size_t len);
    void *ctx;
};

enum mota_reset_cause { MOTA_RESET_POWER_ON = 0, MOTA_RESET_SOFTWARE = 1, MOTA_RESET_WATCHDOG = 2 };

/* Time, reset and watchdog. */
struct mota_system {
    uint64_t (*now_us)(void *ctx);                 /* monotonic microseconds */
    void (*reset)(void *ctx);                      /* does not return on a device */
    enum mota_reset_cause (*reset_cause)(void *ctx); /* optional: why we booted */
    void (*watchdog_kick)(void *ctx);              /* optional */
    void *ctx;
};

#endif /* MOTA_HAL_H */
