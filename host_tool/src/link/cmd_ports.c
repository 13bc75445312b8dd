/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota ports: the serial ports of this machine and which of them looks like
 * a device, so `mota push PORT` needs no guessing. Linux: every
 * /sys/class/tty/NAME with a device behind it, its USB vendor and product
 * ids, manufacturer, product and serial number (from the USB device above
 * its interface), its driver, and its stable names under /dev/serial/by-id.
 *
 * Test seam: MOTA_SYSFS_ROOT and MOTA_DEV_ROOT replace /sys and /dev, so a
 * fake tree stands for the hardware.
 */
#include "cmds.h"
#include "devlink.h"

#include "common/json.h"
#include "common/util.h"

#include "mota/err.h"

#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PORTS 256u
#define MAX_BY_ID 4u

/* USB serial adapters a device is behind: ST-LINK's virtual COM port and the STM32's own USB CDC. */
static const struct {
    uint16_t vid, pid;
    const char *what;
} known[] = {
    {0x0483, 0x374b, "ST-LINK/V2-1 virtual COM port"},    {0x0483, 0x374e, "STLINK-V3 virtual COM port"},
    {0x0483, 0x374f, "STLINK-V3 virtual COM port"},       {0x0483, 0x3752, "ST-LINK/V2-1 virtual COM port"},
    {0x0483, 0x3753, "STLINK-V3 virtual COM port"},       {0x0483, 0x3754, "STLINK-V3 virtual COM port"},
    {0x0483, 0x5740, "STM32 USB CDC (virtual COM port)"},
};

struct port {
    char name[64];
    char dev[PATH_MAX];
    char driver[64], subsystem[64];
    bool usb;
    unsigned vid, pid;
    char manufacturer[128], product[128], serial[128];
    char by_id[MAX_BY_ID][PATH_MAX];
    unsigned n_by_id;
    const char *kind; /* why it looks like a device, or NULL */
};

static struct port found[MAX_PORTS]; /* what scan() finds: large, so not on the stack */

static const char *root(const char *env, const char *dflt)
{
    const char *r = getenv(env);
    return r != NULL && *r ? r : dflt;
}

/* The first line of a sysfs attribute, without its newline; false if it cannot be read. */
static bool read_attr(const char *dir, const char *name, char *out, size_t cap)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    bool ok = fgets(out, (int)cap, f) != NULL;
    fclose(f);
    if (ok)
        out[strcspn(out, "\r\n")] = '\0';
    return ok;
}

/* The last component of a symlink's target ("cdc_acm" for .../drivers/cdc_acm), or "". */
static void link_name(const char *dir, const char *name, char *out, size_t cap)
{
    char path[PATH_MAX + 64], target[PATH_MAX];
    out[0] = '\0';
    int k = snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (k < 0 || (size_t)k >= sizeof(path))
        return; /* a path this long names no sysfs link */
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n <= 0)
        return;
    target[n] = '\0';
    const char *slash = strrchr(target, '/');
    k = snprintf(out, cap, "%s", slash ? slash + 1 : target);
    if (k < 0 || (size_t)k >= cap)
        out[0] = '\0'; /* a driver name longer than cap is none we know */
}

static bool hex16(const char *s, unsigned *v)
{
    char *end;
    unsigned long x = strtoul(s, &end, 16);
    if (end == s || *end != '\0' || x > 0xFFFF)
        return false;
    *v = (unsigned)x;
    return true;
}

/* The USB device a tty hangs from: up from its device (the interface, or the usb-serial port below it). */
static void usb_info(const char *devdir, struct port *p)
{
    char dir[PATH_MAX], vid[16], pid[16];
    if (realpath(devdir, dir) == NULL)
        return;
    for (int up = 0; up < 4; up++) {
        if (read_attr(dir, "idVendor", vid, sizeof(vid)) && read_attr(dir, "idProduct", pid, sizeof(pid)) &&
            hex16(vid, &p->vid) && hex16(pid, &p->pid)) {
            p->usb = true;
            read_attr(dir, "manufacturer", p->manufacturer, sizeof(p->manufacturer));
            read_attr(dir, "product", p->product, sizeof(p->product));
            read_attr(dir, "serial", p->serial, sizeof(p->serial));
            return;
        }
        char *slash = strrchr(dir, '/');
        if (slash == NULL || slash == dir)
            return;
        *slash = '\0';
    }
}

/* Stable names: the /dev/serial/by-id links that point at this tty. */
static void by_id(const char *devroot, struct port *p)
{
    char dirpath[PATH_MAX];
    snprintf(dirpath, sizeof(dirpath), "%s/serial/by-id", devroot);
    DIR *d = opendir(dirpath);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && p->n_by_id < MAX_BY_ID) {
        char name[64];
        if (e->d_name[0] == '.')
            continue;
        link_name(dirpath, e->d_name, name, sizeof(name));
        if (strcmp(name, p->name) == 0 &&
            snprintf(p->by_id[p->n_by_id], sizeof(p->by_id[0]), "%s/%s", dirpath, e->d_name) < (int)sizeof(p->by_id[0]))
            p->n_by_id++;
    }
    closedir(d);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct port *)a)->name, ((const struct port *)b)->name);
}

/* Every tty with a device behind it, but the platform's legacy UARTs (ttyS0..31 with no hardware). */
static size_t scan(struct port *ports, size_t cap)
{
    const char *sys = root("MOTA_SYSFS_ROOT", "/sys"), *dev = root("MOTA_DEV_ROOT", "/dev");
    char classdir[PATH_MAX], devdir[PATH_MAX + 320];
    size_t n = 0;
    snprintf(classdir, sizeof(classdir), "%s/class/tty", sys);
    DIR *d = opendir(classdir);
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < cap) {
        if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(ports[0].name))
            continue;
        snprintf(devdir, sizeof(devdir), "%s/%s/device", classdir, e->d_name);
        if (access(devdir, F_OK) != 0)
            continue; /* a virtual terminal or a pty: nothing to plug in */
        struct port *p = &ports[n];
        memset(p, 0, sizeof(*p));
        memcpy(p->name, e->d_name, strlen(e->d_name) + 1); /* its length checked above */
        link_name(devdir, "subsystem", p->subsystem, sizeof(p->subsystem));
        if (strcmp(p->subsystem, "platform") == 0)
            continue;
        link_name(devdir, "driver", p->driver, sizeof(p->driver));
        snprintf(p->dev, sizeof(p->dev), "%s/%s", dev, p->name);
        usb_info(devdir, p);
        by_id(dev, p);
        for (size_t k = 0; p->usb && k < sizeof(known) / sizeof(known[0]) && p->kind == NULL; k++) {
            if (known[k].vid == p->vid && known[k].pid == p->pid)
                p->kind = known[k].what;
        }
        if (p->kind == NULL && strcmp(p->driver, "cdc_acm") == 0)
            p->kind = "USB CDC ACM (virtual COM port)";
        n++;
    }
    closedir(d);
    qsort(ports, n, sizeof(ports[0]), by_name);
    return n;
}

static void help(FILE *f)
{
    fprintf(f,
            "usage: mota ports [--json]\n\n"
            "Lists this machine's serial ports: their USB vendor and product ids, manufacturer,\n"
            "product and serial number, driver, and stable /dev/serial/by-id names. A port that\n"
            "looks like a device (an ST-LINK virtual COM port, an STM32 USB CDC, any CDC ACM)\n"
            "is marked; when exactly one does, a hint says how to push to it.\n"
            "  --json   one JSON document (schema %u)\n"
            "MOTA_SYSFS_ROOT and MOTA_DEV_ROOT replace /sys and /dev (for tests).\n",
            TOOL_JSON_SCHEMA);
}

/* The name to give a port by: the stable one survives re-plugging and renumbering, the one to write in a script. */
static const char *port_name(const struct port *p)
{
    return p->n_by_id ? p->by_id[0] : p->dev;
}

/* The port to hint at: the one that looks like a device, when exactly one does (*likely: how many do). */
static const char *hint_port(const struct port *ports, size_t n, size_t *likely)
{
    const struct port *hint = NULL;
    *likely = 0;
    for (size_t i = 0; i < n; i++) {
        if (ports[i].kind != NULL) {
            (*likely)++;
            hint = &ports[i];
        }
    }
    return *likely == 1 ? port_name(hint) : NULL;
}

size_t ports_devices(char (*names)[PATH_MAX], size_t cap)
{
    struct port *ports = found;
    size_t n = scan(ports, MAX_PORTS), likely = 0;
    for (size_t i = 0; i < n; i++) {
        if (ports[i].kind == NULL)
            continue;
        if (likely < cap)
            snprintf(names[likely], PATH_MAX, "%s", port_name(&ports[i]));
        likely++;
    }
    return likely;
}

static void port_json(struct json *j, const struct port *p)
{
    char id[8];
    json_obj(j, NULL);
    json_str(j, "port", p->dev);
    json_arr(j, "by_id");
    for (unsigned k = 0; k < p->n_by_id; k++)
        json_str(j, NULL, p->by_id[k]);
    json_arr_end(j);
    json_str(j, "subsystem", p->subsystem);
    p->driver[0] ? json_str(j, "driver", p->driver) : json_null(j, "driver");
    if (p->usb) {
        json_obj(j, "usb");
        snprintf(id, sizeof(id), "%04x", p->vid);
        json_str(j, "vendor_id", id);
        snprintf(id, sizeof(id), "%04x", p->pid);
        json_str(j, "product_id", id);
        p->manufacturer[0] ? json_str(j, "manufacturer", p->manufacturer) : json_null(j, "manufacturer");
        p->product[0] ? json_str(j, "product", p->product) : json_null(j, "product");
        p->serial[0] ? json_str(j, "serial", p->serial) : json_null(j, "serial");
        json_obj_end(j);
    } else {
        json_null(j, "usb");
    }
    json_bool(j, "looks_like_device", p->kind != NULL);
    p->kind ? json_str(j, "kind", p->kind) : json_null(j, "kind");
    json_obj_end(j);
}

static void ports_json(const struct port *ports, size_t n, const char *hint)
{
    struct json j;
    json_doc(&j, stdout, "ports", false);
    json_reason(&j, MOTA_OK);
    json_arr(&j, "ports");
    for (size_t i = 0; i < n; i++)
        port_json(&j, &ports[i]);
    json_arr_end(&j);
    hint ? json_str(&j, "hint", hint) : json_null(&j, "hint");
    json_end(&j);
}

static void ports_text(const struct port *ports, size_t n, const char *hint, size_t likely)
{
    if (n == 0) {
        printf("no serial ports\n");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct port *p = &ports[i];
        printf("%-16s", p->dev);
        if (p->usb)
            printf(" %04x:%04x %s%s%s%s%s", p->vid, p->pid, p->manufacturer, p->manufacturer[0] ? " " : "", p->product,
                   p->serial[0] ? ", serial " : "", p->serial);
        else
            printf(" %s", p->subsystem[0] ? p->subsystem : "?");
        if (p->driver[0])
            printf(" (%s)", p->driver);
        if (p->kind)
            printf("  <- %s", p->kind);
        printf("\n");
        for (unsigned k = 0; k < p->n_by_id; k++)
            printf("%-16s %s\n", "", p->by_id[k]);
    }
    if (hint != NULL)
        printf("\none port looks like a device: mota push %s model.mota\n", hint);
    else if (likely > 1)
        printf("\n%zu ports look like devices: give push the one you mean\n", likely);
}

int cmd_ports(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {"json", no_argument, 0, 'j'}, {0, 0, 0, 0}};
    struct port *ports = found;
    bool as_json = false;
    int c;

    optind = 1;
    while ((c = tool_getopt(argc, argv, "hj", opts, "ports")) != -1) {
        if (c == 'h') {
            help(stdout);
            return EXIT_OK;
        }
        if (c != 'j')
            return EXIT_USAGE;
        as_json = true;
    }
    if (optind != argc)
        return tool_usage_err("ports", "unexpected argument '%s'", argv[optind]);
    size_t n = scan(ports, MAX_PORTS), likely;
    const char *hint = hint_port(ports, n, &likely);
    if (as_json)
        ports_json(ports, n, hint);
    else
        ports_text(ports, n, hint, likely);
    return EXIT_OK;
}
