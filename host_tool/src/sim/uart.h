/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The simulated device's receiver, as a UART's RX interrupt or DMA is: bytes arrive at the line rate
 * whatever the agent is doing (erasing, programming, hashing) and go into a ring of the board's size;
 * a full ring loses what arrives (an overrun), and so does a part whose flash stalls the CPU while
 * it is busy (a single-bank STM32: no interrupt handler runs from flash then). The agent reads the
 * ring through struct mota_transport. Ring sizing and the link's flow control are tested so.
 */
#ifndef MOTA_SIM_UART_H
#define MOTA_SIM_UART_H

#include "mota/posix_transport.h" /* struct mota_transport, as the posix port has it */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct sim_uart {
    const struct mota_transport *line; /* where the bytes come from (read by the receiver thread only) */
    double bytes_per_s;                /* the line rate (0: as fast as they come) */
    const int *stall;                  /* non-zero while received bytes are lost (the flash busy; read atomically) */
    uint8_t *ring;
    uint32_t cap, head, fill;
    int line_err; /* the line's error once it ended (MOTA_ERR_TRANSPORT), 0 while it is up */
    bool running, stop;
    uint64_t received, lost_overrun, lost_stalled;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* A receiver with a ring of cap bytes on line; it starts with the first read. MOTA_OK or MOTA_ERR_NOSPC. */
int sim_uart_init(struct sim_uart *u, const struct mota_transport *line, uint32_t cap, double bytes_per_s,
                  const int *stall);
/* The device's side: bytes from the ring within timeout_ms (0: none yet), or the line's error once the
 * ring is empty and the line has ended. */
int sim_uart_read(struct sim_uart *u, uint8_t *buf, size_t len, uint32_t timeout_ms);
/* The line is gone (a client left): the receiver stops, the ring is emptied; the next read starts again. */
void sim_uart_reset(struct sim_uart *u);
void sim_uart_close(struct sim_uart *u);

#endif
