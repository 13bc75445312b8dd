/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the host-side link commands share: their options, reaching the device (devlink.c, link_), running a model
 * on it (cmd_invoke.c), the ports that look like one (cmd_ports.c); and reading what it reports (devinfo.h).
 */
#ifndef MOTA_TOOL_DEVLINK_H
#define MOTA_TOOL_DEVLINK_H

#include "client.h"
#include "devinfo.h"
#include "mota/loader.h"
#include "mota/proto_keys.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct link_opts {
    const char *port;
    unsigned baud;
    bool json, quiet, confirm;
    bool reinstall; /* push: install even the container the device runs already */
    double timeout_s;
    const char *model;
    const char *expect_digest; /* confirm, rollback: the manifest digest (64 hex digits) they are about */
    const char *input, *output;
    uint64_t out_size;
    double wait_s; /* status --wait S: how long to keep trying to reach the device; 0: one attempt */
};

#define LINK_EXITS                                                                                                     \
    "--timeout S bounds every wait for the device (default 10).\n"                                                     \
    "Exit codes: 0 done; 1 refused by the device and 2 usage: final (the same command\n"                               \
    "gets the same answer); 3 port unusable: final for a path that is no port, may be\n"                               \
    "transient (a USB port re-enumerating); 5 device busy and 6 timed out: transient\n"                                \
    "(try again; a push resumes).\n"

/* What every link command's --help adds: PORT may be left out. */
#define LINK_PORT_HELP                                                                                                 \
    "PORT may be left out: then $MOTA_PORT, else the one port `mota ports` finds that looks\n"                         \
    "like a device (said on stderr); none or several: a usage error naming them.\n"

/* The ports `mota ports` finds that look like a device, by the name it gives them (the stable
 * /dev/serial/by-id one when there is one): the first cap into names; how many there are. */
size_t ports_devices(char (*names)[PATH_MAX], size_t cap);
/* The port a link command uses when its command line gives none: $MOTA_PORT, else the one device
 * ports_devices finds (said on stderr). EXIT_OK with *port set, else a usage error already printed. */
int link_default_port(const char *cmd, const char **port);

/* Options a link command takes besides --baud and --timeout. */
enum {
    LO_JSON = 1,
    LO_QUIET = 2,
    LO_MODEL = 4,
    LO_CONFIRM = 8,
    LO_INVOKE = 16,
    LO_EXPECT = 32,
    LO_WAIT = 64,
    LO_REINSTALL = 128
};
int link_args(int argc, char **argv, struct link_opts *o, const char *cmd, unsigned allowed, const char *usage,
              bool want_container, const char **container, double default_timeout);
int link_connect(struct client *c, const struct link_opts *o, double deadline, bool first, const uint8_t **info,
                 size_t *info_len);
/* link_connect, tried again for up to o->wait_s seconds (status --wait) while the device cannot be reached
 * or is busy: the first success, or the last attempt's failure. */
int link_connect_waiting(struct client *c, const struct link_opts *o, const uint8_t **info, size_t *info_len);
int link_exit(int ret);
/* Run model idx on the device: one INVOKE when input and output fit a frame, else through its I/O buffer
 * (io_buffer: HELLO key 12). out gets out_size bytes. *status is the device's verdict, detail its words
 * (a guarding port's "where") or why the sizes do not fit; the return value is the link's. */
int dev_invoke(struct client *c, uint64_t io_buffer, unsigned idx, const uint8_t *in, size_t in_len, uint8_t *out,
               size_t out_size, double timeout_s, uint32_t *us, int *status, char *detail, size_t cap);
void link_fail(int ret, const struct client *c, const struct link_opts *o);

#endif
