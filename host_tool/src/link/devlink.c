/* SPDX-License-Identifier: Apache-2.0 */
/* Reaching the device for a link command: its options and PORT, opening the link and saying hello, exit codes. */
#include "devlink.h"
#include "client.h"

#include "common/util.h"

#include "mota/err.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { O_BAUD = 256, O_JSON, O_TIMEOUT, O_MODEL, O_CONFIRM, O_INPUT, O_OUT_SIZE, O_EXPECT, O_WAIT, O_REINSTALL };

/* The LO_ bit a link option needs (every link command shares one table); 0: every command takes it. */
static unsigned link_option_need(int c)
{
    switch (c) {
    case 'q': return LO_QUIET;
    case O_JSON: return LO_JSON;
    case O_CONFIRM: return LO_CONFIRM;
    case O_REINSTALL: return LO_REINSTALL;
    case O_MODEL: return LO_MODEL;
    case O_EXPECT: return LO_EXPECT;
    case O_WAIT: return LO_WAIT;
    case O_INPUT:
    case 'o':
    case O_OUT_SIZE: return LO_INVOKE;
    default: return 0;
    }
}

/* --baud, --timeout, --wait or --output-size from optarg. */
static int link_number(int c, struct link_opts *o, const char *cmd)
{
    uint64_t v;
    bool seconds = c == O_TIMEOUT || c == O_WAIT;
    if (!tool_parse_u64(optarg, &v) || v == 0 || (seconds && v > 86400)) {
        const char *name = c == O_TIMEOUT ? "--timeout"
                           : c == O_WAIT  ? "--wait"
                           : c == O_BAUD  ? "--baud"
                                          : "--output-size";
        return tool_usage_err(cmd, "%s %s: %s", name, optarg,
                              seconds ? "seconds, from 1 to 86400" : "a positive number");
    }
    if (c == O_BAUD)
        o->baud = (unsigned)v;
    else if (c == O_TIMEOUT)
        o->timeout_s = (double)v;
    else if (c == O_WAIT)
        o->wait_s = (double)v;
    else
        o->out_size = v;
    return EXIT_OK;
}

/* The long name of option c in opts. */
static const char *link_option_name(const struct option *opts, int c)
{
    for (; opts->name != NULL; opts++)
        if (opts->val == c)
            return opts->name;
    return "?";
}

/* Written as a port rather than a file: tcp:..., a path under /dev, or something that exists and is neither a
 * regular file nor a directory (a terminal, a device node). */
static bool port_like(const char *s)
{
    struct stat st;
    if (strncmp(s, "tcp:", 4) == 0 || strncmp(s, "/dev/", 5) == 0)
        return true;
    return stat(s, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

static bool regular_file(const char *s)
{
    struct stat st;
    return stat(s, &st) == 0 && S_ISREG(st.st_mode);
}

/* A port written as the link takes it; else a usage error that shows the forms. from: where it came from. */
static int port_checked(const char *cmd, const char *port, const char *from)
{
    char why[PATH_MAX + 64];
    if (client_port_syntax(port, why, sizeof(why)))
        return EXIT_OK;
    return tool_usage_err(cmd, "%s%s; a port is %s", from, why, CLIENT_PORT_FORMS);
}

int link_default_port(const char *cmd, const char **port)
{
    static char names[8][PATH_MAX];
    const char *env = getenv("MOTA_PORT");
    if (env != NULL && env[0] != '\0') {
        *port = env;
        return port_checked(cmd, env, "MOTA_PORT ");
    }
    size_t n = ports_devices(names, 8);
    if (n == 1) {
        *port = names[0];
        fprintf(stderr, "mota: using %s (the one device mota ports finds; MOTA_PORT to choose)\n", names[0]);
        return EXIT_OK;
    }
    if (n == 0)
        return tool_usage_err(cmd,
                              "no PORT given, MOTA_PORT unset, and mota ports finds no device: give PORT or set "
                              "MOTA_PORT; a port is %s",
                              CLIENT_PORT_FORMS);
    static char list[8 * (PATH_MAX + 2)];
    list[0] = '\0';
    for (size_t i = 0; i < n && i < 8; i++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", names[i]);
    return tool_usage_err(cmd,
                          "no PORT given, MOTA_PORT unset, and mota ports finds %zu devices (%s%s): give the "
                          "one you mean as PORT or in MOTA_PORT",
                          n, list, n > 8 ? ", ..." : "");
}

/* PORT (optional) and, for push, CONTAINER: told apart by how many there are and by what each one is. */
static int link_positionals(int n, char **arg, struct link_opts *o, const char *cmd, bool want_container,
                            const char **container)
{
    int most = want_container ? 2 : 1;
    if (n > most)
        return tool_usage_err(cmd, "unexpected argument '%s'", arg[most]);
    if (want_container && n == 0)
        return tool_usage_err(cmd, "needs CONTAINER: mota %s [PORT] CONTAINER", cmd);
    if (want_container && n == 1 && port_like(arg[0]) && !regular_file(arg[0]))
        return tool_usage_err(cmd, "needs CONTAINER after the port %s: mota %s [PORT] CONTAINER", arg[0], cmd);
    if (want_container && n == 2 && regular_file(arg[0]) && port_like(arg[1]) && !regular_file(arg[1]))
        return tool_usage_err(cmd,
                              "arguments swapped: %s is a file, %s a port; mota %s [PORT] CONTAINER, a port being %s",
                              arg[0], arg[1], cmd, CLIENT_PORT_FORMS);
    if (want_container)
        *container = arg[n - 1];
    if (n < most)
        return link_default_port(cmd, &o->port);
    o->port = arg[0];
    return port_checked(cmd, arg[0], "PORT ");
}

int link_args(int argc, char **argv, struct link_opts *o, const char *cmd, unsigned allowed, const char *usage,
              bool want_container, const char **container, double default_timeout)
{
    /* clang-format off */ /* a table packed by hand */
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"baud", required_argument, 0, O_BAUD}, {"json", no_argument, 0, O_JSON},
        {"quiet", no_argument, 0, 'q'}, {"timeout", required_argument, 0, O_TIMEOUT},
        {"model", required_argument, 0, O_MODEL}, {"confirm", no_argument, 0, O_CONFIRM},
        {"reinstall", no_argument, 0, O_REINSTALL},
        {"input", required_argument, 0, O_INPUT}, {"output-size", required_argument, 0, O_OUT_SIZE},
        {"output", required_argument, 0, 'o'}, {"out", required_argument, 0, 'o'},
        {"expect-digest", required_argument, 0, O_EXPECT},
        {"wait", required_argument, 0, O_WAIT}, {0, 0, 0, 0}};
    /* clang-format on */
    int c, rc;
    memset(o, 0, sizeof(*o));
    o->baud = 115200;
    o->timeout_s = default_timeout;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "hqo:", opts, cmd)) != -1) {
        /* every link command shares one option table; the ones a command does not take are refused */
        unsigned need = link_option_need(c);
        if (need != 0 && !(allowed & need)) /* named from the table: argv[optind - 1] may be its value */
            return tool_usage_err(cmd, "unknown option --%s", link_option_name(opts, c));
        switch (c) {
        case 'h': printf("%s%s", usage, LINK_PORT_HELP); exit(EXIT_OK);
        case 'q': o->quiet = true; break;
        case O_JSON: o->json = true; break;
        case O_CONFIRM: o->confirm = true; break;
        case O_REINSTALL: o->reinstall = true; break;
        case O_MODEL: o->model = optarg; break;
        case O_EXPECT: o->expect_digest = optarg; break;
        case O_INPUT: o->input = optarg; break;
        case 'o': o->output = optarg; break;
        case O_BAUD:
        case O_TIMEOUT:
        case O_WAIT:
        case O_OUT_SIZE:
            if ((rc = link_number(c, o, cmd)) != EXIT_OK)
                return rc;
            break;
        default: return EXIT_USAGE;
        }
    }
    return link_positionals(argc - optind, argv + optind, o, cmd, want_container, container);
}

/*
 * Open the link and say hello before the deadline (every wait inside is bounded by it). A port that
 * cannot be opened at all (no such file, connection refused) is reported at once when `first`;
 * on a reconnect it is tried again, as a device that resets drops off the bus for a moment.
 */
int link_connect(struct client *c, const struct link_opts *o, double deadline, bool first, const uint8_t **info,
                 size_t *info_len)
{
    for (;;) {
        double left = deadline - tool_now();
        c->deadline = deadline;
        int ret = client_open(c, o->port, o->baud, left > 0 ? (int)(left * 1000) + 1 : 1);
        if (ret == MOTA_OK) {
            ret = client_hello(c, info, info_len);
            if (ret == MOTA_OK)
                return MOTA_OK;
            client_close(c);
            /* the device answered and said no (busy, protocol version); on a reconnect, busy may be our
             * own earlier connection, not yet seen gone: try again */
            if (ret != MOTA_ERR_DEVICE_LOST && ret != MOTA_ERR_TRANSPORT && ret != MOTA_ERR_TIMEOUT &&
                (first || ret != MOTA_ERR_BUSY))
                return ret;
            snprintf(c->why, sizeof(c->why), "connected, but no answer to HELLO");
        } else if (first && ret != MOTA_ERR_TIMEOUT) {
            return ret;
        }
        if (tool_now() >= deadline)
            return MOTA_ERR_TIMEOUT;
        usleep(200 * 1000);
    }
}

/* A failure that may pass: the port not there yet or refusing (a device rebooting, a simulator not yet
 * listening, a USB port re-enumerating), another client holding the device, no answer. */
static bool transient(int ret)
{
    return ret == MOTA_ERR_TRANSPORT || ret == MOTA_ERR_BUSY || ret == MOTA_ERR_TIMEOUT || ret == MOTA_ERR_DEVICE_LOST;
}

/*
 * Each attempt as without --wait (bounded by --timeout, a port that cannot be opened reported at once), and
 * another one 200 ms later while the wait lasts: an attempt that began within it may run on to its own
 * --timeout, so a device that answers late is still heard.
 */
int link_connect_waiting(struct client *c, const struct link_opts *o, const uint8_t **info, size_t *info_len)
{
    double end = tool_now() + o->wait_s;
    for (;;) {
        int ret = link_connect(c, o, tool_now() + o->timeout_s, true, info, info_len);
        if (ret == MOTA_OK || !transient(ret) || tool_now() + 0.2 > end)
            return ret;
        usleep(200 * 1000);
    }
}

/* Exit code for a failure to reach or hear the device. */
int link_exit(int ret)
{
    return ret == MOTA_ERR_BUSY ? EXIT_BUSY : ret == MOTA_ERR_TIMEOUT ? EXIT_TIMEOUT : EXIT_IO;
}

/* Why the device could not be reached, with what the tool found (c->why). */
void link_fail(int ret, const struct client *c, const struct link_opts *o)
{
    if (ret == MOTA_ERR_BUSY)
        tool_fail(ret, "%s: another client holds the device; try again when it is done", o->port);
    else if (ret == MOTA_ERR_TIMEOUT)
        tool_fail(ret, "%s: no answer within %g s (--timeout)%s%s", o->port, o->timeout_s, c->why[0] ? ": " : "",
                  c->why);
    else if (c->why[0])
        tool_fail(ret, "%s", c->why);
    else
        tool_fail(ret, "%s", o->port);
}
