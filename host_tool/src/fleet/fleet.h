/* SPDX-License-Identifier: Apache-2.0 */
/* What the gateway commands share (mender-module, mender-inventory): the containers of a deployment,
 * reaching each configured MCU, running a link command against it in this process, and one process per
 * MCU so that pushes to different ports run side by side. */
#ifndef MOTA_TOOL_FLEET_H
#define MOTA_TOOL_FLEET_H

#include "gateway.h"
#include "link/devlink.h"

#include "mota/container.h"

#include <stdbool.h>
#include <stdint.h>

#define FLEET_MAX_CONTAINERS 8

/* One container of a deployment, checked (structure and digests) before any MCU is touched. */
struct fleet_container {
    char path[1024];
    const char *file; /* its name, in path */
    struct mota_verify_result vr;
    char digest[65]; /* the manifest digest, hex: what confirm and rollback are about */
    uint8_t vendor[16], klass[16];
    bool has_vendor, has_class;
    char model[65]; /* the model pair it replaces (c_name) */
    char version[65];
    uint64_t seq;
};

/* What an MCU said to HELLO. */
struct fleet_probe {
    bool has_identity;
    uint8_t vendor[16], klass[16];
    bool has_id;
    uint8_t id[16];
    size_t id_len;
    char name[65];
    bool has_cause;
    uint64_t cause; /* why it last booted: 0 power-on, 1 software reset, 2 watchdog, 3 fault */
    struct dev_model models[DEV_MAX_MODELS];
    unsigned n_models;
};

/* One container file, mapped for the process's life and checked: MOTA_OK or the refusal (why says it). */
int fleet_load_container(struct fleet_container *c, const char *path, char *why, size_t cap);
/* Every regular file of dir, checked, in name order: MOTA_OK or the first refusal (why says which). */
int fleet_load_containers(const char *dir, struct fleet_container *c, unsigned *n, char *why, size_t cap);
/* A delta container: a component of it is a delta (mota-directive-patch) from the model an MCU runs. */
bool fleet_is_delta(const struct fleet_container *c);
/* For each delta of c[0..n), the full container of the same result (model, identity, sequence number, every
 * image's digest) in partner[] (its index; -1 for a full container and for one no delta goes with).
 * MOTA_OK, or MOTA_ERR_ARG with why: a delta without its full container would leave every MCU that does not
 * run its source without the update. */
int fleet_pair_deltas(const struct fleet_container *c, unsigned n, int *partner, char *why, size_t cap);

/* The MCU's HELLO, tried again while it is busy, silent or absent (m->retries, backing off): MOTA_OK or
 * the last link error, why saying what happened. */
int fleet_probe(const struct gw_mcu *m, struct fleet_probe *p, char *why, size_t cap);
/* The container is meant for this MCU: its vendor and class, and a model pair of its name. */
bool fleet_matches(const struct fleet_container *c, const struct fleet_probe *p);
/* The model of c's name as the MCU has it; NULL when it has none. */
const struct dev_model *fleet_model(const struct fleet_probe *p, const char *name);
/* `mota CMD [--baud N] [--timeout S] -q [extra...] PORT [container]` in this process (push, confirm,
 * rollback, reboot), tried again after a transient answer (busy, timed out, port absent) as fleet_probe does.
 * Returns the exit code; *reason the last failure's reason code (0 on success). */
int fleet_run(const struct gw_mcu *m, const char *cmd, const char *const *extra, const char *container, int *reason);
/* fn(i, ctx) for each i < n, each in its own process, all at once; true when every one returned 0. */
bool fleet_each(unsigned n, int (*fn)(unsigned i, void *ctx), void *ctx);
/* stderr: "mota: NAME: what" (one line per MCU and step, the gateway's log). */
void fleet_log(const struct gw_mcu *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
