/* SPDX-License-Identifier: Apache-2.0 */
/* The simulated UART receiver: the line's bytes into a ring at the line rate, on a thread of its own. */
#include "uart.h"

#include "common/util.h"

#include "mota/err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK 16u /* bytes taken from the line at a time: 0.17 ms at 921,600 baud */

static void sleep_until(double t)
{
    double now = tool_now();
    if (t <= now)
        return;
    struct timespec ts = {(time_t)(t - now), (long)(((t - now) - (double)(time_t)(t - now)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* n bytes that arrived: into the ring, or lost (a stalled CPU, a full ring). */
static void arrive(struct sim_uart *u, const uint8_t *b, uint32_t n, bool stalled)
{
    pthread_mutex_lock(&u->mu);
    u->received += n;
    for (uint32_t i = 0; i < n; i++) {
        if (stalled)
            u->lost_stalled++;
        else if (u->fill == u->cap)
            u->lost_overrun++;
        else
            u->ring[(u->head + u->fill++) % u->cap] = b[i];
    }
    pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
}

static void *receiver(void *arg)
{
    struct sim_uart *u = arg;
    uint8_t b[CHUNK];
    double free_at = 0;
    for (;;) {
        pthread_mutex_lock(&u->mu);
        bool stop = u->stop;
        pthread_mutex_unlock(&u->mu);
        if (stop)
            break;
        int n = u->line->read(u->line->ctx, b, sizeof(b), 20);
        if (n < 0) {
            pthread_mutex_lock(&u->mu);
            u->line_err = n;
            pthread_cond_broadcast(&u->cv);
            pthread_mutex_unlock(&u->mu);
            break;
        }
        if (n == 0)
            continue;
        /* the bytes take their time on the wire from when the line was free; the CPU must be able to take
         * them as they come (a stall at either end of that time loses them) */
        bool stalled = u->stall != NULL && __atomic_load_n(u->stall, __ATOMIC_ACQUIRE) != 0;
        if (u->bytes_per_s > 0) {
            /* back to back unless the line was idle a while: a sleep's overshoot is not idle line */
            double now = tool_now();
            free_at = (free_at < now - 0.002 ? now : free_at) + n / u->bytes_per_s;
            sleep_until(free_at);
        }
        stalled |= u->stall != NULL && __atomic_load_n(u->stall, __ATOMIC_ACQUIRE) != 0;
        arrive(u, b, (uint32_t)n, stalled);
    }
    return NULL;
}

int sim_uart_init(struct sim_uart *u, const struct mota_transport *line, uint32_t cap, double bytes_per_s,
                  const int *stall)
{
    memset(u, 0, sizeof(*u));
    if (cap == 0 || (u->ring = malloc(cap)) == NULL)
        return MOTA_ERR_NOSPC;
    u->cap = cap;
    u->line = line;
    u->bytes_per_s = bytes_per_s;
    u->stall = stall;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* timeouts immune to the wall clock being set */
    pthread_mutex_init(&u->mu, NULL);
    pthread_cond_init(&u->cv, &ca);
    pthread_condattr_destroy(&ca);
    return MOTA_OK;
}

int sim_uart_read(struct sim_uart *u, uint8_t *buf, size_t len, uint32_t timeout_ms)
{
    if (!u->running) {
        u->stop = false;
        u->line_err = 0;
        if (pthread_create(&u->th, NULL, receiver, u) != 0)
            return MOTA_ERR_TRANSPORT;
        u->running = true;
    }
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000u;
    until.tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&u->mu);
    while (u->fill == 0 && u->line_err == 0 && pthread_cond_timedwait(&u->cv, &u->mu, &until) == 0) {
    }
    size_t n = 0;
    while (n < len && u->fill > 0) {
        buf[n++] = u->ring[u->head];
        u->head = (u->head + 1) % u->cap;
        u->fill--;
    }
    int err = u->line_err;
    pthread_mutex_unlock(&u->mu);
    if (n > 0)
        return (int)n;
    if (err != 0)
        sim_uart_reset(u);
    return err;
}

void sim_uart_reset(struct sim_uart *u)
{
    if (u->running) {
        pthread_mutex_lock(&u->mu);
        u->stop = true;
        pthread_mutex_unlock(&u->mu);
        pthread_join(u->th, NULL);
        u->running = false;
    }
    u->head = u->fill = 0;
}

void sim_uart_close(struct sim_uart *u)
{
    sim_uart_reset(u);
    pthread_mutex_destroy(&u->mu);
    pthread_cond_destroy(&u->cv);
    free(u->ring);
    u->ring = NULL;
}
