/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UART0 (CMSDK APB UART) behind struct mota_transport. Received
 * bytes go through the RX interrupt into a ring, so nothing is lost while
 * the agent erases, hashes or verifies a signature: the ring holds more
 * than the link's whole window (docs/porting.md). Transmit is polled.
 */
#include "mps.h"

#include "mota/err.h"

#define UART0 MOTA_MPS_UART0_BASE
#define UART_DATA REG(UART0 + 0x00u)
#define UART_STATE REG(UART0 + 0x04u)
#define UART_CTRL REG(UART0 + 0x08u)
#define UART_INTCLR REG(UART0 + 0x0Cu)
#define UART_BAUDDIV REG(UART0 + 0x10u)
#define STATE_TX_FULL 1u
#define STATE_RX_FULL 2u

#ifndef MOTA_MPS_RX_RING
#define MOTA_MPS_RX_RING 8192u /* a power of two, > the link window (12 frames of 512 bytes: board.cmake) */
#endif

_Static_assert((MOTA_MPS_RX_RING & (MOTA_MPS_RX_RING - 1u)) == 0, "the RX ring is a power of two");
static uint8_t ring[MOTA_MPS_RX_RING];
static void drain(struct mota_arm_rx *rx);
static struct mota_arm_rx rx = {.buf = ring, .size = MOTA_MPS_RX_RING, .drain = drain};

/* Move received bytes into the ring. The interrupt is cleared before the
 * DATA register is drained: a byte that arrives during the drain raises it
 * again, so none can sit unnoticed (QEMU would hold every later byte back). */
static void drain(struct mota_arm_rx *r)
{
    UART_INTCLR = 2u; /* RX interrupt */
    while (UART_STATE & STATE_RX_FULL)
        mota_arm_rx_put(r, (uint8_t)UART_DATA);
}

void mps_uart_rx_handler(void)
{
    drain(&rx);
}

static int uart_read(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms)
{
    (void)ctx;
    return mota_arm_rx_read(&rx, buf, len, timeout_ms);
}

static int uart_write(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    for (size_t i = 0; i < len; i++) {
        while (UART_STATE & STATE_TX_FULL)
            ;
        UART_DATA = buf[i];
    }
    return MOTA_OK;
}

#define UART_RX_IRQ_ENABLE(irq) NVIC_ISER((irq) / 32u) = 1u << ((irq) % 32u);

int mps_uart_init(struct mota_transport *t)
{
    UART_BAUDDIV = 16;        /* the smallest divider the CMSDK UART accepts */
    UART_CTRL = 1u | 2u | 8u; /* TX, RX, RX interrupt */
    (void)UART_DATA;          /* QEMU flushes bytes that arrived before RX was enabled on a DATA read */
    UART_INTCLR = 0xFu;
    MOTA_MPS_UART_RX_IRQS(UART_RX_IRQ_ENABLE)
    t->read = uart_read;
    t->write = uart_write;
    t->ctx = NULL;
    return MOTA_OK;
}
