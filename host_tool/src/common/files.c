/* SPDX-License-Identifier: Apache-2.0 */
/* Files: inputs read whole, outputs written atomically, none of them twice; key files. */
#include "files.h"
#include "util.h"

#include "mota/crypto_sign.h"
#include "mota/err.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
    return S_ISDIR(m)    ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
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

bool tool_out_force;

/* an Intel HEX file whose first data record starts with the provisioning record's magic ("MPRV") */
static bool hex_record(const char *t, size_t n)
{
    for (size_t i = 0; i + 17 <= n; i++) {
        if (t[i] != ':' || (i > 0 && t[i - 1] != '\n'))
            continue;
        if (t[i + 7] == '0' && t[i + 8] == '0') /* record type 00: data */
            return strncasecmp(t + i + 9, "4D505256", 8) == 0;
    }
    return false;
}

/* What an existing file holds that an output must not replace without --force: its first 4 KiB tell. */
static const char *precious(const char *path)
{
    char head[4096];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL; /* unreadable: tool_out_open says more if it matters */
    ssize_t got = read(fd, head, sizeof(head) - 1);
    close(fd);
    if (got <= 0)
        return NULL;
    size_t n = (size_t)got;
    head[n] = 0;
    bool jwk = memmem(head, n, "\"kty\"", 5) != NULL;
    if (memmem(head, n, "PRIVATE KEY-----", 16) != NULL || (jwk && memmem(head, n, "\"d\"", 3) != NULL))
        return "a private key";
    if (jwk && memmem(head, n, "\"k\"", 3) != NULL)
        return "a secret key"; /* a key-encryption key (keygen --kek) */
    if ((n >= 4 && memcmp(head, "MPRV", 4) == 0) || hex_record(head, n))
        return "a provisioning record";
    return NULL;
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
    const char *what = tool_out_force ? NULL : precious(path);
    if (what != NULL)
        return tool_fail(MOTA_ERR_FILE_EXISTS, "%s holds %s", path, what);
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
