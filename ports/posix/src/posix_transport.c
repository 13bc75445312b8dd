/* SPDX-License-Identifier: Apache-2.0 */
/* fd-based transports: stdio, TCP, pty. */
#define _GNU_SOURCE
#include "mota/posix_transport.h"

#include "mota/err.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

static void reset(struct mota_posix_transport *t)
{
    memset(t, 0, sizeof(*t));
    t->rfd = t->wfd = t->listen_fd = -1;
}

void mota_posix_transport_fds(struct mota_posix_transport *t, int rfd, int wfd)
{
    reset(t);
    t->rfd = rfd;
    t->wfd = wfd;
}

int mota_posix_transport_stdio(struct mota_posix_transport *t)
{
    mota_posix_transport_fds(t, STDIN_FILENO, STDOUT_FILENO);
    return MOTA_OK;
}

static int resolve(const char *host, uint16_t port, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons(port);
    if (inet_pton(AF_INET, host, &sa->sin_addr) == 1)
        return MOTA_OK;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL)
        return MOTA_ERR_TRANSPORT;
    sa->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    return MOTA_OK;
}

int mota_posix_transport_tcp_listen(struct mota_posix_transport *t, const char *host, uint16_t *port)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    int one = 1;
    reset(t);
    if (resolve(host, *port, &sa) != MOTA_OK)
        return MOTA_ERR_TRANSPORT;
    t->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0); /* accept never blocks */
    if (t->listen_fd < 0)
        return MOTA_ERR_TRANSPORT;
    setsockopt(t->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(t->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(t->listen_fd, 16) != 0 ||
        getsockname(t->listen_fd, (struct sockaddr *)&sa, &sl) != 0) {
        close(t->listen_fd);
        t->listen_fd = -1;
        return MOTA_ERR_TRANSPORT;
    }
    *port = ntohs(sa.sin_port);
    return MOTA_OK;
}

int mota_posix_transport_tcp_accept(struct mota_posix_transport *t, int timeout_ms)
{
    struct pollfd p = {.fd = t->listen_fd, .events = POLLIN};
    int one = 1;
    if (t->listen_fd < 0)
        return MOTA_ERR_TRANSPORT;
    if (t->rfd >= 0) {
        close(t->rfd);
        t->rfd = t->wfd = -1;
    }
    int r = poll(&p, 1, timeout_ms);
    if (r == 0 || (r < 0 && errno == EINTR))
        return MOTA_ERR_TIMEOUT;
    if (r < 0)
        return MOTA_ERR_TRANSPORT;
    /* non-blocking: a client that stops reading cannot hold a write forever (tr_write gives up) */
    int fd = accept4(t->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) /* the client left before we took it, a signal: try again later */
        return errno == EINTR || errno == EAGAIN || errno == ECONNABORTED || errno == EPROTO ? MOTA_ERR_TIMEOUT
                                                                                             : MOTA_ERR_TRANSPORT;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    t->rfd = t->wfd = fd;
    return MOTA_OK;
}

int mota_posix_transport_tcp_connect(struct mota_posix_transport *t, const char *host, uint16_t port, int timeout_ms)
{
    struct sockaddr_in sa;
    int one = 1, err = 0;
    socklen_t el = sizeof(err);
    reset(t);
    if (resolve(host, port, &sa) != MOTA_OK) {
        errno = EHOSTUNREACH;
        return MOTA_ERR_TRANSPORT;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return MOTA_ERR_TRANSPORT;
    /* non-blocking, so a listener whose backlog is full cannot hold us for the kernel's two minutes */
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int r = errno == EINPROGRESS ? poll(&p, 1, timeout_ms) : -1;
        if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) {
            int saved = r == 0 ? ETIMEDOUT : err ? err : errno;
            close(fd);
            errno = saved;
            return r == 0 ? MOTA_ERR_TIMEOUT : MOTA_ERR_TRANSPORT;
        }
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    t->rfd = t->wfd = fd;
    return MOTA_OK;
}

int mota_posix_transport_pty(struct mota_posix_transport *t)
{
    struct termios tio;
    reset(t);
    int fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || grantpt(fd) != 0 || unlockpt(fd) != 0 || ptsname_r(fd, t->pty_path, sizeof(t->pty_path)) != 0) {
        if (fd >= 0)
            close(fd);
        return MOTA_ERR_TRANSPORT;
    }
    /* raw on the slave side too, so binary frames pass unchanged */
    int sfd = open(t->pty_path, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (sfd >= 0) {
        if (tcgetattr(sfd, &tio) == 0) {
            cfmakeraw(&tio);
            tcsetattr(sfd, TCSANOW, &tio);
        }
        close(sfd);
    }
    if (tcgetattr(fd, &tio) == 0) {
        cfmakeraw(&tio);
        tcsetattr(fd, TCSANOW, &tio);
    }
    t->rfd = t->wfd = fd;
    return MOTA_OK;
}

void mota_posix_transport_close(struct mota_posix_transport *t)
{
    if (t->rfd >= 0 && t->rfd > STDERR_FILENO)
        close(t->rfd);
    if (t->wfd >= 0 && t->wfd != t->rfd && t->wfd > STDERR_FILENO)
        close(t->wfd);
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    reset(t);
}

static int tr_read(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms)
{
    struct mota_posix_transport *t = ctx;
    struct pollfd p = {.fd = t->rfd, .events = POLLIN};
    if (t->rfd < 0)
        return MOTA_ERR_TRANSPORT;
    int r = poll(&p, 1, (int)timeout_ms);
    if (r == 0)
        return 0;
    if (r < 0)
        return errno == EINTR ? 0 : MOTA_ERR_TRANSPORT;
    ssize_t n = read(t->rfd, buf, len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0) /* closed (EIO on a pty whose other side went away) */
        return MOTA_ERR_TRANSPORT;
    return (int)n;
}

/* A peer that takes nothing for this long is gone (a non-blocking descriptor: an accepted TCP client). */
#define WRITE_STALL_MS 5000

static int tr_write(void *ctx, const uint8_t *buf, size_t len)
{
    struct mota_posix_transport *t = ctx;
    int stalled_ms = 0;
    while (len > 0) {
        ssize_t n = write(t->wfd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd p = {.fd = t->wfd, .events = POLLOUT};
            if (poll(&p, 1, 100) == 0 && (stalled_ms += 100) >= WRITE_STALL_MS)
                return MOTA_ERR_TRANSPORT;
            continue;
        }
        stalled_ms = 0;
        if (n <= 0)
            return MOTA_ERR_TRANSPORT;
        buf += n;
        len -= (size_t)n;
    }
    return MOTA_OK;
}

void mota_posix_transport_hal(struct mota_posix_transport *t, struct mota_transport *hal)
{
    hal->read = tr_read;
    hal->write = tr_write;
    hal->ctx = t;
}
