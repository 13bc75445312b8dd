/* SPDX-License-Identifier: Apache-2.0 */
/* mota pack's command line: the help, the options, and their checks before any file is read. */
#include "pack.h"

#include "compress.h"

#include "common/files.h"
#include "common/util.h"

#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/decompress.h"
#include "mota/encinfo.h"
#include "mota/err.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help_more(FILE *f)
{
    fprintf(f,
            "CPU-share policy (Neural-ART models; the epoch summary goes into the manifest):\n"
            "      --max-sw-epochs N     refuse a model with more than N epochs on the CPU alone\n"
            "      --max-cpu-epochs N    refuse a model with more than N epochs using the CPU (hybrid\n"
            "                            and software); mota info --epochs shows them\n"
            "Self-test (all three or none, but the latency limit may be left out: no limit):\n"
            "      --selftest-input FILE       input the device feeds the model after install\n"
            "      --selftest-output FILE      expected output bytes (digest is stored)\n"
            "      --selftest-max-latency-us N|none\n"
            "                                  latency limit for the self-test inference, N > 0\n"
            "                                  microseconds; none (the default): no limit, written as\n"
            "                                  %llu (the device's watchdog still stops a model)\n"
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
            (unsigned long long)PACK_LATENCY_NONE, MOTA_CONTAINER_MAX_TEXT);
}

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
            "                            (mota id --vendor DOMAIN --class NAME prints both ids)\n"
            "      --seq N               anti-rollback sequence number (required): a device refuses\n"
            "                            any container with a lower one for good, so never a clock;\n"
            "                            at most %llu (2^63-1): a device that confirmed a larger\n"
            "                            one would have little or no room left above it\n"
            "      --force-seq           take a --seq above that ceiling anyway (with a warning)\n"
            "      --force               replace an -o FILE that holds a private key or a provisioning\n"
            "                            record (kept otherwise: MOTA_ERR_FILE_EXISTS)\n"
            "      --seq from-version    derived from --version (required then), ordered as semantic\n"
            "                            versions are: ((MAJOR*2^20 + MINOR)*2^20 + PATCH)*2, +1 for a\n"
            "                            release; pre-releases of one version share a number\n"
            "      --version SEMVER      model version: semantic versioning 2.0.0, e.g. 1.2.0 or\n"
            "                            2.0.0-rc.1+build.5 (default 0.0.0)\n"
            "      --params FILE         params file of a split model (network_rel_params.bin)\n"
            "      --name TEXT           a label for the model (default: the model's c_name). A device\n"
            "                            picks the model by its c_name, not by this text: a C name\n"
            "                            other than the model's own is refused\n"
            "      --description TEXT    free text for people\n"
            "      --install-mode MODE   xip or copy (default xip)\n"
            "      --compress[=ALG]      send each payload compressed when that is smaller: fewer bytes on\n"
            "                            the link; the device decodes it into its slot and checks the\n"
            "                            image's signed digest from flash. ALG: deflate (the default: 1.95x\n"
            "                            on an N6 model), lzma (2.21x; 6.7 KiB of decoder state) or lz4\n"
            "                            (1.63x; its decoder is a third of deflate's size)\n"
            "      --delta-from OLD.mota  each payload sent as its difference from OLD's image of its role\n"
            "                            (the container the device runs), where that is smaller (with\n"
            "                            --compress's algorithm; lzma when none is given); a device that\n"
            "                            runs another model refuses it before any erase\n"
            "Encryption (draft-ietf-suit-firmware-encryption; after compression; every payload):\n"
            "      --encrypt-kek FILE    a recipient holding the key-encryption key FILE (keygen --kek;\n"
            "                            A128KW, named by its kid)\n"
            "      --encrypt-to PUB.pem  a recipient device by its P-256 public key (ECDH-ES+A128KW: a\n"
            "                            fresh ephemeral key; named by the key's id)\n"
            "                            Both repeatable, %u recipients at most in all; one random\n"
            "                            content key per container, wrapped for each\n"
            "      --cipher a128gcm|a128ctr  content cipher (default a128gcm: authenticated; a128ctr\n"
            "                            for payloads that must decrypt in place)\n",
            (unsigned long long)PACK_SEQ_CEILING, MOTA_ENC_MAX_RECIPIENTS);
    help_more(f);
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
    O_SYNC,
    O_FORCE_SEQ,
    O_FORCE,
    O_ENC_KEK,
    O_ENC_TO,
    O_CIPHER,
    O_DELTA
};

/* --seq N|from-version (its ceiling is checked with the version: check_seq) and
 * --selftest-max-latency-us N|none (none: PACK_LATENCY_NONE). */
static int number_opt(struct pack_opts *o, int c, const char *arg)
{
    if (c == O_SEQ) {
        o->seq_from_version = strcmp(arg, "from-version") == 0;
        if (!o->seq_from_version && !tool_parse_u64(arg, &o->seq))
            return tool_usage_err("pack", "--seq '%s' is neither an unsigned integer nor from-version", arg);
        o->have_seq = true;
        return EXIT_OK;
    }
    o->have_latency = true;
    if (strcmp(arg, "none") == 0) {
        o->st_latency = PACK_LATENCY_NONE;
        return EXIT_OK;
    }
    uint64_t v = 0;
    bool number = tool_parse_u64(arg, &v);
    if (number && v == 0) /* the device compares the time it measured with the limit */
        return tool_usage_err("pack", "--selftest-max-latency-us 0 would fail every self-test: give none for no "
                                      "limit (the default), or N > 0 microseconds");
    if (!number)
        return tool_usage_err("pack", "--selftest-max-latency-us '%s' is neither a positive integer nor none", arg);
    if (v > PACK_LATENCY_NONE) /* a guarding port's deadline, now + limit, must not wrap */
        return tool_usage_err("pack", "--selftest-max-latency-us %s: at most %llu (71 minutes); none for no limit", arg,
                              PACK_LATENCY_NONE);
    o->st_latency = v;
    return EXIT_OK;
}

/* --encrypt-kek FILE and --encrypt-to PUB.pem (recipients, MOTA_ENC_MAX_RECIPIENTS at most), --cipher. */
static int encrypt_opt(struct pack_opts *o, int c, const char *arg)
{
    if (c == O_CIPHER) {
        if (strcmp(arg, "a128gcm") != 0 && strcmp(arg, "a128ctr") != 0)
            return tool_usage_err("pack", "--cipher %s: the ciphers are a128gcm and a128ctr", arg);
        o->cipher = strcmp(arg, "a128ctr") == 0 ? MOTA_ENC_A128CTR : MOTA_ENC_A128GCM;
        return EXIT_OK;
    }
    if (o->n_recipients == MOTA_ENC_MAX_RECIPIENTS) /* what a device's decoder takes */
        return tool_usage_err("pack", "at most %u recipients (--encrypt-kek and --encrypt-to together)",
                              MOTA_ENC_MAX_RECIPIENTS);
    o->recipients[o->n_recipients++] = (struct tool_recipient){.ecdh = c == O_ENC_TO, .path = arg};
    return EXIT_OK;
}

/* The options whose value is checked or noted: --version, --compress, --key-id, --install-mode,
 * --max-sw-epochs, --max-cpu-epochs; the numbers (number_opt). */
static int checked_opt(struct pack_opts *o, int c, const char *arg)
{
    uint64_t v = 0;
    switch (c) {
    case O_VERSION:
        o->version = arg;
        o->have_version = true;
        break;
    case 'k':
        if (o->key != NULL) /* one signer: a second key would sign alone, the first silently dropped */
            return tool_usage_err("pack", "--key given twice ('%s', '%s'): a container is signed with one key", o->key,
                                  arg);
        o->key = arg;
        break;
    case O_COMPRESS: /* an optional argument: NULL is the default algorithm */
        if (arg != NULL && strcmp(arg, "deflate") != 0 && strcmp(arg, "lz4") != 0 && strcmp(arg, "lzma") != 0)
            return tool_usage_err("pack", "--compress=%s: the algorithms are deflate, lzma and lz4", arg);
        o->compress = arg == NULL ? MOTA_DECOMP_DEFLATE : tool_compress_alg(arg);
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
    case O_STLAT: return number_opt(o, c, arg);
    case O_ENC_KEK:
    case O_ENC_TO:
    case O_CIPHER: return encrypt_opt(o, c, arg);
    case O_MODE:
        if (strcmp(arg, "xip") == 0)
            o->mode = MOTA_INSTALL_XIP;
        else if (strcmp(arg, "copy") == 0)
            o->mode = MOTA_INSTALL_COPY;
        else
            return tool_usage_err("pack", "--install-mode '%s' is neither xip nor copy", arg);
        break;
    default: return EXIT_USAGE; /* reported by tool_getopt */
    }
    return EXIT_OK;
}

/* The options that note their value, or that they were given. */
static bool plain_opt(struct pack_opts *o, int c, const char *arg)
{
    switch (c) {
    case 'o': o->out = arg; break;
    case O_PARAMS: o->params = arg; break;
    case O_VENDOR: o->vendor = arg; break;
    case O_CLASS: o->klass = arg; break;
    case O_UNSIGNED: o->unsigned_ = true; break;
    case O_SYNC: o->sync = true; break;
    case O_FORCE_SEQ: o->force_seq = true; break;
    case O_FORCE: tool_out_force = true; break;
    case O_PUB: o->pub = arg; break;
    case O_NAME: o->name = arg; break;
    case O_DESC: o->description = arg; break;
    case O_STIN: o->st_in = arg; break;
    case O_STOUT: o->st_out = arg; break;
    case O_DELTA: o->delta_from = arg; break;
    default: return false;
    }
    return true;
}

static int parse_args(int argc, char **argv, struct pack_opts *o)
{
    /* clang-format off */ /* a table packed by hand */
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"key", required_argument, 0, 'k'}, {"out", required_argument, 0, 'o'},
        {"output", required_argument, 0, 'o'},
        {"params", required_argument, 0, O_PARAMS}, {"vendor", required_argument, 0, O_VENDOR},
        {"class", required_argument, 0, O_CLASS}, {"version", required_argument, 0, O_VERSION},
        {"seq", required_argument, 0, O_SEQ}, {"name", required_argument, 0, O_NAME},
        {"description", required_argument, 0, O_DESC}, {"install-mode", required_argument, 0, O_MODE},
        {"selftest-input", required_argument, 0, O_STIN}, {"selftest-output", required_argument, 0, O_STOUT},
        {"selftest-max-latency-us", required_argument, 0, O_STLAT}, {"unsigned", no_argument, 0, O_UNSIGNED},
        {"pub", required_argument, 0, O_PUB}, {"key-id", required_argument, 0, O_KID},
        {"max-sw-epochs", required_argument, 0, O_MAXSW}, {"max-cpu-epochs", required_argument, 0, O_MAXCPU},
        {"compress", optional_argument, 0, O_COMPRESS}, {"sync", no_argument, 0, O_SYNC},
        {"force-seq", no_argument, 0, O_FORCE_SEQ}, {"force", no_argument, 0, O_FORCE},
        {"encrypt-kek", required_argument, 0, O_ENC_KEK},
        {"encrypt-to", required_argument, 0, O_ENC_TO}, {"cipher", required_argument, 0, O_CIPHER},
        {"delta-from", required_argument, 0, O_DELTA}, {0, 0, 0, 0}};
    /* clang-format on */
    int c, rc;
    memset(o, 0, sizeof(*o));
    o->max_sw = o->max_cpu = -1;
    o->st_latency = PACK_LATENCY_NONE; /* a self-test without --selftest-max-latency-us: no limit */
    o->version = "0.0.0";
    o->mode = MOTA_INSTALL_XIP;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "hk:o:", opts, "pack")) != -1) {
        if (c == 'h') {
            help(stdout);
            exit(EXIT_OK);
        }
        if (!plain_opt(o, c, optarg) && (rc = checked_opt(o, c, optarg)) != EXIT_OK)
            return rc;
    }
    /* --compress takes its algorithm after '=' only (its argument is optional): "--compress lz4" leaves lz4 a
     * positional argument, which is no model file */
    for (int i = optind; argc - optind > 1 && i < argc; i++)
        if (strcmp(argv[i], "lz4") == 0 || strcmp(argv[i], "deflate") == 0 || strcmp(argv[i], "lzma") == 0)
            return tool_usage_err("pack", "'%s' is not a model file: the algorithm goes with '=', --compress=%s",
                                  argv[i], argv[i]);
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
    /* the latency limit may be left out (none); the input and the expected output may not */
    if (o->cipher != 0 && o->n_recipients == 0)
        return tool_usage_err("pack", "--cipher chooses how payloads are encrypted: it needs a recipient, "
                                      "--encrypt-kek FILE or --encrypt-to PUB.pem");
    if ((o->st_in || o->st_out || o->have_latency) && !(o->st_in && o->st_out))
        return tool_usage_err("pack", "a self-test needs --selftest-input and --selftest-output, and takes "
                                      "--selftest-max-latency-us N|none with them (all three, or the first two: "
                                      "no limit)");
    return EXIT_OK;
}

/* One option's text UTF-8, or EXIT_USAGE with the byte that is not. */
static int check_utf8(const char *opt, const char *val)
{
    size_t len = strlen(val), bad = utf8_bad_offset(val, len);
    if (bad == len)
        return EXIT_OK;
    tool_fail(MOTA_ERR_ARG_UTF8, "%s: byte %zu (0x%02x) starts no valid UTF-8 sequence", opt, bad,
              (unsigned char)val[bad]);
    return EXIT_USAGE;
}

int pack_check_identity(const char *cmd, const char *vendor, const char *klass)
{
    if (strlen(vendor) > MOTA_CONTAINER_MAX_TEXT)
        return tool_usage_err(cmd, "--vendor is limited to %u bytes", MOTA_CONTAINER_MAX_TEXT);
    if (check_utf8("--vendor", vendor) != EXIT_OK)
        return EXIT_USAGE;
    /* the vendor id is derived from it, and it is the vendor name shown */
    if (vendor[0] == '\0') {
        tool_fail(MOTA_ERR_ARG, "--vendor is empty: give the vendor's domain name, e.g. example.com");
        return EXIT_USAGE;
    }
    /* the class id names the boards the model is for: an empty one is a forgotten option; its name is a
     * text of the container (shown beside the id), bounded and UTF-8 as the others: what verify takes */
    if (klass != NULL && klass[0] == '\0') {
        tool_fail(MOTA_ERR_ARG, "--class is empty: give the device class, e.g. board-rev-b");
        return EXIT_USAGE;
    }
    if (klass != NULL && strlen(klass) > MOTA_CONTAINER_MAX_TEXT)
        return tool_usage_err(cmd, "--class is limited to %u bytes", MOTA_CONTAINER_MAX_TEXT);
    if (klass != NULL && check_utf8("--class", klass) != EXIT_OK)
        return EXIT_USAGE;
    return EXIT_OK;
}

void pack_identity_ids(const char *vendor, const char *klass, uint8_t vendor_id[16], uint8_t class_id[16])
{
    mota_uuid5(mota_uuid_ns_dns, vendor, strlen(vendor), vendor_id);
    if (klass != NULL)
        mota_uuid5(vendor_id, klass, strlen(klass), class_id);
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
    } texts[] = {{"--description", o->description}, {"--name", o->name}, {"--version", o->version}};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        if (texts[i].val != NULL && check_utf8(texts[i].opt, texts[i].val) != EXIT_OK)
            return EXIT_USAGE;
    }
    return pack_check_identity("pack", o->vendor, o->klass); /* as mota id checks them */
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

/*
 * The sequence number leaves room above it: a device takes only containers with a higher one after it
 * confirmed this one, so 2^64-1 would lock it for good. Refused above PACK_SEQ_CEILING unless --force-seq,
 * which warns instead.
 */
static int check_seq(const struct pack_opts *o)
{
    if (o->seq <= PACK_SEQ_CEILING)
        return EXIT_OK;
    unsigned long long seq = (unsigned long long)o->seq, room = (unsigned long long)(UINT64_MAX - o->seq);
    char left[96];
    if (room == 0)
        snprintf(left, sizeof(left), "no number is left above it: the device is locked for good");
    else
        snprintf(left, sizeof(left), "only %llu numbers are left above it", room);
    if (!o->force_seq)
        return tool_usage_err("pack",
                              "--seq %llu is above %llu (2^63-1): once a device confirms it, it takes only "
                              "containers with a higher number, and %s; take a number your releases "
                              "increment, or give --force-seq to pack it anyway",
                              seq, (unsigned long long)PACK_SEQ_CEILING, left);
    fprintf(stderr,
            "mota: warning: --seq %llu is above %llu (2^63-1), packed as --force-seq asks: once a device "
            "confirms it, it takes only containers with a higher number, and %s\n",
            seq, (unsigned long long)PACK_SEQ_CEILING, left);
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
                  {"--pub", o->pub},
                  {"--delta-from", o->delta_from}};
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
        if (inputs[i].path != NULL && tool_same_file(o->out, inputs[i].path)) {
            tool_fail(MOTA_ERR_SAME_FILE, "-o %s is the same file as %s %s", o->out, inputs[i].what, inputs[i].path);
            return EXIT_IO;
        }
    }
    for (size_t i = 0; i < o->n_recipients; i++) {
        if (tool_same_file(o->out, o->recipients[i].path)) {
            tool_fail(MOTA_ERR_SAME_FILE, "-o %s is the same file as %s %s", o->out,
                      o->recipients[i].ecdh ? "--encrypt-to" : "--encrypt-kek", o->recipients[i].path);
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
    if (rc == EXIT_OK && o->delta_from != NULL && o->compress == 0)
        o->compress = MOTA_DECOMP_LZMA; /* a delta's stream is mostly zeros and small numbers: coded, always */
    if (rc != EXIT_OK || (rc = check_combination(o)) != EXIT_OK || (rc = check_texts(o)) != EXIT_OK ||
        (rc = check_version(o)) != EXIT_OK || (rc = check_seq(o)) != EXIT_OK || (rc = check_output(o)) != EXIT_OK)
        return rc;
    return EXIT_OK;
}
