/* SPDX-License-Identifier: Apache-2.0 */
/* A gateway's MCUs (/etc/mota/gateway.conf, docs/fleet.md): one per line, NAME PORT [options]. */
#ifndef MOTA_TOOL_GATEWAY_H
#define MOTA_TOOL_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GW_MAX_MCUS 64
#define GW_NAME_MAX 32
#define GW_DEFAULT_PATH "/etc/mota/gateway.conf"

struct gw_mcu {
    char name[GW_NAME_MAX + 1];
    char port[256];
    unsigned baud;
    double timeout_s; /* each wait for the device (mota push --timeout); default 60 */
    unsigned retries; /* a busy, silent or absent device is tried again this many times; default 3 */
    uint8_t id[16];   /* --id: the device id (mota status) this port must answer with */
    size_t id_len;    /* 0: any */
};

struct gateway {
    char path[512];
    struct gw_mcu mcu[GW_MAX_MCUS];
    unsigned n;
};

/* An MCU name: 1..GW_NAME_MAX letters, digits, '-' or '_' (it is a part of inventory keys and provides,
 * where '.' separates). */
bool gateway_name_ok(const char *s);
/* The configuration's path: $MOTA_GATEWAY_CONF, else GW_DEFAULT_PATH. */
const char *gateway_path(void);
/* Read and check the whole file: MOTA_OK, or a reason with "PATH:LINE: what" in why. */
int gateway_load(const char *path, struct gateway *g, char *why, size_t cap);
/* The same from an open stream, path naming it in why (the fuzz target reads memory). */
int gateway_read(FILE *f, const char *path, struct gateway *g, char *why, size_t cap);

#endif
