#include "util.h"

#include "mota/crypto_sign.h"
#include "mota/err.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void tool_err(const char *fmt, ...)
{
    va_list ap;
    fputs("mota: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int tool_fail(int code, const char *fmt, ...)
{
    va_list ap;
    const char *name = mota_err_name(code);
    fprintf(stderr, "mota: error: %s: %s", name ? name : "UNKNOWN", mota_err_str(code));
    if (fmt != NULL && fmt[0] != '\0') {
        fputs(": ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    return code;
}

int tool_map(const char *path, struct mapped *m)
{
    int fd;
    struct stat st;
    memset(m, 0, sizeof(*m));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tool_fail(MOTA_ERR_IO, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tool_fail(MOTA_ERR_IO, "%s: not a regular file", path);
    }
    m->len = (size_t)st.st_size;
    if (m->len == 0) {
        static const uint8_t empty[1];
        m->data = empty;
        close(fd);
        return MOTA_OK;
    }
    m->map = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m->map == MAP_FAILED) {
        m->map = NULL;
        return tool_fail(MOTA_ERR_IO, "%s: %s", path, strerror(errno));
    }
    (void)madvise(m->map, m->len, MADV_SEQUENTIAL);
    m->data = m->map;
    return MOTA_OK;
}

void tool_unmap(struct mapped *m)
{
    if (m->map != NULL)
        munmap(m->map, m->len);
    memset(m, 0, sizeof(*m));
}

int tool_out_open(struct outfile *o, const char *path, int mode)
{
    char dir[4096];
    int fd;
    memset(o, 0, sizeof(*o));
    if (strlen(path) >= sizeof(o->path) - 16)
        return tool_fail(MOTA_ERR_ARG, "%s: path too long", path);
    strcpy(o->path, path);
    strcpy(dir, path);
    snprintf(o->tmp, sizeof(o->tmp), "%s/.%s.XXXXXX", dirname(dir), basename(o->path));
    strcpy(o->path, path); /* basename may modify its argument */
    fd = mkstemp(o->tmp);
    if (fd < 0)
        return tool_fail(MOTA_ERR_IO, "%s: %s", path, strerror(errno));
    o->mode = mode;
    o->f = fdopen(fd, "wb");
    if (o->f == NULL) {
        close(fd);
        unlink(o->tmp);
        return tool_fail(MOTA_ERR_IO, "%s: %s", path, strerror(errno));
    }
    return MOTA_OK;
}

int tool_out_write(struct outfile *o, const void *p, size_t n)
{
    if (n > 0 && fwrite(p, 1, n, o->f) != n)
        return tool_fail(MOTA_ERR_IO, "%s: %s", o->path, strerror(errno));
    return MOTA_OK;
}

int tool_out_commit(struct outfile *o)
{
    int fd = fileno(o->f);
    if (fflush(o->f) != 0 || fchmod(fd, (mode_t)o->mode) != 0 || fsync(fd) != 0) {
        int e = errno;
        tool_out_abort(o);
        return tool_fail(MOTA_ERR_IO, "%s: %s", o->path, strerror(e));
    }
    if (fclose(o->f) != 0) {
        o->f = NULL;
        unlink(o->tmp);
        return tool_fail(MOTA_ERR_IO, "%s: %s", o->path, strerror(errno));
    }
    o->f = NULL;
    if (rename(o->tmp, o->path) != 0) {
        int e = errno;
        unlink(o->tmp);
        return tool_fail(MOTA_ERR_IO, "%s: %s", o->path, strerror(e));
    }
    return MOTA_OK;
}

void tool_out_abort(struct outfile *o)
{
    if (o->f != NULL) {
        fclose(o->f);
        o->f = NULL;
    }
    if (o->tmp[0] != '\0')
        unlink(o->tmp);
}

int tool_load_key(const char *path, struct mota_p256_key *key)
{
    struct mapped m;
    int ret = tool_map(path, &m);
    if (ret != MOTA_OK)
        return ret;
    ret = mota_key_parse(m.data, m.len, key);
    tool_unmap(&m);
    if (ret != MOTA_OK)
        return tool_fail(ret, "%s", path);
    return MOTA_OK;
}

void tool_hex(FILE *f, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", p[i]);
}

bool tool_parse_u64(const char *s, uint64_t *v)
{
    char *end;
    if (s == NULL || *s == '\0' || *s == '-')
        return false;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0')
        return false;
    *v = x;
    return true;
}

/* ---- JSON ---- */

static void json_indent(struct json *j)
{
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

static void json_key(struct json *j, const char *key)
{
    if (!j->first[j->depth])
        fputc(',', j->f);
    fputc('\n', j->f);
    j->first[j->depth] = false;
    json_indent(j);
    if (key != NULL) {
        fputc('"', j->f);
        fputs(key, j->f);
        fputs("\": ", j->f);
    }
}

void json_escaped(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void json_begin(struct json *j, FILE *f)
{
    memset(j, 0, sizeof(*j));
    j->f = f;
    fputc('{', f);
    j->depth = 1;
    j->first[1] = true;
}

void json_end(struct json *j)
{
    fputs("\n}\n", j->f);
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
    fputc('\n', j->f);
    json_indent(j);
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
    fputc('\n', j->f);
    json_indent(j);
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
