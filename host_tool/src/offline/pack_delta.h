/* SPDX-License-Identifier: Apache-2.0 */
/* mota pack --delta-from: the old container's images, and the new payloads as deltas from them (pack_delta.c). */
#ifndef MOTA_TOOL_PACK_DELTA_H
#define MOTA_TOOL_PACK_DELTA_H

#include "pack.h"

#include "common/files.h"

#include "mota/container.h"

#include <stddef.h>
#include <stdint.h>

struct pack_delta {
    const char *path;
    struct mapped old;
    size_t n; /* OLD's images, by role */
    enum mota_component_role role[MOTA_CONTAINER_MAX_COMPONENTS];
    uint8_t *img[MOTA_CONTAINER_MAX_COMPONENTS];
    size_t img_len[MOTA_CONTAINER_MAX_COMPONENTS];
    /* by the new container's component: regions, the delta payload, its size, the full payload's size */
    uint8_t *regions[MOTA_CONTAINER_MAX_COMPONENTS], *zbuf[MOTA_CONTAINER_MAX_COMPONENTS];
    size_t n_regions[MOTA_CONTAINER_MAX_COMPONENTS], delta[MOTA_CONTAINER_MAX_COMPONENTS];
    size_t full[MOTA_CONTAINER_MAX_COMPONENTS];
    size_t used; /* payloads sent as deltas */
};

/* OLD (path): its images, each component's, for a model of c_name. MOTA_OK, or the refusal said: not a
 * container, another model, a payload that is itself a delta or encrypted. */
int pack_delta_load(const char *path, const char *c_name, size_t c_name_len, struct pack_delta *d);

/* OLD's image of role (NULL: none), *len its size. */
const uint8_t *pack_delta_source(const struct pack_delta *d, enum mota_component_role role, size_t *len);

/* Each component that OLD has too: its delta, which replaces wire[i] (and spec's description of it) where it
 * is smaller than wire[i]. MOTA_OK or the failure said. */
int pack_delta_components(const struct pack_opts *o, struct pack_delta *d, struct mota_pack_spec *spec,
                          const struct mapped **src, struct mapped *wire);

void pack_delta_print(const struct pack_delta *d, const struct mota_pack_spec *spec);
void pack_delta_free(struct pack_delta *d);

#endif
