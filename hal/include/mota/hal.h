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
 * - map: a pointer to the memory-mapped contents of [off, off+len), and
 *   xip_base its CPU address. Required: stored manifests are decoded in
 *   place and models execute in place (XIP) or are copied from there.
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
 * - write: all len bytes; MOTA_OK or a negative code. The buffer is the
 *   caller's again when write returns (the link reuses it for the next
 *   frame): a DMA or interrupt-driven port copies it or waits.
 */
struct mota_transport {
    int (*read)(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms);
    int (*write)(void *ctx, const uint8_t *buf, size_t len);
    void *ctx;
};

enum mota_reset_cause {
    MOTA_RESET_POWER_ON = 0,
    MOTA_RESET_SOFTWARE = 1, /* the firmware asked (a REBOOT request, the application) */
    MOTA_RESET_WATCHDOG = 2, /* the main loop stopped kicking */
    MOTA_RESET_FAULT = 3,    /* a CPU fault handler reset the device */
};

/*
 * Time, reset and watchdog. now_us, reset and reset_cause are required: a
 * model on trial is reverted after a watchdog or fault reset, which only a
 * port that reports the cause makes possible.
 * - now_us: monotonic microseconds since boot.
 * - reset: a system reset; does not return on a device (a host port may
 *   return, and the caller then boots again).
 * - reset_cause: why this boot happened (read once, at agent start).
 * - watchdog_kick (optional): the agent kicks between flash sectors, every
 *   4 KiB hashed and around a self-test; the main loop kicks every step.
 */
struct mota_system {
    uint64_t (*now_us)(void *ctx);
    void (*reset)(void *ctx);
    enum mota_reset_cause (*reset_cause)(void *ctx);
    void (*watchdog_kick)(void *ctx);
    void *ctx;
};

#endif /* MOTA_HAL_H */
