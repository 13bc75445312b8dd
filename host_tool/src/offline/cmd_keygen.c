/* SPDX-License-Identifier: Apache-2.0 */
/* mota keygen: a new P-256 signing key pair, written as PEM (private key 0600), and its key id; or
 * (--kek) a key-encryption key for encrypted payloads, written as a JWK (0600), and its kid. */
#include "cmds.h"

#include "common/files.h"
#include "common/kek.h"
#include "common/util.h"

#include "mota/cbor.h"
#include "mota/cipher.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"

#include <getopt.h>
#include <unistd.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f, "usage: mota keygen [--force] PRIVATE.pem [PUBLIC.pem]\n"
               "       mota keygen --kek FILE [--kid TEXT] [--force]\n\n"
               "Writes a new P-256 key: the private key as SEC1 PEM (mode 0600) and the\n"
               "public key as SubjectPublicKeyInfo PEM (default: PRIVATE with .pub.pem).\n"
               "Prints the key id devices use to select the key.\n"
               "  --kek FILE   instead, a key-encryption key for encrypted payloads (pack\n"
               "               --encrypt-kek, provision --kek): a JSON Web Key of a random\n"
               "               AES-128 key-wrap key (A128KW), mode 0600. A secret: it is never\n"
               "               printed, only its kid and the path\n"
               "  --kid TEXT   the KEK's key id, 1 to 32 bytes of UTF-8 text (default: 16 random\n"
               "               hex digits); a container's recipient names it\n"
               "  --force      overwrite existing files\n");
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

/* What goes together, and no path an unset shell variable left empty (a usage error, not a rename's
 * failure) */
static int check_args(int argc, char **argv, const char *kek, const char *kek_id)
{
    if (kek_id != NULL && kek == NULL)
        return tool_usage_err("keygen", "--kid names a key-encryption key: it goes with --kek FILE");
    if (kek != NULL && argc > optind)
        return tool_usage_err("keygen", "--kek FILE writes one file: unexpected argument '%s'", argv[optind]);
    for (int i = optind; i < argc; i++)
        if (argv[i][0] == '\0')
            return tool_usage_err("keygen", "a key file's path is empty");
    if (kek != NULL && kek[0] == '\0')
        return tool_usage_err("keygen", "--kek: the file's path is empty");
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

/* --kid TEXT: what a KEK file holds (1 to 32 bytes of UTF-8, written without escapes), or 8 random
 * bytes in hex. EXIT_OK or the exit code, the reason said. */
static int kek_kid(const char *text, struct mota_kek *k)
{
    uint8_t r[8];
    if (text == NULL) {
        int ret = mota_random(r, sizeof(r));
        if (ret != MOTA_OK) {
            tool_fail(ret, "a key id for the key-encryption key");
            return EXIT_IO;
        }
        tool_hex_str(r, sizeof(r), (char *)k->kid, sizeof(k->kid));
        k->kid_len = 2 * sizeof(r);
        return EXIT_OK;
    }
    size_t n = strlen(text);
    bool plain = n > 0 && n <= MOTA_ENC_MAX_KID && mota_utf8_valid((const uint8_t *)text, n);
    for (size_t i = 0; plain && i < n; i++)
        plain = (unsigned char)text[i] >= 0x20 && text[i] != '"' && text[i] != '\\' && text[i] != 0x7F;
    if (!plain)
        return tool_usage_err("keygen",
                              "--kid '%s': 1 to %u bytes of UTF-8 text, without control characters, quotes or "
                              "backslashes",
                              text, MOTA_ENC_MAX_KID);
    memcpy(k->kid, text, n);
    k->kid_len = n;
    return EXIT_OK;
}

/* mota keygen --kek FILE: a random KEK with its kid, as a JWK of mode 0600. Prints the kid and the path,
 * never the key. */
static int keygen_kek(const char *path, const char *kid, bool force)
{
    struct mota_kek k;
    struct outfile o;
    char text[TOOL_KEK_FILE_MAX];
    int ret, rc = EXIT_IO;
    memset(&k, 0, sizeof(k));
    if ((rc = kek_kid(kid, &k)) != EXIT_OK)
        return rc;
    rc = EXIT_IO;
    if (!force && access(path, F_OK) == 0) {
        tool_fail(MOTA_ERR_FILE_EXISTS, "%s", path);
        return EXIT_IO;
    }
    if (tool_out_check(path) != MOTA_OK)
        return EXIT_IO;
    if ((ret = mota_random(k.k, sizeof(k.k))) != MOTA_OK ||
        (ret = tool_kek_format(&k, text, sizeof(text))) != MOTA_OK) {
        tool_fail(ret, "key generation");
        goto done;
    }
    if ((force ? tool_out_open(&o, path, 0600) : tool_out_open_new(&o, path, 0600)) != MOTA_OK)
        goto done;
    if (tool_out_write(&o, text, strlen(text)) != MOTA_OK || tool_out_commit(&o) != MOTA_OK) {
        tool_out_abort(&o);
        goto done;
    }
    printf("key-encryption key: %s (A128KW, a secret: keep it mode 0600)\nkid:                %.*s\n", path,
           (int)k.kid_len, (const char *)k.kid);
    rc = EXIT_OK;
done:
    mota_cipher_wipe(&k, sizeof(k)); /* no key left in memory */
    mota_cipher_wipe(text, sizeof(text));
    return rc;
}

int cmd_keygen(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"force", no_argument, 0, 'f'},
                                         {"kek", required_argument, 0, 'K'},
                                         {"kid", required_argument, 0, 'I'},
                                         {0, 0, 0, 0}};
    int c, ret, rc = EXIT_IO;
    bool force = false;
    const char *kek = NULL, *kek_id = NULL;
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
        if (c == 'K')
            kek = optarg;
        else if (c == 'I')
            kek_id = optarg;
        else if (c == 'f')
            force = tool_out_force = true; /* a key it replaces, knowingly */
        else
            return EXIT_USAGE;
    }
    if ((rc = check_args(argc, argv, kek, kek_id)) != EXIT_OK)
        return rc;
    if (kek != NULL)
        return keygen_kek(kek, kek_id, force);
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
