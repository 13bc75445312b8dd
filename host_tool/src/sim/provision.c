/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota provision: the factory step for a QEMU board. A board's identity
 * (vendor and class, name, trusted keys, model slots, trial boots) as a
 * provisioning record, written once into the provisioning sector of the
 * board's flash file (the MPS layout: mota/board.h). Also the table of the
 * boards, which the launcher (cmd_board.c) starts and provisions too.
 */
#include "provision.h"
#include "cmds.h"

#include "common/files.h"
#include "common/util.h"

#include "mota/board.h"
#include "mota/container.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MOTA_FIRMWARE_DIR_AN547
#define MOTA_FIRMWARE_DIR_AN547 ""
#endif
#ifndef MOTA_FIRMWARE_DIR_AN505
#define MOTA_FIRMWARE_DIR_AN505 ""
#endif

static const struct board_target targets[] = {
    {"an547", "mps3-an547", MOTA_FIRMWARE_DIR_AN547}, /* Cortex-M55 */
    {"an505", "mps2-an505", MOTA_FIRMWARE_DIR_AN505}, /* Cortex-M33 */
};

const struct board_target *board_target_find(const char *name)
{
    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
        if (strcmp(targets[i].name, name) == 0)
            return &targets[i];
    return NULL;
}

const struct board_target *board_target_default(void)
{
    return &targets[0];
}

/* The identity as a record's contents (the device id is the caller's to add). */
static int build_identity(const struct board_identity *id, struct mota_provision *out)
{
    struct mota_provision p;
    memset(&p, 0, sizeof(p));
    mota_uuid5(mota_uuid_ns_dns, id->vendor, strlen(id->vendor), p.vendor_id);
    mota_uuid5(p.vendor_id, id->klass, strlen(id->klass), p.class_id);
    if (strlen(id->name) > MOTA_PROVISION_NAME_MAX)
        return tool_fail(MOTA_ERR_ARG, "--name: at most %u characters", MOTA_PROVISION_NAME_MAX);
    strcpy(p.name, id->name);
    p.n_keys = id->n_keys;
    for (unsigned k = 0; k < id->n_keys; k++) {
        struct mota_p256_key key;
        if (tool_load_key(id->keys[k], &key) != MOTA_OK)
            return MOTA_ERR_KEY_INVALID;
        memcpy(p.keys[k].pub, key.pub, MOTA_P256_PUB_LEN);
        p.keys[k].index = k + 1;
    }
    p.n_models = id->n_models ? id->n_models : 1;
    for (unsigned m = 0; m < p.n_models; m++) {
        const char *n = id->n_models ? id->models[m] : "network";
        if (strlen(n) == 0 || strlen(n) >= sizeof(p.models[m]))
            return tool_fail(MOTA_ERR_ARG, "--model '%s': 1 to %zu characters", n, sizeof(p.models[m]) - 1);
        strcpy(p.models[m], n);
    }
    p.max_trial_boots = id->trial_boots;
    *out = p;
    return MOTA_OK;
}

/*
 * The record for this identity on a board whose sector holds cur (decoded: cur_ret): a board provisioned
 * already keeps its device id (the record's, or none for one derived from a record without it), so the
 * same identity gives the same record; a new board gets a random one, as a part's UID is its own.
 */
static int build_record(const struct mota_provision *identity, const struct mota_provision *cur, int cur_ret,
                        uint8_t rec[sizeof(struct mota_provision_rec)])
{
    struct mota_provision p = *identity;
    int ret = MOTA_ERR_PROVISION;
    if (cur_ret == MOTA_OK) {
        memcpy(p.device_id, cur->device_id, sizeof(p.device_id));
        p.device_id_len = cur->device_id_len;
        p.device_id_derived = cur->device_id_derived;
    } else {
        p.device_id_len = MOTA_PROVISION_DEVICE_ID_LEN;
        if ((ret = tool_random(p.device_id, p.device_id_len)) != MOTA_OK)
            return tool_fail(ret, "the board's device id");
    }
    ret = mota_provision_encode(&p, rec, sizeof(struct mota_provision_rec));
    return ret < 0 ? tool_fail(ret, "provisioning record") : MOTA_OK;
}

int board_flash_create(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return errno == EEXIST ? MOTA_OK : tool_fail(MOTA_ERR_IO, "%s: %s", path, strerror(errno));
    static uint8_t ff[64 * 1024];
    memset(ff, 0xFF, sizeof(ff));
    for (uint32_t off = 0; off < MOTA_BOARD_FLASH_SIZE; off += sizeof(ff)) {
        if (write(fd, ff, sizeof(ff)) != (ssize_t)sizeof(ff)) {
            close(fd);
            unlink(path);
            return tool_fail(MOTA_ERR_IO, "%s: cannot write", path);
        }
    }
    close(fd);
    return MOTA_OK;
}

int board_provision(const char *flash, const struct board_identity *id, bool *done)
{
    uint8_t rec[sizeof(struct mota_provision_rec)], cur[sizeof(rec)];
    struct mota_provision want, p;
    int ret = build_identity(id, &want); /* the identity's own errors first, before any file is made */
    if (ret != MOTA_OK)
        return ret;
    if ((ret = board_flash_create(flash)) != MOTA_OK)
        return ret;
    int fd = open(flash, O_RDWR);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size != MOTA_BOARD_FLASH_SIZE) {
        if (fd >= 0)
            close(fd);
        return tool_fail(MOTA_ERR_IO, "%s: not a %u-byte board flash", flash, MOTA_BOARD_FLASH_SIZE);
    }
    if (pread(fd, cur, sizeof(cur), MOTA_BOARD_PROVISION) != (ssize_t)sizeof(cur)) {
        close(fd);
        return tool_fail(MOTA_ERR_IO, "%s: cannot read", flash);
    }
    ret = mota_provision_decode(cur, sizeof(cur), &p);
    *done = false;
    int built = build_record(&want, &p, ret, rec);
    if (built != MOTA_OK) {
        close(fd);
        return built;
    }
    if (ret == MOTA_OK || ret == MOTA_ERR_PROVISION) {
        close(fd);
        if (ret == MOTA_OK && memcmp(cur, rec, sizeof(rec)) == 0)
            return MOTA_OK; /* the same identity: nothing to do */
        return tool_fail(MOTA_ERR_PROVISION, "%s: already provisioned (%s); a board is provisioned once", flash,
                         ret == MOTA_OK ? p.name : "a damaged record");
    }
    if (pwrite(fd, rec, sizeof(rec), MOTA_BOARD_PROVISION) != (ssize_t)sizeof(rec) || fsync(fd) != 0) {
        close(fd);
        return tool_fail(MOTA_ERR_IO, "%s: cannot write", flash);
    }
    close(fd);
    *done = true;
    return MOTA_OK;
}

int board_identity_opt(struct board_identity *id, int c, const char *arg)
{
    uint64_t v;
    switch (c) {
    case 'k':
        if (id->n_keys == MOTA_PROVISION_KEYS)
            return tool_err("at most %u keys", MOTA_PROVISION_KEYS), -1;
        id->keys[id->n_keys++] = arg;
        return 1;
    case 'm':
        if (id->n_models == MOTA_PROVISION_MODELS)
            return tool_err("at most %u models", MOTA_PROVISION_MODELS), -1;
        id->models[id->n_models++] = arg;
        return 1;
    case 'V': id->vendor = arg; return 1;
    case 'C': id->klass = arg; return 1;
    case 'N': id->name = arg; return 1;
    case 'T':
        if (!tool_parse_u64(arg, &v) || v == 0 || v > 255)
            return tool_err("--trial-boots: 1 to 255"), -1;
        id->trial_boots = (uint32_t)v;
        return 1;
    default: return 0;
    }
}

void board_identity_defaults(struct board_identity *id, const struct board_target *t)
{
    static char board[16];
    snprintf(board, sizeof(board), "mota-%s", t->name);
    if (id->vendor == NULL)
        id->vendor = "example.com";
    if (id->klass == NULL)
        id->klass = board;
    if (id->name == NULL)
        id->name = board;
    if (id->trial_boots == 0)
        id->trial_boots = 3;
}

/* --target NAME: 1 when consumed, 0 if not ours, <0 on error. */
static int target_opt(const struct board_target **t, int c, const char *arg)
{
    if (c != 'B')
        return 0;
    if ((*t = board_target_find(arg)) == NULL)
        return tool_err("--target: an547 or an505"), -1;
    return 1;
}

int cmd_provision(int argc, char **argv)
{
    /* clang-format off */ /* a table packed by hand */
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"flash", required_argument, 0, 'f'}, {"key", required_argument, 0, 'k'},
        {"model", required_argument, 0, 'm'}, {"vendor", required_argument, 0, 'V'},
        {"class", required_argument, 0, 'C'}, {"name", required_argument, 0, 'N'},
        {"trial-boots", required_argument, 0, 'T'}, {"target", required_argument, 0, 'B'}, {0, 0, 0, 0}};
    /* clang-format on */
    struct board_identity id;
    const struct board_target *t = board_target_default();
    const char *flash = NULL;
    int c;
    memset(&id, 0, sizeof(id));
    optind = 1;
    while ((c = tool_getopt(argc, argv, "hf:k:", opts, "provision")) != -1) {
        int r = board_identity_opt(&id, c, optarg);
        if (r == 0)
            r = target_opt(&t, c, optarg);
        if (r < 0)
            return EXIT_USAGE;
        if (r)
            continue;
        if (c == 'f') {
            flash = optarg;
        } else if (c == 'h') {
            FILE *f = stdout;
            fprintf(f, "usage: mota provision --flash FILE --key PUBLIC.pem [--key ...] [--vendor DOMAIN]\n"
                       "                      [--class NAME] [--name DEVICE] [--model C_NAME ...] [--trial-boots N]\n"
                       "                      [--target an547|an505]\n\n"
                       "The factory step for a QEMU board (an547, an505: one flash layout): writes the\n"
                       "device's identity (vendor and class, checked against every container), its\n"
                       "trusted keys (key slots 1, 2, ...), its name and model slots into the\n"
                       "provisioning sector of its flash file (created erased if absent), with a random\n"
                       "12-byte device id (HELLO, `mota status`: device id). A board is provisioned\n"
                       "once: a different record over an existing one is refused; the same identity\n"
                       "again keeps the board's device id.\n"
                       "Defaults: example.com / mota-TARGET (an547), model network, 3 trial boots.\n");
            return EXIT_OK;
        } else {
            return EXIT_USAGE;
        }
    }
    if (optind != argc)
        return tool_usage_err("provision", "unexpected argument '%s'", argv[optind]);
    if (flash == NULL || id.n_keys == 0)
        return tool_usage_err("provision", "needs --flash and at least one --key");
    board_identity_defaults(&id, t);
    bool done = false;
    int ret = board_provision(flash, &id, &done);
    if (ret != MOTA_OK)
        return ret == MOTA_ERR_PROVISION ? EXIT_INVALID : EXIT_IO;
    printf("%s: %s (%u key%s, class %s)\n", flash, done ? "provisioned" : "already provisioned with this identity",
           id.n_keys, id.n_keys == 1 ? "" : "s", id.klass);
    return EXIT_OK;
}
