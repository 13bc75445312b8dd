#include "util.h"

#include "mota/compat.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
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

int tool_usage_err(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "mota: error: %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see mota %s --help)\n", cmd);
    return EXIT_USAGE;
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
    else
        tool_usage_err(cmd, "unknown option %s", arg);
    return '?';
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

/*
 * Every file this run reads (tool_map, tool_note_input) or has written
 * (tool_out_commit), by device and inode: an output that is one of them
 * would destroy an input or an earlier output, so tool_out_open refuses it.
 */
struct seen_file {
    dev_t dev;
    ino_t ino;
    char *path; /* for the message */
};
static struct seen_file *seen;
static size_t n_seen, seen_cap;

static void note_file(const struct stat *st, const char *path)
{
    for (size_t i = 0; i < n_seen; i++) {
        if (seen[i].dev == st->st_dev && seen[i].ino == st->st_ino)
            return;
    }
    if (n_seen == seen_cap) {
        size_t cap = seen_cap ? 2 * seen_cap : 16;
        struct seen_file *n = realloc(seen, cap * sizeof(*n));
        if (n == NULL)
            return; /* the check weakens; the command itself needs far less memory than this */
        seen = n;
        seen_cap = cap;
    }
    seen[n_seen].dev = st->st_dev;
    seen[n_seen].ino = st->st_ino;
    seen[n_seen].path = strdup(path);
    n_seen++;
}

void tool_note_input(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        note_file(&st, path);
}

/* path's directory resolved, then its last component: two spellings of a
 * file that does not exist yet compare equal. false if it cannot be made. */
static bool canonical(const char *path, char *out, size_t cap)
{
    char d[4096], b[4096], *dir;
    if (snprintf(d, sizeof(d), "%s", path) >= (int)sizeof(d) || snprintf(b, sizeof(b), "%s", path) >= (int)sizeof(b))
        return false;
    dir = realpath(dirname(d), NULL);
    if (dir == NULL)
        return false;
    bool ok = snprintf(out, cap, "%s/%s", dir, basename(b)) < (int)cap;
    free(dir);
    return ok;
}

bool tool_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    static char ca[8192], cb[8192];
    if (strcmp(a, b) == 0)
        return true;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return canonical(a, ca, sizeof(ca)) && canonical(b, cb, sizeof(cb)) && strcmp(ca, cb) == 0;
}

static const char *file_type(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
           : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

int tool_out_line(const char *path, const char *text)
{
    struct outfile o;
    int ret = tool_out_open(&o, path, 0644);
    if (ret != MOTA_OK)
        return ret;
    if ((ret = tool_out_write(&o, text, strlen(text))) != MOTA_OK || (ret = tool_out_write(&o, "\n", 1)) != MOTA_OK) {
        tool_out_abort(&o);
        return ret;
    }
    return tool_out_commit(&o);
}

int tool_out_check(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return MOTA_OK; /* nothing there to lose; an unusable directory fails at open */
    /* renaming over a device or a FIFO would replace the node, not write to it */
    if (!S_ISREG(st.st_mode))
        return tool_fail(MOTA_ERR_NOT_REGULAR, "%s is %s", path, file_type(st.st_mode));
    for (size_t i = 0; i < n_seen; i++) {
        if (seen[i].dev == st.st_dev && seen[i].ino == st.st_ino)
            return tool_fail(MOTA_ERR_SAME_FILE, "%s is the same file as %s, which this command reads or wrote", path,
                             seen[i].path ? seen[i].path : "an input");
    }
    return MOTA_OK;
}

#define HUGE_PAGE (2u << 20)

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
    note_file(&st, path);
    m->len = (size_t)st.st_size;
    if (m->len == 0) {
        static const uint8_t empty[1];
        m->data = empty;
        close(fd);
        return MOTA_OK;
    }
    /* huge pages for a large file only: a small one would pay for zeroing (and, under ASan, scanning) 2 MiB */
    size_t unit = m->len >= HUGE_PAGE ? HUGE_PAGE : 4096u;
    m->map_len = (m->len + unit - 1) / unit * unit;
    m->map = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m->map == MAP_FAILED) {
        int e = errno;
        memset(m, 0, sizeof(*m));
        close(fd);
        return tool_fail(MOTA_ERR_IO, "%s: %s", path, strerror(e));
    }
    if (unit == HUGE_PAGE)
        (void)madvise(m->map, m->map_len, MADV_HUGEPAGE);
    size_t got = 0;
    while (got < m->len) {
        ssize_t r = read(fd, (uint8_t *)m->map + got, m->len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) { /* an error, or the file shrank while it was read */
            int e = r < 0 ? errno : EIO;
            close(fd);
            tool_unmap(m);
            return tool_fail(MOTA_ERR_IO, "%s: reading: %s", path, r < 0 ? strerror(e) : "shorter than its size");
        }
        got += (size_t)r;
    }
    close(fd);
    m->data = m->map;
    return MOTA_OK;
}

void tool_unmap(struct mapped *m)
{
    if (m->map != NULL)
        munmap(m->map, m->map_len);
    memset(m, 0, sizeof(*m));
}

static int out_open(struct outfile *o, const char *path, int mode, bool no_replace)
{
    char dir[4096];
    int fd, ret;
    memset(o, 0, sizeof(*o));
    if (strlen(path) >= sizeof(o->path) - 16)
        return tool_fail(MOTA_ERR_ARG, "%s: path too long", path);
    if ((ret = tool_out_check(path)) != MOTA_OK)
        return ret;
    if (no_replace && access(path, F_OK) == 0)
        return tool_fail(MOTA_ERR_FILE_EXISTS, "%s", path);
    strcpy(o->path, path);
    strcpy(dir, path);
    snprintf(o->tmp, sizeof(o->tmp), "%s/.%s.XXXXXX", dirname(dir), basename(o->path));
    strcpy(o->path, path); /* basename may modify its argument */
    fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        o->tmp[0] = '\0';
        return tool_fail(MOTA_ERR_IO, "%s: creating a temporary file beside it: %s", path, strerror(e));
    }
    o->mode = mode;
    o->no_replace = no_replace;
    o->f = fdopen(fd, "wb");
    if (o->f == NULL) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = '\0';
        return tool_fail(MOTA_ERR_IO, "%s: %s", path, strerror(e));
    }
    return MOTA_OK;
}

int tool_out_open(struct outfile *o, const char *path, int mode)
{
    return out_open(o, path, mode, false);
}

int tool_out_open_new(struct outfile *o, const char *path, int mode)
{
    return out_open(o, path, mode, true);
}

int tool_out_write(struct outfile *o, const void *p, size_t n)
{
    if (n > 0 && fwrite(p, 1, n, o->f) != n)
        return tool_fail(MOTA_ERR_IO, "%s: %s", o->path, strerror(errno));
    return MOTA_OK;
}

/* Put the temporary file in place: over path, or only where nothing is. */
static int out_rename(const struct outfile *o)
{
    if (!o->no_replace)
        return rename(o->tmp, o->path);
    if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    /* a file system without RENAME_NOREPLACE: link() refuses an existing name too */
    if (link(o->tmp, o->path) != 0)
        return -1;
    unlink(o->tmp);
    return 0;
}

int tool_out_commit(struct outfile *o)
{
    int fd = fileno(o->f), e;
    char dir[4096];
    struct stat st;

    /* a full disk may show only here (buffered data), at fsync or at close
     * (delayed allocation, network file systems): each says why, with the path */
    if (fflush(o->f) != 0 || fchmod(fd, (mode_t)o->mode) != 0) {
        e = errno;
        tool_out_abort(o);
        return tool_fail(MOTA_ERR_IO, "%s: %s", o->path, strerror(e));
    }
    if (!o->no_sync && fsync(fd) != 0) {
        e = errno;
        tool_out_abort(o);
        return tool_fail(MOTA_ERR_IO, "%s: syncing: %s", o->path, strerror(e));
    }
    e = fclose(o->f) != 0 ? errno : 0;
    o->f = NULL;
    if (e != 0) {
        tool_out_abort(o);
        return tool_fail(MOTA_ERR_IO, "%s: closing: %s", o->path, strerror(e));
    }
    if (out_rename(o) != 0) {
        e = errno;
        tool_out_abort(o);
        if (e == EEXIST)
            return tool_fail(MOTA_ERR_FILE_EXISTS, "%s", o->path);
        return tool_fail(MOTA_ERR_IO, "%s: renaming the temporary file over it: %s", o->path, strerror(e));
    }
    o->tmp[0] = '\0'; /* it is path now: abort must not remove it */
    if (stat(o->path, &st) == 0)
        note_file(&st, o->path);
    if (o->no_sync)
        return MOTA_OK;
    /* the rename is durable once the directory is synced */
    snprintf(dir, sizeof(dir), "%s", o->path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return tool_fail(MOTA_ERR_IO, "%s: opening its directory to sync it: %s", o->path, strerror(errno));
    /* a file system that cannot sync a directory says EINVAL: nothing more can be done there */
    if (fsync(dfd) != 0 && errno != EINVAL) {
        e = errno;
        close(dfd);
        return tool_fail(MOTA_ERR_IO, "%s: syncing its directory: %s", o->path, strerror(e));
    }
    close(dfd);
    return MOTA_OK;
}

void tool_out_abort(struct outfile *o)
{
    if (o->f != NULL) {
        fclose(o->f);
        o->f = NULL;
    }
    if (o->tmp[0] != '\0') {
        unlink(o->tmp);
        o->tmp[0] = '\0';
    }
}

int tool_load_key(const char *path, struct mota_p256_key *key)
{
    static const char *const holds = "a key file holds one P-256 key, PEM (EC PRIVATE KEY, PRIVATE KEY or PUBLIC KEY) "
                                     "or DER, as `mota keygen` or openssl writes it";
    struct mapped m;
    int ret = tool_map(path, &m);
    if (ret != MOTA_OK)
        return ret;
    if (m.len == 0 || m.len > (1u << 20)) {
        /* mota_key_parse refuses these as a bad argument, which says nothing about the file */
        size_t len = m.len;
        tool_unmap(&m);
        if (len == 0)
            return tool_fail(MOTA_ERR_KEY_INVALID, "%s is empty: %s", path, holds);
        return tool_fail(MOTA_ERR_KEY_INVALID, "%s is %zu bytes, too large for a key: %s", path, len, holds);
    }
    ret = mota_key_parse(m.data, m.len, key);
    tool_unmap(&m);
    if (ret == MOTA_ERR_KEY_INVALID)
        return tool_fail(ret, "%s: %s", path, holds);
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
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
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

/* ---- JSON ---- */

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

void json_doc(struct json *j, FILE *f, const char *command, bool compact)
{
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

double tool_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
