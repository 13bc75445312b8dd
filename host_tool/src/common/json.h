/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON every command prints (docs/json.md): a minimal streaming writer. */
#ifndef MOTA_TOOL_JSON_H
#define MOTA_TOOL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
/* a document was begun on stdout in this run (a --json usage error is then not one more) */
extern bool json_doc_printed;
void json_end(struct json *j);
/* A result in every command's form: "status": reason name ("MOTA_OK"), "code": its value, "message". */
void json_reason(struct json *j, int code);
void json_real(struct json *j, const char *key, double v, int decimals);
void json_obj(struct json *j, const char *key); /* key NULL inside arrays */
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
/* n bytes of s as a quoted JSON string: quotes, backslashes and control bytes escaped, well-formed UTF-8
 * kept as it is, and every other byte (a path or a device's text in another encoding) replaced by U+FFFD
 * (written "\ufffd"), so the output is always valid JSON in UTF-8. */
void json_escaped(FILE *f, const char *s, size_t n);
/* Why path cannot be read as a file, for a document's "detail": "PATH: No such file or directory",
 * "PATH: is a directory, not a file", ... (the same checks as tool_map). */
void json_file_why(const char *path, char *why, size_t cap);

#endif
