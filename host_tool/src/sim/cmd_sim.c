/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota sim: a simulated device. The real agent and link server on the posix
 * port: a persistent flash file, reachable over TCP, a pty or stdio, with
 * fault injection for testing updates and rollbacks without hardware.
 * The self-test inference is simulated (the posix port cannot run
 * Cortex-M code): see `mota sim-output`.
 */
#include "cmds.h"
#include "gate.h"
#include "provision.h"
#include "uart.h"

#include "common/files.h"
#include "common/util.h"
#include "offline/pack.h"
#include "offline/profiles.h"

#include "mota/agent.h"
#include "mota/crypto.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"
#include "mota/link.h"
#include "mota/nbin.h"
#include "mota/posix_device.h"
#include "mota/posix_transport.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mota sim --help, its last part. */
static void help_faults(FILE *f)
{
    fprintf(f, "Simulation and faults:\n"
               "  --selftest pass|fail|slow   what the simulated self-test inference does\n"
               "  --cut-at-op N [--torn]      power lost at flash operation N: the simulator exits (code 4)\n"
               "  --drop-after N              drop the link after N received bytes (once)\n"
               "  --corrupt-rate R            flip a random bit in received bytes with probability R\n"
               "  --seed N                    for the corruption (default 1)\n"
               "  --once                      exit when the first client disconnects\n");
}

static void help(FILE *f)
{
    fprintf(f, "usage: mota sim [--target posix] [options]\n"
               "       mota sim --target " BOARD_QEMU_NAMES " [options]   (QEMU: see its --help)\n\n"
               "A simulated device: the mota agent on a file-backed NOR flash, reachable over\n"
               "TCP, a pseudo-terminal or stdio. With --flash FILE its state survives restarts.\n"
               "Its self-test inference is simulated, not executed (this host cannot run the\n"
               "Cortex-M model): the output is a hash of the input (`mota sim-output`). The\n"
               "QEMU boards (" BOARD_QEMU_CHOICE ") run the model for real.\n"
               "Transport (exactly one of):\n"
               "  --tcp HOST:PORT        listen (PORT 0: any free port; the chosen one is printed).\n"
               "                         One client at a time: another one is answered MOTA_ERR_BUSY\n"
               "  --idle-timeout S       drop a TCP client silent for S seconds (default 30; 0: never)\n"
               "  --pty [--pty-link P]   a new pty (its path is printed, and linked at P)\n"
               "  --stdio                stdin/stdout\n"
               "  --port-file F          once the device serves: F holds the port to give push\n"
               "                         (tcp:HOST:PORT or the pty's path), written atomically;\n"
               "                         removed when the simulator ends (not with --stdio)\n"
               "  --baud N               the link's line rate, 8N1 (N/10 bytes/s each way), so a\n"
               "                         push takes as long as on a UART (default: unlimited)\n"
               "Device profile (docs/device-profiles.md; later options override it):\n"
               "  --profile NAME         a board: stm32n6570-dk, stm32h747i-disco,\n"
               "                         " BOARD_TARGET_CHOICE " (--list-profiles)\n"
               "  --like MODEL.bin [--params P]   a profile that accepts exactly this model\n"
               "  --cpu PART --fpu|--no-fpu --float-abi soft|softfp|hard --secure|--non-secure\n"
               "  --family npu|legacy|npu,legacy   the runtime families it runs\n"
               "  --ll-aton X.Y.Z|none --dbg-info|--no-dbg-info --async|--no-async --struct-sizes N\n"
               "  --exec-ram BYTES --ext-ram BYTES   per model (shared out when several)\n"
               "  default (no profile): Cortex-M55 0xD22, FPU, hard float, secure, NBIN v8 with\n"
               "  LL_ATON 1.1.1, 1 MiB exec RAM, no external RAM\n"
               "Device:\n"
               "  --flash FILE           flash image, kept: the device's state across runs (created\n"
               "                         erased). Without it: a throw-away flash in a temporary\n"
               "                         directory, removed at exit\n"
               "  --flash-size BYTES     default: the profile's update area, else 8388608\n"
               "                         (4 KiB sectors, 16-byte program units)\n"
               "  --flash-timing none|typ|max   erases and programs take the profile's part's typical\n"
               "                         or longest time (default none: instant)\n"
               "  --rx-ring BYTES        the UART RX ring bytes arrive in at the --baud rate while\n"
               "                         the agent works (default: the profile's, else 32768); a full\n"
               "                         ring, or a single-bank part's flash at work, loses them\n"
               "  --max-payload BYTES    the largest frame payload it takes and sends, as a board's\n"
               "                         build sets it (64 to 2048; default 2048; the boards: 512)\n"
               "  --key PUBLIC.pem       trusted key (repeat; key slot indices 1, 2, ...)\n"
               "  --kek KEK.jwk          a key-encryption key it decrypts with (at most 2; mota\n"
               "                         keygen --kek). It also has a P-256 key pair of its own\n"
               "                         (pack --encrypt-to; mota getpub --device), made with its\n"
               "                         flash and kept beside it in FLASH.device-key (0600)\n"
               "  --vendor DOMAIN --class NAME   identity (default example.com / mota-sim)\n"
               "  --model C_NAME         a model pair (repeat; default network)\n"
               "  --head-buffer BYTES    the agent's container-head buffer, as a small device sizes it\n"
               "                         (default: any head the format allows)\n"
               "  --trial-boots N        boots before an unconfirmed model is reverted (default 3)\n"
               "  --device-id HEX        its unique id, 1 to 16 bytes (HELLO, `mota status`: device id).\n"
               "                         Default 12 bytes: with --flash, the flash file's own (derived\n"
               "                         from its absolute path: kept across restarts); else random\n");
    help_faults(f);
}

/* The line to the host. */
enum sim_line { LINE_NONE = -1, LINE_TCP, LINE_PTY, LINE_STDIO };

/* The line's pace and faults, as the options set them. */
struct line_opts {
    double bytes_per_s;  /* --baud / 10; 0: unlimited */
    uint64_t drop_after; /* 0: never */
    double corrupt_rate;
    unsigned seed; /* for the corruption: rand_r's state */
};

/* The flash's counters at one moment. */
struct flash_mark {
    uint64_t erases, progs, busy_us;
};

/* The simulated device and its line to the host. */
struct sim {
    struct mota_posix_device d;
    struct mota_posix_transport pt;
    struct mota_transport tr, faulty;
    enum sim_line line;
    struct line_opts lo;
    uint64_t received; /* bytes in, for --drop-after */
    bool dropped;
    double tx_free_at; /* when the line to the host is idle again */
    struct gate gate;
    uint64_t client_erases, client_progs, client_busy_us; /* flash counters when the client connected */
    struct sim_uart uart;                                 /* the receiver: the line into the board's RX ring */
    bool in_upload;                                       /* the agent was receiving after the last step */
    struct flash_mark upload_start;                       /* the flash's counters before the step that began it */
    /* the keys of encrypted payloads the device holds (cfg.enc points here): --kek, and its own key pair */
    struct mota_kek keks[MOTA_PROVISION_KEKS];
    uint8_t dev_d[32], dev_pub[MOTA_P256_PUB_LEN], dev_kid[MOTA_KEY_ID_LEN];
};

/* The simulated device's power goes (--cut-at-op): the process ends where the agent stood, as the firmware
 * would; the flash file keeps what was written. */
static void power_cut(void *ctx)
{
    struct sim *s = ctx;
    fprintf(stderr, "mota-sim: power lost at flash operation %llu\n", (unsigned long long)s->d.pf.ops);
    mota_posix_device_close(&s->d);
    exit(EXIT_POWER_LOST);
}
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* --baud: n bytes on one direction of the line take n / bytes_per_s seconds after the line is free. */
static void line_pace(const struct sim *s, double *free_at, size_t n)
{
    if (s->lo.bytes_per_s <= 0)
        return;
    double now = tool_now();
    if (*free_at < now)
        *free_at = now;
    *free_at += (double)n / s->lo.bytes_per_s;
    if (*free_at > now)
        usleep((useconds_t)((*free_at - now) * 1e6));
}

/* The transport as the faults see it. */
static int faulty_read(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms)
{
    struct sim *s = ctx;
    int n = sim_uart_read(&s->uart, buf, len, timeout_ms); /* at the line's pace */
    if (n <= 0)
        return n;
    gate_activity(&s->gate);
    if (s->lo.drop_after && !s->dropped && s->received + (uint64_t)n > s->lo.drop_after) {
        s->dropped = true;
        fprintf(stderr, "mota-sim: dropping the link after %llu bytes\n", (unsigned long long)s->lo.drop_after);
        return MOTA_ERR_TRANSPORT;
    }
    s->received += (uint64_t)n;
    if (s->lo.corrupt_rate > 0) {
        for (int i = 0; i < n; i++) {
            if ((double)rand_r(&s->lo.seed) / RAND_MAX < s->lo.corrupt_rate)
                buf[i] ^= (uint8_t)(1u << (rand_r(&s->lo.seed) % 8));
        }
    }
    return n;
}

static int faulty_write(void *ctx, const uint8_t *buf, size_t len)
{
    struct sim *s = ctx;
    gate_activity(&s->gate);
    line_pace(s, &s->tx_free_at, len);
    return s->tr.write(s->tr.ctx, buf, len);
}

static int parse_version(const char *v, uint32_t *a, uint32_t *b, uint32_t *c)
{
    return sscanf(v, "%u.%u.%u", a, b, c) == 3 ? MOTA_OK : MOTA_ERR_ARG;
}

enum {
    O_TCP = 256,
    O_PTY,
    O_PTY_LINK,
    O_STDIO,
    O_FLASH,
    O_FLASH_SIZE,
    O_KEY,
    O_VENDOR,
    O_CLASS,
    O_MODEL,
    O_EXEC,
    O_EXT,
    O_CPU,
    O_FPU,
    O_NO_FPU,
    O_SOFT,
    O_FLOAT_ABI,
    O_SEC,
    O_NONSEC,
    O_DBG,
    O_NO_DBG,
    O_RT_ASYNC,
    O_NO_ASYNC,
    O_LLATON,
    O_STRUCT,
    O_FAMILY,
    O_PROFILE,
    O_LIKE,
    O_PARAMS,
    O_LIST,
    O_IDLE,
    O_TRIAL,
    O_SELFTEST,
    O_CUT,
    O_TORN,
    O_DROP,
    O_CORRUPT,
    O_SEED,
    O_ONCE,
    O_TARGET,
    O_HEAD,
    O_PORT_FILE,
    O_BAUD,
    O_TIMING,
    O_RX_RING,
    O_MAX_PAYLOAD,
    O_DEVICE_ID,
    O_KEK
};

#define SIM_DEVICE_ID_LEN 12u /* as long as an STM32's UID */

/* What is removed when the simulator ends however it returns: the throw-away flash, the port file. */
static char tmp_flash_dir[4096], tmp_flash[4200], port_file[4096];

static void remove_at_exit(void)
{
    if (port_file[0])
        unlink(port_file);
    if (tmp_flash[0]) {
        char units[4300];
        snprintf(units, sizeof(units), "%s.units", tmp_flash); /* an ECC part's units' state */
        unlink(units);
        unlink(tmp_flash);
        rmdir(tmp_flash_dir);
    }
}

/* A flash for this run only: a CI job starts from an erased device and leaves nothing behind. */
static const char *throwaway_flash(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(tmp_flash_dir, sizeof(tmp_flash_dir), "%s/mota-sim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(tmp_flash_dir) == NULL) {
        tool_fail(MOTA_ERR_IO, "%s: %s", tmp_flash_dir, strerror(errno));
        return NULL;
    }
    snprintf(tmp_flash, sizeof(tmp_flash), "%s/flash", tmp_flash_dir);
    fprintf(stderr, "mota-sim: throw-away flash %s, removed at exit (--flash FILE keeps the device's state)\n",
            tmp_flash);
    return tmp_flash;
}

/* The client left (or was dropped): what it cost the flash, for tests that prove "nothing erased". */
static void client_gone(struct sim *s)
{
    fprintf(stderr, "mota-sim: client gone; flash while it was connected: %llu erases, %llu programs, busy %.3f s\n",
            (unsigned long long)(s->d.pf.erases - s->client_erases),
            (unsigned long long)(s->d.pf.progs - s->client_progs), (double)(s->d.pf.busy_us - s->client_busy_us) / 1e6);
    if (s->uart.lost_overrun + s->uart.lost_stalled > 0)
        fprintf(stderr, "mota-sim: bytes lost by the receiver: %llu (ring full), %llu (CPU stalled by the flash)\n",
                (unsigned long long)s->uart.lost_overrun, (unsigned long long)s->uart.lost_stalled);
    sim_uart_reset(&s->uart);
    s->uart.lost_overrun = s->uart.lost_stalled = 0; /* each client's own */
    close(s->pt.rfd);
    s->pt.rfd = s->pt.wfd = -1;
}

static void report_models(const struct sim *s)
{
    const struct mota_agent_config *cfg = &s->d.cfg;
    for (unsigned m = 0; m < cfg->n_models; m++) {
        struct mota_agent_model_info info;
        if (mota_agent_model_info(&s->d.device.agent, m, &info) == MOTA_OK)
            fprintf(stderr, "mota-sim: model %s: seq %llu %.*s%s\n", cfg->models[m].c_name,
                    (unsigned long long)info.seq, (int)info.version_len, info.version ? info.version : "",
                    info.testing ? " (on trial)" : "");
        else
            fprintf(stderr, "mota-sim: model %s: none installed\n", cfg->models[m].c_name);
    }
}

/* --family npu|legacy|npu,legacy */
static bool parse_families(const char *v, uint32_t *mask)
{
    *mask = 0;
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "npu") == 0)
            *mask |= 1u << MOTA_NBIN_FAMILY_NPU;
        else if (strcmp(t, "legacy") == 0)
            *mask |= 1u << MOTA_NBIN_FAMILY_LEGACY;
        else
            return false;
    }
    return *mask != 0;
}

/* The command line, checked; the device, its line and its faults are set up from it. */
struct sim_opts {
    bool answered;            /* --help or --list-profiles: printed, nothing to run */
    struct tool_profile prof; /* the base profile with the options' changes */
    enum sim_line line;
    const char *transport; /* the option that chose the line, for a second one's error */
    const char *tcp, *pty_link, *port_path, *flash, *vendor, *klass;
    const char *keys[MOTA_AGENT_MAX_KEYS], *models[MOTA_AGENT_MAX_MODELS];
    unsigned n_keys, n_models;
    const char *keks[MOTA_PROVISION_KEKS]; /* --kek KEK.jwk */
    unsigned n_keks;
    uint64_t flash_size, exec, ext, cut, head; /* 0: the default (exec, ext: unless *_set) */
    uint64_t rx_ring;                          /* 0: the profile's */
    uint64_t max_payload;                      /* 0: the build's (MOTA_LINK_MAX_PAYLOAD) */
    bool max_payload_set;
    enum mota_posix_flash_timing timing;
    bool exec_set, ext_set, torn, once;
    uint32_t trial_boots;
    uint8_t device_id[MOTA_AGENT_DEVICE_ID_MAX]; /* --device-id */
    uint8_t device_id_len;                       /* 0: the default */
    bool throwaway;                              /* the flash is this run's only: its id is random */
    enum mota_sim_mode selftest;
    double idle_s;
    struct line_opts lo;
};

/* --like MODEL [--params P]: the profile that accepts exactly this model. */
static int like_profile(const char *like, const char *params, struct tool_profile *out)
{
    struct mapped m, pm = {0};
    if (tool_map(like, &m) != MOTA_OK)
        return EXIT_IO;
    if (params && tool_map(params, &pm) != MOTA_OK) {
        tool_unmap(&m);
        return EXIT_IO;
    }
    int ret = tool_profile_like(m.data, m.len, pm.data, pm.len, out);
    tool_unmap(&m);
    if (params)
        tool_unmap(&pm);
    if (ret == MOTA_ERR_UNSUPPORTED) {
        tool_fail(ret,
                  "--like %s: its pools claim the simulator's exec RAM (0x%08X) or leave no window for "
                  "its external RAM",
                  like, MOTA_POSIX_EXEC_BASE);
        return EXIT_INVALID;
    }
    if (ret == MOTA_ERR_NBIN_SPLIT) {
        if (params == NULL)
            tool_fail(ret, "--like %s is a split model (its weights in a params file): give them with --params FILE",
                      like);
        else
            tool_fail(ret, "--like %s carries its params; --params %s does not belong to it", like, params);
        return EXIT_INVALID;
    }
    if (ret != MOTA_OK) {
        tool_fail(ret, "--like %s: no profile from this model", like);
        return EXIT_INVALID;
    }
    return EXIT_OK;
}

/* The profile the options start from: --profile NAME, --like MODEL [--params P], or the default. */
static int base_profile(int argc, char **argv, const struct option *opts, struct tool_profile *out)
{
    const char *name = NULL, *like = NULL, *params = NULL;
    int c;
    optind = 1;
    opterr = 0; /* the second pass reports */
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h' || c == O_LIST)
            return EXIT_OK; /* the second pass answers */
        if (c == O_PROFILE)
            name = optarg;
        else if (c == O_LIKE)
            like = optarg;
        else if (c == O_PARAMS)
            params = optarg;
    }
    opterr = 1;
    if (name && like) {
        tool_usage_err("sim", "--profile and --like: one or the other");
        return EXIT_USAGE;
    }
    if (params && !like) {
        tool_usage_err("sim", "--params goes with --like");
        return EXIT_USAGE;
    }
    if (name) {
        const struct tool_profile *t = tool_profile_find(name);
        if (t == NULL) {
            tool_usage_err("sim", "--profile %s: no such profile; --list-profiles names them", name);
            return EXIT_USAGE;
        }
        *out = *t;
        return EXIT_OK;
    }
    if (like)
        return like_profile(like, params, out);
    /* the posix device's defaults: an N6-class part */
    *out = (struct tool_profile){.name = NULL,
                                 .board = "default",
                                 .dev = mota_posix_default_profile,
                                 .exec_ram = 1u << 20,
                                 .update_area = 8u << 20};
    return EXIT_OK;
}

/* The TCP endpoint's side of the loop: a client in, an idle one out, a second one answered busy. */
static int serve_tcp(struct sim *s)
{
    gate_poll(&s->gate);
    if (s->pt.rfd < 0) {
        int ret = mota_posix_transport_tcp_accept(&s->pt, 100);
        if (ret != MOTA_OK)
            return ret;
        gate_connected(&s->gate);
        s->client_erases = s->d.pf.erases;
        s->client_progs = s->d.pf.progs;
        s->client_busy_us = s->d.pf.busy_us;
        mota_link_reconnect(&s->d.device.link); /* the errors ring outlives the client */
        return MOTA_OK;
    }
    struct pollfd lp = {.fd = s->pt.listen_fd, .events = POLLIN};
    if (poll(&lp, 1, 0) > 0) {
        /* a client that has hung up (the reconnect of a push) does not make the next one busy: it is
         * let go, and the next round takes the newcomer */
        /* hung up even with bytes left unread (a refused push, a slow --baud line): those bytes are
         * nobody's now */
        struct pollfd cp = {.fd = s->pt.rfd, .events = POLLRDHUP};
        if (poll(&cp, 1, 0) > 0 && (cp.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
            client_gone(s);
            return MOTA_OK;
        }
        int fd;
        while ((fd = accept4(s->pt.listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
            fprintf(stderr, "mota-sim: another client while one is connected: answered MOTA_ERR_BUSY\n");
            gate_refuse(&s->gate, fd);
        }
    }
    if (gate_idle(&s->gate)) {
        fprintf(stderr, "mota-sim: dropping a client silent for %.0f s (--idle-timeout)\n", s->gate.idle_s);
        client_gone(s);
    }
    return MOTA_OK;
}

/* The options of the line to the host: 1 when taken, 0 if not one, -1 on a usage error (reported). */
static int line_opt(struct sim_opts *o, int c, const char *arg)
{
    uint64_t v;
    switch (c) {
    case O_TCP:
    case O_PTY:
    case O_STDIO: {
        const char *name = c == O_TCP ? "--tcp" : c == O_PTY ? "--pty" : "--stdio";
        /* one device, one line: a second transport would be silently ignored */
        if (o->transport != NULL)
            return tool_usage_err("sim", "%s and %s: one transport only", o->transport, name), -1;
        o->transport = name;
        o->line = c == O_TCP ? LINE_TCP : c == O_PTY ? LINE_PTY : LINE_STDIO;
        if (c == O_TCP)
            o->tcp = arg;
        break;
    }
    case O_PTY_LINK: o->pty_link = arg; break;
    case O_PORT_FILE: o->port_path = arg; break;
    case O_BAUD:
        if (!tool_parse_u64(arg, &v) || v < 300 || v > 100000000)
            return tool_usage_err("sim", "--baud '%s' is not a line rate from 300 to 100000000", arg), -1;
        o->lo.bytes_per_s = (double)v / 10; /* 8N1: a start bit, 8 data bits, a stop bit */
        break;
    default: return 0;
    }
    return 1;
}

/* --ll-aton X.Y.Z|none */
static int ll_aton_opt(struct mota_device_profile *p, const char *arg)
{
    if (strcmp(arg, "none") == 0) {
        p->has_ll_aton = false;
    } else if (parse_version(arg, &p->ll_aton_major, &p->ll_aton_minor, &p->ll_aton_micro) != MOTA_OK ||
               p->ll_aton_major > 255 || p->ll_aton_minor > 255 || p->ll_aton_micro > 255) {
        tool_usage_err("sim", "--ll-aton: expected X.Y.Z (each at most 255) or none");
        return -1;
    } else {
        p->has_ll_aton = true;
    }
    return 1;
}

/* The options that change the device profile but for its numbers: as line_opt. */
static int profile_opt(struct mota_device_profile *p, int c, const char *arg)
{
    switch (c) {
    case O_FPU: p->fpu_enabled = true; break;
    case O_NO_FPU: p->fpu_enabled = false; break;
    case O_SOFT: p->float_abi = 0; break;
    case O_FLOAT_ABI:
        if (strcmp(arg, "soft") == 0)
            p->float_abi = 0;
        else if (strcmp(arg, "softfp") == 0)
            p->float_abi = 1;
        else if (strcmp(arg, "hard") == 0)
            p->float_abi = 2;
        else
            return tool_usage_err("sim", "--float-abi: soft, softfp or hard"), -1;
        break;
    case O_SEC: p->secure = true; break;
    case O_NONSEC: p->secure = false; break;
    case O_DBG: p->dbg_info = true; break;
    case O_NO_DBG: p->dbg_info = false; break;
    case O_RT_ASYNC: p->async = true; break;
    case O_NO_ASYNC: p->async = false; break;
    case O_FAMILY:
        if (!parse_families(arg, &p->reloc_families))
            return tool_usage_err("sim", "--family: npu, legacy or npu,legacy"), -1;
        break;
    case O_LLATON: return ll_aton_opt(p, arg);
    default: return 0;
    }
    return 1;
}

/* --model C_NAME: one model of the device, named once; as line_opt. */
static int model_opt(struct sim_opts *o, const char *arg)
{
    if (arg[0] == '\0')
        return tool_usage_err("sim", "--model '': a model's C name (network, as in network_rel.bin)"), -1;
    for (unsigned i = 0; i < o->n_models; i++)
        if (strcmp(o->models[i], arg) == 0)
            return tool_usage_err("sim", "--model %s given twice: each model once", arg), -1;
    if (o->n_models == MOTA_AGENT_MAX_MODELS)
        return tool_usage_err("sim", "at most %u models", MOTA_AGENT_MAX_MODELS), -1;
    o->models[o->n_models++] = arg;
    return 1;
}

/* The device's own options and the simulation's: as line_opt. */
static int device_opt(struct sim_opts *o, int c, const char *arg)
{
    switch (c) {
    case O_FLASH: o->flash = arg; break;
    case O_VENDOR: o->vendor = arg; break;
    case O_CLASS: o->klass = arg; break;
    case O_KEY:
        if (o->n_keys == MOTA_AGENT_MAX_KEYS)
            return tool_usage_err("sim", "at most %u keys", MOTA_AGENT_MAX_KEYS), -1;
        o->keys[o->n_keys++] = arg;
        break;
    case O_KEK:
        if (o->n_keks == MOTA_PROVISION_KEKS)
            return tool_usage_err("sim", "at most %u --kek", MOTA_PROVISION_KEKS), -1;
        o->keks[o->n_keks++] = arg;
        break;
    case O_MODEL: return model_opt(o, arg);
    case O_TORN: o->torn = true; break;
    case O_ONCE: o->once = true; break;
    case O_TIMING:
        if (strcmp(arg, "none") == 0)
            o->timing = MOTA_POSIX_TIMING_NONE;
        else if (strcmp(arg, "typ") == 0)
            o->timing = MOTA_POSIX_TIMING_TYP;
        else if (strcmp(arg, "max") == 0)
            o->timing = MOTA_POSIX_TIMING_MAX;
        else
            return tool_usage_err("sim", "--flash-timing: none, typ or max"), -1;
        break;
    case O_SELFTEST:
        if (strcmp(arg, "pass") == 0)
            o->selftest = MOTA_SIM_PASS;
        else if (strcmp(arg, "fail") == 0)
            o->selftest = MOTA_SIM_FAIL;
        else if (strcmp(arg, "slow") == 0)
            o->selftest = MOTA_SIM_SLOW;
        else
            return tool_usage_err("sim", "--selftest: pass, fail or slow"), -1;
        break;
    case O_CORRUPT:
        o->lo.corrupt_rate = atof(arg);
        if (o->lo.corrupt_rate < 0 || o->lo.corrupt_rate > 1)
            return tool_usage_err("sim", "--corrupt-rate: a probability from 0 to 1"), -1;
        break;
    default: return 0;
    }
    return 1;
}

/* --device-id HEX, 1 to 16 bytes: as line_opt. */
static int device_id_opt(struct sim_opts *o, int c, const char *arg)
{
    size_t n = strlen(arg) / 2;
    if (c != O_DEVICE_ID)
        return 0;
    if (n == 0 || n > MOTA_AGENT_DEVICE_ID_MAX || !tool_parse_hex(arg, o->device_id, n))
        return tool_usage_err("sim", "--device-id '%s': 1 to %u bytes as hex digits", arg, MOTA_AGENT_DEVICE_ID_MAX),
               -1;
    o->device_id_len = (uint8_t)n;
    return 1;
}

/* The options that take a number: as line_opt. */
static int number_opt(struct sim_opts *o, int c, const char *arg)
{
    uint64_t v;
    switch (c) {
    case O_FLASH_SIZE:
    case O_EXEC:
    case O_EXT:
    case O_CPU:
    case O_TRIAL:
    case O_CUT:
    case O_DROP:
    case O_SEED:
    case O_HEAD:
    case O_STRUCT:
    case O_RX_RING:
    case O_MAX_PAYLOAD:
    case O_IDLE: break;
    default: return 0;
    }
    if (!tool_parse_u64(arg, &v))
        return tool_usage_err("sim", "'%s' is not a number", arg), -1;
    switch (c) {
    case O_FLASH_SIZE: o->flash_size = v; break;
    case O_EXEC:
        o->exec = v;
        o->exec_set = true;
        break;
    case O_EXT:
        o->ext = v;
        o->ext_set = true;
        break;
    case O_HEAD: o->head = v; break;
    case O_RX_RING: o->rx_ring = v; break;
    case O_MAX_PAYLOAD:
        o->max_payload = v;
        o->max_payload_set = true;
        break;
    case O_CPU: o->prof.dev.cpu_part = (uint32_t)(v & 0xFFF); break;
    case O_STRUCT: o->prof.dev.struct_sizes = (uint32_t)v; break;
    case O_TRIAL: o->trial_boots = (uint32_t)v; break;
    case O_CUT: o->cut = v; break;
    case O_DROP: o->lo.drop_after = v; break;
    case O_IDLE: o->idle_s = (double)v; break;
    default: o->lo.seed = (unsigned)v; break;
    }
    if ((c == O_CPU && v > 0xFFF) || (c == O_STRUCT && v > 0xFFFFFFFFu))
        return tool_usage_err("sim", "'%s' is out of range", arg), -1;
    if (c == O_FLASH_SIZE && (v == 0 || v > 0xFFFFFFFFu))
        return tool_usage_err("sim", "--flash-size '%s': 1 to 4294967295 bytes (whole sectors of the profile)", arg),
               -1;
    if (c == O_TRIAL && (v == 0 || v > 255)) /* the record's byte, as provision takes it */
        return tool_usage_err("sim", "--trial-boots '%s': 1 to 255", arg), -1;
    return 1;
}

/* What goes together, and what the device needs: a line and a key. */
static int check_options(const struct sim_opts *o)
{
    if (o->line == LINE_NONE || o->n_keys == 0)
        return tool_usage_err("sim", "needs a transport (--tcp, --pty or --stdio) and at least one --key");
    if (o->pty_link != NULL && o->line != LINE_PTY)
        return tool_usage_err("sim", "--pty-link goes with --pty");
    if (o->port_path != NULL && o->line == LINE_STDIO)
        return tool_usage_err("sim", "--port-file: --stdio has no port");
    if (o->port_path != NULL && tool_out_check(o->port_path) != MOTA_OK)
        return EXIT_IO;
    return EXIT_OK;
}

/* The long options of mota sim. */
/* clang-format off */ /* a table packed by hand */
static const struct option sim_long_opts[] = {
    {"help", no_argument, 0, 'h'}, {"target", required_argument, 0, O_TARGET},
    {"tcp", required_argument, 0, O_TCP}, {"pty", no_argument, 0, O_PTY},
    {"pty-link", required_argument, 0, O_PTY_LINK}, {"stdio", no_argument, 0, O_STDIO},
    {"flash", required_argument, 0, O_FLASH}, {"flash-size", required_argument, 0, O_FLASH_SIZE},
    {"key", required_argument, 0, O_KEY}, {"vendor", required_argument, 0, O_VENDOR},
    {"class", required_argument, 0, O_CLASS}, {"model", required_argument, 0, O_MODEL},
    {"exec-ram", required_argument, 0, O_EXEC}, {"ext-ram", required_argument, 0, O_EXT},
    {"cpu", required_argument, 0, O_CPU}, {"head-buffer", required_argument, 0, O_HEAD},
    {"fpu", no_argument, 0, O_FPU}, {"no-fpu", no_argument, 0, O_NO_FPU},
    {"soft-float", no_argument, 0, O_SOFT}, {"float-abi", required_argument, 0, O_FLOAT_ABI},
    {"secure", no_argument, 0, O_SEC}, {"non-secure", no_argument, 0, O_NONSEC},
    {"dbg-info", no_argument, 0, O_DBG}, {"no-dbg-info", no_argument, 0, O_NO_DBG},
    {"async", no_argument, 0, O_RT_ASYNC}, {"no-async", no_argument, 0, O_NO_ASYNC},
    {"ll-aton", required_argument, 0, O_LLATON}, {"struct-sizes", required_argument, 0, O_STRUCT},
    {"family", required_argument, 0, O_FAMILY}, {"profile", required_argument, 0, O_PROFILE},
    {"like", required_argument, 0, O_LIKE}, {"params", required_argument, 0, O_PARAMS},
    {"list-profiles", no_argument, 0, O_LIST}, {"idle-timeout", required_argument, 0, O_IDLE},
    {"trial-boots", required_argument, 0, O_TRIAL}, {"selftest", required_argument, 0, O_SELFTEST},
    {"cut-at-op", required_argument, 0, O_CUT}, {"torn", no_argument, 0, O_TORN},
    {"drop-after", required_argument, 0, O_DROP}, {"corrupt-rate", required_argument, 0, O_CORRUPT},
    {"seed", required_argument, 0, O_SEED}, {"once", no_argument, 0, O_ONCE},
    {"port-file", required_argument, 0, O_PORT_FILE}, {"baud", required_argument, 0, O_BAUD},
    {"flash-timing", required_argument, 0, O_TIMING}, {"rx-ring", required_argument, 0, O_RX_RING},
    {"max-payload", required_argument, 0, O_MAX_PAYLOAD},
    {"device-id", required_argument, 0, O_DEVICE_ID}, {"kek", required_argument, 0, O_KEK}, {0, 0, 0, 0}};
/* clang-format on */

/* The command line into o: the base profile first, then every option over it. */
static int parse_options(int argc, char **argv, struct sim_opts *o)
{
    int c;
    *o = (struct sim_opts){.line = LINE_NONE,
                           .vendor = "example.com",
                           .klass = "mota-sim",
                           .trial_boots = 3,
                           .selftest = MOTA_SIM_PASS,
                           .idle_s = 30,
                           .lo = {.seed = 1}};
    int rc = base_profile(argc, argv, sim_long_opts, &o->prof);
    if (rc != EXIT_OK)
        return rc;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "h", sim_long_opts, "sim")) != -1) {
        if (c == 'h' || c == O_LIST) {
            if (c == 'h')
                help(stdout);
            else
                tool_profile_list(stdout);
            o->answered = true;
            return EXIT_OK;
        }
        if (c == O_TARGET || c == O_PROFILE || c == O_LIKE || c == O_PARAMS)
            continue; /* taken above */
        int r = line_opt(o, c, optarg);
        if (r == 0 && (r = profile_opt(&o->prof.dev, c, optarg)) == 0 && (r = device_opt(o, c, optarg)) == 0 &&
            (r = device_id_opt(o, c, optarg)) == 0)
            r = number_opt(o, c, optarg);
        if (r <= 0)
            return EXIT_USAGE;
    }
    if (optind < argc)
        return tool_usage_err("sim", "unexpected argument '%s'", argv[optind]);
    return check_options(o);
}

/* The profile's flash part at --flash-size: a part of one sector size grows or shrinks by whole sectors; one
 * of several (the F401's) is the part's size. A profile without a part: an ideal NOR of 4 KiB sectors. */
static int size_part(struct sim_opts *o)
{
    struct mota_posix_flash_part *p = &o->prof.part;
    if (p->n_regions == 0)
        *p = mota_posix_flash_uniform((uint32_t)o->flash_size, 4096, 16);
    uint64_t size = 0;
    for (unsigned i = 0; i < p->n_regions; i++)
        size += (uint64_t)p->regions[i].count * p->regions[i].sector_size;
    if (size == o->flash_size)
        return EXIT_OK;
    if (p->n_regions != 1 || o->flash_size % p->regions[0].sector_size != 0)
        return tool_usage_err("sim", "--flash-size %llu: the %s's flash is %llu bytes in sectors of several sizes",
                              (unsigned long long)o->flash_size, o->prof.name, (unsigned long long)size);
    p->regions[0].count = (uint32_t)(o->flash_size / p->regions[0].sector_size);
    return EXIT_OK;
}

/* A profile whose firmware fixes its slots' size (slot_size): each model's two fit in the flash. */
static int check_slots(const struct sim_opts *o)
{
    uint64_t end = o->prof.slots_offset + 2ull * o->n_models * o->prof.slot_size;
    if (o->prof.slot_size == 0 || end <= o->flash_size)
        return EXIT_OK;
    return tool_usage_err("sim",
                          "%u model%s: the %s firmware's slots of %u KiB from 0x%X, two a model, end at 0x%llX, "
                          "past its flash's %llu bytes (--flash-size)",
                          o->n_models, o->n_models == 1 ? "" : "s", o->prof.name, o->prof.slot_size / 1024,
                          o->prof.slots_offset, (unsigned long long)end, (unsigned long long)o->flash_size);
}

/* The largest power of two not above v (0 for 0). */
static uint64_t pow2_floor(uint64_t v)
{
    uint64_t p = 1;
    while (v != 0 && p <= v / 2)
        p <<= 1;
    return v ? p : 0;
}

/* The memories: the profile's are the board's, shared out among the models as a firmware would; each in
 * the range the simulator takes. */
static int size_memories(struct sim_opts *o)
{
    if (o->n_models == 0)
        o->models[o->n_models++] = "network";
    if (!o->exec_set)
        o->exec =
            o->prof.pow2_regions ? pow2_floor(o->prof.exec_ram / o->n_models) : o->prof.exec_ram / o->n_models / 8 * 8;
    if (!o->ext_set)
        o->ext = o->prof.ext_ram / o->n_models / 8 * 8;
    if (o->flash_size == 0)
        o->flash_size = o->prof.update_area;
    if (o->flash_size < 64 * 1024 || o->flash_size > (256u << 20)) {
        tool_usage_err("sim", "--flash-size %llu: from 64 KiB to 256 MiB", (unsigned long long)o->flash_size);
        return EXIT_USAGE;
    }
    if (size_part(o) != EXIT_OK || check_slots(o) != EXIT_OK)
        return EXIT_USAGE;
    if (o->rx_ring == 0)
        o->rx_ring = o->prof.rx_ring ? o->prof.rx_ring : 32 * 1024;
    if (o->max_payload_set && (o->max_payload < 64 || o->max_payload > MOTA_LINK_MAX_PAYLOAD)) {
        tool_usage_err("sim", "--max-payload %llu: from 64 to %u bytes", (unsigned long long)o->max_payload,
                       MOTA_LINK_MAX_PAYLOAD);
        return EXIT_USAGE;
    }
    if (o->rx_ring < 1024 || o->rx_ring > (1u << 20)) {
        tool_usage_err("sim", "--rx-ring %llu: from 1 KiB to 1 MiB", (unsigned long long)o->rx_ring);
        return EXIT_USAGE;
    }
    if (o->exec < 4096 || o->exec > (64u << 20)) {
        tool_usage_err("sim", "--exec-ram %llu per model: from 4 KiB to 64 MiB", (unsigned long long)o->exec);
        return EXIT_USAGE;
    }
    if (o->ext > (256u << 20)) {
        tool_usage_err("sim", "--ext-ram %llu per model: at most 256 MiB", (unsigned long long)o->ext);
        return EXIT_USAGE;
    }
    if (o->head != 0 && (o->head < MOTA_AGENT_SCRATCH_MIN || o->head > MOTA_AGENT_SCRATCH_ANY)) {
        tool_usage_err("sim", "--head-buffer: from %u to %u bytes", MOTA_AGENT_SCRATCH_MIN, MOTA_AGENT_SCRATCH_ANY);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/*
 * Which device this is (HELLO key 14), as a part's UID would say: --device-id; else, on a kept flash, the
 * flash file's own, from its absolute path (two simulators on two files differ, a restart on one keeps
 * it); on a throw-away flash, a random one.
 */
static int device_id(struct mota_agent_config *cfg, const struct sim_opts *o)
{
    static const char tag[] = "mota-sim:";
    char path[PATH_MAX];
    uint8_t h[MOTA_SHA256_LEN];
    struct mota_sha256 ctx;
    if (o->device_id_len > 0) {
        memcpy(cfg->device_id, o->device_id, o->device_id_len);
        cfg->device_id_len = o->device_id_len;
        return EXIT_OK;
    }
    cfg->device_id_len = SIM_DEVICE_ID_LEN;
    if (o->throwaway) {
        int ret = tool_random(cfg->device_id, SIM_DEVICE_ID_LEN);
        return ret == MOTA_OK ? EXIT_OK : (tool_fail(ret, "the device id"), EXIT_IO);
    }
    if (realpath(o->flash, path) == NULL) { /* opened already: it exists */
        tool_fail(MOTA_ERR_IO, "%s: %s", o->flash, strerror(errno));
        return EXIT_IO;
    }
    mota_sha256_init(&ctx);
    mota_sha256_update(&ctx, tag, sizeof(tag) - 1);
    mota_sha256_update(&ctx, path, strlen(path));
    mota_sha256_finish(&ctx, h);
    memcpy(cfg->device_id, h, SIM_DEVICE_ID_LEN);
    return EXIT_OK;
}

/* The agent's configuration: the profile, its limits, its id and the trusted keys (key slots 1, 2, ...). */
static int configure_agent(struct sim *s, const struct sim_opts *o)
{
    struct mota_agent_config *cfg = &s->d.cfg;
    if (o->head)
        cfg->scratch_size = (size_t)o->head;
    cfg->profile = o->prof.dev;
    cfg->profile.name = o->prof.name;
    cfg->max_trial_boots = o->trial_boots;
    s->d.sim.mode = o->selftest;
    cfg->n_keys = o->n_keys;
    for (unsigned k = 0; k < o->n_keys; k++) {
        struct mota_p256_key key;
        if (tool_load_key(o->keys[k], &key) != MOTA_OK)
            return EXIT_IO;
        memcpy(cfg->keys[k].pub, key.pub, MOTA_P256_PUB_LEN);
        cfg->keys[k].index = k + 1;
    }
    return device_id(cfg, o);
}

/* The keys of encrypted payloads: the --kek files, and the device's own key pair (kept beside a kept flash).
 * Their ids are said; the keys never are. */
static int configure_keys(struct sim *s, const struct sim_opts *o)
{
    struct mota_agent_config *cfg = &s->d.cfg;
    struct mota_p256_key key;
    if (board_read_keks(o->keks, o->n_keks, s->keks) != MOTA_OK)
        return EXIT_IO;
    int ret = sim_device_key(o->flash, !o->throwaway, &key);
    if (ret == MOTA_OK) {
        memcpy(s->dev_d, key.d, sizeof(s->dev_d));
        memcpy(s->dev_pub, key.pub, sizeof(s->dev_pub));
        mota_key_id(s->dev_pub, s->dev_kid);
    }
    memset(&key, 0, sizeof(key));
    if (ret != MOTA_OK)
        return EXIT_IO;
    cfg->enc = (struct mota_enc_keys){.keks = o->n_keks ? s->keks : NULL,
                                      .n_keks = o->n_keks,
                                      .device_d = s->dev_d,
                                      .device_pub = s->dev_pub,
                                      .device_kid = s->dev_kid,
                                      .device_kid_len = sizeof(s->dev_kid)};
    fprintf(stderr, "mota-sim: device key id ");
    tool_hex(stderr, s->dev_kid, sizeof(s->dev_kid));
    for (unsigned i = 0; i < o->n_keks; i++) /* a key file's kid is text (common/kek.h) */
        fprintf(stderr, "%s %.*s", i ? "," : "; key-encryption keys", (int)s->keks[i].kid_len,
                (const char *)s->keks[i].kid);
    fprintf(stderr, "\n");
    return EXIT_OK;
}

/* The flash as the part has it, and the layout on it: "flash 512 KiB: 4 x 16 KiB, 1 x 64 KiB, ... sectors". */
static void describe_flash(const struct sim *s, enum mota_posix_flash_timing t)
{
    static const char *const timing[] = {"none", "typ", "max"};
    const struct mota_flash *f = &s->d.flash;
    const struct mota_agent_config *c = &s->d.cfg;
    char b[512];
    int n = snprintf(b, sizeof(b), "flash %u KiB:", f->size / 1024);
    for (unsigned i = 0; i < f->n_regions && n < (int)sizeof(b); i++)
        n += snprintf(b + n, sizeof(b) - (size_t)n, "%s %u x %u KiB", i ? "," : "", f->regions[i].count,
                      f->regions[i].sector_size / 1024);
    fprintf(stderr, "mota-sim: %s sectors, %u-byte units%s%s, timing %s; journal at 0x%X, slots at", b, f->prog_size,
            (f->flags & MOTA_FLASH_PROGRAM_ONCE) ? " programmed once (ECC)" : " (NOR)",
            (f->flags & MOTA_FLASH_STALLS_CPU) ? ", single bank" : "", timing[t], c->journal_offset);
    for (unsigned m = 0; m < c->n_models; m++)
        fprintf(stderr, " 0x%X 0x%X", c->models[m].slot_offset[0], c->models[m].slot_offset[1]);
    fprintf(stderr, " (%u KiB each)\n", c->models[0].slot_size / 1024);
}

/* A profile whose slots are powers of two aligned to their size (pow2_regions): the largest of which 2 per
 * model fit from the first such boundary after the journal's two sectors to the end of the flash, as the
 * board's firmware lays them out; else (a flash too small) the slots shared out evenly. */
static void pow2_slots(const struct sim_opts *o, struct mota_posix_device_options *dev)
{
    uint32_t sector = o->prof.part.n_regions ? o->prof.part.regions[0].sector_size : 4096;
    uint64_t journal_end = (uint64_t)o->prof.journal_offset + 2u * sector;
    for (uint64_t slot = pow2_floor(o->flash_size); slot >= sector; slot >>= 1) {
        uint64_t first = (journal_end + slot - 1) / slot * slot;
        if (first + 2u * o->n_models * slot <= o->flash_size) {
            dev->slot_size = (uint32_t)slot;
            dev->slots_offset = (uint32_t)first;
            return;
        }
    }
}

/* The device on its flash file, configured; the line's pace and faults as the options set them. */
static int open_device(struct sim *s, const struct sim_opts *o)
{
    memset(s, 0, sizeof(*s));
    s->line = o->line;
    s->lo = o->lo;
    /* layout: journal (2 sectors), then two equal slots per model, where the profile puts them */
    struct mota_posix_device_options dev = {.flash_path = o->flash,
                                            .part = &o->prof.part,
                                            .timing = o->timing,
                                            .journal_offset = o->prof.journal_offset,
                                            .slots_offset = o->prof.slots_offset,
                                            .slot_size = o->prof.slot_size,
                                            .n_models = o->n_models,
                                            .exec_ram_size = (uint32_t)o->exec,
                                            .ext_ram_size = (uint32_t)o->ext,
                                            .ext_ram_base = o->prof.ext_base,
                                            .n_regions = o->prof.n_regions};
    memcpy(dev.regions, o->prof.regions, sizeof(dev.regions));
    memcpy(dev.models, o->models, sizeof(o->models[0]) * o->n_models);
    if (o->prof.pow2_regions)
        pow2_slots(o, &dev);
    int ret = mota_posix_device_open(&s->d, &dev);
    if (ret == MOTA_ERR_CONFIG) {
        tool_fail(ret, "the profile's memories overlap or do not fit the address space (--ext-ram, --exec-ram)");
        return EXIT_USAGE;
    }
    if (ret != MOTA_OK) {
        tool_fail(MOTA_ERR_IO, "%s: cannot open, or its size is not %llu", o->flash, (unsigned long long)o->flash_size);
        return EXIT_IO;
    }
    if (o->cut) {
        mota_posix_flash_on_cut(&s->d.pf, power_cut, s);
        mota_posix_flash_cut(&s->d.pf, o->cut, o->torn);
    }
    if (configure_agent(s, o) != EXIT_OK || configure_keys(s, o) != EXIT_OK)
        return EXIT_IO;
    mota_posix_device_identity(&s->d, o->vendor, o->klass);
    gate_init(&s->gate, o->idle_s);
    char d[256];
    tool_profile_describe(&s->d.cfg.profile, d, sizeof(d));
    fprintf(stderr, "mota-sim: profile %s: %s; exec RAM %llu, external RAM %llu bytes per model\n",
            o->prof.name ? o->prof.name : "(default)", d, (unsigned long long)o->exec, (unsigned long long)o->ext);
    describe_flash(s, o->timing);
    fprintf(stderr, "mota-sim: device id ");
    tool_hex(stderr, s->d.cfg.device_id, s->d.cfg.device_id_len);
    fprintf(stderr, "\n");
    return EXIT_OK;
}

/* --tcp HOST:PORT: listening; the port a client gives push, into port_name. */
static int listen_tcp(struct sim *s, const char *tcp, char *port_name, size_t cap)
{
    char host[256];
    const char *colon = strrchr(tcp, ':');
    uint64_t port = 0;
    if (colon == NULL || (size_t)(colon - tcp) >= sizeof(host) || !tool_parse_u64(colon + 1, &port) || port > 65535) {
        return tool_usage_err("sim", "--tcp %s: expected HOST:PORT", tcp);
    }
    memcpy(host, tcp, (size_t)(colon - tcp));
    host[colon - tcp] = 0;
    uint16_t p16 = (uint16_t)port;
    char why[200];
    if (!tool_host_resolves(host, why, sizeof(why))) {
        tool_fail(MOTA_ERR_TRANSPORT, "cannot listen on %s: %s", tcp, why);
        return EXIT_IO;
    }
    errno = 0;
    if (mota_posix_transport_tcp_listen(&s->pt, host, &p16) != MOTA_OK) {
        tool_fail(MOTA_ERR_TRANSPORT, "cannot listen on %s: %s", tcp, errno ? strerror(errno) : "no such address");
        return EXIT_IO;
    }
    printf("mota-sim: listening on tcp:%s:%u\n", host, p16);
    snprintf(port_name, cap, "tcp:%s:%u", host, p16);
    return EXIT_OK;
}

/* --pty [--pty-link P]: a new pty, linked at P; its path into port_name. */
static int open_pty(struct sim *s, const char *pty_link, char *port_name, size_t cap)
{
    if (mota_posix_transport_pty(&s->pt) != MOTA_OK) {
        tool_fail(MOTA_ERR_TRANSPORT, "cannot open a pty");
        return EXIT_IO;
    }
    if (pty_link != NULL) {
        unlink(pty_link);
        if (symlink(s->pt.pty_path, pty_link) != 0) {
            tool_fail(MOTA_ERR_IO, "cannot link %s", pty_link);
            return EXIT_IO;
        }
    }
    printf("mota-sim: pty %s\n", s->pt.pty_path);
    if ((size_t)snprintf(port_name, cap, "%s", s->pt.pty_path) >= cap) {
        tool_fail(MOTA_ERR_IO, "pty path %s is too long for --port-file", s->pt.pty_path);
        return EXIT_IO;
    }
    return EXIT_OK;
}

/* The line to the host, seen by the agent through the faults; what --port-file names, into port_name. */
static int open_line(struct sim *s, const struct sim_opts *o, char *port_name, size_t cap)
{
    int rc = EXIT_OK;
    if (s->line == LINE_TCP)
        rc = listen_tcp(s, o->tcp, port_name, cap);
    else if (s->line == LINE_PTY)
        rc = open_pty(s, o->pty_link, port_name, cap);
    else
        mota_posix_transport_stdio(&s->pt);
    if (rc != EXIT_OK)
        return rc;
    fflush(stdout);
    mota_posix_transport_hal(&s->pt, &s->tr);
    s->faulty.read = faulty_read;
    s->faulty.write = faulty_write;
    s->faulty.ctx = s;
    s->faulty.rx_capacity = o->rx_ring;
    const int *stall = (s->d.flash.flags & MOTA_FLASH_STALLS_CPU) ? &s->d.pf.busy : NULL;
    if (sim_uart_init(&s->uart, &s->tr, o->rx_ring, s->lo.bytes_per_s, stall) != MOTA_OK)
        return EXIT_IO;
    return EXIT_OK;
}

/* The agent started; then, and only then, the port file says where it serves. */
static int boot(struct sim *s, const char *port_path, const char *port_name, uint16_t max_payload)
{
    signal(SIGPIPE, SIG_IGN);
    /* SIGTERM and SIGINT end the simulator between steps: the flash file is closed, the client's
     * summary printed */
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    int ret = mota_posix_device_boot(&s->d, &s->faulty, "mota-sim");
    if (ret != MOTA_OK) {
        tool_fail(ret, "agent start");
        return EXIT_IO;
    }
    s->d.device.link.payload_limit = max_payload; /* a board's frame size */
    report_models(s);
    if (port_path != NULL) {
        if (tool_out_line(port_path, port_name) != MOTA_OK)
            return EXIT_IO;
        snprintf(port_file, sizeof(port_file), "%s", port_path);
    }
    return EXIT_OK;
}

static struct flash_mark mark(const struct sim *s)
{
    return (struct flash_mark){s->d.pf.erases, s->d.pf.progs, s->d.pf.busy_us};
}

/* An upload's flash work, from the step that began it to the one that ended it (for scripts/bench-flash.sh:
 * the idle work after it, the journal's spare sector, is not the update's). */
static void upload_watch(struct sim *s, const struct flash_mark *before)
{
    bool rx = mota_agent_receiving(&s->d.device.agent);
    if (rx && !s->in_upload)
        s->upload_start = *before;
    if (!rx && s->in_upload) {
        struct flash_mark now = mark(s);
        fprintf(stderr, "mota-sim: upload over: %llu erases, %llu programs, flash busy %.3f s\n",
                (unsigned long long)(now.erases - s->upload_start.erases),
                (unsigned long long)(now.progs - s->upload_start.progs),
                (double)(now.busy_us - s->upload_start.busy_us) / 1e6);
    }
    s->in_upload = rx;
}

/*
 * The device serves until a signal, the end of its line (--once, --stdio) or a link error; then it is
 * closed in order (EXIT_OK). A power cut or a failed start ends it where it stands.
 */
static int run(struct sim *s, bool once)
{
    int ret;
    while (!stop_requested) {
        if (s->line == LINE_TCP) {
            ret = serve_tcp(s);
            if (ret == MOTA_ERR_TIMEOUT)
                continue;
            if (ret != MOTA_OK)
                return EXIT_IO;
            if (s->pt.rfd < 0) {
                if (once)
                    break;
                continue; /* the client was dropped (idle) or has hung up */
            }
        }
        unsigned resets = s->d.resets;
        struct flash_mark before = mark(s);
        ret = mota_device_step(&s->d.device, 100);
        upload_watch(s, &before);
        if (s->d.resets != resets) {
            fprintf(stderr, "mota-sim: reboot\n");
            if (ret != MOTA_OK) {
                tool_fail(ret, "agent start");
                return EXIT_IO;
            }
            report_models(s);
        }
        if (ret == MOTA_ERR_TRANSPORT) {
            if (once || s->line == LINE_STDIO)
                break;
            if (s->line == LINE_TCP)
                client_gone(s);
            else
                usleep(50 * 1000); /* a pty without a reader: wait for the next one */
            continue;
        }
        if (ret != MOTA_OK) {
            tool_fail(ret, "link");
            break;
        }
    }
    if (s->line == LINE_TCP && s->pt.rfd >= 0)
        client_gone(s);
    gate_close(&s->gate);
    sim_uart_close(&s->uart);
    mota_posix_transport_close(&s->pt);
    mota_posix_device_close(&s->d);
    return EXIT_OK;
}

int cmd_sim(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--target") == 0 && board_target_find(argv[i + 1]) != NULL)
            return cmd_sim_board(argc, argv);
        if (strcmp(argv[i], "--target") == 0 && strcmp(argv[i + 1], "posix") != 0) {
            tool_usage_err("sim", "--target: posix (the default), " BOARD_QEMU_CHOICE);
            return EXIT_USAGE;
        }
    }
    static struct sim sim; /* static: the device's RAM and buffers are far too large for the stack */
    struct sim_opts o;
    char port_name[300] = "";
    int rc = parse_options(argc, argv, &o);
    if (rc != EXIT_OK || o.answered)
        return rc;
    /* the vendor and class every container names: what pack takes, and nothing it refuses */
    if ((rc = pack_check_identity("sim", o.vendor, o.klass)) != EXIT_OK)
        return rc;
    struct stat st; /* a device node or a FIFO keeps nothing: the device would install, confirm, and lose it */
    if (o.flash != NULL && stat(o.flash, &st) == 0 && !S_ISREG(st.st_mode))
        return tool_fail(MOTA_ERR_NOT_REGULAR, "--flash %s: not a regular file (a board's flash is kept in one)",
                         o.flash),
               EXIT_IO;
    if ((rc = size_memories(&o)) != EXIT_OK)
        return rc;
    /* a reader of its output that goes away (| head -1) must not kill it before its exit removes the
     * throw-away flash: the lines are lost, the simulator serves on until SIGTERM or SIGINT */
    signal(SIGPIPE, SIG_IGN);
    atexit(remove_at_exit);
    if (o.port_path != NULL)
        unlink(o.port_path); /* a stale one would send a client to a port nobody serves */
    o.throwaway = o.flash == NULL;
    if (o.flash == NULL && (o.flash = throwaway_flash()) == NULL)
        return EXIT_IO;
    if ((rc = open_device(&sim, &o)) != EXIT_OK || (rc = open_line(&sim, &o, port_name, sizeof(port_name))) != EXIT_OK)
        return rc;
    if ((rc = boot(&sim, o.port_path, port_name, (uint16_t)o.max_payload)) != EXIT_OK)
        return rc;
    return run(&sim, o.once);
}

int cmd_sim_output(int argc, char **argv)
{
    uint64_t size = 0;
    bool help = argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
    if (!help && (argc != 5 || strcmp(argv[1], "--input") != 0 || !tool_parse_u64(argv[3], &size) || size == 0 ||
                  size > (1u << 20)))
        return tool_usage_err("sim-output", "takes --input FILE SIZE OUTPUT, SIZE from 1 to 1048576");
    if (help) {
        printf("usage: mota sim-output --input FILE SIZE OUTPUT\n\n"
               "Writes the SIZE-byte output the simulated device's inference gives for FILE, to\n"
               "pack containers whose self-test passes on `mota sim` (--selftest-output).\n");
        return EXIT_OK;
    }
    struct mapped in;
    if (tool_map(argv[2], &in) != MOTA_OK)
        return EXIT_IO;
    uint8_t *out = malloc((size_t)size);
    mota_sim_inference(in.data, in.len, out, (size_t)size);
    tool_unmap(&in);
    struct outfile o;
    int rc = EXIT_IO;
    if (tool_out_open(&o, argv[4], 0644) == MOTA_OK) {
        if (tool_out_write(&o, out, (size_t)size) == MOTA_OK && tool_out_commit(&o) == MOTA_OK)
            rc = EXIT_OK;
        else
            tool_out_abort(&o);
    }
    free(out);
    return rc;
}
