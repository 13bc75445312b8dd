#include "cmds.h"
#include "util.h"
#include "epochs_report.h"
#include "compress.h"

#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/crc32.h"
#include "mota/decompress.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"
#include "mota/compat.h"
#include "mota/nbin.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void help(FILE *f)
{
    fprintf(f,
            "usage: mota pack --key PRIVATE.pem --vendor DOMAIN --class NAME --seq N|from-version\n"
            "                 -o OUT.mota [options] network_rel.bin\n"
            "       mota pack --unsigned --pub PUBLIC.pem|--key-id HEX ... (then `mota sign`)\n\n"
            "Wraps an ST runtime-loadable model into a signed SUIT container. The\n"
            "compatibility data devices check before installing is read from the NBIN\n"
            "header; a split model's params file must match the header's size and CRC.\n\n"
            "  -k, --key FILE            P-256 private key (SEC1 or PKCS#8, PEM or DER)\n"
            "  -o, --out FILE            container to write (written atomically)\n"
            "      --sync                also sync it and its directory to the disk before exiting\n"
            "                            (a release artefact; a build's output need not pay for it)\n"
            "      --vendor DOMAIN       vendor id = UUID5(DNS, DOMAIN), e.g. example.com (not empty)\n"
            "      --class NAME          class id = UUID5(vendor id, NAME), e.g. board-rev-b\n"
            "      --seq N               anti-rollback sequence number (required): a device refuses\n"
            "                            any container with a lower one for good, so never a clock\n"
            "      --seq from-version    derived from --version (required then), ordered as semantic\n"
            "                            versions are: ((MAJOR*2^20 + MINOR)*2^20 + PATCH)*2, +1 for a\n"
            "                            release; pre-releases of one version share a number\n"
            "      --version SEMVER      model version: semantic versioning 2.0.0, e.g. 1.2.0 or\n"
            "                            2.0.0-rc.1+build.5 (default 0.0.0)\n"
            "      --params FILE         params file of a split model (network_rel_params.bin)\n"
            "      --name TEXT           model name (default: the model's c_name)\n"
            "      --description TEXT    free text for people\n"
            "      --install-mode MODE   xip or copy (default xip)\n"
            "      --compress[=ALG]      send each payload compressed when that is smaller: fewer bytes on\n"
            "                            the link; the device decodes it into its slot and checks the\n"
            "                            image's signed digest from flash. ALG: deflate (the default: 1.95x\n"
            "                            on an N6 model) or lz4 (1.63x; its decoder is a third the size)\n"
            "CPU-share policy (Neural-ART models; the epoch summary goes into the manifest):\n"
            "      --max-sw-epochs N     refuse a model with more than N epochs on the CPU alone\n"
            "      --max-cpu-epochs N    refuse a model with more than N epochs using the CPU (hybrid\n"
            "                            and software); mota info --epochs shows them\n"
            "Self-test (all three or none):\n"
            "      --selftest-input FILE       input the device feeds the model after install\n"
            "      --selftest-output FILE      expected output bytes (digest is stored)\n"
            "      --selftest-max-latency-us N latency limit for the self-test inference\n"
            "Separate signing (the private key stays elsewhere: an HSM, a KMS, a signing host):\n"
            "      --unsigned            write the container complete but for its signature; the key\n"
            "                            it will be signed with is named by one of:\n"
            "      --pub FILE            that key's public half (PEM or DER)\n"
            "      --key-id HEX          that key's id (32 hex digits, as keygen prints it)\n"
            "                            Devices and verify refuse it (MOTA_ERR_UNSIGNED) until\n"
            "                            `mota sign` has signed it.\n\n"
            "Text options (--vendor, --version, --name, --description) must be UTF-8, at most\n"
            "%u bytes. The output may not be one of the input files.\n"
            "With SOURCE_DATE_EPOCH set, the output is byte-for-byte reproducible.\n",
            MOTA_CONTAINER_MAX_TEXT);
}

struct pack_opts {
    const char *key, *out, *params, *vendor, *klass, *version, *name, *description;
    const char *st_in, *st_out, *model, *pub;
    uint64_t seq, st_latency;
    bool have_seq, seq_from_version, have_version, have_latency, unsigned_, have_kid, sync;
    uint32_t compress; /* 0, or the algorithm (MOTA_DECOMP_*) */
    uint8_t kid[MOTA_KEY_ID_LEN];
    uint32_t mode;
    long max_sw, max_cpu; /* the CPU-share policy; -1: unset */
};

static int sign_cb(void *ctx, const uint8_t hash[MOTA_SHA256_LEN], uint8_t sig[MOTA_P256_SIG_LEN])
{
    return mota_ecdsa_p256_sign(ctx, hash, sig);
}

static int zero_sign_cb(void *ctx, const uint8_t hash[MOTA_SHA256_LEN], uint8_t sig[MOTA_P256_SIG_LEN])
{
    (void)ctx;
    (void)hash;
    memset(sig, 0, MOTA_P256_SIG_LEN);
    return MOTA_OK;
}

/* 0, or the errno of the failed write: the caller reports it with the path */
static int pwrite_all(int fd, const uint8_t *p, size_t n, off_t off)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        if (w == 0)
            return ENOSPC; /* no progress and no error: the device takes no more */
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

/*
 * Payloads are written (and, with --sync, synced) by a second thread, which
 * checks the params' CRC-32 first, while the main thread hashes them: the
 * head's length does not depend on the digests, so the payloads' offsets are
 * known before their digests are. Two threads: the two jobs take about as
 * long (SHA-256 at the CPU's speed; CRC-32 and the copy into the page cache).
 */
struct payload_writer {
    const struct mota_nbin_info *info;
    const struct mapped *params; /* params file, or the model itself: checked before writing */
    int params_ret;
    int fd;
    off_t offset;
    size_t n;
    enum mota_component_role role[MOTA_CONTAINER_MAX_COMPONENTS];
    const struct mapped *src[MOTA_CONTAINER_MAX_COMPONENTS];
    bool sync;
    size_t crc_off, crc_n; /* the span of the params the header's CRC-32 covers */
    uint32_t crc;
    bool crc_done;
    int ret;
    int err;            /* errno of a failed write or sync */
    const char *failed; /* what failed: "writing" or "syncing" */
};

/* Written in slices that stay in the cache for the CRC-32 and the copy into the page cache (one pass over
 * the whole file for each was 1.3x slower, here). */
#define WRITE_SLICE (1u << 20)

/* Bytes [o, o + k) of the params source are at p: the CRC-32 takes in the part of its span they hold. */
static void crc_take(struct payload_writer *w, size_t o, const uint8_t *p, size_t k)
{
    size_t a = o > w->crc_off ? o : w->crc_off, e = o + k < w->crc_off + w->crc_n ? o + k : w->crc_off + w->crc_n;
    if (a < e)
        w->crc = mota_crc32(w->crc, p + (a - o), e - a);
}

/* One payload's bytes at off; the params' CRC-32 as they go, when they are the params sent as they are. */
static void write_payload(struct payload_writer *w, const struct mapped *s, off_t off)
{
    bool params = s->data == w->params->data && s->len == w->params->len;
    for (size_t o = 0; o < s->len && w->err == 0; o += WRITE_SLICE) {
        size_t k = s->len - o < WRITE_SLICE ? s->len - o : WRITE_SLICE;
        if (params)
            crc_take(w, o, s->data + o, k);
        w->err = pwrite_all(w->fd, s->data + o, k, off + (off_t)o);
    }
    w->crc_done |= params;
}

static void *write_payloads(void *arg)
{
    struct payload_writer *w = arg;
    off_t off = w->offset;
    int span = mota_nbin_params_crc_span(w->info, w->params->len, &w->crc_off, &w->crc_n);
    w->ret = MOTA_OK;
    for (size_t i = 0; i < w->n && w->err == 0; i++) {
        uint8_t ph[32];
        size_t ph_len;
        w->ret = mota_payload_head_encode(w->role[i], w->src[i]->len, ph, sizeof(ph), &ph_len);
        if (w->ret != MOTA_OK)
            return NULL;
        w->err = pwrite_all(w->fd, ph, ph_len, off);
        off += (off_t)ph_len;
        write_payload(w, w->src[i], off);
        off += (off_t)w->src[i]->len;
    }
    if (span == MOTA_OK && !w->crc_done) /* the params went compressed: their CRC-32 from the file */
        crc_take(w, 0, w->params->data, w->params->len);
    w->params_ret = span != MOTA_OK ? span : w->crc_n == 0 || w->crc == w->info->params_bin_crc32
                                                 ? MOTA_OK : MOTA_ERR_NBIN_PARAMS_CRC;
    w->failed = "writing";
    if (w->err == 0 && w->sync && fsync(w->fd) != 0) {
        w->err = errno;
        w->failed = "syncing";
    }
    return NULL;
}

/*
 * Offset of the first byte of s that starts no valid UTF-8 sequence, or
 * len if it is all valid: by the decoder's own rule (mota_utf8_valid), so
 * what pack accepts, verify accepts.
 */
static size_t utf8_bad_offset(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t n = 1;
        while (n <= 4 && i + n <= len && !mota_utf8_valid((const uint8_t *)s + i, n))
            n++;
        if (n > 4 || i + n > len)
            return i;
        i += n;
    }
    return len;
}

static bool is_alnum_hyphen(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

/*
 * Semantic versioning 2.0.0 (semver.org, its BNF):
 *   MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]
 * numbers without leading zeros; PRERELEASE and BUILD are dot-separated
 * non-empty identifiers of [0-9A-Za-z-]; a numeric pre-release identifier
 * has no leading zero (build identifiers may). false with *bad the offset
 * of the first byte that breaks the grammar (the length if s ends early).
 */
static bool semver_valid(const char *s, size_t *bad)
{
    size_t i = 0;
    for (int part = 0; part < 3; part++) {
        size_t start = i;
        while (s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == start)
            goto fail;
        if (s[start] == '0' && i - start > 1) {
            i = start; /* leading zero */
            goto fail;
        }
        if (part < 2) {
            if (s[i] != '.')
                goto fail;
            i++;
        }
    }
    for (int section = 0; section < 2; section++) {
        if (s[i] != (section == 0 ? '-' : '+'))
            continue;
        do {
            size_t start = ++i;
            bool digits_only = true;
            while (is_alnum_hyphen(s[i])) {
                digits_only &= s[i] >= '0' && s[i] <= '9';
                i++;
            }
            if (i == start)
                goto fail; /* empty identifier */
            if (section == 0 && digits_only && s[start] == '0' && i - start > 1) {
                i = start; /* numeric pre-release identifier with a leading zero */
                goto fail;
            }
        } while (s[i] == '.');
    }
    if (s[i] == '\0')
        return true;
fail:
    *bad = i;
    return false;
}

/*
 * --seq from-version: a number that orders as semantic versions do (semver
 * section 11, build metadata ignored), so a newer version is never refused
 * as a rollback: ((MAJOR * 2^20 + MINOR) * 2^20 + PATCH) * 2, plus 1 for a
 * release, which comes after its pre-releases. s is a valid semver.
 */
static bool seq_from_version(const char *s, uint64_t *seq)
{
    uint64_t part[3];
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        part[i] = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (part[i] > (1u << 22))
                return false; /* out of range, and no overflow below */
            part[i] = part[i] * 10 + (uint64_t)(*p - '0');
        }
        if (*p == '.')
            p++;
    }
    if (part[0] >= (1u << 22) || part[1] >= (1u << 20) || part[2] >= (1u << 20))
        return false;
    *seq = (((part[0] << 20 | part[1]) << 20 | part[2]) << 1) | (*p == '-' ? 0u : 1u);
    return true;
}

enum { O_PARAMS = 256, O_VENDOR, O_CLASS, O_VERSION, O_SEQ, O_NAME, O_DESC, O_MODE, O_STIN, O_STOUT, O_STLAT,
       O_UNSIGNED, O_PUB, O_KID, O_MAXSW, O_MAXCPU, O_COMPRESS, O_SYNC };

/* The options whose value is checked: --key-id, --seq, --selftest-max-latency-us, --install-mode,
 * --max-sw-epochs, --max-cpu-epochs. */
static int checked_opt(struct pack_opts *o, int c, const char *arg)
{
    uint64_t v = 0;
    switch (c) {
    case O_MAXSW:
    case O_MAXCPU:
        if (!tool_parse_u64(arg, &v) || v > 65535)
            return tool_usage_err("pack", "%s '%s' is not a number of epochs (0 to 65535)",
                                  c == O_MAXSW ? "--max-sw-epochs" : "--max-cpu-epochs", arg);
        *(c == O_MAXSW ? &o->max_sw : &o->max_cpu) = (long)v;
        break;
    case O_KID:
        if (!tool_parse_hex(arg, o->kid, sizeof(o->kid)))
            return tool_usage_err("pack", "--key-id '%s' is not %zu bytes in hex (32 digits, as keygen prints)",
                                  arg, sizeof(o->kid));
        o->have_kid = true;
        break;
    case O_SEQ:
        o->seq_from_version = strcmp(arg, "from-version") == 0;
        if (!o->seq_from_version && !tool_parse_u64(arg, &o->seq))
            return tool_usage_err("pack", "--seq '%s' is neither an unsigned integer nor from-version", arg);
        o->have_seq = true;
        break;
    case O_STLAT:
        if (!tool_parse_u64(arg, &o->st_latency) || o->st_latency == 0)
            return tool_usage_err("pack", "--selftest-max-latency-us '%s' is not a positive integer", arg);
        o->have_latency = true;
        break;
    default: /* O_MODE */
        if (strcmp(arg, "xip") == 0)
            o->mode = MOTA_INSTALL_XIP;
        else if (strcmp(arg, "copy") == 0)
            o->mode = MOTA_INSTALL_COPY;
        else
            return tool_usage_err("pack", "--install-mode '%s' is neither xip nor copy", arg);
        break;
    }
    return EXIT_OK;
}

static int parse_args(int argc, char **argv, struct pack_opts *o)
{
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"key", required_argument, 0, 'k'}, {"out", required_argument, 0, 'o'},
        {"params", required_argument, 0, O_PARAMS}, {"vendor", required_argument, 0, O_VENDOR},
        {"class", required_argument, 0, O_CLASS}, {"version", required_argument, 0, O_VERSION},
        {"seq", required_argument, 0, O_SEQ}, {"name", required_argument, 0, O_NAME},
        {"description", required_argument, 0, O_DESC}, {"install-mode", required_argument, 0, O_MODE},
        {"selftest-input", required_argument, 0, O_STIN}, {"selftest-output", required_argument, 0, O_STOUT},
        {"selftest-max-latency-us", required_argument, 0, O_STLAT}, {"unsigned", no_argument, 0, O_UNSIGNED},
        {"pub", required_argument, 0, O_PUB}, {"key-id", required_argument, 0, O_KID},
        {"max-sw-epochs", required_argument, 0, O_MAXSW}, {"max-cpu-epochs", required_argument, 0, O_MAXCPU},
        {"compress", optional_argument, 0, O_COMPRESS}, {"sync", no_argument, 0, O_SYNC},
        {0, 0, 0, 0}};
    int c, rc;
    memset(o, 0, sizeof(*o));
    o->max_sw = o->max_cpu = -1;
    o->version = "0.0.0";
    o->mode = MOTA_INSTALL_XIP;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "hk:o:", opts, "pack")) != -1) {
        switch (c) {
        case 'h': help(stdout); exit(EXIT_OK);
        case 'k': o->key = optarg; break;
        case 'o': o->out = optarg; break;
        case O_PARAMS: o->params = optarg; break;
        case O_VENDOR: o->vendor = optarg; break;
        case O_CLASS: o->klass = optarg; break;
        case O_VERSION: o->version = optarg; o->have_version = true; break;
        case O_UNSIGNED: o->unsigned_ = true; break;
        case O_COMPRESS:
            if (optarg != NULL && strcmp(optarg, "deflate") != 0 && strcmp(optarg, "lz4") != 0)
                return tool_usage_err("pack", "--compress=%s: the algorithms are deflate and lz4", optarg);
            o->compress = optarg != NULL && strcmp(optarg, "lz4") == 0 ? MOTA_DECOMP_LZ4 : MOTA_DECOMP_DEFLATE;
            break;
        case O_SYNC: o->sync = true; break;
        case O_PUB: o->pub = optarg; break;
        case O_NAME: o->name = optarg; break;
        case O_DESC: o->description = optarg; break;
        case O_STIN: o->st_in = optarg; break;
        case O_STOUT: o->st_out = optarg; break;
        case O_KID:
        case O_MAXSW:
        case O_MAXCPU:
        case O_SEQ:
        case O_STLAT:
        case O_MODE:
            if ((rc = checked_opt(o, c, optarg)) != EXIT_OK)
                return rc;
            break;
        default: return EXIT_USAGE;
        }
    }
    if (argc - optind != 1)
        return tool_usage_err("pack", argc - optind < 1 ? "needs the model file (network_rel.bin)"
                                                        : "takes exactly one model file, not also '%s'", argv[argc - 1]);
    o->model = argv[optind];
    return EXIT_OK;
}

/* What goes together: a key that signs, or one named for --unsigned; the required options; all of the
 * self-test or none. */
static int check_combination(const struct pack_opts *o)
{
    if (o->unsigned_ && o->key)
        return tool_usage_err("pack", "--unsigned writes no signature: name the key with --pub or --key-id, not --key");
    if (!o->unsigned_ && (o->pub || o->have_kid))
        return tool_usage_err("pack", "--pub and --key-id go with --unsigned (--key signs at once)");
    if (o->unsigned_ && !o->pub == !o->have_kid)
        return tool_usage_err("pack", "--unsigned needs the signing key's --pub PUBLIC.pem or its --key-id, one of them");
    const char *missing = !o->key && !o->unsigned_ ? "--key" : !o->out ? "--out" : !o->vendor ? "--vendor"
                          : !o->klass ? "--class" : NULL;
    if (missing)
        return tool_usage_err("pack", "%s is required", missing);
    /* a clock as the default once locked devices out: the first such container confirmed, every
     * later container with a small --seq is a rollback for good */
    if (!o->have_seq)
        return tool_usage_err("pack", "--seq is required: a number that grows with every release, or from-version");
    if (o->seq_from_version && !o->have_version)
        return tool_usage_err("pack", "--seq from-version needs --version");
    if ((o->st_in || o->st_out || o->have_latency) && !(o->st_in && o->st_out && o->have_latency))
        return tool_usage_err("pack", "a self-test needs all three of --selftest-input, --selftest-output and "
                                      "--selftest-max-latency-us");
    return EXIT_OK;
}

/* The container's texts: within bounds and UTF-8; the vendor and the class named. */
static int check_texts(const struct pack_opts *o)
{
    if (strlen(o->version) > MOTA_CONTAINER_MAX_TEXT || (o->description && strlen(o->description) > MOTA_CONTAINER_MAX_TEXT) ||
        (o->name && strlen(o->name) > MOTA_CONTAINER_MAX_TEXT) || strlen(o->vendor) > MOTA_CONTAINER_MAX_TEXT) {
        tool_usage_err("pack", "--vendor, --name, --version and --description are limited to %u bytes",
                       MOTA_CONTAINER_MAX_TEXT);
        return EXIT_USAGE;
    }
    /* the container's text strings must be UTF-8: refused here, not by verify later */
    const struct {
        const char *opt, *val;
    } texts[] = {{"--description", o->description}, {"--name", o->name}, {"--version", o->version},
                 {"--vendor", o->vendor}};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        if (texts[i].val == NULL)
            continue;
        size_t len = strlen(texts[i].val), bad = utf8_bad_offset(texts[i].val, len);
        if (bad != len) {
            tool_fail(MOTA_ERR_ARG_UTF8, "%s: byte %zu (0x%02x) starts no valid UTF-8 sequence", texts[i].opt, bad,
                      (unsigned char)texts[i].val[bad]);
            return EXIT_USAGE;
        }
    }
    /* the vendor id is derived from it, and it is the vendor name shown */
    if (o->vendor[0] == '\0') {
        tool_fail(MOTA_ERR_ARG, "--vendor is empty: give the vendor's domain name, e.g. example.com");
        return EXIT_USAGE;
    }
    /* the class id names the boards the model is for: an empty one is a forgotten option */
    if (o->klass[0] == '\0') {
        tool_fail(MOTA_ERR_ARG, "--class is empty: give the device class, e.g. board-rev-b");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* --version a semantic version; --seq from-version derived from it. */
static int check_version(struct pack_opts *o)
{
    size_t bad;
    if (!semver_valid(o->version, &bad)) {
        tool_fail(MOTA_ERR_ARG_SEMVER,
                  "--version '%s' at byte %zu: the form is MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD], numbers "
                  "without leading zeros, identifiers of [0-9A-Za-z-] separated by dots",
                  o->version, bad);
        return EXIT_USAGE;
    }
    if (o->seq_from_version && !seq_from_version(o->version, &o->seq))
        return tool_usage_err("pack", "--seq from-version: --version %s is out of range (MAJOR below 4194304, "
                                      "MINOR and PATCH below 1048576): give --seq N", o->version);
    return EXIT_OK;
}

/* What pack reads: the model, its params file, the self-test's input and expected output. */
struct inputs {
    struct mapped model, params, st_in, st_out;
    struct mota_nbin_info info;
};

/* the output written over an input would destroy it: refused before any work
 * (tool_out_open checks again against every file read, by device and inode) */
static int check_output(const struct pack_opts *o)
{
    const struct {
        const char *what, *path;
    } inputs[] = {{"--key", o->key}, {"the model", o->model}, {"--params", o->params}, {"--selftest-input", o->st_in},
                  {"--selftest-output", o->st_out}, {"--pub", o->pub}};
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
        if (inputs[i].path != NULL && tool_same_file(o->out, inputs[i].path)) {
            tool_fail(MOTA_ERR_SAME_FILE, "-o %s is the same file as %s %s", o->out, inputs[i].what, inputs[i].path);
            return EXIT_IO;
        }
    }
    if (tool_out_check(o->out) != MOTA_OK)
        return EXIT_IO;
    return EXIT_OK;
}

/* The signing key (--key), or the public half of the one that will sign (--pub), and its id; or the id
 * alone (--key-id). */
static int signing_key(const struct pack_opts *o, struct mota_p256_key *key, uint8_t kid[MOTA_KEY_ID_LEN])
{
    if (o->key == NULL && o->pub == NULL) {
        memcpy(kid, o->kid, MOTA_KEY_ID_LEN); /* --unsigned --key-id */
        return EXIT_OK;
    }
    if (tool_load_key(o->key != NULL ? o->key : o->pub, key) != MOTA_OK)
        return EXIT_IO;
    if (o->key != NULL && !key->has_private) {
        tool_fail(MOTA_ERR_KEY_INVALID, "%s holds no private key", o->key);
        return EXIT_IO;
    }
    mota_key_id(key->pub, kid);
    return EXIT_OK;
}

/* The model, valid, and the params file of a split one. */
static int load_model(const struct pack_opts *o, struct inputs *in)
{
    int ret;
    if (tool_map(o->model, &in->model) != MOTA_OK)
        return EXIT_IO;
    if ((ret = mota_nbin_validate(in->model.data, in->model.len, &in->info)) != MOTA_OK) {
        tool_fail(ret, "%s", o->model);
        return EXIT_INVALID;
    }
    if (in->info.split && o->params == NULL) {
        tool_fail(MOTA_ERR_NBIN_SPLIT, "%s is a split model: give its params file with --params", o->model);
        return EXIT_INVALID;
    }
    if (!in->info.split && o->params != NULL) {
        tool_fail(MOTA_ERR_NBIN_SPLIT, "%s carries its params; --params %s does not belong to it", o->model, o->params);
        return EXIT_INVALID;
    }
    /* its size and CRC-32 are checked by the payload writer, in parallel */
    if (o->params != NULL && tool_map(o->params, &in->params) != MOTA_OK)
        return EXIT_IO;
    return EXIT_OK;
}

/* The manifest's account of the model: sequence number, vendor and class, texts, creation time (that of
 * SOURCE_DATE_EPOCH when set), compatibility data. created and name are the caller's, for spec. */
static int describe(const struct pack_opts *o, const struct mota_nbin_info *info, char *created, size_t created_cap,
                    char name[MOTA_NBIN_MAX_NAME + 1], struct mota_pack_spec *spec)
{
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    uint64_t now = (uint64_t)time(NULL);
    if (epoch != NULL && !tool_parse_u64(epoch, &now)) {
        tool_usage_err("pack", "SOURCE_DATE_EPOCH is not a number");
        return EXIT_USAGE;
    }
    time_t t = (time_t)now;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(created, created_cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
    spec->seq = o->seq;
    mota_uuid5(mota_uuid_ns_dns, o->vendor, strlen(o->vendor), spec->vendor_id);
    mota_uuid5(spec->vendor_id, o->klass, strlen(o->klass), spec->class_id);
    memcpy(name, info->c_name, info->c_name_len);
    name[info->c_name_len] = '\0';
    spec->description = o->description;
    spec->created = created;
    spec->vendor_name = o->vendor;
    spec->model_name = o->name ? o->name : name;
    spec->version = o->version;
    mota_nbin_compat(info, o->mode, &spec->compat);
    return EXIT_OK;
}

/* The summary as a device will decode it: pack never signs one its own decoder refuses. */
static int summary_round_trips(const struct mota_epoch_summary *s)
{
    uint8_t buf[64];
    struct mota_cbor_enc e;
    struct mota_cbor_dec d;
    struct mota_epoch_summary back = {0};
    mota_cbor_enc_init(&e, buf, sizeof(buf));
    mota_epoch_summary_put(&e, s);
    mota_cbor_dec_init(&d, buf, e.len);
    mota_epoch_summary_get(&d, &back);
    bool same = back.blocks == s->blocks && back.blob == s->blob && back.hw == s->hw && back.hybrid == s->hybrid &&
                back.sw == s->sw && back.epochs_known == s->epochs_known && back.epochs == s->epochs &&
                back.npu_epochs == s->npu_epochs && back.hybrid_epochs == s->hybrid_epochs &&
                back.sw_epochs == s->sw_epochs;
    return e.err == 0 && d.err == 0 && same ? MOTA_OK : MOTA_ERR_INTERNAL;
}

/* The epoch summary of a Neural-ART model goes into the manifest; the policy (--max-sw-epochs,
 * --max-cpu-epochs) refuses a model whose CPU share is above it, or that cannot be measured. */
static int epoch_summary(const struct pack_opts *o, const struct inputs *in, struct mota_pack_spec *spec)
{
    struct mota_epoch_report rep;
    bool gate = o->max_sw >= 0 || o->max_cpu >= 0;
    int ret = mota_epochs_decode(in->model.data, in->model.len, &in->info, NULL, 0, NULL, 0, &rep);
    if (ret == MOTA_OK && !rep.present)
        ret = MOTA_ERR_NBIN_EPOCH_NONE;
    if (ret == MOTA_OK && summary_round_trips(&rep.sum) != MOTA_OK) {
        tool_fail(MOTA_ERR_INTERNAL, "%s: the epoch summary does not survive its own decoder", o->model);
        return EXIT_INVALID;
    }
    if (ret == MOTA_OK) {
        spec->compat.has_epochs = true;
        spec->compat.epochs = rep.sum;
        return epochs_policy(&rep.sum, o->max_sw, o->max_cpu) == MOTA_OK ? EXIT_OK : EXIT_INVALID;
    }
    /* no table (a CPU or legacy model), or one mota cannot read or refuses: the model is packed without
     * a summary (the table is the NPU runtime's, not the loader's), but a policy cannot be applied */
    if (gate) {
        tool_fail(ret, "%s: the CPU-share policy (--max-sw-epochs, --max-cpu-epochs) cannot be applied", o->model);
        return EXIT_INVALID;
    }
    if (ret != MOTA_ERR_NBIN_EPOCH_NONE && ret != MOTA_ERR_NBIN_EPOCH_FAMILY)
        fprintf(stderr, "mota: warning: %s: no epoch summary in the manifest: %s: %s (mota info --epochs)\n",
                o->model, mota_err_name(ret), mota_err_str(ret));
    return EXIT_OK;
}

/* The payloads (src[i]: component i's bytes): the model's code, its params, the self-test input, whose
 * expected output goes into the compatibility data by its size and digest. */
static int add_components(const struct pack_opts *o, struct inputs *in, struct mota_pack_spec *spec,
                          const struct mapped **src)
{
    src[0] = &in->model;
    spec->comp[0].role = MOTA_COMPONENT_CODE;
    spec->comp[0].size = in->model.len;
    spec->n_components = 1;
    if (o->params != NULL) {
        spec->comp[spec->n_components].role = MOTA_COMPONENT_PARAMS;
        spec->comp[spec->n_components].size = in->params.len;
        src[spec->n_components++] = &in->params;
    }
    if (o->st_in == NULL)
        return EXIT_OK;
    if (tool_map(o->st_in, &in->st_in) != MOTA_OK || tool_map(o->st_out, &in->st_out) != MOTA_OK)
        return EXIT_IO;
    if (in->st_in.len == 0 || in->st_out.len == 0) {
        tool_fail(MOTA_ERR_SELFTEST_FIELD, "self-test input and output must not be empty");
        return EXIT_INVALID;
    }
    spec->comp[spec->n_components].role = MOTA_COMPONENT_SELFTEST;
    spec->comp[spec->n_components].size = in->st_in.len;
    src[spec->n_components++] = &in->st_in;
    spec->compat.selftest.present = true;
    spec->compat.selftest.output_size = in->st_out.len;
    spec->compat.selftest.max_latency_us = o->st_latency;
    mota_sha256(in->st_out.data, in->st_out.len, spec->compat.selftest.output_digest);
    return EXIT_OK;
}

/* What goes on the wire for each payload (wire[i]): its bytes, or with --compress an LZ4 frame of
 * them where that is smaller (zbuf[i] holds it). */
static int compress_components(const struct pack_opts *o, struct mota_pack_spec *spec, const struct mapped **src,
                               struct mapped *wire, uint8_t **zbuf)
{
    for (size_t i = 0; i < spec->n_components; i++) {
        size_t zlen = 0;
        wire[i] = *src[i];
        if (!o->compress)
            continue;
        int ret = tool_compress(o->compress, src[i]->data, src[i]->len, TOOL_COMPRESS_BLOCK, &zbuf[i], &zlen);
        if (ret != MOTA_OK) {
            tool_fail(ret, "compressing the %s payload", mota_component_name(spec->comp[i].role));
            return ret == MOTA_ERR_IO ? EXIT_IO : EXIT_INVALID;
        }
        if (zlen >= src[i]->len)
            continue; /* nothing to gain: sent as it is */
        wire[i] = (struct mapped){.data = zbuf[i], .len = zlen};
        spec->comp[i].compressed = true;
        spec->comp[i].z_alg = o->compress;
        spec->comp[i].z_block = TOOL_COMPRESS_BLOCK;
        spec->comp[i].z_size = zlen;
    }
    return EXIT_OK;
}

static int write_and_hash(const struct pack_opts *o, const struct inputs *in, struct mota_pack_spec *spec,
                          const struct mapped **src, const struct mapped *wire, int fd, size_t offset)
{
    struct payload_writer pw = {.info = &in->info, .params = o->params ? &in->params : &in->model, .fd = fd,
                                .offset = (off_t)offset, .n = spec->n_components, .sync = o->sync};
    for (size_t i = 0; i < spec->n_components; i++) {
        pw.role[i] = spec->comp[i].role;
        pw.src[i] = &wire[i];
    }
    pthread_t th;
    bool threaded = pthread_create(&th, NULL, write_payloads, &pw) == 0;
    if (!threaded)
        write_payloads(&pw);
    for (size_t i = 0; i < spec->n_components; i++) {
        mota_sha256(src[i]->data, src[i]->len, spec->comp[i].digest); /* the image's */
        if (spec->comp[i].compressed)
            mota_sha256(wire[i].data, wire[i].len, spec->comp[i].z_digest);
    }
    if (threaded)
        pthread_join(th, NULL);
    if (pw.ret != MOTA_OK) {
        tool_fail(pw.ret, "%s: encoding a payload head", o->out);
        return EXIT_IO;
    }
    if (pw.err != 0) { /* first: the params' CRC-32 stopped with the writing */
        tool_fail(MOTA_ERR_IO, "%s: %s: %s", o->out, pw.failed, strerror(pw.err));
        return EXIT_IO;
    }
    if (pw.params_ret != MOTA_OK) {
        tool_fail(pw.params_ret, "%s does not match the header of %s", o->params ? o->params : "the appended params blob",
                  o->model);
        return EXIT_INVALID;
    }
    return EXIT_OK;
}

/* The container, written atomically: the payloads after a head of known length, then the head itself,
 * signed (or not, --unsigned). */
static int write_container(const struct pack_opts *o, const struct inputs *in, struct mota_pack_spec *spec,
                           const struct mapped **src, const struct mapped *wire, struct mota_p256_key *key,
                           const uint8_t kid[MOTA_KEY_ID_LEN])
{
    static uint8_t head[MOTA_CONTAINER_MAX_MANIFEST + 1024];
    size_t head_guess = 0, head_len = 0;
    struct outfile out = {0};
    int ret, rc;
    /* Head length first (digest values and signature have fixed sizes). */
    if ((ret = mota_container_encode_head(spec, kid, o->unsigned_ ? NULL : zero_sign_cb, NULL, head, sizeof(head),
                                          &head_guess)) != MOTA_OK) {
        tool_fail(ret, "encoding the manifest");
        return o->params != NULL && o->st_in == NULL ? EXIT_IO : EXIT_INVALID; /* as it always exited */
    }
    if (tool_out_open(&out, o->out, 0644) != MOTA_OK)
        return EXIT_IO;
    out.no_sync = !o->sync;
    if ((rc = write_and_hash(o, in, spec, src, wire, fileno(out.f), head_guess)) != EXIT_OK)
        goto fail;
    rc = EXIT_INVALID;
    if ((ret = mota_container_encode_head(spec, kid, o->unsigned_ ? NULL : sign_cb, key, head, sizeof(head),
                                          &head_len)) != MOTA_OK) {
        tool_fail(ret, "encoding the manifest");
        goto fail;
    }
    rc = EXIT_IO;
    if (head_len != head_guess) {
        tool_fail(MOTA_ERR_INTERNAL, "head length changed from %zu to %zu", head_guess, head_len);
        goto fail;
    }
    if ((ret = pwrite_all(fileno(out.f), head, head_len, 0)) != 0) {
        tool_fail(MOTA_ERR_IO, "%s: writing: %s", o->out, strerror(ret));
        goto fail;
    }
    return tool_out_commit(&out) == MOTA_OK ? EXIT_OK : EXIT_IO;
fail:
    tool_out_abort(&out);
    return rc;
}

static void print_compression(const struct pack_opts *o, const struct mota_pack_spec *spec)
{
    for (size_t i = 0; o->compress && i < spec->n_components; i++) {
        const struct mota_pack_component *c = &spec->comp[i];
        if (c->compressed)
            printf("compressed %s: %llu -> %llu bytes (%.3fx; %s, %u-byte blocks)\n", mota_component_name(c->role),
                   (unsigned long long)c->size, (unsigned long long)c->z_size, (double)c->size / (double)c->z_size,
                   c->z_alg == MOTA_DECOMP_LZ4 ? "lz4" : "deflate", (unsigned)c->z_block);
        else
            printf("%s: not compressed (no smaller so)\n", mota_component_name(c->role));
    }
}

int cmd_pack(int argc, char **argv)
{
    struct pack_opts o;
    struct inputs in = {0};
    struct mota_p256_key key;
    struct mota_pack_spec spec;
    const struct mapped *src[MOTA_CONTAINER_MAX_COMPONENTS] = {0};
    struct mapped wire[MOTA_CONTAINER_MAX_COMPONENTS];
    uint8_t *zbuf[MOTA_CONTAINER_MAX_COMPONENTS] = {0};
    char created[32], name_buf[MOTA_NBIN_MAX_NAME + 1];
    uint8_t kid[MOTA_KEY_ID_LEN];
    int rc = parse_args(argc, argv, &o);
    if (rc != EXIT_OK || (rc = check_combination(&o)) != EXIT_OK || (rc = check_texts(&o)) != EXIT_OK ||
        (rc = check_version(&o)) != EXIT_OK || (rc = check_output(&o)) != EXIT_OK)
        return rc;
    memset(&key, 0, sizeof(key));
    memset(&spec, 0, sizeof(spec));
    if ((rc = signing_key(&o, &key, kid)) != EXIT_OK || (rc = load_model(&o, &in)) != EXIT_OK ||
        (rc = describe(&o, &in.info, created, sizeof(created), name_buf, &spec)) != EXIT_OK ||
        (rc = epoch_summary(&o, &in, &spec)) != EXIT_OK ||
        (rc = add_components(&o, &in, &spec, src)) != EXIT_OK ||
        (rc = compress_components(&o, &spec, src, wire, zbuf)) != EXIT_OK ||
        (rc = write_container(&o, &in, &spec, src, wire, &key, kid)) != EXIT_OK)
        goto done;
    printf("wrote %s: %s %.*s v%s, seq %llu, %zu payload(s), %skey id ", o.out,
           in.info.family == MOTA_NBIN_FAMILY_NPU ? "NBIN v8.0" : "NBIN v2.0", (int)in.info.c_name_len,
           in.info.c_name, o.version, (unsigned long long)spec.seq, spec.n_components,
           o.unsigned_ ? "UNSIGNED (mota sign signs it), " : "");
    tool_hex(stdout, kid, sizeof(kid));
    printf("\n");
    print_compression(&o, &spec);
    if (spec.compat.has_epochs) {
        printf("npu epochs: ");
        epochs_summary_line(stdout, &spec.compat.epochs);
        printf("\n");
    }
done:
    memset(&key, 0, sizeof(key));
    tool_unmap(&in.model);
    tool_unmap(&in.params);
    tool_unmap(&in.st_in);
    tool_unmap(&in.st_out);
    for (size_t i = 0; i < MOTA_CONTAINER_MAX_COMPONENTS; i++)
        free(zbuf[i]);
    return rc;
}
