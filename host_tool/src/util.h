/* Host tool helpers: files, atomic output, messages, JSON. */
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

struct mapped {
    const uint8_t *data;
    size_t len;
    void *map; /* for munmap */
    size_t map_len;
};

/*
 * A whole file, read into memory of its own (huge pages where the kernel
 * gives them): what is hashed is what is written, whatever happens to the
 * file meanwhile, and reading it costs less than faulting a mapping of it in
 * (a 64 MiB model: 8 ms to read, against 4 ms more of faults and 8 ms of
 * unmapping, and every pass over it slower on 4 KiB pages). Returns MOTA_OK
 * or MOTA_ERR_IO (message printed).
 */
int tool_map(const char *path, struct mapped *m);
void tool_unmap(struct mapped *m);

/*
 * Atomic output: data goes to a temporary file beside path, which is synced
 * and renamed over path on commit (then the directory is synced), and
 * removed on abort, so no partial output file is ever left behind. With
 * no_sync set after open (pack and sign without --sync: containers are
 * artefacts a build makes again) nothing is synced: the rename is as atomic,
 * but a power loss right after may leave the previous file.
 * tool_out_open refuses (with its reason printed) a path that exists and is
 * not a regular file (MOTA_ERR_NOT_REGULAR: a rename would replace a device
 * node or FIFO), or that is a file this run read through tool_map or
 * tool_note_input or wrote through tool_out_commit (MOTA_ERR_SAME_FILE).
 * Errors carry the path and strerror(errno).
 */
struct outfile {
    FILE *f;
    char tmp[4096];
    char path[4096];
    int mode;
    bool no_replace;
    bool no_sync;
};
int tool_out_open(struct outfile *o, const char *path, int mode);
/* The same, but path must not exist, then or at commit (MOTA_ERR_FILE_EXISTS). */
int tool_out_open_new(struct outfile *o, const char *path, int mode);
int tool_out_write(struct outfile *o, const void *p, size_t n);
int tool_out_commit(struct outfile *o); /* on failure the output is aborted */
void tool_out_abort(struct outfile *o);
/* One line of text (a newline is added) as a whole file, atomically: a file another process polls for
 * (mota sim --port-file) is either absent or complete. */
int tool_out_line(const char *path, const char *text);
/* tool_out_open's checks of path alone, to refuse before any work is done. */
int tool_out_check(const char *path);
/* Record an input read other than through tool_map (a compiler's source). */
void tool_note_input(const char *path);
/* Same file: same path, same device and inode, or (a path that does not
 * exist yet) the same resolved directory and name. */
bool tool_same_file(const char *a, const char *b);

/* "mota: error: NAME: message[: detail]" on stderr; returns code. */
int tool_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error, in the same form and with a pointer to the help:
 * "mota: error: CMD: what (see mota CMD --help)"; returns EXIT_USAGE. */
int tool_usage_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* getopt_long that reports an unknown option or a missing value with tool_usage_err (one line, not the
 * whole help) and then returns '?'. */
struct option;
int tool_getopt(int argc, char **argv, const char *shorts, const struct option *longs, const char *cmd);

/* Load a key file (PEM/DER) into a trusted key / a signing key; an empty or
 * unparsable file is MOTA_ERR_KEY_INVALID with the path and what a key file holds. */
struct mota_p256_key;
int tool_load_key(const char *path, struct mota_p256_key *key);

void tool_hex(FILE *f, const uint8_t *p, size_t n);
/* An install mode (enum mota_install_mode) as every output names it: "xip", "copy", "invalid". */
const char *tool_install_mode(uint32_t mode);
/* A 16-byte UUID in its 8-4-4-4-12 form, into out[37]; returns out. */
const char *tool_uuid_str(const uint8_t u[16], char out[37]);

/* The version of the JSON every command prints (docs/json.md): "schema" in each document. */
#define TOOL_JSON_SCHEMA 1u

/* Minimal JSON writer. */
struct json {
    FILE *f;
    int depth;
    bool first[16];
    bool compact; /* one line: push's event stream */
};
void json_begin(struct json *j, FILE *f);
/* A command's JSON document: {"schema": TOOL_JSON_SCHEMA, "command": command, ...}; compact: on one line. */
void json_doc(struct json *j, FILE *f, const char *command, bool compact);
void json_end(struct json *j);
/* A result in every command's form: "status": reason name ("MOTA_OK"), "code": its value, "message". */
void json_reason(struct json *j, int code);
void json_real(struct json *j, const char *key, double v, int decimals);
void json_obj(struct json *j, const char *key);     /* key NULL inside arrays */
void json_obj_end(struct json *j);
void json_arr(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *s);
void json_strn(struct json *j, const char *key, const char *s, size_t n);
void json_uint(struct json *j, const char *key, uint64_t v);
void json_int(struct json *j, const char *key, int64_t v);
void json_bool(struct json *j, const char *key, bool v);
void json_hex(struct json *j, const char *key, const uint8_t *p, size_t n);
void json_null(struct json *j, const char *key);
/* n bytes of s as a quoted JSON string (quotes, backslashes and control bytes escaped). */
void json_escaped(FILE *f, const char *s, size_t n);

/* Seconds on the monotonic clock: timeouts and deadlines. */
double tool_now(void);

/* A TCP host name or address resolves (IPv4, as the transport connects); else why not, in why. */
bool tool_host_resolves(const char *host, char *why, size_t cap);

/* Option parsing helpers: strict numbers (decimal, or hex after 0x; no octal, sign or blanks). */
bool tool_parse_u64(const char *s, uint64_t *v);
/* Exactly n bytes as 2n hex digits (either case), nothing else. */
bool tool_parse_hex(const char *s, uint8_t *out, size_t n);

#endif
