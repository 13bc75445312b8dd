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
};

/* Map a whole file read-only. Returns MOTA_OK or MOTA_ERR_IO (message printed). */
int tool_map(const char *path, struct mapped *m);
void tool_unmap(struct mapped *m);

/*
 * Atomic output: data goes to a temporary file beside path, which is
 * renamed over path on commit and removed on abort, so no partial output
 * file is ever left behind.
 */
struct outfile {
    FILE *f;
    char tmp[4096];
    char path[4096];
    int mode;
};
int tool_out_open(struct outfile *o, const char *path, int mode);
int tool_out_write(struct outfile *o, const void *p, size_t n);
int tool_out_commit(struct outfile *o);
void tool_out_abort(struct outfile *o);

/* "mota: error: NAME: message[: detail]" on stderr; returns code. */
int tool_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Load a key file (PEM/DER) into a trusted key / a signing key. */
struct mota_p256_key;
int tool_load_key(const char *path, struct mota_p256_key *key);

void tool_hex(FILE *f, const uint8_t *p, size_t n);

/* Minimal JSON writer. */
struct json {
    FILE *f;
    int depth;
    bool first[16];
};
void json_begin(struct json *j, FILE *f);
void json_end(struct json *j);
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

/* Option parsing helpers: strict numbers. */
bool tool_parse_u64(const char *s, uint64_t *v);

#endif
