/* SPDX-License-Identifier: Apache-2.0 */
/*
 * id: the vendor and class ids (UUID v5) that pack --vendor/--class and mota sim --vendor/--class derive
 * from their names, by the same function (pack_identity_ids), so names can be matched with the UUIDs that
 * mota status and a device's refusals print.
 */
#include "cmds.h"
#include "pack.h"

#include "common/json.h"
#include "common/util.h"

#include "mota/container.h"
#include "mota/err.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* s, or null */
static void json_str_or_null(struct json *j, const char *key, const char *s)
{
    if (s != NULL)
        json_str(j, key, s);
    else
        json_null(j, key);
}

struct id_opts {
    const char *vendor, *klass;
    bool json, answered;
};

static void help(FILE *f)
{
    fprintf(f,
            "usage: mota id --vendor DOMAIN [--class NAME] [--json]\n\n"
            "Prints the vendor id UUID5(DNS, DOMAIN) and the class id UUID5(vendor id, NAME): the\n"
            "ids `mota pack --vendor DOMAIN --class NAME` signs into a container and `mota sim`\n"
            "(or `mota provision`) gives a device, as `mota status` and refusals print them.\n"
            "The names are checked as pack checks them (a vendor not empty, UTF-8, at most %u\n"
            "bytes; a class not empty).\n\n"
            "  --vendor DOMAIN   the vendor's domain name, e.g. example.com\n"
            "  --class NAME      the device class, e.g. board-rev-b (needs --vendor)\n"
            "  --json            one JSON document (docs/json.md)\n",
            MOTA_CONTAINER_MAX_TEXT);
}

static int id_args(int argc, char **argv, struct id_opts *o)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"vendor", required_argument, 0, 'v'},
                                         {"class", required_argument, 0, 'c'},
                                         {"json", no_argument, 0, 'j'},
                                         {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "h", opts, "id")) != -1) {
        if (c == 'h') {
            help(stdout);
            o->answered = true;
            return EXIT_OK;
        } else if (c == 'v') {
            o->vendor = optarg;
        } else if (c == 'c') {
            o->klass = optarg;
        } else if (c == 'j') {
            o->json = true;
        } else {
            return EXIT_USAGE;
        }
    }
    if (optind < argc)
        return tool_usage_err("id", "takes no operand, not '%s'", argv[optind]);
    if (o->vendor == NULL)
        return tool_usage_err("id", "--vendor is required%s",
                              o->klass ? ": a class id is derived from the vendor's" : "");
    return EXIT_OK;
}

/* The ids, or (vendor_id NULL) the reason the names are refused: text, or one JSON document. */
static void id_print(const struct id_opts *o, int reason, const char *vendor_id, const char *class_id)
{
    if (!o->json) {
        if (vendor_id == NULL)
            return; /* said on stderr */
        printf("vendor %s: %s\n", o->vendor, vendor_id);
        if (class_id != NULL)
            printf("class %s: %s\n", o->klass, class_id);
        return;
    }
    struct json j;
    json_doc(&j, stdout, "id", false);
    json_reason(&j, reason);
    /* a refused name may not be UTF-8: null then, as a field the command does not have */
    json_str_or_null(&j, "vendor", vendor_id != NULL ? o->vendor : NULL);
    json_str_or_null(&j, "vendor_id", vendor_id);
    json_str_or_null(&j, "class", class_id != NULL ? o->klass : NULL);
    json_str_or_null(&j, "class_id", class_id);
    json_end(&j);
}

int cmd_id(int argc, char **argv)
{
    struct id_opts o = {0};
    uint8_t vendor_id[16], class_id[16];
    char vs[37], cs[37];
    int rc = id_args(argc, argv, &o);
    if (rc != EXIT_OK || o.answered)
        return rc;
    tool_failed_clear();
    if ((rc = pack_check_identity("id", o.vendor, o.klass)) != EXIT_OK) {
        id_print(&o, tool_failed() != 0 ? tool_failed() : MOTA_ERR_ARG, NULL, NULL);
        return rc;
    }
    pack_identity_ids(o.vendor, o.klass, vendor_id, class_id);
    id_print(&o, MOTA_OK, tool_uuid_str(vendor_id, vs), o.klass != NULL ? tool_uuid_str(class_id, cs) : NULL);
    return EXIT_OK;
}
