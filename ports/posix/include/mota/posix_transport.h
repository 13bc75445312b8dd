/* SPDX-License-Identifier: Apache-2.0 */
/*
 * posix port: byte-stream transports over file descriptors, for the
 * simulated device and the host tool: stdio, a TCP listener or client, and
 * a pseudo-terminal whose slave path a serial client can open.
 */
#ifndef MOTA_POSIX_TRANSPORT_H
#define MOTA_POSIX_TRANSPORT_H

#include "mota/port.h"

#include <stdint.h>

struct mota_posix_transport {
    int rfd, wfd;
    int listen_fd;      /* TCP server: accepts the next client when the current one closes */
    char pty_path[128]; /* pty: the slave device path */
};

/* stdin/stdout. */
int mota_posix_transport_stdio(struct mota_posix_transport *t);
/* TCP server on host:port (port 0: any; the chosen one is returned in *port); waits for a client. */
int mota_posix_transport_tcp_listen(struct mota_posix_transport *t, const char *host, uint16_t *port);
int mota_posix_transport_tcp_accept(struct mota_posix_transport *t, int timeout_ms);
/* TCP client: connected within timeout_ms, or MOTA_ERR_TIMEOUT / MOTA_ERR_TRANSPORT with errno saying why. */
int mota_posix_transport_tcp_connect(struct mota_posix_transport *t, const char *host, uint16_t port, int timeout_ms);
/* A new pseudo-terminal in raw mode; pty_path names its slave side. */
int mota_posix_transport_pty(struct mota_posix_transport *t);
/* An already open descriptor pair (serial port, socketpair...). */
void mota_posix_transport_fds(struct mota_posix_transport *t, int rfd, int wfd);
void mota_posix_transport_close(struct mota_posix_transport *t);

/* The struct mota_transport view (read with a timeout, write all). */
void mota_posix_transport_hal(struct mota_posix_transport *t, struct mota_transport *hal);

#endif
