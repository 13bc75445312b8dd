/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota getpub: a key's public half in the forms a device build and other
 * tools take, as imgtool getpub does for MCUboot: C source in exactly the
 * shape of the agent's trusted-key configuration (struct mota_agent_key,
 * agent/include/mota/agent.h), the PEM public key, or the key id. With
 * --device PORT, the public key a device decrypts with instead (its device
 * key, STATUS key 7): the one mode that reaches a device (link/device_key.h).
 */
#include "cmds.h"

#include "common/files.h"
#include "common/util.h"
#include "link/device_key.h"

#include "mota/crypto_sign.h"
#include "mota/err.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f, "usage: mota getpub [--lang c|pem|id] [--name IDENT] [--index N] [-o FILE [--force]] KEY.pem\n"
               "       mota getpub --device PORT [--lang pem|id|c] [--timeout S] [-o FILE [--force]]\n\n"
               "Prints the public key of KEY.pem (a private or a public key file, PEM or DER).\n"
               "With --device PORT: the public half of the device's own P-256 key (created when it\n"
               "was provisioned; `mota status` shows its id), PEM by default, for pack --encrypt-to.\n"
               "The private half never leaves the device. A device without one is refused\n"
               "(MOTA_ERR_ENC_NO_KEY). PORT as for mota status; --timeout S (default 10).\n"
               "  --lang c      C source for a firmware that compiles its trusted keys in (default):\n"
               "                `const struct mota_agent_key IDENT` (mota/agent.h) with the key-slot\n"
               "                index, and `const uint8_t IDENT_id[MOTA_KEY_ID_LEN]`, the key id\n"
               "                containers name it by; the agent takes it as\n"
               "                cfg.keys[cfg.n_keys++] = IDENT;\n"
               "  --lang pem    the public key, SubjectPublicKeyInfo PEM (for verify, sign --pub,\n"
               "                pack --unsigned --pub)\n"
               "  --lang id     the key id, 32 hex digits (for pack --unsigned --key-id)\n"
               "  --name IDENT  the C identifier (default mota_signing_key)\n"
               "  --index N     the key-slot index, for revocation (default 1; see mota provision)\n"
               "  -k KEY.pem    the key file, as an option (imgtool's spelling) instead of last\n"
               "  -o FILE       write to FILE (atomically; --out, --output) instead of stdout; a FILE\n"
               "                that holds a private key or a provisioning record is kept unless\n"
               "                --force\n");
}

static bool c_identifier(const char *s)
{
    if (s[0] == '\0' || (s[0] >= '0' && s[0] <= '9') || strlen(s) > 63)
        return false;
    for (; *s; s++) {
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    }
    return true;
}

static void c_bytes(FILE *f, const uint8_t *p, size_t n, const char *indent)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s0x%02x,%s", i % 12 == 0 ? indent : "", p[i], i % 12 == 11 || i + 1 == n ? "\n" : " ");
}

static void write_c(FILE *f, const struct mota_p256_key *key, const uint8_t kid[MOTA_KEY_ID_LEN], const char *name,
                    uint64_t index, const char *path)
{
    fprintf(f,
            "/*\n * Trusted signing key for mota devices: written by `mota getpub --lang c` from\n * %s.\n"
            " * Key id ",
            path);
    tool_hex(f, kid, MOTA_KEY_ID_LEN);
    fprintf(f,
            " (the first 16 bytes of SHA-256 over the\n"
            " * uncompressed point). The agent trusts it once it is in its configuration:\n"
            " *     cfg.keys[cfg.n_keys++] = %s;\n */\n"
            "#include \"mota/agent.h\"\n\n"
            "const struct mota_agent_key %s = {\n    .pub = {\n",
            name, name);
    c_bytes(f, key->pub, MOTA_P256_PUB_LEN, "        ");
    fprintf(f, "    },\n    .index = %llu,\n};\n\nconst uint8_t %s_id[MOTA_KEY_ID_LEN] = {\n",
            (unsigned long long)index, name);
    c_bytes(f, kid, MOTA_KEY_ID_LEN, "    ");
    fprintf(f, "};\n");
}

struct getpub_opts {
    const char *lang, *name, *out_path, *path;
    uint64_t index;
    const char *device; /* --device PORT: the device's key, not a file's */
    double timeout_s;
    bool lang_set;
};

/* The key file, or the device's key: PEM unless asked otherwise */
static int key_argument(int argc, char **argv, struct getpub_opts *o)
{
    if (o->device != NULL) {
        if (o->path != NULL)
            return tool_usage_err("getpub", "--device reads the device's key: no -k key file ('%s')", o->path);
        if (argc - optind != 0)
            return tool_usage_err("getpub", "--device reads the device's key: no key file ('%s')", argv[optind]);
        o->lang = o->lang_set ? o->lang : "pem";
        o->path = o->device;
        return EXIT_OK;
    }
    if (o->path != NULL && argc - optind == 0)
        return EXIT_OK; /* -k KEY */
    if (o->path != NULL || argc - optind != 1)
        return tool_usage_err("getpub", argc - optind < 1 ? "needs the key file" : "takes one key file, not also '%s'",
                              argv[argc - 1]);
    o->path = argv[optind];
    return EXIT_OK;
}

/* The options and the key file; EXIT_OK, or a usage error (help: exit at once, 0). */
static int parse_options(int argc, char **argv, struct getpub_opts *o, bool *help_only)
{
    enum { O_LANG = 256, O_NAME, O_INDEX, O_DEVICE, O_TIMEOUT, O_FORCE };
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"lang", required_argument, 0, O_LANG},
                                         {"name", required_argument, 0, O_NAME},
                                         {"index", required_argument, 0, O_INDEX},
                                         {"out", required_argument, 0, 'o'},
                                         {"output", required_argument, 0, 'o'},
                                         {"key", required_argument, 0, 'k'},
                                         {"device", required_argument, 0, O_DEVICE},
                                         {"timeout", required_argument, 0, O_TIMEOUT},
                                         {"force", no_argument, 0, O_FORCE},
                                         {0, 0, 0, 0}};
    int c;
    uint64_t t;
    *o = (struct getpub_opts){.lang = "c", .name = "mota_signing_key", .index = 1, .timeout_s = 10};
    *help_only = false;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "ho:k:", opts, "getpub")) != -1) {
        switch (c) {
        case 'h':
            help(stdout);
            *help_only = true;
            return EXIT_OK;
        case 'o': o->out_path = optarg; break;
        case 'k': o->path = optarg; break; /* imgtool's habit: the key as an option */
        case O_FORCE: tool_out_force = true; break;
        case O_LANG:
            if (strcmp(optarg, "c") != 0 && strcmp(optarg, "pem") != 0 && strcmp(optarg, "id") != 0)
                return tool_usage_err("getpub", "--lang '%s' is not c, pem or id", optarg);
            o->lang = optarg;
            o->lang_set = true;
            break;
        case O_DEVICE: o->device = optarg; break;
        case O_TIMEOUT:
            if (!tool_parse_u64(optarg, &t) || t == 0 || t > 3600)
                return tool_usage_err("getpub", "--timeout '%s': 1 to 3600 seconds", optarg);
            o->timeout_s = (double)t;
            break;
        case O_NAME:
            if (!c_identifier(optarg))
                return tool_usage_err("getpub", "--name '%s' is not a C identifier", optarg);
            o->name = optarg;
            break;
        case O_INDEX:
            if (!tool_parse_u64(optarg, &o->index) || o->index == 0 || o->index > 0xFFFFFFFFu)
                return tool_usage_err("getpub", "--index '%s' is not a key-slot index from 1", optarg);
            break;
        default: return EXIT_USAGE;
        }
    }
    return key_argument(argc, argv, o);
}

/* The public key in the chosen form, to f. */
static int write_key(FILE *f, const struct getpub_opts *o, const struct mota_p256_key *key)
{
    uint8_t kid[MOTA_KEY_ID_LEN];
    char pem[512];
    mota_key_id(key->pub, kid);
    if (strcmp(o->lang, "c") == 0) {
        write_c(f, key, kid, o->name, o->index, o->path);
    } else if (strcmp(o->lang, "pem") == 0) {
        if (mota_key_write_public_pem(key, pem, sizeof(pem)) != MOTA_OK) {
            tool_fail(MOTA_ERR_KEY_INVALID, "%s: its public key cannot be encoded", o->path);
            return MOTA_ERR_KEY_INVALID;
        }
        fputs(pem, f);
    } else {
        tool_hex(f, kid, sizeof(kid));
        fputc('\n', f);
    }
    return MOTA_OK;
}

int cmd_getpub(int argc, char **argv)
{
    struct getpub_opts o;
    struct mota_p256_key key;
    struct outfile out = {0};
    bool help_only;
    int rc = parse_options(argc, argv, &o, &help_only);
    if (rc != EXIT_OK || help_only)
        return rc;
    if (o.out_path != NULL && tool_same_file(o.out_path, o.path)) {
        tool_fail(MOTA_ERR_SAME_FILE, "-o %s is the key file", o.out_path);
        return EXIT_IO;
    }
    rc = EXIT_IO;
    memset(&key, 0, sizeof(key));
    if (o.device != NULL && (rc = link_device_key(o.device, o.timeout_s, key.pub)) != EXIT_OK)
        goto done;
    rc = EXIT_IO;
    if (o.device == NULL && tool_load_key(o.path, &key) != MOTA_OK)
        goto done;
    if (o.out_path == NULL) {
        if (write_key(stdout, &o, &key) != MOTA_OK)
            goto done;
        if (fflush(stdout) != 0) {
            tool_fail(MOTA_ERR_IO, "stdout: writing");
            goto done;
        }
    } else {
        if (tool_out_open(&out, o.out_path, 0644) != MOTA_OK)
            goto done;
        if (write_key(out.f, &o, &key) != MOTA_OK) {
            tool_out_abort(&out);
            goto done;
        }
        if (tool_out_commit(&out) != MOTA_OK)
            goto done;
    }
    rc = EXIT_OK;
done:
    memset(&key, 0, sizeof(key)); /* the private half too: it was loaded to derive the public one */
    return rc;
}
