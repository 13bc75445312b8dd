/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota reference: a board self-test's expected output, made on the QEMU
 * board itself. What a user would otherwise do by hand, in a private
 * temporary directory removed at the end (also on an error and on SIGINT,
 * SIGTERM or SIGHUP): a signing key made for this run only, a fresh board
 * flash provisioned to trust it with the model's slot (provision.c), the
 * model packed without a self-test and signed with that key, the board
 * started (`mota sim --target`), the container pushed, the model run on the
 * input as `mota invoke` runs it (dev_invoke), its output written
 * atomically, the board stopped.
 *
 * pack, push and the launcher run as child processes of this same
 * executable (/proc/self/exe): each keeps its own signal handling, files and
 * output; their stdout is dropped, their stderr kept in the private
 * directory, and a failure is reported with the reason the child gave (the
 * third field of its last `mota: error:` line, as docs/host-tool.md tells
 * scripts to read it). The key never leaves the private directory.
 */
#include "cmds.h"
#include "provision.h"

#include "common/files.h"
#include "common/json.h"
#include "common/util.h"
#include "link/devlink.h"

#include "mota/crypto_sign.h"
#include "mota/err.h"
#include "mota/nbin.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define REF_MAX_OUTPUT (16u << 20) /* as invoke's: a board's I/O buffer is far smaller */

static void help(FILE *f)
{
    fprintf(f, "usage: mota reference --target " BOARD_QEMU_NAMES " --input FILE [--output-size N]\n"
               "                      [--params PARAMS.bin] [-o OUT] [--json] [--timeout S] [--firmware ELF]\n"
               "                      [--qemu PATH] MODEL.bin\n\n"
               "Runs MODEL.bin (an ST runtime-loadable model, CPU-executable or legacy X-CUBE-AI,\n"
               "as pack takes it) on FILE on a fresh QEMU board of the target, and writes the\n"
               "model's output bytes to OUT: the expected output of a self-test that passes on that\n"
               "board (pack --selftest-input FILE --selftest-output OUT).\n"
               "Everything runs in a private temporary directory ($TMPDIR or /tmp), removed at the\n"
               "end, also on an error or Ctrl-C: a signing key made for this run only (never shown),\n"
               "a board flash provisioned to trust it, the model packed without a self-test, the\n"
               "board started (mota sim --target), the container pushed, the model invoked.\n"
               "  --target BOARD         the board: " BOARD_QEMU_CHOICE " (ports/boards.txt; QEMU\n"
               "                         " BOARD_TARGET_MACHINES ")\n"
               "  --input FILE           the model's input\n"
               "  --output-size N        the model's output size in bytes (default: what the board says\n"
               "                         of the model, as `mota status` shows it; required with a\n"
               "                         firmware that does not say it)\n"
               "  --params PARAMS.bin    the params file of a split model\n"
               "  -o, --output OUT       written atomically (default: FILE's name with its extension\n"
               "                         replaced by .ref.bin, beside it: in.bin gives in.ref.bin)\n"
               "  --json                 one JSON document on stdout (docs/json.md)\n"
               "  --timeout S            bounds the board's boot and every wait for it (default 30)\n"
               "  --firmware ELF --qemu PATH   the board's, as mota sim --target takes them (defaults:\n"
               "                         the firmware of this build or $MOTA_FIRMWARE, qemu-system-arm)\n"
               "Progress goes to stderr; stdout says what was written, in one line.\n"
               "Exit codes: 0 written; 1 refused: MODEL is no valid model, or the board refused it\n"
               "or would not run it on FILE (the sizes given are said); 2 usage; 3 a file unusable,\n"
               "the firmware or QEMU not found, the board unreachable; 6 the board stopped\n"
               "answering; 128 + the signal when interrupted.\n");
}

/* What the command line asks. */
struct ref_opts {
    const struct board_target *t;
    const char *input, *params, *output, *model;
    const char *firmware, *qemu; /* for the launcher: NULL, its defaults */
    uint64_t out_size;
    double timeout_s;
    bool json;
    char default_out[PATH_MAX];
};

/* How a run went: where it stopped, why, and what it found. */
struct ref_run {
    char dir[PATH_MAX / 2]; /* the private directory; "" while there is none (short: its files' paths fit) */
    char c_name[MOTA_NBIN_MAX_NAME + 1];
    char port[PATH_MAX]; /* the board's endpoint, tcp:HOST:PORT */
    size_t container_len;
    int status;       /* the reason: MOTA_OK, or why it stopped */
    int rc;           /* the exit code */
    const char *step; /* where it stopped (docs/json.md): NULL when it did not */
    bool said;        /* the failure is on stderr already (tool_fail): detail is for --json */
    char detail[1024];
    struct dev_io io;  /* what the board says of the model's inputs and outputs (known: it does) */
    uint64_t out_size; /* the output's: --output-size, or the board's word */
    uint32_t us;       /* the inference, on the board's clock */
    uint8_t *out;
};

/* The signal that ends the run (0: none), and the children it stops: the board's launcher, the step. */
static volatile sig_atomic_t ref_signal, board_pid, step_pid;

static void on_signal(int sig)
{
    if (ref_signal == 0)
        ref_signal = sig;
    if (board_pid > 0)
        kill((pid_t)board_pid, SIGTERM);
    if (step_pid > 0)
        kill((pid_t)step_pid, SIGTERM);
}

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
    va_list ap;
    fputs("reference: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* The run stops at step with this reason and exit code: false, for the caller to return. */
static bool ref_fail(struct ref_run *r, const char *step, int status, int rc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static bool ref_fail(struct ref_run *r, const char *step, int status, int rc, const char *fmt, ...)
{
    va_list ap;
    r->step = step;
    r->status = status;
    r->rc = rc;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
    va_end(ap);
    return false;
}

/* The same for a failure a helper has said already (tool_fail): its reason, the detail for --json. */
static bool ref_said(struct ref_run *r, const char *step, int rc, const char *detail)
{
    ref_fail(r, step, tool_failed() != 0 ? tool_failed() : MOTA_ERR_IO, rc, "%s", detail);
    r->said = true;
    return false;
}

/* A signal came during step: the run stops there (the reason an interrupted push reports, as push's). */
static bool go_on(struct ref_run *r, const char *step)
{
    if (ref_signal == 0)
        return true;
    const char *name = ref_signal == SIGINT ? "SIGINT" : ref_signal == SIGTERM ? "SIGTERM" : "SIGHUP";
    return ref_fail(r, step, MOTA_ERR_TRANSPORT, 128 + ref_signal,
                    "interrupted by %s at step %s: nothing was written, the board (if started) and the temporary "
                    "files are gone",
                    name, step);
}

/* FILE's name with its extension replaced by .ref.bin, beside it. */
static void default_output(struct ref_opts *o)
{
    const char *slash = strrchr(o->input, '/');
    const char *base = slash ? slash + 1 : o->input, *dot = strrchr(base, '.');
    size_t keep = dot != NULL && dot != base ? (size_t)(dot - o->input) : strlen(o->input);
    snprintf(o->default_out, sizeof(o->default_out), "%.*s.ref.bin", (int)keep, o->input);
    o->output = o->default_out;
}

/* One of the options: 1 taken, <0 a usage error (said). */
static int ref_opt(struct ref_opts *o, int c, const char *arg)
{
    uint64_t v;
    switch (c) {
    case 'B':
        if ((o->t = board_target_find(arg)) == NULL || o->t->machine[0] == 0) /* it runs on QEMU */
            return tool_usage_err("reference", "--target '%s': " BOARD_QEMU_CHOICE, arg), -1;
        return 1;
    case 'i': o->input = arg; return 1;
    case 'p': o->params = arg; return 1;
    case 'o': o->output = arg; return 1;
    case 'F': o->firmware = arg; return 1;
    case 'Q': o->qemu = arg; return 1;
    case 'j': o->json = true; return 1;
    case 'n':
        if (!tool_parse_u64(arg, &o->out_size) || o->out_size == 0 || o->out_size > REF_MAX_OUTPUT)
            return tool_usage_err("reference", "--output-size '%s': 1 to %u bytes", arg, REF_MAX_OUTPUT), -1;
        return 1;
    case 'T':
        if (!tool_parse_u64(arg, &v) || v == 0 || v > 3600)
            return tool_usage_err("reference", "--timeout '%s': 1 to 3600 seconds", arg), -1;
        o->timeout_s = (double)v;
        return 1;
    default: return -1; /* '?': tool_getopt has said it */
    }
}

/* The command line into o: EXIT_OK (answered: --help printed), or EXIT_USAGE (said). */
static int parse(int argc, char **argv, struct ref_opts *o, bool *answered)
{
    /* clang-format off */ /* a table packed by hand */
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"target", required_argument, 0, 'B'}, {"input", required_argument, 0, 'i'},
        {"output-size", required_argument, 0, 'n'}, {"params", required_argument, 0, 'p'},
        {"output", required_argument, 0, 'o'}, {"out", required_argument, 0, 'o'}, {"json", no_argument, 0, 'j'}, {"timeout", required_argument, 0, 'T'},
        {"firmware", required_argument, 0, 'F'}, {"qemu", required_argument, 0, 'Q'}, {0, 0, 0, 0}};
    /* clang-format on */
    int c;
    memset(o, 0, sizeof(*o));
    o->timeout_s = 30;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "ho:", opts, "reference")) != -1) {
        if (c == 'h') {
            help(stdout);
            *answered = true;
            return EXIT_OK;
        }
        if (ref_opt(o, c, optarg) < 0)
            return EXIT_USAGE;
    }
    if (argc - optind != 1)
        return argc - optind == 0 ? tool_usage_err("reference", "needs the model file (MODEL.bin)")
                                  : tool_usage_err("reference", "unexpected argument '%s'", argv[optind + 1]);
    o->model = argv[optind];
    if (o->t == NULL || o->input == NULL)
        return tool_usage_err("reference", "needs%s%s", o->t == NULL ? " --target " BOARD_QEMU_NAMES : "",
                              o->input == NULL ? " --input FILE" : "");
    if (o->output == NULL)
        default_output(o);
    return EXIT_OK;
}

/* The inputs read (MODEL checked: its c_name is the board's model slot), and OUT opened: every file
 * refused before a board starts. */
static bool check_files(const struct ref_opts *o, struct ref_run *r, struct mapped *in, struct outfile *of)
{
    struct mapped m;
    struct mota_nbin_info info;
    const char *paths[3] = {o->model, o->params, o->input};
    char why[600];
    for (int i = 0; i < 3; i++) {
        if (paths[i] == NULL)
            continue;
        if (tool_map(paths[i], i == 2 ? in : &m) != MOTA_OK) {
            char detail[620];
            json_file_why(paths[i], why, sizeof(why));
            snprintf(detail, sizeof(detail), "%s%s", i == 0 ? "" : i == 1 ? "--params " : "--input ", why);
            return ref_said(r, "files", EXIT_IO, detail);
        }
        if (i == 0) {
            int ret = mota_nbin_validate(m.data, m.len, &info);
            if (ret == MOTA_OK)
                devinfo_copy_str(r->c_name, sizeof(r->c_name), info.c_name, info.c_name_len);
            tool_unmap(&m);
            if (ret != MOTA_OK)
                return ref_fail(r, "files", ret, EXIT_INVALID, "%s: not a model pack takes", o->model);
            /* a board's model slot is named in its provisioning record: 23 characters at most */
            if (info.c_name_len >= sizeof(((struct mota_provision *)0)->models[0]))
                return ref_fail(r, "files", MOTA_ERR_NO_SLOT, EXIT_INVALID,
                                "%s: its C name '%s' is %zu characters, and a board's model slot holds at most %zu",
                                o->model, r->c_name, info.c_name_len,
                                sizeof(((struct mota_provision *)0)->models[0]) - 1);
        } else if (i == 1) {
            tool_unmap(&m);
        }
    }
    if (tool_out_open(of, o->output, 0644) != MOTA_OK) {
        snprintf(why, sizeof(why), "-o %s: %s", o->output, mota_err_str(tool_failed()));
        return ref_said(r, "files", EXIT_IO, why);
    }
    fcntl(fileno(of->f), F_SETFD, FD_CLOEXEC); /* not the board's */
    return true;
}

/* DIR/name into buf. */
static const char *in_dir(const struct ref_run *r, const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", r->dir, name);
    return buf;
}

/* The private directory (0700): $TMPDIR when it is an absolute path the board takes (no spaces), else /tmp. */
static bool make_dir(struct ref_run *r)
{
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] != '/' || strchr(tmp, ' ') != NULL || strlen(tmp) + 32 > sizeof(r->dir))
        tmp = "/tmp";
    snprintf(r->dir, sizeof(r->dir), "%s/mota-reference-XXXXXX", tmp);
    if (mkdtemp(r->dir) != NULL)
        return true;
    int e = errno;
    r->dir[0] = 0;
    return ref_fail(r, "files", MOTA_ERR_IO, EXIT_IO, "a private directory in %s: %s", tmp, strerror(e));
}

/* The private directory and everything in it (the children's files too) gone. */
static void remove_dir(struct ref_run *r)
{
    if (r->dir[0] == 0)
        return;
    DIR *d = opendir(r->dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    if (rmdir(r->dir) != 0)
        fprintf(stderr, "reference: could not remove %s: %s\n", r->dir, strerror(errno));
    r->dir[0] = 0;
}

/* The run's own key pair, key.pem (0600) and key.pub.pem, in the private directory; the private key
 * wiped from memory. */
static bool make_key(struct ref_run *r)
{
    struct mota_p256_key key;
    char pems[2][512], path[PATH_MAX];
    const char *names[2] = {"key.pem", "key.pub.pem"};
    int ret = mota_key_generate(&key);
    if (ret == MOTA_OK && (ret = mota_key_write_private_pem(&key, pems[0], sizeof(pems[0]))) == MOTA_OK)
        ret = mota_key_write_public_pem(&key, pems[1], sizeof(pems[1]));
    memset(&key, 0, sizeof(key));
    if (ret != MOTA_OK) {
        memset(pems, 0, sizeof(pems));
        return ref_fail(r, "pack", ret, EXIT_IO, "the run's signing key");
    }
    for (int i = 0; i < 2 && ret == MOTA_OK; i++) {
        struct outfile o;
        if ((ret = tool_out_open_new(&o, in_dir(r, names[i], path, sizeof(path)), i == 0 ? 0600 : 0644)) != MOTA_OK)
            break;
        if ((ret = tool_out_write(&o, pems[i], strlen(pems[i]))) == MOTA_OK)
            ret = tool_out_commit(&o);
        else
            tool_out_abort(&o);
    }
    memset(pems, 0, sizeof(pems));
    return ret == MOTA_OK || ref_said(r, "pack", EXIT_IO, "the run's signing key: not written");
}

/* `mota ARGV...` (this executable) as a child: stdout dropped, stderr into the private directory's file
 * err; stopped by on_signal while it runs, and with this process when it dies. Its pid, or -1. */
static pid_t spawn(const char *const *argv, const char *err, volatile sig_atomic_t *slot)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old); /* no signal between the fork and the pid kept in slot */
    fflush(NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC), fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (getppid() != parent || nul < 0 || fd < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(fd, 2) < 0)
            _exit(127);
        execv("/proc/self/exe", (char *const *)argv);
        _exit(127);
    }
    if (pid > 0)
        *slot = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return pid;
}

/* The child's exit code (128 + the signal that ended it), once it has ended. */
static int wait_child(pid_t pid, volatile sig_atomic_t *slot)
{
    int st = 0;
    pid_t w;
    while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {
    }
    *slot = 0;
    if (w != pid)
        return EXIT_IO;
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : EXIT_IO;
}

/* The reason code named name (n bytes), or 0. */
static int reason_named(const char *name, size_t n)
{
    for (int i = 0; i < mota_err_count(); i++) {
        const char *s = mota_err_name(mota_err_at(i));
        if (s != NULL && strlen(s) == n && memcmp(s, name, n) == 0)
            return mota_err_at(i);
    }
    return 0;
}

/* A child's last "mota: error: NAME: message[: detail]" line: its reason, its detail into out. The
 * lines before it go to stderr as they are. 0 when it said none. */
static int child_reason(const char *err, char *out, size_t cap)
{
    FILE *f = fopen(err, "r");
    char line[2048], last[2048] = "";
    out[0] = 0;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (last[0])
            fputs(last, stderr);
        snprintf(last, sizeof(last), "%s", line);
    }
    if (f != NULL)
        fclose(f);
    static const char tag[] = "mota: error: ";
    last[strcspn(last, "\n")] = 0;
    bool tagged = strncmp(last, tag, sizeof(tag) - 1) == 0;
    const char *name = last + (tagged ? sizeof(tag) - 1 : 0), *colon = tagged ? strchr(name, ':') : NULL;
    int code = colon != NULL ? reason_named(name, (size_t)(colon - name)) : 0;
    if (code == 0) {
        if (last[0])
            fprintf(stderr, "%s\n", last);
        return 0;
    }
    const char *rest = colon[1] == ' ' ? colon + 2 : colon + 1, *msg = mota_err_str(code);
    if (strncmp(rest, msg, strlen(msg)) == 0 && (rest[strlen(msg)] == 0 || rest[strlen(msg)] == ':'))
        rest += strlen(msg) + (rest[strlen(msg)] == ':' ? 2 : 0);
    snprintf(out, cap, "%s", rest);
    return code;
}

/* A child that failed (exit code rc): the run stops at step with the child's reason and detail after what. */
static bool child_failed(struct ref_run *r, const char *step, const char *err, int rc, const char *what)
{
    char detail[900];
    if (!go_on(r, step))
        return false;
    int code = child_reason(err, detail, sizeof(detail));
    if (rc == 127 && code == 0)
        return ref_fail(r, step, MOTA_ERR_IO, EXIT_IO, "%s: cannot run /proc/self/exe", what);
    return ref_fail(r, step, code != 0 ? code : MOTA_ERR_INTERNAL, rc >= 1 && rc <= 6 ? rc : EXIT_IO, "%s%s%s", what,
                    detail[0] ? ": " : "", detail);
}

/* `mota ARGV...` run to its end; false (said as what) when it fails. */
static bool run_child(struct ref_run *r, const char *step, const char *const *argv, const char *what)
{
    char err[PATH_MAX];
    in_dir(r, "step.err", err, sizeof(err));
    pid_t pid = spawn(argv, err, &step_pid);
    if (pid < 0)
        return ref_fail(r, step, MOTA_ERR_IO, EXIT_IO, "fork: %s", strerror(errno));
    int rc = wait_child(pid, &step_pid);
    return rc == EXIT_OK ? go_on(r, step) : child_failed(r, step, err, rc, what);
}

/* MODEL packed without a self-test, signed with the run's key, for the board's identity. */
static bool pack_model(const struct ref_opts *o, struct ref_run *r, const struct board_identity *id)
{
    char key[PATH_MAX], out[PATH_MAX], what[PATH_MAX + 16];
    in_dir(r, "key.pem", key, sizeof(key));
    in_dir(r, "model.mota", out, sizeof(out));
    const char *argv[20] = {"mota", "pack", "--key", key, "--vendor", id->vendor, "--class", id->klass, "--seq", "1"};
    int a = 10;
    argv[a++] = "-o";
    argv[a++] = out;
    if (o->params != NULL) {
        argv[a++] = "--params";
        argv[a++] = o->params;
    }
    argv[a++] = o->model;
    argv[a] = NULL;
    progress("packing %s (model %s) with a signing key made for this run", o->model, r->c_name);
    snprintf(what, sizeof(what), "packing %s", o->model);
    if (!run_child(r, "pack", argv, what))
        return false;
    struct mapped m;
    if (tool_map(out, &m) != MOTA_OK)
        return ref_fail(r, "pack", MOTA_ERR_IO, EXIT_IO, "the container pack wrote");
    r->container_len = m.len;
    tool_unmap(&m);
    return true;
}

/* The board's log, its last lines: why a board did not come up. */
static void board_log_tail(const struct ref_run *r)
{
    char path[PATH_MAX], lines[6][256];
    unsigned n = 0;
    FILE *f = fopen(in_dir(r, "board.flash.log", path, sizeof(path)), "r");
    while (f != NULL && fgets(lines[n % 6], sizeof(lines[0]), f) != NULL)
        n++;
    if (f != NULL)
        fclose(f);
    for (unsigned i = n > 6 ? n - 6 : 0; i < n; i++)
        fprintf(stderr, "reference: board log: %s%s", lines[i % 6], strchr(lines[i % 6], '\n') ? "" : "\n");
}

/* The board's endpoint, once its launcher has written it (the board is ready), or why not. */
static bool board_ready(const struct ref_opts *o, struct ref_run *r)
{
    char port[PATH_MAX], err[PATH_MAX], what[64];
    double deadline = tool_now() + o->timeout_s;
    in_dir(r, "port", port, sizeof(port));
    snprintf(what, sizeof(what), "starting the %s board", o->t->name);
    while (go_on(r, "board")) {
        FILE *f = fopen(port, "r");
        if (f != NULL && fgets(r->port, sizeof(r->port), f) != NULL && strchr(r->port, '\n') != NULL) {
            fclose(f);
            r->port[strcspn(r->port, "\n")] = 0;
            return true;
        }
        if (f != NULL)
            fclose(f);
        int st;
        if (waitpid((pid_t)board_pid, &st, WNOHANG) == (pid_t)board_pid) {
            board_pid = 0;
            return child_failed(r, "board", in_dir(r, "board.err", err, sizeof(err)),
                                WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_IO, what);
        }
        if (tool_now() > deadline) {
            board_log_tail(r);
            return ref_fail(r, "board", MOTA_ERR_TIMEOUT, EXIT_TIMEOUT, "%s: not ready within %g s (--timeout)", what,
                            o->timeout_s);
        }
        usleep(20 * 1000);
    }
    return false;
}

/* A fresh board: its flash provisioned in the private directory (the run's key, MODEL's slot), its
 * launcher started on it, ready. */
static bool start_board(const struct ref_opts *o, struct ref_run *r, const struct board_identity *id)
{
    char flash[PATH_MAX], port[PATH_MAX], err[PATH_MAX];
    bool done = false;
    in_dir(r, "board.flash", flash, sizeof(flash));
    progress("starting a fresh %s board", o->t->name);
    if (board_provision(flash, o->t, id, "", &done, NULL) != MOTA_OK)
        return ref_said(r, "board", tool_failed() == MOTA_ERR_IO ? EXIT_IO : EXIT_INVALID,
                        "the board's flash could not be provisioned for the model's slot");
    if (!go_on(r, "board"))
        return false;
    const char *argv[16] = {"mota", "sim", "--target", o->t->name, "--flash", flash, "--tcp", "127.0.0.1:0"};
    int a = 8;
    argv[a++] = "--port-file";
    argv[a++] = in_dir(r, "port", port, sizeof(port));
    if (o->firmware != NULL) {
        argv[a++] = "--firmware";
        argv[a++] = o->firmware;
    }
    if (o->qemu != NULL) {
        argv[a++] = "--qemu";
        argv[a++] = o->qemu;
    }
    argv[a] = NULL;
    if (spawn(argv, in_dir(r, "board.err", err, sizeof(err)), &board_pid) < 0)
        return ref_fail(r, "board", MOTA_ERR_IO, EXIT_IO, "fork: %s", strerror(errno));
    return board_ready(o, r);
}

/* The board off (its launcher ends QEMU and its own files), before the private directory goes. */
static void stop_board(void)
{
    pid_t pid = (pid_t)board_pid;
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 500; i++) {
        pid_t w = waitpid(pid, NULL, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) {
            board_pid = 0;
            return;
        }
        usleep(20 * 1000);
    }
    kill(pid, SIGKILL); /* a launcher that does not end in 10 s: its QEMU dies with it (PDEATHSIG) */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    board_pid = 0;
}

/* The container onto the board (installed on trial: it has no self-test). */
static bool push_model(const struct ref_opts *o, struct ref_run *r)
{
    char container[PATH_MAX], timeout[32], what[PATH_MAX + 64];
    snprintf(timeout, sizeof(timeout), "%g", o->timeout_s);
    in_dir(r, "model.mota", container, sizeof(container));
    const char *argv[] = {"mota", "push", "-q", "--timeout", timeout, r->port, container, NULL};
    progress("pushing %s (a container of %zu bytes) to the board at %s", o->model, r->container_len, r->port);
    snprintf(what, sizeof(what), "pushing %s to the %s board", o->model, o->t->name);
    return run_child(r, "push", argv, what);
}

/* The board did not run the model: its words, or (a device says only that) the sizes given, with the
 * model's where the board says them. */
static bool not_run(const struct ref_opts *o, struct ref_run *r, int status, const char *words, size_t in_len)
{
    char model[160];
    if (r->io.known)
        snprintf(model, sizeof(model), "the board says model %s takes %llu bytes and gives %llu", r->c_name,
                 (unsigned long long)r->io.in_bytes, (unsigned long long)r->io.out_bytes);
    else
        snprintf(model, sizeof(model), "the board does not say the sizes model %s expects", r->c_name);
    if (status == MOTA_ERR_SELFTEST_RUN && words[0] == 0)
        return ref_fail(r, "invoke", status, EXIT_INVALID,
                        "model %s did not run on %s: an input of %zu bytes with an output of %llu bytes%s; %s",
                        r->c_name, o->input, in_len, (unsigned long long)r->out_size,
                        o->out_size ? " (--output-size)" : "", model);
    return ref_fail(r, "invoke", status, EXIT_INVALID, "model %s on %s%s%s", r->c_name, o->input, words[0] ? ": " : "",
                    words);
}

/* The output's size: --output-size, else what the board says of the model (model key 18); its buffer. */
static bool output_size(const struct ref_opts *o, struct ref_run *r)
{
    r->out_size = o->out_size ? o->out_size : r->io.known ? r->io.out_bytes : 0;
    if (r->out_size == 0 && r->io.known) /* the model says so itself: no --output-size changes that */
        return ref_fail(r, "invoke", MOTA_ERR_SELFTEST_RUN, EXIT_INVALID,
                        "model %s says it gives 0 output bytes (the board reports its sizes): no output to make a "
                        "reference of",
                        r->c_name);
    if (r->out_size == 0)
        return ref_fail(r, "invoke", MOTA_ERR_ARG, EXIT_USAGE,
                        "the %s board does not report model %s's output size: give --output-size N", o->t->name,
                        r->c_name);
    if (r->out_size > REF_MAX_OUTPUT)
        return ref_fail(r, "invoke", MOTA_ERR_ARG, EXIT_INVALID,
                        "model %s gives %llu bytes (the board says): at most %u", r->c_name,
                        (unsigned long long)r->out_size, REF_MAX_OUTPUT);
    if ((r->out = malloc((size_t)r->out_size)) == NULL)
        return ref_fail(r, "invoke", MOTA_ERR_NOSPC, EXIT_IO, "%llu bytes for the output",
                        (unsigned long long)r->out_size);
    return true;
}

/* The board reached and its model found: what it says of it into r->io, its I/O buffer into *io_buffer,
 * its index (or -1, *status MOTA_ERR_NO_SLOT); the link's result. */
static int find_model(struct client *c, const struct link_opts *lo, struct ref_run *r, uint64_t *io_buffer, int *status,
                      int *idx)
{
    static struct dev_model models[DEV_MAX_MODELS];
    const uint8_t *info;
    size_t info_len;
    unsigned n = 0;
    int ret = link_connect(c, lo, tool_now() + lo->timeout_s, true, &info, &info_len);
    if (ret != MOTA_OK)
        return ret;
    devinfo_models(info, info_len, MOTA_INFO_MODELS, models, &n);
    devinfo_uint(info, info_len, MOTA_INFO_IO_BUFFER, io_buffer);
    *idx = devinfo_model_index(models, n, r->c_name, strlen(r->c_name));
    *status = *idx < 0 ? MOTA_ERR_NO_SLOT : MOTA_OK;
    if (*idx >= 0 && models[*idx].io.known && models[*idx].io.out_bytes > 0)
        r->io = models[*idx].io;
    return MOTA_OK;
}

/* The model run on the input, as `mota invoke` runs it: the output into r->out. */
static bool invoke_model(const struct ref_opts *o, struct ref_run *r, const struct mapped *in)
{
    static struct client c;
    struct link_opts lo = {.port = r->port, .baud = 115200, .timeout_s = o->timeout_s};
    uint64_t io_buffer = 0;
    int status = MOTA_OK, idx = -1;
    char words[600] = "";
    memset(&c, 0, sizeof(c));
    c.fd = -1;
    int ret = find_model(&c, &lo, r, &io_buffer, &status, &idx);
    if (ret == MOTA_OK && idx >= 0 && !output_size(o, r)) {
        client_close(&c);
        return false;
    }
    if (ret == MOTA_OK && idx >= 0) {
        progress("running %s on %s (%zu bytes in, %llu out%s)", r->c_name, o->input, in->len,
                 (unsigned long long)r->out_size, o->out_size ? "" : ", as the board says");
        ret = dev_invoke(&c, io_buffer, (unsigned)idx, in->data, in->len, r->out, (size_t)r->out_size, o->timeout_s,
                         &r->us, &status, words, sizeof(words));
    }
    client_close(&c);
    if (!go_on(r, "invoke"))
        return false;
    if (ret != MOTA_OK)
        return ref_fail(r, "invoke", ret, link_exit(ret), "the %s board at %s%s%s", o->t->name, r->port,
                        c.why[0] ? ": " : "", c.why);
    return status == MOTA_OK || not_run(o, r, status, words, in->len);
}

/* Every step, the board stopped and the private directory removed whatever happened. */
static void run_steps(const struct ref_opts *o, struct ref_run *r, const struct mapped *in)
{
    struct board_identity id;
    char pub[PATH_MAX];
    memset(&id, 0, sizeof(id));
    board_identity_defaults(&id, o->t);
    id.keys[id.n_keys++] = pub;
    id.models[id.n_models++] = r->c_name;
    if (make_dir(r)) {
        in_dir(r, "key.pub.pem", pub, sizeof(pub));
        if (make_key(r) && pack_model(o, r, &id) && start_board(o, r, &id) && push_model(o, r))
            invoke_model(o, r, in);
    }
    stop_board();
    remove_dir(r);
}

static void report(const struct ref_opts *o, const struct ref_run *r, bool written)
{
    if (!o->json) {
        if (written)
            printf("reference: %s, %llu bytes (%s on %s, %u us)\n", o->output, (unsigned long long)r->out_size,
                   o->model, o->t->name, r->us);
        return;
    }
    struct json j;
    json_doc(&j, stdout, "reference", false);
    json_reason(&j, r->status);
    json_str(&j, "detail", r->detail);
    json_str(&j, "target", o->t->name);
    json_str(&j, "model", o->model);
    json_str(&j, "c_name", r->c_name[0] ? r->c_name : NULL);
    json_str(&j, "input", o->input);
    json_str(&j, "output_file", written ? o->output : NULL);
    if (written) {
        json_uint(&j, "output_size", r->out_size);
        json_uint(&j, "duration_us", r->us);
    } else { /* every field still there (docs/json.md) */
        json_null(&j, "output_size");
        json_null(&j, "duration_us");
    }
    json_str(&j, "step", r->step);
    json_end(&j);
}

/* The run's signals caught (on) or given back (off). */
static void catch_signals(bool on)
{
    static struct sigaction old[3];
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: a wait returns at once */
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], on ? &sa : &old[i], on ? &old[i] : NULL);
}

int cmd_reference(int argc, char **argv)
{
    struct ref_opts o;
    bool answered = false;
    int rc = parse(argc, argv, &o, &answered);
    if (rc != EXIT_OK || answered)
        return rc;
    static struct ref_run r;
    struct mapped in = {0};
    struct outfile of;
    memset(&r, 0, sizeof(r));
    ref_signal = 0;
    tool_failed_clear();
    catch_signals(true);
    signal(SIGPIPE, SIG_IGN);
    if (check_files(&o, &r, &in, &of)) {
        run_steps(&o, &r, &in);
        if (r.status != MOTA_OK || !go_on(&r, "write"))
            tool_out_abort(&of);
        else if (tool_out_write(&of, r.out, (size_t)r.out_size) != MOTA_OK || tool_out_commit(&of) != MOTA_OK) {
            char detail[PATH_MAX + 32];
            tool_out_abort(&of); /* after a failed write; commit aborts by itself */
            snprintf(detail, sizeof(detail), "-o %s: not written", o.output);
            ref_said(&r, "write", EXIT_IO, detail);
        } else {
            progress("pack%s%s --selftest-input %s --selftest-output %s makes a self-test that passes on the %s",
                     o.params ? " --params " : "", o.params ? o.params : "", o.input, o.output, o.t->name);
        }
        free(r.out);
    }
    if (in.data != NULL)
        tool_unmap(&in);
    catch_signals(false);
    if (r.status != MOTA_OK && !r.said)
        tool_fail(r.status, "%s", r.detail);
    report(&o, &r, r.status == MOTA_OK);
    return r.status == MOTA_OK ? EXIT_OK : r.rc;
}
