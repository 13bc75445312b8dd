/* SPDX-License-Identifier: Apache-2.0 */
/* mota mender-inventory: what each MCU of the gateway runs, as Mender inventory attributes (key=value
 * lines), for /usr/share/mender/inventory/mender-inventory-mota. */
#include "cmds.h"
#include "fleet.h"

#include "common/util.h"

#include "mota/err.h"

#include <stdio.h>
#include <string.h>

static const char inventory_usage[] =
    "usage: mota mender-inventory\n\n"
    "Mender inventory attributes for each MCU of $MOTA_GATEWAY_CONF (else " GW_DEFAULT_PATH "):\n"
    "  mota.NAME.reachable=yes|no, mota.NAME.device_id=HEX, and per model pair M:\n"
    "  mota.NAME.M.version, .seq, .state (confirmed, trial or none), .last_error.\n"
    "An MCU is asked once, for at most 5 s. Exit codes: 0 done (unreachable MCUs say so);\n"
    "1 the configuration is unusable.\n";

static void print_mcu(const struct gw_mcu *m, const struct fleet_probe *p)
{
    printf("mota.%s.reachable=yes\n", m->name);
    if (p->has_id) {
        printf("mota.%s.device_id=", m->name);
        tool_hex(stdout, p->id, p->id_len);
        putchar('\n');
    }
    for (unsigned k = 0; k < p->n_models; k++) {
        const struct dev_model *x = &p->models[k];
        printf("mota.%s.%s.version=%s\n", m->name, x->name, x->has ? x->version : "");
        printf("mota.%s.%s.seq=%llu\n", m->name, x->name, x->has ? (unsigned long long)x->seq : 0ull);
        printf("mota.%s.%s.state=%s\n", m->name, x->name, !x->has ? "none" : x->testing ? "trial" : "confirmed");
        const char *e = mota_err_name(x->last_error);
        printf("mota.%s.%s.last_error=%s\n", m->name, x->name, e ? e : "UNKNOWN");
    }
}

int cmd_mender_inventory(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(inventory_usage, stdout);
        return EXIT_OK;
    }
    if (argc != 1)
        return tool_usage_err("mender-inventory", "takes no argument");
    static struct gateway gw;
    char why[700];
    int ret = gateway_load(gateway_path(), &gw, why, sizeof(why));
    if (ret != MOTA_OK) {
        tool_fail(ret, "%s", why);
        return EXIT_INVALID;
    }
    for (unsigned i = 0; i < gw.n; i++) {
        struct gw_mcu m = gw.mcu[i];
        struct fleet_probe p;
        m.retries = 0; /* inventory runs again soon: never hold the client up */
        m.timeout_s = m.timeout_s < 5 ? m.timeout_s : 5;
        if (fleet_probe(&m, &p, why, sizeof(why)) == MOTA_OK)
            print_mcu(&m, &p);
        else
            printf("mota.%s.reachable=no\n", m.name);
    }
    return EXIT_OK;
}
