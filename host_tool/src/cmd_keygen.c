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
    int c, force = 0, ret;
    struct mota_p256_key key;
    char priv_pem[512], pub_pem[512], pub_path[4096];
    struct outfile o;
    uint8_t kid[MOTA_KEY_ID_LEN];

    optind = 1;
    while ((c = getopt_long(argc, argv, "hf", opts, NULL)) != -1) {
        if (c == 'h') {
            help(stdout);
            return EXIT_OK;
        }
        if (c == 'f')
            force = 1;
        else {
            help(stderr);
            return EXIT_USAGE;
        }
    }
    if (argc - optind < 1 || argc - optind > 2) {
        help(stderr);
        return EXIT_USAGE;
    }
    const char *priv_path = argv[optind];
    if (argc - optind == 2) {
        snprintf(pub_path, sizeof(pub_path), "%s", argv[optind + 1]);
    } else {
        size_t n = strlen(priv_path);
        if (n > 4 && strcmp(priv_path + n - 4, ".pem") == 0)
            n -= 4;
        snprintf(pub_path, sizeof(pub_path), "%.*s.pub.pem", (int)n, priv_path);
    }
    if (!force && (access(priv_path, F_OK) == 0 || access(pub_path, F_OK) == 0)) {
        tool_fail(MOTA_ERR_IO, "%s or %s exists (use --force to overwrite)", priv_path, pub_path);
        return EXIT_IO;
    }
    if ((ret = mota_key_generate(&key)) != MOTA_OK || (ret = mota_key_write_private_pem(&key, priv_pem, sizeof(priv_pem))) != MOTA_OK ||
        (ret = mota_key_write_public_pem(&key, pub_pem, sizeof(pub_pem))) != MOTA_OK) {
        tool_fail(ret, "key generation");
        return EXIT_IO;
    }
    if (tool_out_open(&o, priv_path, 0600) != MOTA_OK)
        return EXIT_IO;
    if (tool_out_write(&o, priv_pem, strlen(priv_pem)) != MOTA_OK || tool_out_commit(&o) != MOTA_OK) {
        tool_out_abort(&o);
        return EXIT_IO;
    }
    if (tool_out_open(&o, pub_path, 0644) != MOTA_OK)
        return EXIT_IO;
    if (tool_out_write(&o, pub_pem, strlen(pub_pem)) != MOTA_OK || tool_out_commit(&o) != MOTA_OK) {
        tool_out_abort(&o);
        return EXIT_IO;
    }
    memset(&key.d, 0, sizeof(key.d));
    memset(priv_pem, 0, sizeof(priv_pem));
    mota_key_id(key.pub, kid);
    printf("private key: %s\npublic key:  %s\nkey id:      ", priv_path, pub_path);
    tool_hex(stdout, kid, sizeof(kid));
    printf("\n");
    return EXIT_OK;
}
