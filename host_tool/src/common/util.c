/* SPDX-License-Identifier: Apache-2.0 */
/* Host tool helpers every command uses: messages, option parsing, numbers and names, the clock, random bytes. */
#include "util.h"
#include "json.h"

#include "mota/compat.h"
#include "mota/err.h"

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

void tool_err(const char *fmt, ...)
{
    va_list ap;
    fputs("mota: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

const char *tool_json_cmd;
void (*tool_usage_json)(const char *cmd, const char *detail);

/* A --json run's usage error as a document, once (tool_usage_json: the command's own form). */
void tool_usage_json_doc(const char *cmd, int code, const char *detail)
{
    if (tool_json_cmd == NULL || json_doc_printed)
        return;
    tool_json_cmd = NULL;
    if (tool_usage_json != NULL) {
        tool_usage_json(cmd, detail);
        return;
    }
    struct json j;
    json_doc(&j, stdout, cmd, false);
    json_reason(&j, code);
    json_str(&j, "detail", detail);
    json_end(&j);
}

int tool_usage_err(const char *cmd, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "mota: error: %s: %s (see mota %s --help)\n", cmd, msg, cmd);
    tool_usage_json_doc(cmd, MOTA_ERR_ARG, msg); /* --json: the usage error is a document too */
    return EXIT_USAGE;
}

/* the commands whose device is a positional PORT (an --port is a habit of other tools) */
static bool takes_port(const char *cmd)
{
    static const char *const cmds[] = {"push", "status", "confirm", "rollback", "reboot", "invoke"};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (strcmp(cmd, cmds[i]) == 0)
            return true;
    return false;
}

int tool_getopt(int argc, char **argv, const char *shorts, const struct option *longs, const char *cmd)
{
    char sh[64];
    int idx = -1;
    snprintf(sh, sizeof(sh), ":%s", shorts); /* ':' first: a missing value is told apart from an unknown option */
    opterr = 0;
    int c = getopt_long(argc, argv, sh, longs, &idx);
    if (c != '?' && c != ':')
        return c;
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
    if (c == ':' && optopt != 0 && optopt < 256 && strchr(shorts, optopt) != NULL && arg[1] != '-')
        tool_usage_err(cmd, "option -%c needs a value", optopt);
    else if (c == ':')
        tool_usage_err(cmd, "option %s needs a value", arg);
    else if (optopt != 0 && arg[0] == '-' && arg[1] != '-')
        tool_usage_err(cmd, "unknown option -%c", optopt);
    else if (strncmp(arg, "--port", 6) == 0 && (arg[6] == 0 || arg[6] == '=') && takes_port(cmd))
        tool_usage_err(cmd,
                       "unknown option %s: PORT is given without an option, after the others "
                       "(mota %s [options] PORT ...)",
                       arg, cmd);
    else
        tool_usage_err(cmd, "unknown option %s", arg);
    return '?';
}

static int last_fail;          /* tool_failed() */
static char last_detail[1024]; /* its message, for a --json usage error said with tool_fail */

int tool_failed(void)
{
    return last_fail;
}

const char *tool_failed_detail(void)
{
    return last_detail;
}

void tool_failed_clear(void)
{
    last_fail = 0;
}

int tool_fail(int code, const char *fmt, ...)
{
    va_list ap;
    last_fail = code;
    const char *name = mota_err_name(code);
    last_detail[0] = 0;
    if (fmt != NULL && fmt[0] != '\0') {
        va_start(ap, fmt);
        vsnprintf(last_detail, sizeof(last_detail), fmt, ap);
        va_end(ap);
    }
    fprintf(stderr, "mota: error: %s: %s%s%s\n", name ? name : "UNKNOWN", mota_err_str(code),
            last_detail[0] ? ": " : "", last_detail);
    return code;
}

void tool_hex(FILE *f, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", p[i]);
}

void tool_put_text(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7F)
            fprintf(f, "\\x%02x", c);
        else if (c == '\\')
            fputs("\\\\", f);
        else
            fputc(c, f);
    }
}

const char *tool_hex_str(const uint8_t *p, size_t n, char *out, size_t cap)
{
    static const char digits[] = "0123456789abcdef";
    size_t i = 0;
    for (; i < n && 2 * i + 2 < cap; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    if (cap > 0)
        out[2 * i] = '\0';
    return out;
}

bool tool_parse_u64(const char *s, uint64_t *v)
{
    char *end;
    /* decimal, or hex after 0x; never octal (--seq 010 is ten, not eight), no sign, no blanks */
    bool hex = s != NULL && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const char *digits = hex ? s + 2 : s;
    if (s == NULL || *digits == '\0' || strspn(digits, hex ? "0123456789abcdefABCDEF" : "0123456789") != strlen(digits))
        return false;
    errno = 0;
    unsigned long long x = strtoull(digits, &end, hex ? 16 : 10);
    if (errno != 0 || *end != '\0')
        return false;
    *v = x;
    return true;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

bool tool_parse_hex(const char *s, uint8_t *out, size_t n)
{
    if (s == NULL || strlen(s) != 2 * n)
        return false;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

const char *tool_install_mode(uint32_t mode)
{
    return mode == MOTA_INSTALL_XIP ? "xip" : mode == MOTA_INSTALL_COPY ? "copy" : "invalid";
}

const char *tool_uuid_str(const uint8_t u[16], char out[37])
{
    int n = 0;
    for (int i = 0; i < 16; i++)
        n += snprintf(out + n, 37 - (size_t)n, "%02x%s", u[i], (i == 3 || i == 5 || i == 7 || i == 9) ? "-" : "");
    return out;
}

int tool_random(uint8_t *out, size_t n)
{
    int ret = MOTA_ERR_RANDOM;
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(out + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return ret;
        got += (size_t)r;
    }
    return MOTA_OK;
}

double tool_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool tool_host_resolves(const char *host, char *why, size_t cap)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (host[0] == '\0') {
        snprintf(why, cap, "no host before the port (e.g. 127.0.0.1:PORT)");
        return false;
    }
    int e = getaddrinfo(host, NULL, &hints, &res);
    if (e != 0 || res == NULL) {
        snprintf(why, cap, "cannot resolve host '%s': %s", host, e != 0 ? gai_strerror(e) : "no IPv4 address");
        return false;
    }
    freeaddrinfo(res);
    return true;
}
