/* SPDX-License-Identifier: Apache-2.0 */
/* The module's part of a Mender payload's meta-data (DIR/header/meta-data, JSON): "mota_mcus", the MCUs
 * `mota mender-artifact --mcu` named; "mota_delta_from", the manifest digest of the container its deltas
 * are from (--delta-from). */
#ifndef MOTA_TOOL_METADATA_H
#define MOTA_TOOL_METADATA_H

#include "gateway.h"

#include <stdbool.h>
#include <stddef.h>

struct fleet_targets {
    bool present; /* the object has "mota_mcus": only those MCUs may receive the containers */
    char name[GW_MAX_MCUS][GW_NAME_MAX + 1];
    unsigned n;
    char delta_from[65]; /* hex, lower case; "" when the artifact has no delta */
    bool has_from_seq;   /* "mota_delta_from_seq": its sequence number (a device may run it from another container) */
    uint64_t from_seq;
};

/* The whole document must be one JSON object (or empty, or null: no meta-data); its top-level "mota_mcus", when present, an array of MCU
 * names as gateway.conf allows them; "mota_delta_from", a SHA-256 in hex; "mota_delta_from_seq", a number. MOTA_OK, or MOTA_ERR_ARG with why. */
int fleet_meta_targets(const char *json, size_t len, struct fleet_targets *t, char *why, size_t cap);

#endif
