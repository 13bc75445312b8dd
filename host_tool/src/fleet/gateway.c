/* SPDX-License-Identifier: Apache-2.0 */
/* The gateway configuration: parsed whole and checked before any MCU is touched, so a typo is a refused
 * deployment, not a half-done one. */
#include "gateway.h"

#include "common/util.h"

#include "mota/err.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GW_LINE_MAX 1024
#define GW_WORDS 12

const char *gateway_path(void)
{
    const char *p = getenv("MOTA_GATEWAY_CONF");
    return p != NULL && p[0] != '\0' ? p : GW_DEFAULT_PATH;
}

bool gateway_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > GW_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
            return false;
    return true;
}

/* A serial device or pty path, or tcp:HOST:PORT with a port number 1..65535. */
static bool good_port(const char *s)
{
    if (strlen(s) >= sizeof(((struct gw_mcu *)0)->port))
        return false;
    if (s[0] == '/')
        return true;
    const char *colon = strncmp(s, "tcp:", 4) == 0 ? strrchr(s + 4, ':') : NULL;
    uint64_t port;
    return colon != NULL && colon > s + 4 && tool_parse_u64(colon + 1, &port) && port >= 1 && port <= 65535;
}

static bool seconds(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return errno == 0 && end != s && *end == '\0' && *v > 0 && *v <= 3600;
}

/* One option of an MCU line and its value; false with why set. */
static bool option(struct gw_mcu *m, const char *opt, const char *val, char *why, size_t cap)
{
    uint64_t v;
    if (strcmp(opt, "--baud") == 0 && tool_parse_u64(val, &v) && v >= 300 && v <= 20000000) {
        m->baud = (unsigned)v;
    } else if (strcmp(opt, "--timeout") == 0 && seconds(val, &m->timeout_s)) {
    } else if (strcmp(opt, "--retries") == 0 && tool_parse_u64(val, &v) && v <= 100) {
        m->retries = (unsigned)v;
    } else if (strcmp(opt, "--id") == 0 && strlen(val) % 2 == 0 && strlen(val) >= 2 && strlen(val) <= 32 &&
               tool_parse_hex(val, m->id, strlen(val) / 2)) {
        m->id_len = strlen(val) / 2;
    } else {
        snprintf(why, cap, "%s '%s': %s", opt, val,
                 strcmp(opt, "--baud") == 0      ? "a line rate, 300..20000000"
                 : strcmp(opt, "--timeout") == 0 ? "seconds, more than 0 and at most 3600"
                 : strcmp(opt, "--retries") == 0 ? "a count, 0..100"
                 : strcmp(opt, "--id") == 0      ? "the device id, 2..32 hex digits (mota status)"
                                                 : "unknown option (--baud, --timeout, --retries, --id)");
        return false;
    }
    return true;
}

static size_t split(char *line, char **w, size_t cap)
{
    size_t n = 0;
    for (char *t = strtok(line, " \t\r\n"); t != NULL; t = strtok(NULL, " \t\r\n")) {
        if (n == cap)
            return cap + 1;
        w[n++] = t;
    }
    return n;
}

/* NAME PORT [--baud N] [--timeout S] [--retries N] [--id HEX]; false with why set. */
static bool parse_line(struct gateway *g, char *line, char *why, size_t cap)
{
    char *w[GW_WORDS];
    char *hash = strchr(line, '#');
    if (hash != NULL)
        *hash = '\0';
    size_t n = split(line, w, GW_WORDS);
    if (n == 0)
        return true;
    if (n > GW_WORDS || n < 2 || n % 2 != 0) {
        snprintf(why, cap, "expected NAME PORT [--baud N] [--timeout S] [--retries N] [--id HEX]");
        return false;
    }
    if (g->n == GW_MAX_MCUS) {
        snprintf(why, cap, "more than %d MCUs", GW_MAX_MCUS);
        return false;
    }
    struct gw_mcu *m = &g->mcu[g->n];
    memset(m, 0, sizeof(*m));
    if (!gateway_name_ok(w[0])) {
        snprintf(why, cap, "name '%s': 1..%d letters, digits, '-' or '_'", w[0], GW_NAME_MAX);
        return false;
    }
    for (unsigned i = 0; i < g->n; i++) {
        if (strcmp(g->mcu[i].name, w[0]) == 0) {
            snprintf(why, cap, "MCU '%s' named twice", w[0]);
            return false;
        }
        if (strcmp(g->mcu[i].port, w[1]) == 0) { /* two pushes on one line would only make each other busy */
            snprintf(why, cap, "port %s is %s's already", w[1], g->mcu[i].name);
            return false;
        }
    }
    if (!good_port(w[1])) {
        snprintf(why, cap, "port '%s': a device path (/dev/serial/by-id/...), a pty path or tcp:HOST:PORT", w[1]);
        return false;
    }
    strcpy(m->name, w[0]);
    strcpy(m->port, w[1]);
    m->baud = 115200;
    m->timeout_s = 60;
    m->retries = 3;
    for (size_t i = 2; i < n; i += 2)
        if (!option(m, w[i], w[i + 1], why, cap))
            return false;
    g->n++;
    return true;
}

int gateway_read(FILE *f, const char *path, struct gateway *g, char *why, size_t cap)
{
    char line[GW_LINE_MAX + 2], what[200];
    unsigned lineno = 0;
    int ret = MOTA_OK;
    memset(g, 0, sizeof(*g));
    snprintf(g->path, sizeof(g->path), "%s", path);
    while (ret == MOTA_OK && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        size_t len = strlen(line);
        if (len > GW_LINE_MAX && line[strspn(line, " \t")] == '#') {
            for (int ch = line[len - 1]; ch != '\n' && ch != EOF;) /* the rest of a long comment */
                ch = fgetc(f);
        } else if (len > GW_LINE_MAX) {
            snprintf(what, sizeof(what), "longer than %d characters", GW_LINE_MAX);
            ret = MOTA_ERR_ARG;
        } else if (!parse_line(g, line, what, sizeof(what))) {
            ret = MOTA_ERR_ARG;
        }
    }
    if (ret == MOTA_OK && ferror(f)) {
        snprintf(what, sizeof(what), "%s", strerror(errno));
        ret = MOTA_ERR_IO;
    }
    if (ret != MOTA_OK)
        snprintf(why, cap, "%s:%u: %s", path, lineno, what);
    else if (g->n == 0)
        snprintf(why, cap, "%s: no MCU configured (NAME PORT per line)", path), ret = MOTA_ERR_ARG;
    return ret;
}

int gateway_load(const char *path, struct gateway *g, char *why, size_t cap)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    if (f == NULL || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, cap, "%s: %s", path, f == NULL ? strerror(errno) : "not a file");
        if (f != NULL)
            fclose(f);
        memset(g, 0, sizeof(*g));
        return MOTA_ERR_IO;
    }
    int ret = gateway_read(f, path, g, why, cap);
    fclose(f);
    return ret;
}
