/* SPDX-License-Identifier: Apache-2.0 */
/* mota pack's command line: the help, the options, and their checks before any file is read. */
#include "pack.h"

#include "common/files.h"
#include "common/util.h"

#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/decompress.h"
#include "mota/err.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

enum {
    O_PARAMS = 256,
    O_VENDOR,
    O_CLASS,
    O_VERSION,
    O_SEQ,
    O_NAME,
    O_DESC,
    O_MODE,
    O_STIN,
    O_STOUT,
    O_STLAT,
    O_UNSIGNED,
    O_PUB,
    O_KID,
    O_MAXSW,
    O_MAXCPU,
    O_COMPRESS,
    O_SYNC
};

/* The options whose value is checked or noted: --version, --compress, --key-id, --seq,
 * --selftest-max-latency-us, --install-mode, --max-sw-epochs, --max-cpu-epochs. */
static int checked_opt(struct pack_opts *o, int c, const char *arg)
{
    uint64_t v = 0;
    switch (c) {
    case O_VERSION:
        o->version = arg;
        o->have_version = true;
        break;
    case O_COMPRESS: /* an optional argument: NULL is the default algorithm */
        if (arg != NULL && strcmp(arg, "deflate") != 0 && strcmp(arg, "lz4") != 0)
            return tool_usage_err("pack", "--compress=%s: the algorithms are deflate and lz4", arg);
        o->compress = arg != NULL && strcmp(arg, "lz4") == 0 ? MOTA_DECOMP_LZ4 : MOTA_DECOMP_DEFLATE;
        break;
    case O_MAXSW:
    case O_MAXCPU:
        if (!tool_parse_u64(arg, &v) || v > 65535)
            return tool_usage_err("pack", "%s '%s' is not a number of epochs (0 to 65535)",
                                  c == O_MAXSW ? "--max-sw-epochs" : "--max-cpu-epochs", arg);
        *(c == O_MAXSW ? &o->max_sw : &o->max_cpu) = (long)v;
        break;
    case O_KID:
        if (!tool_parse_hex(arg, o->kid, sizeof(o->kid)))
            return tool_usage_err("pack", "--key-id '%s' is not %zu bytes in hex (32 digits, as keygen prints)", arg,
                                  sizeof(o->kid));
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
    /* clang-format off */ /* a table packed by hand */
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
    /* clang-format on */
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
        case O_UNSIGNED: o->unsigned_ = true; break;
        case O_SYNC: o->sync = true; break;
        case O_PUB: o->pub = optarg; break;
        case O_NAME: o->name = optarg; break;
        case O_DESC: o->description = optarg; break;
        case O_STIN: o->st_in = optarg; break;
        case O_STOUT: o->st_out = optarg; break;
        case O_VERSION:
        case O_COMPRESS:
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
        return tool_usage_err("pack",
                              argc - optind < 1 ? "needs the model file (network_rel.bin)"
                                                : "takes exactly one model file, not also '%s'",
                              argv[argc - 1]);
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
        return tool_usage_err("pack",
                              "--unsigned needs the signing key's --pub PUBLIC.pem or its --key-id, one of them");
    const char *missing = !o->key && !o->unsigned_ ? "--key"
                          : !o->out                ? "--out"
                          : !o->vendor             ? "--vendor"
                          : !o->klass              ? "--class"
                                                   : NULL;
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
    if (strlen(o->version) > MOTA_CONTAINER_MAX_TEXT ||
        (o->description && strlen(o->description) > MOTA_CONTAINER_MAX_TEXT) ||
        (o->name && strlen(o->name) > MOTA_CONTAINER_MAX_TEXT) || strlen(o->vendor) > MOTA_CONTAINER_MAX_TEXT) {
        tool_usage_err("pack", "--vendor, --name, --version and --description are limited to %u bytes",
                       MOTA_CONTAINER_MAX_TEXT);
        return EXIT_USAGE;
    }
    /* the container's text strings must be UTF-8: refused here, not by verify later */
    const struct {
        const char *opt, *val;
    } texts[] = {
        {"--description", o->description}, {"--name", o->name}, {"--version", o->version}, {"--vendor", o->vendor}};
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
        return tool_usage_err("pack",
                              "--seq from-version: --version %s is out of range (MAJOR below 4194304, "
                              "MINOR and PATCH below 1048576): give --seq N",
                              o->version);
    return EXIT_OK;
}

/* the output written over an input would destroy it: refused before any work
 * (tool_out_open checks again against every file read, by device and inode) */
static int check_output(const struct pack_opts *o)
{
    const struct {
        const char *what, *path;
    } inputs[] = {{"--key", o->key},
                  {"the model", o->model},
                  {"--params", o->params},
                  {"--selftest-input", o->st_in},
                  {"--selftest-output", o->st_out},
                  {"--pub", o->pub}};
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

int pack_options(int argc, char **argv, struct pack_opts *o)
{
    int rc = parse_args(argc, argv, o);
    if (rc != EXIT_OK || (rc = check_combination(o)) != EXIT_OK || (rc = check_texts(o)) != EXIT_OK ||
        (rc = check_version(o)) != EXIT_OK || (rc = check_output(o)) != EXIT_OK)
        return rc;
    return EXIT_OK;
}
