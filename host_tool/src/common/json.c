/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON every command prints (docs/json.md): a minimal streaming writer. */
#include "json.h"
#include "util.h"

#include "mota/err.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void json_indent(struct json *j)
{
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

static void json_key(struct json *j, const char *key)
{
    if (!j->first[j->depth])
        fputs(j->compact ? ", " : ",", j->f);
    j->first[j->depth] = false;
    if (!j->compact) {
        fputc('\n', j->f);
        json_indent(j);
    }
    if (key != NULL) {
        fputc('"', j->f);
        fputs(key, j->f);
        fputs("\": ", j->f);
    }
}

/* The length of the well-formed UTF-8 sequence at s (at most n bytes), or 0: not one (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (len == 0 || len > n)
        return 0;
    if (c == 0xE0)
        lo = 0xA0; /* overlong */
    else if (c == 0xED)
        hi = 0x9F; /* surrogates */
    else if (c == 0xF0)
        lo = 0x90; /* overlong */
    else if (c == 0xF4)
        hi = 0x8F; /* above U+10FFFF */
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if (s[k] < 0x80 || s[k] > 0xBF)
            return 0;
    return len;
}

void json_escaped(FILE *f, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = u[i];
        size_t len;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7F)
            fprintf(f, "\\u%04x", c);
        else if (c < 0x80)
            fputc(c, f);
        else if ((len = utf8_len(u + i, n - i)) > 0) {
            fwrite(u + i, 1, len, f);
            i += len - 1;
        } else
            fputs("\\ufffd", f); /* a byte that starts no well-formed UTF-8 sequence: U+FFFD, one per byte */
    }
    fputc('"', f);
}

void json_file_why(const char *path, char *why, size_t cap)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, cap, "%s: %s", path, strerror(errno));
        return;
    }
    if (fstat(fd, &st) != 0)
        snprintf(why, cap, "%s: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        snprintf(why, cap, "%s: is a directory, not a file", path);
    else if (!S_ISREG(st.st_mode))
        snprintf(why, cap, "%s: not a regular file", path);
    else
        snprintf(why, cap, "%s: could not be read", path);
    close(fd);
}

void json_begin(struct json *j, FILE *f)
{
    memset(j, 0, sizeof(*j));
    j->f = f;
    fputc('{', f);
    j->depth = 1;
    j->first[1] = true;
}

bool json_doc_printed;

void json_doc(struct json *j, FILE *f, const char *command, bool compact)
{
    if (f == stdout)
        json_doc_printed = true;
    json_begin(j, f);
    j->compact = compact;
    json_uint(j, "schema", TOOL_JSON_SCHEMA);
    json_str(j, "command", command);
}

void json_end(struct json *j)
{
    fputs(j->compact ? "}\n" : "\n}\n", j->f);
    fflush(j->f);
}

void json_reason(struct json *j, int code)
{
    const char *name = mota_err_name(code);
    json_str(j, "status", name ? name : "MOTA_ERR_UNKNOWN");
    json_int(j, "code", code);
    json_str(j, "message", mota_err_str(code) ? mota_err_str(code) : "a code this tool does not know");
}

void json_real(struct json *j, const char *key, double v, int decimals)
{
    json_key(j, key);
    if (!isfinite(v)) /* JSON has no NaN or infinity */
        fputs("null", j->f);
    else if (v != 0 && fabs(v) < 1) /* 1e-9 is not 0.000000 */
        fprintf(j->f, "%.*g", decimals > 6 ? decimals : 6, v);
    else
        fprintf(j->f, "%.*f", decimals, v);
}

void json_obj(struct json *j, const char *key)
{
    json_key(j, key);
    fputc('{', j->f);
    j->depth++;
    j->first[j->depth] = true;
}

void json_obj_end(struct json *j)
{
    j->depth--;
    if (!j->compact) {
        fputc('\n', j->f);
        json_indent(j);
    }
    fputc('}', j->f);
}

void json_arr(struct json *j, const char *key)
{
    json_key(j, key);
    fputc('[', j->f);
    j->depth++;
    j->first[j->depth] = true;
}

void json_arr_end(struct json *j)
{
    j->depth--;
    if (!j->compact) {
        fputc('\n', j->f);
        json_indent(j);
    }
    fputc(']', j->f);
}

void json_strn(struct json *j, const char *key, const char *s, size_t n)
{
    if (j == NULL)
        return;
    json_key(j, key);
    json_escaped(j->f, s, n);
}

void json_str(struct json *j, const char *key, const char *s)
{
    if (s == NULL)
        json_null(j, key);
    else
        json_strn(j, key, s, strlen(s));
}

void json_uint(struct json *j, const char *key, uint64_t v)
{
    json_key(j, key);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_int(struct json *j, const char *key, int64_t v)
{
    json_key(j, key);
    fprintf(j->f, "%lld", (long long)v);
}

void json_bool(struct json *j, const char *key, bool v)
{
    json_key(j, key);
    fputs(v ? "true" : "false", j->f);
}

void json_hex(struct json *j, const char *key, const uint8_t *p, size_t n)
{
    json_key(j, key);
    fputc('"', j->f);
    tool_hex(j->f, p, n);
    fputc('"', j->f);
}

void json_null(struct json *j, const char *key)
{
    json_key(j, key);
    fputs("null", j->f);
}
