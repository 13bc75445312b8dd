/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One client at a time for the simulators' TCP endpoint (mota sim, and the
 * QEMU board launcher): a device behind a UART has one host, and a
 * simulator shared by CI jobs must never wedge. A client that says nothing
 * for the idle timeout loses the link; a client that connects while
 * another holds it gets MOTA_ERR_BUSY as the answer to its first request,
 * then the connection is closed.
 */
#ifndef MOTA_TOOL_GATE_H
#define MOTA_TOOL_GATE_H

#include "mota/proto.h"

#include <stdbool.h>
#include <stdint.h>

#define GATE_WAITING 4    /* refused connections served at once; a fifth replaces the oldest */
#define GATE_ANSWER_S 2.0 /* a refused client that sends no request within this is closed */

struct gate_refused {
    int fd;
    double since;
    struct mota_deframer df;
    uint8_t buf[MOTA_PROTO_ENCODED_MAX(64)]; /* HELLO and STATUS requests are a few bytes */
};

struct gate {
    double idle_s;    /* 0: never drop an idle client */
    double active;    /* when the current client last sent or received a byte */
    double connected; /* when the current client connected */
    struct gate_refused refused[GATE_WAITING];
    unsigned busy_answers;
};

void gate_init(struct gate *g, double idle_s);
/* The current client connected / was heard from (either direction). */
void gate_connected(struct gate *g);
void gate_activity(struct gate *g);
/* true when the current client has been silent past the idle timeout */
bool gate_idle(const struct gate *g);
/* A connection accepted while another client holds the device: answered busy. */
void gate_refuse(struct gate *g, int fd);
/* Serve the refused connections without blocking: call often. */
void gate_poll(struct gate *g);
void gate_close(struct gate *g);

#endif
