/* SPDX-License-Identifier: Apache-2.0 */
/* mota keygen: a new P-256 signing key pair, written as PEM (private key 0600), and its key id. */
#include "cmds.h"

#include "common/files.h"
#include "common/util.h"

#include "mota/crypto_sign.h"
#include "mota/err.h"

#include <getopt.h>
#include <unistd.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f, "usage: mota keygen [--force] PRIVATE.pem [PUBLIC.pem]\n\n"
               "Writes a new P-256 key: the private key as SEC1 PEM (mode 0600) and the\n"
               "public key as SubjectPublicKeyInfo PEM (default: PRIVATE with .pub.pem).\n"
               "Prints the key id devices use to select the key.\n"
               "  --force   overwrite existing files\n");
}

/* The two paths: the private key's, and the public key's (given, or the private one's with .pub.pem). */
static int parse_paths(int argc, char **argv, const char **priv_path, char *pub_path, size_t cap)
{
    if (argc - optind < 1 || argc - optind > 2)
        return tool_usage_err("keygen", argc - optind < 1 ? "needs the private key's path" : "unexpected argument '%s'",
                              argv[argc - 1]);
    *priv_path = argv[optind];
    if (argc - optind == 2) {
        snprintf(pub_path, cap, "%s", argv[optind + 1]);
    } else {
        size_t n = strlen(*priv_path);
        if (n > 4 && strcmp(*priv_path + n - 4, ".pem") == 0)
            n -= 4;
        snprintf(pub_path, cap, "%.*s.pub.pem", (int)n, *priv_path);
    }
    return EXIT_OK;
}

/* Refuse before writing either, never half a key pair: the same file twice (the public key written over
 * the private one would lose it), an existing file without --force, a place that cannot be written. */
static int check_paths(const char *const paths[2], bool force)
{
    if (tool_same_file(paths[0], paths[1])) {
        tool_fail(MOTA_ERR_SAME_FILE, "the private key %s and the public key %s are the same file", paths[0], paths[1]);
        return EXIT_IO;
    }
    for (int i = 0; i < 2; i++) {
        if (!force && access(paths[i], F_OK) == 0) {
            tool_fail(MOTA_ERR_FILE_EXISTS, "%s", paths[i]);
            return EXIT_IO;
        }
        if (tool_out_check(paths[i]) != MOTA_OK)
            return EXIT_IO;
    }
    return EXIT_OK;
}

/* Both PEM files; without --force, a file that appeared meanwhile is not replaced either. */
static int write_pair(const char *const paths[2], const char *const pems[2], bool force)
{
    struct outfile o;
    for (int i = 0; i < 2; i++) {
        int mode = i == 0 ? 0600 : 0644;
        if ((force ? tool_out_open(&o, paths[i], mode) : tool_out_open_new(&o, paths[i], mode)) != MOTA_OK)
            return MOTA_ERR_IO;
        if (tool_out_write(&o, pems[i], strlen(pems[i])) != MOTA_OK || tool_out_commit(&o) != MOTA_OK) {
            tool_out_abort(&o);
            return MOTA_ERR_IO;
        }
    }
    return MOTA_OK;
}

int cmd_keygen(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {"force", no_argument, 0, 'f'}, {0, 0, 0, 0}};
    int c, ret, rc = EXIT_IO;
    bool force = false;
    struct mota_p256_key key;
    char priv_pem[512], pub_pem[512], pub_path[4096];
    const char *priv_path = NULL;
    uint8_t kid[MOTA_KEY_ID_LEN];

    optind = 1;
    while ((c = tool_getopt(argc, argv, "hf", opts, "keygen")) != -1) {
        if (c == 'h') {
            help(stdout);
            return EXIT_OK;
        }
        if (c != 'f')
            return EXIT_USAGE;
        force = true;
    }
    if ((rc = parse_paths(argc, argv, &priv_path, pub_path, sizeof(pub_path))) != EXIT_OK)
        return rc;
    const char *const paths[2] = {priv_path, pub_path}, *const pems[2] = {priv_pem, pub_pem};
    if ((rc = check_paths(paths, force)) != EXIT_OK)
        return rc;
    rc = EXIT_IO;
    if ((ret = mota_key_generate(&key)) != MOTA_OK ||
        (ret = mota_key_write_private_pem(&key, priv_pem, sizeof(priv_pem))) != MOTA_OK ||
        (ret = mota_key_write_public_pem(&key, pub_pem, sizeof(pub_pem))) != MOTA_OK) {
        tool_fail(ret, "key generation");
        goto done;
    }
    if (write_pair(paths, pems, force) != MOTA_OK)
        goto done;
    mota_key_id(key.pub, kid);
    printf("private key: %s\npublic key:  %s\nkey id:      ", priv_path, pub_path);
    tool_hex(stdout, kid, sizeof(kid));
    printf("\n");
    rc = EXIT_OK;
done:
    memset(&key, 0, sizeof(key)); /* no private key left in memory */
    memset(priv_pem, 0, sizeof(priv_pem));
    return rc;
}
