/*
 * mota sim: a simulated device. The real agent and link server on the posix
 * port: a persistent flash file, reachable over TCP, a pty or stdio, with
 * fault injection for testing updates and rollbacks without hardware.
 * The self-test inference is simulated (the posix port cannot run
 * Cortex-M code): see `mota sim-output`.
 */
#include "cmds.h"
#include "gate.h"
#include "profiles.h"
#include "util.h"

#include "mota/agent.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"
#include "mota/link.h"
#include "mota/nbin.h"
#include "mota/posix_device.h"
#include "mota/posix_transport.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static void help(FILE *f)
{
    fprintf(f,
            "usage: mota sim [--target posix] [options]\n"
            "       mota sim --target an547|an505 [options]   (a QEMU board: see its --help)\n\n"
            "A simulated device: the mota agent on a file-backed NOR flash, reachable over\n"
            "TCP, a pseudo-terminal or stdio. With --flash FILE its state survives restarts.\n"
            "Its self-test inference is simulated, not executed (this host cannot run the\n"
            "Cortex-M model): the output is a hash of the input (`mota sim-output`). The\n"
            "an547 and an505 targets run the model for real.\n"
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
            "  --profile NAME         a board: stm32n6570-dk, stm32h747i-disco, b-u585i-iot02a,\n"
            "                         nucleo-f401re, an547, an505 (--list-profiles describes them)\n"
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
            "  --key PUBLIC.pem       trusted key (repeat; key slot indices 1, 2, ...)\n"
            "  --vendor DOMAIN --class NAME   identity (default example.com / mota-sim)\n"
            "  --model C_NAME         a model pair (repeat; default network)\n"
            "  --head-buffer BYTES    the agent's container-head buffer, as a small device sizes it\n"
            "                         (default: any head the format allows)\n"
            "  --trial-boots N        boots before an unconfirmed model is reverted (default 3)\n"
            "Simulation and faults:\n"
            "  --selftest pass|fail|slow   what the simulated self-test inference does\n"
            "  --cut-at-op N [--torn]      power lost at flash operation N: the simulator exits (code 4)\n"
            "  --drop-after N              drop the link after N received bytes (once)\n"
            "  --corrupt-rate R            flip a random bit in received bytes with probability R\n"
            "  --seed N                    for the corruption (default 1)\n"
            "  --once                      exit when the first client disconnects\n");
}

struct sim {
    struct mota_posix_device d;
    struct mota_posix_transport pt;
    struct mota_transport tr, faulty;
    /* faults */
    uint64_t drop_after, received;
    bool dropped;
    double corrupt_rate;
    unsigned seed;
    int mode; /* 0 tcp, 1 pty, 2 stdio */
    double bytes_per_s;             /* --baud / 10; 0: unlimited */
    double rx_free_at, tx_free_at;  /* when each direction of the line is idle again */
    struct gate gate;
    uint64_t client_erases, client_progs; /* flash counters when the client connected */
};

static struct sim S;

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
    if (s->bytes_per_s <= 0)
        return;
    double now = tool_now();
    if (*free_at < now)
        *free_at = now;
    *free_at += (double)n / s->bytes_per_s;
    if (*free_at > now)
        usleep((useconds_t)((*free_at - now) * 1e6));
}

/* The transport as the faults see it. */
static int faulty_read(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms)
{
    struct sim *s = ctx;
    int n = s->tr.read(s->tr.ctx, buf, len, timeout_ms);
    if (n <= 0)
        return n;
    line_pace(s, &s->rx_free_at, (size_t)n);
    gate_activity(&s->gate);
    if (s->drop_after && !s->dropped && s->received + (uint64_t)n > s->drop_after) {
        s->dropped = true;
        fprintf(stderr, "mota-sim: dropping the link after %llu bytes\n", (unsigned long long)s->drop_after);
        return MOTA_ERR_TRANSPORT;
    }
    s->received += (uint64_t)n;
    if (s->corrupt_rate > 0) {
        for (int i = 0; i < n; i++) {
            if ((double)rand_r(&s->seed) / RAND_MAX < s->corrupt_rate)
                buf[i] ^= (uint8_t)(1u << (rand_r(&s->seed) % 8));
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

enum { O_TCP = 256, O_PTY, O_PTY_LINK, O_STDIO, O_FLASH, O_FLASH_SIZE, O_KEY, O_VENDOR, O_CLASS, O_MODEL,
       O_EXEC, O_EXT, O_CPU, O_FPU, O_NO_FPU, O_SOFT, O_FLOAT_ABI, O_SEC, O_NONSEC, O_DBG, O_NO_DBG, O_RT_ASYNC,
       O_NO_ASYNC, O_LLATON, O_STRUCT, O_FAMILY, O_PROFILE, O_LIKE, O_PARAMS, O_LIST, O_IDLE, O_TRIAL,
       O_SELFTEST, O_CUT, O_TORN, O_DROP, O_CORRUPT, O_SEED, O_ONCE, O_TARGET, O_HEAD, O_PORT_FILE, O_BAUD };

/* What is removed when the simulator ends however it returns: the throw-away flash, the port file. */
static char tmp_flash_dir[4096], tmp_flash[4200], port_file[4096];

static void remove_at_exit(void)
{
    if (port_file[0])
        unlink(port_file);
    if (tmp_flash[0]) {
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
    fprintf(stderr, "mota-sim: client gone; flash while it was connected: %llu erases, %llu programs\n",
            (unsigned long long)(s->d.pf.erases - s->client_erases),
            (unsigned long long)(s->d.pf.progs - s->client_progs));
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
        if (c == O_PROFILE) name = optarg;
        else if (c == O_LIKE) like = optarg;
        else if (c == O_PARAMS) params = optarg;
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
    if (like) {
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
            tool_fail(ret, "--like %s: its pools claim the simulator's exec RAM (0x%08X) or leave no window for "
                           "its external RAM", like, MOTA_POSIX_EXEC_BASE);
            return EXIT_INVALID;
        }
        if (ret != MOTA_OK) {
            tool_fail(ret, "--like %s: no profile from this model", like);
            return EXIT_INVALID;
        }
        return EXIT_OK;
    }
    /* the posix device's defaults: an N6-class part */
    *out = (struct tool_profile){.name = NULL, .board = "default", .dev = mota_posix_default_profile,
                                 .exec_ram = 1u << 20, .update_area = 8u << 20};
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

int cmd_sim(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--target") == 0 &&
            (strcmp(argv[i + 1], "an547") == 0 || strcmp(argv[i + 1], "an505") == 0))
            return cmd_sim_board(argc, argv);
        if (strcmp(argv[i], "--target") == 0 && strcmp(argv[i + 1], "posix") != 0) {
            tool_usage_err("sim", "--target: posix (the default), an547 or an505");
            return EXIT_USAGE;
        }
    }
    static const struct option opts[] = {
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
        {"port-file", required_argument, 0, O_PORT_FILE}, {"baud", required_argument, 0, O_BAUD}, {0, 0, 0, 0}};
    struct sim *s = &S;
    const char *tcp = NULL, *pty_link = NULL, *flash = NULL, *vendor = "example.com", *klass = "mota-sim",
               *port_path = NULL, *transport = NULL;
    const char *keys[MOTA_AGENT_MAX_KEYS], *models[MOTA_AGENT_MAX_MODELS];
    unsigned n_keys = 0, n_models = 0;
    uint64_t flash_size = 0, exec = 0, ext = 0, cut = 0, head = 0, v;
    bool torn = false, once = false, exec_set = false, ext_set = false;
    double idle = 30;
    int c;

    memset(s, 0, sizeof(*s));
    s->mode = -1;
    s->seed = 1;
    static struct tool_profile prof;
    int rc = base_profile(argc, argv, opts, &prof);
    if (rc != EXIT_OK)
        return rc;
    struct mota_device_profile *p = &prof.dev;
    uint32_t trial_boots = 3;
    enum mota_sim_mode sim_mode = MOTA_SIM_PASS;

    optind = 1;
    while ((c = tool_getopt(argc, argv, "h", opts, "sim")) != -1) {
        switch (c) {
        case 'h': help(stdout); return EXIT_OK;
        case O_LIST: tool_profile_list(stdout); return EXIT_OK;
        case O_TARGET: case O_PROFILE: case O_LIKE: case O_PARAMS: break; /* taken above */
        case O_TCP: case O_PTY: case O_STDIO: {
            const char *name = c == O_TCP ? "--tcp" : c == O_PTY ? "--pty" : "--stdio";
            /* one device, one line: a second transport would be silently ignored */
            if (transport != NULL)
                return tool_usage_err("sim", "%s and %s: one transport only", transport, name);
            transport = name;
            s->mode = c == O_TCP ? 0 : c == O_PTY ? 1 : 2;
            if (c == O_TCP)
                tcp = optarg;
            break;
        }
        case O_PTY_LINK: pty_link = optarg; break;
        case O_PORT_FILE: port_path = optarg; break;
        case O_BAUD:
            if (!tool_parse_u64(optarg, &v) || v < 300 || v > 100000000)
                return tool_usage_err("sim", "--baud '%s' is not a line rate from 300 to 100000000", optarg);
            s->bytes_per_s = (double)v / 10; /* 8N1: a start bit, 8 data bits, a stop bit */
            break;
        case O_FLASH: flash = optarg; break;
        case O_VENDOR: vendor = optarg; break;
        case O_CLASS: klass = optarg; break;
        case O_KEY:
            if (n_keys == MOTA_AGENT_MAX_KEYS) {
                tool_usage_err("sim", "at most %u keys", MOTA_AGENT_MAX_KEYS);
                return EXIT_USAGE;
            }
            keys[n_keys++] = optarg;
            break;
        case O_MODEL:
            if (n_models == MOTA_AGENT_MAX_MODELS) {
                tool_usage_err("sim", "at most %u models", MOTA_AGENT_MAX_MODELS);
                return EXIT_USAGE;
            }
            models[n_models++] = optarg;
            break;
        case O_FPU: p->fpu_enabled = true; break;
        case O_NO_FPU: p->fpu_enabled = false; break;
        case O_SOFT: p->float_abi = 0; break;
        case O_FLOAT_ABI:
            if (strcmp(optarg, "soft") == 0) p->float_abi = 0;
            else if (strcmp(optarg, "softfp") == 0) p->float_abi = 1;
            else if (strcmp(optarg, "hard") == 0) p->float_abi = 2;
            else {
                tool_usage_err("sim", "--float-abi: soft, softfp or hard");
                return EXIT_USAGE;
            }
            break;
        case O_SEC: p->secure = true; break;
        case O_NONSEC: p->secure = false; break;
        case O_DBG: p->dbg_info = true; break;
        case O_NO_DBG: p->dbg_info = false; break;
        case O_RT_ASYNC: p->async = true; break;
        case O_NO_ASYNC: p->async = false; break;
        case O_TORN: torn = true; break;
        case O_ONCE: once = true; break;
        case O_FAMILY:
            if (!parse_families(optarg, &p->reloc_families)) {
                tool_usage_err("sim", "--family: npu, legacy or npu,legacy");
                return EXIT_USAGE;
            }
            break;
        case O_LLATON:
            if (strcmp(optarg, "none") == 0) {
                p->has_ll_aton = false;
            } else if (parse_version(optarg, &p->ll_aton_major, &p->ll_aton_minor, &p->ll_aton_micro) != MOTA_OK ||
                       p->ll_aton_major > 255 || p->ll_aton_minor > 255 || p->ll_aton_micro > 255) {
                tool_usage_err("sim", "--ll-aton: expected X.Y.Z (each at most 255) or none");
                return EXIT_USAGE;
            } else {
                p->has_ll_aton = true;
            }
            break;
        case O_SELFTEST:
            if (strcmp(optarg, "pass") == 0)
                sim_mode = MOTA_SIM_PASS;
            else if (strcmp(optarg, "fail") == 0)
                sim_mode = MOTA_SIM_FAIL;
            else if (strcmp(optarg, "slow") == 0)
                sim_mode = MOTA_SIM_SLOW;
            else {
                tool_usage_err("sim", "--selftest: pass, fail or slow");
                return EXIT_USAGE;
            }
            break;
        case O_CORRUPT:
            s->corrupt_rate = atof(optarg);
            if (s->corrupt_rate < 0 || s->corrupt_rate > 1) {
                tool_usage_err("sim", "--corrupt-rate: a probability from 0 to 1");
                return EXIT_USAGE;
            }
            break;
        case O_FLASH_SIZE: case O_EXEC: case O_EXT: case O_CPU: case O_TRIAL: case O_CUT: case O_DROP:
        case O_SEED: case O_HEAD: case O_STRUCT: case O_IDLE:
            if (!tool_parse_u64(optarg, &v)) {
                tool_usage_err("sim", "'%s' is not a number", optarg);
                return EXIT_USAGE;
            }
            if (c == O_FLASH_SIZE) flash_size = v;
            else if (c == O_EXEC) exec = v, exec_set = true;
            else if (c == O_EXT) ext = v, ext_set = true;
            else if (c == O_HEAD) head = v;
            else if (c == O_CPU) p->cpu_part = (uint32_t)(v & 0xFFF);
            else if (c == O_STRUCT) p->struct_sizes = (uint32_t)v;
            else if (c == O_TRIAL) trial_boots = (uint32_t)v;
            else if (c == O_CUT) cut = v;
            else if (c == O_DROP) s->drop_after = v;
            else if (c == O_IDLE) idle = (double)v;
            else s->seed = (unsigned)v;
            if ((c == O_CPU && v > 0xFFF) || (c == O_STRUCT && v > 0xFFFFFFFFu)) {
                tool_usage_err("sim", "'%s' is out of range", optarg);
                return EXIT_USAGE;
            }
            break;
        default: return EXIT_USAGE;
        }
    }
    if (optind < argc)
        return tool_usage_err("sim", "unexpected argument '%s'", argv[optind]);
    if (s->mode < 0 || n_keys == 0)
        return tool_usage_err("sim", "needs a transport (--tcp, --pty or --stdio) and at least one --key");
    if (pty_link != NULL && s->mode != 1)
        return tool_usage_err("sim", "--pty-link goes with --pty");
    if (port_path != NULL && s->mode == 2)
        return tool_usage_err("sim", "--port-file: --stdio has no port");
    if (port_path != NULL && tool_out_check(port_path) != MOTA_OK)
        return EXIT_IO;
    if (n_models == 0)
        models[n_models++] = "network";
    /* the profile's memories are the board's: shared out among the models, as a firmware would */
    if (!exec_set)
        exec = prof.exec_ram / n_models / 8 * 8;
    if (!ext_set)
        ext = prof.ext_ram / n_models / 8 * 8;
    if (flash_size == 0)
        flash_size = prof.update_area;
    if (flash_size < 64 * 1024 || flash_size > (256u << 20)) {
        tool_usage_err("sim", "--flash-size %llu: from 64 KiB to 256 MiB", (unsigned long long)flash_size);
        return EXIT_USAGE;
    }
    if (exec < 4096 || exec > (64u << 20)) {
        tool_usage_err("sim", "--exec-ram %llu per model: from 4 KiB to 64 MiB", (unsigned long long)exec);
        return EXIT_USAGE;
    }
    if (ext > (256u << 20)) {
        tool_usage_err("sim", "--ext-ram %llu per model: at most 256 MiB", (unsigned long long)ext);
        return EXIT_USAGE;
    }
    if (head != 0 && (head < MOTA_AGENT_SCRATCH_MIN || head > MOTA_AGENT_SCRATCH_ANY)) {
        tool_usage_err("sim", "--head-buffer: from %u to %u bytes", MOTA_AGENT_SCRATCH_MIN, MOTA_AGENT_SCRATCH_ANY);
        return EXIT_USAGE;
    }
    atexit(remove_at_exit);
    if (port_path != NULL)
        unlink(port_path); /* a stale one would send a client to a port nobody serves */
    if (flash == NULL && (flash = throwaway_flash()) == NULL)
        return EXIT_IO;
    /* layout: journal (2 sectors), then two equal slots per model */
    struct mota_posix_device_options o = {.flash_path = flash, .flash_size = (uint32_t)flash_size,
                                          .n_models = n_models, .exec_ram_size = (uint32_t)exec,
                                          .ext_ram_size = (uint32_t)ext, .ext_ram_base = prof.ext_base,
                                          .n_regions = prof.n_regions};
    memcpy(o.regions, prof.regions, sizeof(o.regions));
    memcpy(o.models, models, sizeof(models[0]) * n_models);
    int ret = mota_posix_device_open(&s->d, &o);
    if (ret == MOTA_ERR_CONFIG) {
        tool_fail(ret, "the profile's memories overlap or do not fit the address space (--ext-ram, --exec-ram)");
        return EXIT_USAGE;
    }
    if (ret != MOTA_OK) {
        tool_fail(MOTA_ERR_IO, "%s: cannot open, or its size is not %llu", flash, (unsigned long long)flash_size);
        return EXIT_IO;
    }
    if (cut) {
        mota_posix_flash_on_cut(&s->d.pf, power_cut, s);
        mota_posix_flash_cut(&s->d.pf, cut, torn);
    }
    struct mota_agent_config *cfg = &s->d.cfg;
    if (head)
        cfg->scratch_size = (size_t)head;
    cfg->profile = prof.dev;
    cfg->profile.name = prof.name;
    cfg->max_trial_boots = trial_boots;
    s->d.sim.mode = sim_mode;
    cfg->n_keys = n_keys;
    for (unsigned k = 0; k < n_keys; k++) {
        struct mota_p256_key key;
        if (tool_load_key(keys[k], &key) != MOTA_OK)
            return EXIT_IO;
        memcpy(cfg->keys[k].pub, key.pub, MOTA_P256_PUB_LEN);
        cfg->keys[k].index = k + 1;
    }
    mota_posix_device_identity(&s->d, vendor, klass);
    gate_init(&s->gate, idle);
    {
        char d[256];
        tool_profile_describe(&cfg->profile, d, sizeof(d));
        fprintf(stderr, "mota-sim: profile %s: %s; exec RAM %llu, external RAM %llu bytes per model\n",
                prof.name ? prof.name : "(default)", d, (unsigned long long)exec, (unsigned long long)ext);
    }

    /* the transport */
    char port_name[300] = "";
    if (s->mode == 0) {
        char host[256];
        const char *colon = strrchr(tcp, ':');
        uint64_t port = 0;
        if (colon == NULL || (size_t)(colon - tcp) >= sizeof(host) || !tool_parse_u64(colon + 1, &port) ||
            port > 65535) {
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
        snprintf(port_name, sizeof(port_name), "tcp:%s:%u", host, p16);
    } else if (s->mode == 1) {
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
        if ((size_t)snprintf(port_name, sizeof(port_name), "%s", s->pt.pty_path) >= sizeof(port_name)) {
            tool_fail(MOTA_ERR_IO, "pty path %s is too long for --port-file", s->pt.pty_path);
            return EXIT_IO;
        }
    } else {
        mota_posix_transport_stdio(&s->pt);
    }
    fflush(stdout);
    mota_posix_transport_hal(&s->pt, &s->tr);
    s->faulty.read = faulty_read;
    s->faulty.write = faulty_write;
    s->faulty.ctx = s;
    signal(SIGPIPE, SIG_IGN);
    /* SIGTERM and SIGINT end the simulator between steps: the flash file is closed, the client's
     * summary printed */
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    if ((ret = mota_posix_device_boot(&s->d, &s->faulty, "mota-sim")) != MOTA_OK) {
        tool_fail(ret, "agent start");
        return EXIT_IO;
    }
    report_models(s);
    if (port_path != NULL) {
        if (tool_out_line(port_path, port_name) != MOTA_OK)
            return EXIT_IO;
        snprintf(port_file, sizeof(port_file), "%s", port_path);
    }

    while (!stop_requested) {
        if (s->mode == 0) {
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
        ret = mota_device_step(&s->d.device, 100);
        if (s->d.resets != resets) {
            fprintf(stderr, "mota-sim: reboot\n");
            if (ret != MOTA_OK) {
                tool_fail(ret, "agent start");
                return EXIT_IO;
            }
            report_models(s);
        }
        if (ret == MOTA_ERR_TRANSPORT) {
            if (once || s->mode == 2)
                break;
            if (s->mode == 0)
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
    if (s->mode == 0 && s->pt.rfd >= 0)
        client_gone(s);
    gate_close(&s->gate);
    mota_posix_transport_close(&s->pt);
    mota_posix_device_close(&s->d);
    return EXIT_OK;
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
