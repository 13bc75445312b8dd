/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: what a gateway reads from files others write: gateway.conf (host_tool/src/fleet/
 * gateway.c) and a Mender payload's meta-data (metadata.c). Input: the first byte picks the parser (bit 0),
 * the rest is the file. Every accepted configuration is checked against the rules it must hold. */
#include "fleet/gateway.h"
#include "fleet/metadata.h"

#include "mota/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct gateway *g)
{
    for (unsigned i = 0; i < g->n; i++) {
        if (!gateway_name_ok(g->mcu[i].name) || g->mcu[i].port[0] == '\0' || g->mcu[i].id_len > 16)
            abort();
        for (unsigned j = 0; j < i; j++)
            if (strcmp(g->mcu[i].name, g->mcu[j].name) == 0 || strcmp(g->mcu[i].port, g->mcu[j].port) == 0)
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct gateway g;
    static struct fleet_targets t;
    char why[1400];
    if (size == 0)
        return 0;
    if (data[0] & 1) {
        if (fleet_meta_targets((const char *)data + 1, size - 1, &t, why, sizeof(why)) == MOTA_OK)
            for (unsigned i = 0; i < t.n; i++)
                if (!t.present || !gateway_name_ok(t.name[i]))
                    abort();
        return 0;
    }
    FILE *f = fmemopen((void *)(data + 1), size - 1 > 0 ? size - 1 : 1, "r");
    if (f == NULL)
        return 0;
    if (gateway_read(f, "fuzz.conf", &g, why, sizeof(why)) == MOTA_OK)
        check(&g);
    fclose(f);
    return 0;
}
