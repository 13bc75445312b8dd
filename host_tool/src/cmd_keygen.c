#include "cmds.h"
#include "util.h"

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

int cmd_keygen(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {"force", no_argument, 0, 'f'}, {0, 0, 0, 0}};
    int c, force = 0, ret, rc = EXIT_IO;
    struct mota_p256_key key;
    char priv_pem[512], pub_pem[512], pub_path[4096];
    struct outfile o;
    uint8_t kid[MOTA_KEY_ID_LEN];

    optind = 1;
    while ((c = tool_getopt(argc, argv, "hf", opts, "keygen")) != -1) {
        if (c == 'h') {
            help(stdout);
            return EXIT_OK;
        }
        if (c == 'f')
            force = 1;
        else
            return EXIT_USAGE;
    }
    if (argc - optind < 1 || argc - optind > 2)
        return tool_usage_err("keygen", argc - optind < 1 ? "needs the private key's path" : "unexpected argument '%s'",
                              argv[argc - 1]);
    const char *priv_path = argv[optind];
    if (argc - optind == 2) {
        snprintf(pub_path, sizeof(pub_path), "%s", argv[optind + 1]);
    } else {
        size_t n = strlen(priv_path);
        if (n > 4 && strcmp(priv_path + n - 4, ".pem") == 0)
            n -= 4;
        snprintf(pub_path, sizeof(pub_path), "%.*s.pub.pem", (int)n, priv_path);
    }
    /* the public key written over the private one would lose it */
    if (tool_same_file(priv_path, pub_path)) {
        tool_fail(MOTA_ERR_SAME_FILE, "the private key %s and the public key %s are the same file", priv_path,
                  pub_path);
        return EXIT_IO;
    }
    /* refuse before writing either: never half a key pair */
    const char *const paths[2] = {priv_path, pub_path};
    for (int i = 0; i < 2; i++) {
        if (!force && access(paths[i], F_OK) == 0) {
            tool_fail(MOTA_ERR_FILE_EXISTS, "%s", paths[i]);
            return EXIT_IO;
        }
        if (tool_out_check(paths[i]) != MOTA_OK)
            return EXIT_IO;
    }
    if ((ret = mota_key_generate(&key)) != MOTA_OK || (ret = mota_key_write_private_pem(&key, priv_pem, sizeof(priv_pem))) != MOTA_OK ||
        (ret = mota_key_write_public_pem(&key, pub_pem, sizeof(pub_pem))) != MOTA_OK) {
        tool_fail(ret, "key generation");
        goto done;
    }
    /* without --force, a file that appeared meanwhile is not replaced either */
    for (int i = 0; i < 2; i++) {
        const char *pem = i == 0 ? priv_pem : pub_pem;
        if ((force ? tool_out_open(&o, paths[i], i == 0 ? 0600 : 0644)
                   : tool_out_open_new(&o, paths[i], i == 0 ? 0600 : 0644)) != MOTA_OK)
            goto done;
        if (tool_out_write(&o, pem, strlen(pem)) != MOTA_OK || tool_out_commit(&o) != MOTA_OK) {
            tool_out_abort(&o);
            goto done;
        }
    }
    mota_key_id(key.pub, kid);
    printf("private key: %s\npublic key:  %s\nkey id:      ", priv_path, pub_path);
    tool_hex(stdout, kid, sizeof(kid));
    printf("\n");
    rc = EXIT_OK;
done:
    memset(&key, 0, sizeof(key));
    memset(priv_pem, 0, sizeof(priv_pem));
    return rc;
}
