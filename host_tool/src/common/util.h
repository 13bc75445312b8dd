/* SPDX-License-Identifier: Apache-2.0 */
/* Host tool helpers every command uses: exit codes, messages, option parsing, numbers and names, the clock,
 * random bytes.
 * Files: files.h; JSON: json.h. Nothing here calls into a command. */
#ifndef MOTA_TOOL_UTIL_H
#define MOTA_TOOL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes of every subcommand (docs/host-tool.md). */
enum {
    EXIT_OK = 0,
    EXIT_INVALID = 1,    /* the input was examined and rejected */
    EXIT_USAGE = 2,      /* bad command line */
    EXIT_IO = 3,         /* a file could not be read or written, a key is unusable, the device unreachable */
    EXIT_POWER_LOST = 4, /* mota sim: the simulated power cut (--cut-at-op) happened */
    EXIT_BUSY = 5,       /* the device serves another client */
    EXIT_TIMEOUT = 6,    /* the device stopped answering within --timeout */
};

/* "mota: error: NAME: message[: detail]" on stderr; returns code. */
int tool_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The code of the last tool_fail in this process (0: none): a caller running a command in-process
 * (mota mender-module) names the reason its exit code stands for. */
int tool_failed(void);
void tool_failed_clear(void);
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error, in the same form and with a pointer to the help:
 * "mota: error: CMD: what (see mota CMD --help)"; returns EXIT_USAGE. */
int tool_usage_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A --json run's command (main sets it): its usage error is a JSON document on stdout too (status
 * MOTA_ERR_ARG, detail the message), once; tool_usage_json, where set, prints the command's own form (push:
 * its result event) */
extern const char *tool_json_cmd;
extern void (*tool_usage_json)(const char *cmd, const char *detail);
/* ... printed by main for a usage error said otherwise (tool_fail, then exit 2): its code and message */
void tool_usage_json_doc(const char *cmd, int code, const char *detail);
const char *tool_failed_detail(void);
/* getopt_long that reports an unknown option or a missing value with tool_usage_err (one line, not the
 * whole help) and then returns '?'. */
struct option;
int tool_getopt(int argc, char **argv, const char *shorts, const struct option *longs, const char *cmd);

/* Option parsing helpers: strict numbers (decimal, or hex after 0x; no octal, sign or blanks). */
bool tool_parse_u64(const char *s, uint64_t *v);
/* Exactly n bytes as 2n hex digits (either case), nothing else. */
bool tool_parse_hex(const char *s, uint8_t *out, size_t n);

void tool_hex(FILE *f, const uint8_t *p, size_t n);
/* A container's or a device's text to a terminal: its control characters (and DEL) as \xNN, so that no
 * escape sequence runs and no line is forged; a backslash as \\, so that the form reads back. */
void tool_put_text(FILE *f, const char *s, size_t n);
/* The same into out (at least 2n + 1 bytes; cut to whole bytes that fit cap); returns out. */
const char *tool_hex_str(const uint8_t *p, size_t n, char *out, size_t cap);
/* An install mode (enum mota_install_mode) as every output names it: "xip", "copy", "invalid". */
const char *tool_install_mode(uint32_t mode);
/* A 16-byte UUID in its 8-4-4-4-12 form, into out[37]; returns out. */
const char *tool_uuid_str(const uint8_t u[16], char out[37]);

/* n bytes from the system's entropy source (getrandom): MOTA_OK or MOTA_ERR_RANDOM. For ids, not keys
 * (mota_key_generate has its own DRBG). */
int tool_random(uint8_t *out, size_t n);

/* Seconds on the monotonic clock: timeouts and deadlines. */
double tool_now(void);

/* A TCP host name or address resolves (IPv4, as the transport connects); else why not, in why. */
bool tool_host_resolves(const char *host, char *why, size_t cap);

#endif
