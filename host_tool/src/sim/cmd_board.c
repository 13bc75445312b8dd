/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The QEMU board launcher (`mota sim --target BOARD`, a board of ports/boards.txt); a
 * new board's flash is provisioned as `mota provision` does it (provision.c).
 * QEMU is given the board's machine alone (-M): each of these machines
 * implies its CPU, and the firmware knows its board's addresses.
 *
 * The launcher is the board's surroundings: its power supply, its reset
 * line and reset-cause register, and the cable to its UART. It owns the
 * TCP endpoint the host tools use and proxies it to the guest's link UART
 * (QEMU's first serial port, or its second for a board of flag serial2,
 * the first then unused; a unix socket QEMU connects to), so the endpoint
 * survives every reboot and power cut, as a serial cable does. QEMU runs
 * with -no-reboot: a guest reset ends the process, and the launcher starts
 * the board again, telling it why through its semihosting arguments
 * (reset=...): the reason the firmware announced on its log ("reset
 * software", "reset fault ..."), a watchdog for a reset nobody announced,
 * power-on after a power cut. Bytes the host sends while the board is off
 * or booting are dropped, as a UART would drop them. The flash file is the
 * board's size (its layout: provision.h); a board QEMU does not run is
 * refused, with what to do instead.
 */
#include "cmds.h"
#include "gate.h"
#include "provision.h"

#include "common/files.h"
#include "common/util.h"

#include "mota/err.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

struct board {
    const struct board_target *t;
    char tag[48]; /* "mota-BOARD: ", the start of the firmware's log lines */
    const char *qemu, *firmware, *flash;
    char abs_flash[PATH_MAX], log[PATH_MAX], sock[PATH_MAX], dir[PATH_MAX];
    bool icount, hang_on_trial, torn, measure_stack;
    uint64_t cut_at_op;
    const char *flash_timing; /* typ or max: the emulated flash takes its part's time; NULL: none */
    bool flash_ecc;           /* the emulated flash has ECC (FLASH.ecc beside it) */
    pid_t pid;
    int qlisten, qconn, hlisten, hconn;
    int console, logfd; /* the board's console (a pipe from QEMU's stderr); the log file */
    char logbuf[1024];
    size_t loglen;
    bool ready, killed;
    char next_cause[16];
    char fault[64];
    unsigned starts, quick_fails;
    time_t last_start;
    struct gate gate;      /* one host at a time on the TCP endpoint */
    char where[300];       /* the TCP endpoint: tcp:HOST:PORT */
    const char *port_path; /* --port-file */
    bool port_written;
};

static volatile sig_atomic_t stop_requested, cut_requested;

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        cut_requested = 1;
    else
        stop_requested = 1;
}

/* The firmware: --firmware, $MOTA_FIRMWARE, the build tree this mota comes from, or beside the binary. */
static const char *find_firmware(const struct board_target *t, const char *given)
{
    static char path[PATH_MAX + 64];
    if (given != NULL)
        return given;
    const char *env = getenv("MOTA_FIRMWARE");
    if (env != NULL && *env)
        return env;
    snprintf(path, sizeof(path), "%s/mota-%s.elf", t->firmware_dir, t->name);
    if (*t->firmware_dir && access(path, R_OK) == 0)
        return path;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash != NULL) {
            *slash = 0;
            snprintf(path, sizeof(path), "%s/../share/mota/mota-%s.elf", self, t->name);
            if (access(path, R_OK) == 0)
                return path;
        }
    }
    return NULL;
}

static int listen_unix(struct board *b)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (fd < 0 || strlen(b->sock) >= sizeof(a.sun_path))
        return -1;
    strcpy(a.sun_path, b->sock);
    unlink(b->sock);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 1) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int listen_tcp(const char *spec, char *printed, size_t cap)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    uint64_t port = 0;
    if (colon == NULL || (size_t)(colon - spec) >= sizeof(host) || !tool_parse_u64(colon + 1, &port) || port > 65535)
        return -2;
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        return -2;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    snprintf(printed, cap, "tcp:%s:%u", host, ntohs(a.sin_port));
    return fd;
}

/* The firmware's semihosting arguments: its name, its flash, why it starts, the faults to play. */
static void semihosting_args(const struct board *b, char *semi, size_t cap)
{
    int n = snprintf(semi, cap, "enable=on,target=native,arg=mota-%s,arg=flash=%s,arg=reset=%s", b->t->name, b->flash,
                     b->next_cause);
    if (b->fault[0])
        n += snprintf(semi + n, cap - (size_t)n, ",arg=fault=%s", b->fault);
    if (b->cut_at_op)
        n += snprintf(semi + n, cap - (size_t)n, ",arg=cut=%llu%s", (unsigned long long)b->cut_at_op,
                      b->torn ? ",arg=torn" : "");
    if (b->hang_on_trial)
        n += snprintf(semi + n, cap - (size_t)n, ",arg=hang-on-trial");
    if (b->flash_timing)
        n += snprintf(semi + n, cap - (size_t)n, ",arg=flash-timing=%s", b->flash_timing);
    if (b->flash_ecc)
        n += snprintf(semi + n, cap - (size_t)n, ",arg=flash-ecc");
    if (b->measure_stack)
        snprintf(semi + n, cap - (size_t)n, ",arg=measure-stack");
}

/* QEMU's command line, NULL-terminated, into argv (at most 32 entries). */
static void qemu_argv(const struct board *b, const char *semi, const char *chardev, const char **argv)
{
    int a = 0;
    argv[a++] = b->qemu;
    argv[a++] = "-M";
    argv[a++] = b->t->machine;
    argv[a++] = "-display";
    argv[a++] = "none";
    argv[a++] = "-monitor";
    argv[a++] = "none";
    argv[a++] = "-no-reboot";
    argv[a++] = "-kernel";
    argv[a++] = b->firmware;
    argv[a++] = "-semihosting-config";
    argv[a++] = semi;
    argv[a++] = "-chardev";
    argv[a++] = chardev;
    if (b->t->serial2) { /* the link is the machine's second UART: the first one goes nowhere */
        argv[a++] = "-serial";
        argv[a++] = "null";
    }
    argv[a++] = "-serial";
    argv[a++] = "chardev:uart0";
    if (b->icount) {
        argv[a++] = "-icount";
        argv[a++] = "shift=0";
    }
    argv[a] = NULL;
}

/* Power on: QEMU runs the firmware, its console on a pipe the launcher reads. */
static int start_qemu(struct board *b)
{
    char semi[3 * PATH_MAX + 256];
    semihosting_args(b, semi, sizeof(semi));
    char chardev[PATH_MAX + 64];
    snprintf(chardev, sizeof(chardev), "socket,id=uart0,path=%s", b->sock);
    const char *argv[32];
    qemu_argv(b, semi, chardev, argv);
    b->ready = b->killed = false;
    b->fault[0] = 0;
    strcpy(b->next_cause, "watchdog"); /* unless the board announces otherwise */
    b->last_start = time(NULL);
    b->starts++;
    /* the board's console (semihosting) is QEMU's stderr: a pipe the launcher reads */
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0)
        return tool_fail(MOTA_ERR_IO, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        return tool_fail(MOTA_ERR_IO, "fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* the board loses power with its launcher */
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(pfd[1], 2);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pfd[1]);
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    if (b->console >= 0)
        close(b->console);
    b->console = pfd[0];
    b->loglen = 0;
    b->pid = pid;
    return MOTA_OK;
}

/* The launcher's own events go to the board's log too: one timeline of what happened to the board. */
static void note(struct board *b, const char *what)
{
    fprintf(stderr, "mota-sim: %s\n", what);
    dprintf(b->logfd, "mota-sim: %s\n", what);
}

/* The firmware's line saying what (after its tag), or NULL. */
static const char *said(const struct board *b, const char *line, const char *what)
{
    const char *p = strstr(line, b->tag);
    return p != NULL && strncmp(p + strlen(b->tag), what, strlen(what)) == 0 ? p + strlen(b->tag) + strlen(what) : NULL;
}

/* A line from the board's console: echoed, logged, and read for the reset cause. */
static void log_line(struct board *b, const char *line)
{
    /* the firmware reports bare codes ("error -707"): named here, from the same table */
    const char *p = strstr(line, "error -");
    int code = 0;
    if (p != NULL && sscanf(p + 6, "%d", &code) == 1 && mota_err_name(code) != NULL) {
        fprintf(stderr, "%s (%s: %s)\n", line, mota_err_name(code), mota_err_str(code));
        dprintf(b->logfd, "%s (%s: %s)\n", line, mota_err_name(code), mota_err_str(code));
    } else {
        fprintf(stderr, "%s\n", line);
        dprintf(b->logfd, "%s\n", line);
    }
    if (said(b, line, "ready") != NULL) {
        b->ready = true;
        b->quick_fails = 0;
    } else if ((p = said(b, line, "reset ")) != NULL) {
        char cause[16] = "";
        unsigned pc = 0, addr = 0, cfsr = 0;
        if (sscanf(p, "%15s pc=%x addr=%x cfsr=%x", cause, &pc, &addr, &cfsr) >= 1) {
            snprintf(b->next_cause, sizeof(b->next_cause), "%s", cause);
            if (strcmp(cause, "fault") == 0)
                snprintf(b->fault, sizeof(b->fault), "%x:%x:%x", pc, addr, cfsr);
        }
    } else if (said(b, line, "power cut at flash operation") != NULL && b->pid > 0) {
        kill(b->pid, SIGKILL);
        b->killed = true;
        b->cut_at_op = 0; /* once */
    }
}

static void read_log(struct board *b)
{
    for (;;) {
        if (b->console < 0)
            return;
        ssize_t n = read(b->console, b->logbuf + b->loglen, sizeof(b->logbuf) - 1 - b->loglen);
        if (n <= 0)
            return;
        b->loglen += (size_t)n;
        b->logbuf[b->loglen] = 0;
        char *nl;
        while ((nl = strchr(b->logbuf, '\n')) != NULL) {
            *nl = 0;
            log_line(b, b->logbuf);
            size_t rest = b->loglen - (size_t)(nl + 1 - b->logbuf);
            memmove(b->logbuf, nl + 1, rest);
            b->loglen = rest;
            b->logbuf[rest] = 0;
        }
        if (b->loglen == sizeof(b->logbuf) - 1)
            b->loglen = 0; /* a line longer than the buffer: drop it */
    }
}

static void forward(int from, int *to, char *buf, size_t cap, int *from_slot)
{
    ssize_t n = read(from, buf, cap);
    if (n <= 0) {
        close(from);
        *from_slot = -1;
        return;
    }
    if (*to >= 0) {
        /* never block the launcher: what the other side cannot take now is lost, as on a wire */
        ssize_t off = 0;
        while (off < n && !stop_requested) {
            ssize_t w = send(*to, buf + off, (size_t)(n - off), MSG_DONTWAIT | MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            off += w;
        }
    }
}

static void help_board(FILE *f)
{
    fprintf(f, "usage: mota sim --target " BOARD_QEMU_NAMES " [options]\n\n"
               "A device on QEMU " BOARD_TARGET_MACHINES ":\n"
               "the mota firmware with the agent on a UART (QEMU's first serial port; the second\n"
               "on a board of flag serial2 in ports/boards.txt),\n"
               "a persistent emulated NOR flash (a host file), a real watchdog. Models run for\n"
               "real, under guard: the self-test and `mota invoke` execute them. The UART is\n"
               "reachable on a TCP endpoint that stays the same across reboots and power cuts\n"
               "(printed as 'listening on tcp:HOST:PORT', as the simulated device does).\n"
               "  --tcp HOST:PORT        listen here (default 127.0.0.1:0: any free port). One client\n"
               "                         at a time, as on a cable: another one is answered MOTA_ERR_BUSY\n"
               "  --idle-timeout S       drop a client silent for S seconds (default 30; 0: never)\n"
               "  --port-file F          once the board is ready: F holds tcp:HOST:PORT for push,\n"
               "                         written atomically; removed when the launcher ends. The\n"
               "                         boards have no --pty or --stdio: TCP only\n"
               "  --flash FILE           the board's flash, kept across runs (default TARGET.flash in\n"
               "                         $XDG_STATE_HOME/mota, else ~/.local/state/mota); a new one is\n"
               "                         created erased and provisioned from the options below\n"
               "  --key PUBLIC.pem --vendor DOMAIN --class NAME --name DEVICE --model C_NAME\n"
               "  --trial-boots N --kek KEK.jwk\n"
               "                         provisioning (see `mota provision`; class and name default\n"
               "                         to mota-TARGET); a new flash without --key stays\n"
               "                         unprovisioned: it refuses every update. A flash provisioned\n"
               "                         already is run as it is without --key, and refused with\n"
               "                         --key for another identity\n"
               "  --log FILE             the board's log (default FLASH.log)\n"
               "  --firmware ELF --qemu PATH   defaults: the firmware of this build, qemu-system-arm\n"
               "  --icount               deterministic time: one instruction per nanosecond\n"
               "  --measure-stack        the firmware logs its stack high-water mark per phase\n"
               "  --flash-timing none|typ|max   each erase and program of the emulated flash takes the\n"
               "                         typical or longest time of the part it stands for (the MPS\n"
               "                         boards: an MX66UW1G45G NOR, 4 KiB sectors 25 ms / 400 ms;\n"
               "                         the STM32 board on QEMU: an F401's 128 KiB sectors up to 4 s),\n"
               "                         the UART still receiving\n"
               "  --flash-ecc            the emulated flash has ECC, as an STM32U5's: 16-byte units\n"
               "                         programmed once per erase, a unit torn by a power cut\n"
               "                         unreadable (its state in FLASH.ecc beside the flash; the\n"
               "                         MPS boards: their NOR's sectors are uniform)\n"
               "Faults:\n"
               "  --cut-at-op N [--torn] power cut at flash operation N (program or erase, from 1)\n"
               "                         of the first boot: the launcher kills QEMU, then powers on\n"
               "  --hang-on-trial        the application hangs while a model is on trial: the\n"
               "                         watchdog resets the board and the agent reverts the model\n"
               "  SIGUSR1                power cut now (QEMU killed at any instant, then powered on)\n");
}

enum {
    O_TARGET = 300,
    O_TCP,
    O_FLASH,
    O_LOG,
    O_FIRMWARE,
    O_QEMU,
    O_ICOUNT,
    O_CUT,
    O_TORN,
    O_HANG,
    O_STACK,
    O_IDLE,
    O_PORT_FILE,
    O_PTY,
    O_STDIO,
    O_TIMING,
    O_ECC
};

/* What the launcher's command line gives besides the board's own settings (struct board). */
struct launch_opts {
    bool answered; /* --help: printed, nothing to run */
    struct board_identity id;
    const char *tcp, *firmware, *log;
    bool have_tcp;
    char default_flash[PATH_MAX];
};

/* One of the launcher's own options, into b or o: 1 when taken, 0 if not one, -1 on a usage error
 * (reported). */
static int launcher_opt(struct board *b, struct launch_opts *o, int c, const char *arg)
{
    uint64_t v;
    switch (c) {
    case O_TARGET:
        if ((b->t = board_target_find(arg)) == NULL)
            return tool_usage_err("sim", "--target: " BOARD_QEMU_CHOICE), -1;
        if (b->t->machine[0] == 0) /* a board QEMU does not model */
            return tool_usage_err("sim", "%s is a real board: flash it (docs/porting.md) and use mota push PORT",
                                  b->t->name),
                   -1;
        if (b->t->flash_size == 0)
            return tool_usage_err("sim", "--target %s: this mota knows no flash layout of it", b->t->name), -1;
        return 1;
    case O_TCP:
        if (o->have_tcp)
            return tool_usage_err("sim", "--tcp twice: one endpoint per board"), -1;
        o->tcp = arg;
        o->have_tcp = true;
        return 1;
    case O_PTY:
    case O_STDIO:
        /* the launcher proxies the UART to a TCP endpoint that outlives QEMU's restarts */
        return tool_usage_err("sim", "%s: the QEMU boards (--target " BOARD_QEMU_NAMES ") listen on TCP only (--tcp)",
                              c == O_PTY ? "--pty" : "--stdio"),
               -1;
    case O_PORT_FILE: b->port_path = arg; return 1;
    case O_FLASH: b->flash = arg; return 1;
    case O_LOG: o->log = arg; return 1;
    case O_FIRMWARE: o->firmware = arg; return 1;
    case O_QEMU: b->qemu = arg; return 1;
    case O_ICOUNT: b->icount = true; return 1;
    case O_TORN: b->torn = true; return 1;
    case O_HANG: b->hang_on_trial = true; return 1;
    case O_STACK: b->measure_stack = true; return 1;
    case O_ECC: b->flash_ecc = true; return 1;
    case O_TIMING:
        if (strcmp(arg, "none") != 0 && strcmp(arg, "typ") != 0 && strcmp(arg, "max") != 0)
            return tool_usage_err("sim", "--flash-timing: none, typ or max"), -1;
        b->flash_timing = strcmp(arg, "none") == 0 ? NULL : arg;
        return 1;
    case O_IDLE:
        if (!tool_parse_u64(arg, &v))
            return tool_usage_err("sim", "--idle-timeout: seconds (0: never)"), -1;
        b->gate.idle_s = (double)v;
        return 1;
    case O_CUT:
        if (!tool_parse_u64(arg, &v) || v == 0)
            return tool_usage_err("sim", "--cut-at-op: a flash operation number from 1"), -1;
        b->cut_at_op = v;
        return 1;
    default: return 0;
    }
}

/* The command line into b (the board's settings) and o (the rest). */
static int parse_options(int argc, char **argv, struct board *b, struct launch_opts *o)
{
    /* clang-format off */ /* a table packed by hand */
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"target", required_argument, 0, O_TARGET},
        {"tcp", required_argument, 0, O_TCP}, {"flash", required_argument, 0, O_FLASH},
        {"log", required_argument, 0, O_LOG}, {"firmware", required_argument, 0, O_FIRMWARE},
        {"qemu", required_argument, 0, O_QEMU}, {"icount", no_argument, 0, O_ICOUNT},
        {"cut-at-op", required_argument, 0, O_CUT}, {"torn", no_argument, 0, O_TORN},
        {"hang-on-trial", no_argument, 0, O_HANG}, {"measure-stack", no_argument, 0, O_STACK},
        {"idle-timeout", required_argument, 0, O_IDLE}, {"port-file", required_argument, 0, O_PORT_FILE},
        {"pty", no_argument, 0, O_PTY}, {"stdio", no_argument, 0, O_STDIO},
        {"key", required_argument, 0, 'k'}, {"flash-timing", required_argument, 0, O_TIMING},
        {"flash-ecc", no_argument, 0, O_ECC},
        {"model", required_argument, 0, 'm'}, {"vendor", required_argument, 0, 'V'},
        {"class", required_argument, 0, 'C'}, {"name", required_argument, 0, 'N'},
        {"trial-boots", required_argument, 0, 'T'}, {"kek", required_argument, 0, 'K'}, {0, 0, 0, 0}};
    /* clang-format on */
    int c;
    memset(b, 0, sizeof(*b));
    memset(o, 0, sizeof(*o));
    o->tcp = "127.0.0.1:0";
    gate_init(&b->gate, 30);
    b->t = board_target_default();
    b->qemu = "qemu-system-arm";
    optind = 1;
    while ((c = tool_getopt(argc, argv, "h", opts, "sim --target")) != -1) {
        if (c == 'h') {
            help_board(stdout);
            o->answered = true;
            return EXIT_OK;
        }
        int r = board_identity_opt(&o->id, c, optarg, "sim");
        if (r == 0)
            r = launcher_opt(b, o, c, optarg);
        if (r <= 0)
            return EXIT_USAGE;
    }
    if (optind != argc)
        return tool_usage_err("sim", "unexpected argument '%s'", argv[optind]);
    return EXIT_OK;
}

/* --flash-ecc: the units' table beside the flash (1 KiB: flash_ecc.c's 256 entries; empty when new: every
 * unit's state is then what its contents say), kept across runs as the flash is. */
static int ecc_file(const struct board *b)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof(path), "%s.ecc", b->flash);
    if (stat(path, &st) == 0 && st.st_size == 1024)
        return EXIT_OK;
    FILE *f = fopen(path, "wb");
    static const uint8_t zero[1024];
    if (f == NULL || fwrite(zero, 1, sizeof(zero), f) != sizeof(zero) || fclose(f) != 0) {
        tool_fail(MOTA_ERR_IO, "%s: %s", path, strerror(errno));
        return EXIT_IO;
    }
    return EXIT_OK;
}

/* The id of the board's device key (never the key): what `mota pack --encrypt-to` names. */
static void tell_device_key(const struct board_device_key *dk)
{
    if (!dk->has)
        return;
    fprintf(stderr, "mota-sim: device key id ");
    tool_hex(stderr, dk->kid, sizeof(dk->kid));
    fprintf(stderr, "\n");
}

/* The flash: the board's persistent state; a new one is provisioned (or left blank), an existing one
 * only checked against the identity given. */
static int provision_flash(const struct board *b, const struct board_identity *id)
{
    bool done = false;
    struct board_device_key dk = {0};
    if (id->n_keks > 0 && id->n_keys == 0)
        return tool_usage_err("sim", "--kek is provisioned with the identity: it needs --key");
    if (b->flash_ecc && strcmp(b->t->family, "mps") != 0) /* the emulated ECC takes uniform sectors */
        return tool_usage_err("sim",
                              "--flash-ecc: the %s's flash stands for its part's, which has mixed sectors and "
                              "no ECC (the MPS boards' emulated NOR takes it)",
                              b->t->name);
    if (access(b->flash, F_OK) != 0) {
        char ecc[PATH_MAX];
        snprintf(ecc, sizeof(ecc), "%s.ecc", b->flash);
        unlink(ecc); /* a new flash's units are all erased, whatever a stale table beside it says */
        int ret = id->n_keys ? board_provision(b->flash, b->t, id, "", &done, &dk) : board_flash_create(b->flash, b->t);
        if (ret != MOTA_OK)
            return EXIT_IO;
        fprintf(stderr, "mota-sim: new board flash %s (%s)\n", b->flash, done ? "provisioned" : "not provisioned");
        tell_device_key(&dk);
    } else if (id->n_keys == 0) {
        if (board_flash_check(b->flash, b->t) != MOTA_OK) /* another board's flash, or no board's */
            return EXIT_IO;
    } else {
        char fix[PATH_MAX + 200];
        snprintf(fix, sizeof(fix),
                 "give --flash another file for another board, delete %s to start a new one, or leave out "
                 "--key (and the identity options) to run it as it is provisioned",
                 b->flash);
        int ret = board_provision(b->flash, b->t, id, fix, &done, &dk);
        if (ret != MOTA_OK)
            return ret == MOTA_ERR_PROVISION ? EXIT_INVALID : EXIT_IO;
        if (done)
            fprintf(stderr, "mota-sim: board flash %s provisioned\n", b->flash);
        tell_device_key(&dk);
    }
    return b->flash_ecc ? ecc_file(b) : EXIT_OK;
}

/* dir and the directories above it, made where missing (private: a board's state is its owner's). */
static int make_dirs(char *dir)
{
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        int ok = mkdir(dir, 0700) == 0 || errno == EEXIST;
        *p = c;
        if (!ok)
            return tool_fail(MOTA_ERR_IO, "%s: %s (give --flash FILE, or set XDG_STATE_HOME)", dir, strerror(errno));
        if (c == '\0')
            break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return tool_fail(MOTA_ERR_IO, "%s: not a directory (give --flash FILE, or set XDG_STATE_HOME)", dir);
    return MOTA_OK;
}

/*
 * The board's flash without --flash: <target>.flash in mota's state directory, $XDG_STATE_HOME/mota
 * (~/.local/state/mota when unset or not absolute, as the XDG base directory spec says), made as needed;
 * said at start. A flash an older mota kept in the current directory is named, not used.
 */
static int default_flash(const struct board_target *t, char *out, size_t cap)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    struct passwd *pw = NULL;
    char dir[PATH_MAX];
    if ((xdg == NULL || xdg[0] != '/') && (home == NULL || home[0] != '/') && (pw = getpwuid(getuid())) != NULL)
        home = pw->pw_dir;
    if (xdg != NULL && xdg[0] == '/')
        snprintf(dir, sizeof(dir), "%s/mota", xdg);
    else if (home != NULL && home[0] == '/')
        snprintf(dir, sizeof(dir), "%s/.local/state/mota", home);
    else
        return tool_fail(MOTA_ERR_IO, "no state directory for the board's flash: give --flash FILE, or set "
                                      "XDG_STATE_HOME or HOME");
    if (make_dirs(dir) != MOTA_OK)
        return MOTA_ERR_IO;
    if (snprintf(out, cap, "%s/%s.flash", dir, t->name) >= (int)cap)
        return tool_fail(MOTA_ERR_IO, "%s: path too long (give --flash FILE)", dir);
    fprintf(stderr, "mota-sim: board flash %s (kept; --flash FILE for another)\n", out);
    char old[64];
    snprintf(old, sizeof(old), "mota-%s.flash", t->name);
    if (access(old, F_OK) == 0)
        fprintf(stderr, "mota-sim: %s here, an older mota's default, is not used: --flash %s runs that board\n", old,
                old);
    return MOTA_OK;
}

/* One board per flash file: locked for as long as the launcher runs (the descriptor stays open), and
 * named by its absolute path from here on. */
static int lock_flash(struct board *b)
{
    /* semihosting arguments are split at spaces: the paths must not hold any */
    int lock = open(b->flash, O_RDONLY | O_CLOEXEC);
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0) {
        tool_fail(MOTA_ERR_IO, "%s: %s", b->flash, lock < 0 ? strerror(errno) : "in use by another running board");
        return EXIT_IO;
    }
    if (realpath(b->flash, b->abs_flash) == NULL || strchr(b->abs_flash, ' ') != NULL ||
        strlen(b->abs_flash) + 8 > sizeof(b->log)) {
        tool_fail(MOTA_ERR_IO, "%s: needs a path without spaces", b->flash);
        return EXIT_IO;
    }
    b->flash = b->abs_flash;
    return EXIT_OK;
}

/* The board's log: --log FILE, or the flash's path with .log; appended to. */
static int open_log(struct board *b, const char *log)
{
    if (log == NULL) {
        memcpy(b->log, b->abs_flash, strlen(b->abs_flash));
        strcpy(b->log + strlen(b->abs_flash), ".log");
    } else if (strlen(log) >= sizeof(b->log) || strchr(log, ' ') != NULL) {
        tool_fail(MOTA_ERR_IO, "%s: needs a path without spaces", log);
        return EXIT_IO;
    } else {
        strcpy(b->log, log);
    }
    b->logfd = open(b->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (b->logfd < 0) {
        tool_fail(MOTA_ERR_IO, "%s: %s", b->log, strerror(errno));
        return EXIT_IO;
    }
    b->console = -1;
    return EXIT_OK;
}

/* Both ends of the cable: the unix socket QEMU's UART connects to, in a directory of its own, and the
 * TCP endpoint the host tools use (printed). */
static int listen_both(struct board *b, const char *tcp)
{
    snprintf(b->dir, sizeof(b->dir), "/tmp/mota-%s-XXXXXX", b->t->name);
    if (mkdtemp(b->dir) == NULL) {
        tool_fail(MOTA_ERR_IO, "mkdtemp: %s", strerror(errno));
        return EXIT_IO;
    }
    strcpy(b->sock, b->dir);
    strcat(b->sock, "/uart0");
    b->qlisten = listen_unix(b);
    b->hlisten = listen_tcp(tcp, b->where, sizeof(b->where));
    if (b->hlisten == -2) {
        tool_usage_err("sim", "--tcp: expected IPv4-HOST:PORT");
        return EXIT_USAGE;
    }
    if (b->qlisten < 0 || b->hlisten < 0) {
        tool_fail(MOTA_ERR_TRANSPORT, "cannot listen on %s", tcp);
        return EXIT_IO;
    }
    b->qconn = b->hconn = -1;
    printf("mota-sim: listening on %s\n", b->where);
    fflush(stdout);
    return EXIT_OK;
}

/* What one round of the loop polls: the host's endpoint and connection, the UART's connection (or its
 * listener until QEMU connects), the board's console. Each index into p, or -1 when not polled. */
struct watch {
    struct pollfd p[5];
    int n, host_listen, host, uart, uart_listen;
};

static void watch_fds(const struct board *b, struct watch *w)
{
    w->n = 0;
    w->host = w->uart = w->uart_listen = -1;
    w->p[w->n] = (struct pollfd){.fd = b->hlisten, .events = POLLIN}, w->host_listen = w->n++;
    if (b->hconn >= 0)
        w->p[w->n] = (struct pollfd){.fd = b->hconn, .events = POLLIN}, w->host = w->n++;
    if (b->qconn >= 0)
        w->p[w->n] = (struct pollfd){.fd = b->qconn, .events = POLLIN}, w->uart = w->n++;
    else
        w->p[w->n] = (struct pollfd){.fd = b->qlisten, .events = POLLIN}, w->uart_listen = w->n++;
    if (b->console >= 0)
        w->p[w->n++] = (struct pollfd){.fd = b->console, .events = POLLIN};
}

static bool ready_to_read(const struct watch *w, int i)
{
    return i >= 0 && (w->p[i].revents & (POLLIN | POLLHUP | POLLERR));
}

/* The bytes on the cable, both ways. */
static void relay(struct board *b, const struct watch *w)
{
    static char buf[16384];
    if (ready_to_read(w, w->host)) {
        /* the host's bytes reach the UART only while the board listens */
        int to = b->ready ? b->qconn : -1;
        forward(b->hconn, &to, buf, sizeof(buf), &b->hconn);
        gate_activity(&b->gate);
    }
    if (ready_to_read(w, w->uart)) {
        forward(b->qconn, &b->hconn, buf, sizeof(buf), &b->qconn);
        gate_activity(&b->gate);
    }
}

/* The host's side: a client in, a second one answered busy, a silent one out. */
static void serve_host(struct board *b, const struct watch *w)
{
    /* after the current client's bytes and hang-up: a client that reconnects is not its own rival */
    if (w->host_listen >= 0 && (w->p[w->host_listen].revents & POLLIN)) {
        int fd = accept4(b->hlisten, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        char ch;
        if (fd >= 0 && b->hconn >= 0 && recv(b->hconn, &ch, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
            close(b->hconn);
            b->hconn = -1;
        }
        if (fd >= 0 && b->hconn >= 0) {
            note(b, "another client while one is connected: answered MOTA_ERR_BUSY");
            gate_refuse(&b->gate, fd);
        } else if (fd >= 0) {
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
            b->hconn = fd;
            gate_connected(&b->gate);
        }
    }
    gate_poll(&b->gate);
    if (b->hconn >= 0 && gate_idle(&b->gate)) {
        char what[64];
        snprintf(what, sizeof(what), "dropping a client silent for %.0f s (--idle-timeout)", b->gate.idle_s);
        note(b, what);
        close(b->hconn);
        b->hconn = -1;
    }
}

/* QEMU has ended: after a power cut or a reset the board starts again; a failed QEMU, or a board that
 * keeps resetting before it is ready, ends the launcher (EXIT_IO). */
static int restart(struct board *b, int status)
{
    b->pid = 0;
    read_log(b);
    if (b->qconn >= 0) {
        close(b->qconn);
        b->qconn = -1;
    }
    if (b->killed) {
        strcpy(b->next_cause, "power-on");
        b->fault[0] = 0;
        note(b, "power cut; powering on again");
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        tool_fail(MOTA_ERR_IO, "qemu exited with status %d", status);
        return EXIT_IO;
    } else {
        char what[64];
        snprintf(what, sizeof(what), "board reset (%s); starting again", b->next_cause);
        note(b, what);
    }
    /* a board that never reaches "ready" is not restarted forever */
    if (!b->ready && time(NULL) - b->last_start < 2 && ++b->quick_fails > 5) {
        tool_fail(MOTA_ERR_IO, "the board keeps resetting before it is ready (see %s)", b->log);
        return EXIT_IO;
    }
    return start_qemu(b) == MOTA_OK ? EXIT_OK : EXIT_IO;
}

/* The launcher's loop, until a signal or a failure: the cable, the console, the power and the resets. */
static int run(struct board *b)
{
    int rc = EXIT_OK;
    while (rc == EXIT_OK && !stop_requested) {
        struct watch w;
        watch_fds(b, &w);
        if (poll(w.p, (nfds_t)w.n, 10) < 0 && errno != EINTR)
            break;
        read_log(b);
        if (b->port_path != NULL && b->ready && !b->port_written) {
            if (tool_out_line(b->port_path, b->where) != MOTA_OK)
                return EXIT_IO;
            b->port_written = true;
        }
        if (cut_requested && b->pid > 0) {
            cut_requested = 0;
            kill(b->pid, SIGKILL);
            b->killed = true;
        }
        relay(b, &w);
        serve_host(b, &w);
        if (w.uart_listen >= 0 && (w.p[w.uart_listen].revents & POLLIN))
            b->qconn = accept4(b->qlisten, NULL, NULL, SOCK_CLOEXEC);
        int status;
        if (b->pid > 0 && waitpid(b->pid, &status, WNOHANG) == b->pid)
            rc = restart(b, status);
    }
    return rc;
}

/* The board off, and what the launcher made gone: the UART's socket and directory, the port file. */
static void power_off(struct board *b)
{
    if (b->pid > 0) {
        kill(b->pid, SIGKILL);
        waitpid(b->pid, NULL, 0);
    }
    gate_close(&b->gate);
    unlink(b->sock);
    rmdir(b->dir);
    if (b->port_written)
        unlink(b->port_path);
}

int cmd_sim_board(int argc, char **argv)
{
    static struct board board;
    struct board *b = &board;
    struct launch_opts o;
    int rc = parse_options(argc, argv, b, &o);
    if (rc != EXIT_OK || o.answered)
        return rc;
    if (b->port_path != NULL && tool_out_check(b->port_path) != MOTA_OK)
        return EXIT_IO;
    if (b->port_path != NULL)
        unlink(b->port_path); /* a stale one would send a client to a port nobody serves */
    board_identity_defaults(&o.id, b->t);
    if ((rc = board_identity_fits(&o.id, b->t, "sim")) != EXIT_OK)
        return rc;
    snprintf(b->tag, sizeof(b->tag), "mota-%s: ", b->t->name);
    if (b->flash == NULL) {
        if (default_flash(b->t, o.default_flash, sizeof(o.default_flash)) != MOTA_OK)
            return EXIT_IO;
        b->flash = o.default_flash;
    }
    b->firmware = find_firmware(b->t, o.firmware);
    if (b->firmware == NULL || access(b->firmware, R_OK) != 0) {
        tool_fail(MOTA_ERR_IO,
                  "the %s firmware was not found: build it (the default build does, with "
                  "arm-none-eabi-gcc), or give --firmware or MOTA_FIRMWARE",
                  b->t->name);
        return EXIT_IO;
    }
    if ((rc = provision_flash(b, &o.id)) != EXIT_OK || (rc = lock_flash(b)) != EXIT_OK ||
        (rc = open_log(b, o.log)) != EXIT_OK || (rc = listen_both(b, o.tcp)) != EXIT_OK)
        return rc;
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    strcpy(b->next_cause, "power-on");
    rc = start_qemu(b) == MOTA_OK ? run(b) : EXIT_IO;
    power_off(b);
    return rc;
}
