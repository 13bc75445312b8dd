/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota provision: the factory step. A board's identity (vendor and class,
 * name, trusted keys, model slots, trial boots, device id) and the keys of
 * encrypted payloads (key-encryption keys, and a device key pair made here:
 * the QEMU boards have no TRNG, so the provisioning host sees the private
 * half once and writes it into the record only) as a provisioning
 * record, written once into the provisioning sector of a QEMU board's flash
 * file (the MPS layout: mota/board.h), or alone as a raw or Intel HEX image
 * a real part's programmer writes at the address of its provisioning sector.
 * Also the table of the boards, which the launcher (cmd_board.c) starts and
 * provisions too.
 */
#include "provision.h"
#include "cmds.h"

#include "common/files.h"
#include "common/kek.h"
#include "common/util.h"

#include "mota/board.h"
#include "mota/cipher.h"
#include "mota/container.h"
#include "mota/crypto_sign.h"
#include "mota/crc32.h"
#include "mota/err.h"
#include "mota/le.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
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
#ifndef MOTA_FIRMWARE_DIR_AN386
#define MOTA_FIRMWARE_DIR_AN386 ""
#endif
#ifndef MOTA_FIRMWARE_DIR_AN500
#define MOTA_FIRMWARE_DIR_AN500 ""
#endif

static const struct board_target targets[] = {
    /* the models: MOTA_AGENT_MAX_MODELS of the boards' build (sizes.cmake); a record naming more is refused
     * whole at boot (the board would come up unprovisioned) */
    {"an547", "mps3-an547", MOTA_FIRMWARE_DIR_AN547, 2}, /* Cortex-M55 */
    {"an505", "mps2-an505", MOTA_FIRMWARE_DIR_AN505, 2}, /* Cortex-M33 */
    /* Armv7-M: QEMU's machine implies its CPU (no -cpu) */
    {"an386", "mps2-an386", MOTA_FIRMWARE_DIR_AN386, 2}, /* Cortex-M4 */
    {"an500", "mps2-an500", MOTA_FIRMWARE_DIR_AN500, 2}, /* Cortex-M7 */
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

int board_read_keks(const char *const *paths, unsigned n, struct mota_kek *keks)
{
    for (unsigned i = 0; i < n; i++) {
        int ret = tool_kek_read(paths[i], &keks[i]);
        if (ret == MOTA_ERR_KEK_INVALID)
            return tool_fail(ret,
                             "--kek %s: not a key-encryption key file (a JWK of kty oct, alg A128KW, a kid "
                             "of 1 to 32 bytes and a 16-byte k: mota keygen --kek)",
                             paths[i]);
        if (ret != MOTA_OK)
            return ret; /* said by the file's reader */
        for (unsigned j = 0; j < i; j++)
            if (keks[j].kid_len == keks[i].kid_len && memcmp(keks[j].kid, keks[i].kid, keks[i].kid_len) == 0)
                return tool_fail(MOTA_ERR_ARG, "--kek %s: its kid is the kid of --kek %s: each KEK needs its own",
                                 paths[i], paths[j]);
    }
    return MOTA_OK;
}

/* The identity as a record's contents (with its device id when one is given). */
static int build_identity(const struct board_identity *id, struct mota_provision *out)
{
    struct mota_provision p;
    memset(&p, 0, sizeof(p));
    mota_uuid5(mota_uuid_ns_dns, id->vendor, strlen(id->vendor), p.vendor_id);
    mota_uuid5(p.vendor_id, id->klass, strlen(id->klass), p.class_id);
    if (strlen(id->name) > MOTA_PROVISION_NAME_MAX)
        return tool_fail(MOTA_ERR_ARG, "--name: at most %u characters", MOTA_PROVISION_NAME_MAX);
    strcpy(p.name, id->name);
    /* the names beside the ids in mota status: kept when they fit, else the ids alone (said) */
    if (strlen(id->vendor) <= MOTA_PROVISION_ID_NAME_MAX)
        strcpy(p.vendor_name, id->vendor);
    else
        fprintf(stderr, "mota: note: the vendor name is longer than %u bytes: the device keeps its id only\n",
                MOTA_PROVISION_ID_NAME_MAX);
    if (strlen(id->klass) <= MOTA_PROVISION_ID_NAME_MAX)
        strcpy(p.class_name, id->klass);
    else
        fprintf(stderr, "mota: note: the class name is longer than %u bytes: the device keeps its id only\n",
                MOTA_PROVISION_ID_NAME_MAX);
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
    memcpy(p.device_id, id->device_id, id->device_id_len);
    p.device_id_len = id->device_id_len;
    int ret = board_read_keks(id->keks, id->n_keks, p.keks);
    p.n_keks = id->n_keks;
    if (ret == MOTA_OK)
        *out = p;
    mota_provision_wipe(&p);
    return ret;
}

/*
 * The device key of the record for a board whose sector holds cur: a board provisioned already keeps its
 * own, or its lack of one (a record of an older mota: the same identity gives the same record); a new
 * board gets a fresh pair (a record of version 3: device_key), made here because the QEMU boards have no
 * TRNG to make it themselves. Its private half goes into the record and nowhere else.
 */
static int record_device_key(struct mota_provision *p, const struct mota_provision *cur, int cur_ret, bool device_key)
{
    struct mota_p256_key key;
    p->has_device_key = false;
    if (cur_ret == MOTA_OK) {
        p->has_device_key = cur->has_device_key;
        memcpy(p->device_d, cur->device_d, sizeof(p->device_d));
        memcpy(p->device_pub, cur->device_pub, sizeof(p->device_pub));
        return MOTA_OK;
    }
    if (!device_key)
        return MOTA_OK;
    int ret = mota_key_generate(&key);
    if (ret == MOTA_OK) {
        memcpy(p->device_d, key.d, sizeof(p->device_d));
        memcpy(p->device_pub, key.pub, sizeof(p->device_pub));
        p->has_device_key = true;
    }
    mota_cipher_wipe(&key, sizeof(key));
    return ret == MOTA_OK ? MOTA_OK : tool_fail(ret, "the device key");
}

/*
 * The record for this identity on a board whose sector holds cur (decoded: cur_ret): the device id given
 * (--device-id), else a board provisioned already keeps its own (the record's, or none for one derived
 * from a record without it), so the same identity gives the same record; a new board gets a random one,
 * as a part's UID is its own.
 */
static int build_record(const struct mota_provision *identity, const struct mota_provision *cur, int cur_ret,
                        bool device_key, uint8_t rec[sizeof(struct mota_provision_rec)])
{
    struct mota_provision p = *identity;
    int ret = record_device_key(&p, cur, cur_ret, device_key);
    if (ret != MOTA_OK) {
        mota_provision_wipe(&p);
        return ret;
    }
    if (cur_ret == MOTA_OK) { /* the names are shown, not checked: a board keeps its own (none: an older one's) */
        memcpy(p.vendor_name, cur->vendor_name, sizeof(p.vendor_name));
        memcpy(p.class_name, cur->class_name, sizeof(p.class_name));
    }
    if (identity->device_id_len > 0) {
        /* given: this one */
    } else if (cur_ret == MOTA_OK) {
        memcpy(p.device_id, cur->device_id, sizeof(p.device_id));
        p.device_id_len = cur->device_id_len;
        p.device_id_derived = cur->device_id_derived;
    } else {
        p.device_id_len = MOTA_PROVISION_DEVICE_ID_LEN;
        if ((ret = tool_random(p.device_id, p.device_id_len)) != MOTA_OK) {
            mota_provision_wipe(&p);
            return tool_fail(ret, "the board's device id");
        }
    }
    ret = mota_provision_encode(&p, rec, sizeof(struct mota_provision_rec));
    mota_provision_wipe(&p);
    return ret < 0 ? tool_fail(ret, "provisioning record") : MOTA_OK;
}

/* The reason a read or write of n bytes stopped short: the system's, or none (a short transfer). */
static const char *io_reason(int err, const char *what)
{
    return err != 0 ? strerror(err) : what;
}

int board_flash_create(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600); /* private: its record holds the device's keys */
    if (fd < 0)
        return errno == EEXIST ? MOTA_OK : tool_fail(MOTA_ERR_IO, "%s: %s", path, strerror(errno));
    static uint8_t ff[64 * 1024];
    memset(ff, 0xFF, sizeof(ff));
    for (uint32_t off = 0; off < MOTA_BOARD_FLASH_SIZE; off += sizeof(ff)) {
        errno = 0;
        if (write(fd, ff, sizeof(ff)) != (ssize_t)sizeof(ff)) {
            int e = errno;
            close(fd);
            unlink(path);
            return tool_fail(MOTA_ERR_IO, "%s: cannot write a new board flash: %s", path, io_reason(e, "short write"));
        }
    }
    if (close(fd) != 0) {
        int e = errno;
        unlink(path);
        return tool_fail(MOTA_ERR_IO, "%s: cannot write a new board flash: %s", path, strerror(e));
    }
    return MOTA_OK;
}

/* The board's flash, opened to read and write: the system's reason when it cannot be, and what a board
 * flash is when it is something else. */
static int open_flash(const char *flash, int *fd_out)
{
    struct stat st;
    int fd = open(flash, O_RDWR | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return tool_fail(MOTA_ERR_IO, "%s: %s", flash, strerror(e));
    }
    if (!S_ISREG(st.st_mode) || st.st_size != MOTA_BOARD_FLASH_SIZE) {
        close(fd);
        if (!S_ISREG(st.st_mode))
            return tool_fail(MOTA_ERR_IO, "%s: not a board flash (a regular file of %u bytes)", flash,
                             MOTA_BOARD_FLASH_SIZE);
        return tool_fail(MOTA_ERR_IO, "%s: not a board flash: %lld bytes, a board flash has %u", flash,
                         (long long)st.st_size, MOTA_BOARD_FLASH_SIZE);
    }
    /* a board flash holds the provisioning record, with its key-encryption keys and the device's private key:
     * one made before the record had keys (0644) is made private before a record is written into it */
    if ((st.st_mode & 077) != 0 && fchmod(fd, 0600) != 0) {
        int e = errno;
        close(fd);
        return tool_fail(MOTA_ERR_IO, "%s: cannot make it private (mode 0600): %s", flash, strerror(e));
    }
    *fd_out = fd;
    return MOTA_OK;
}

/* What differs between the identity a board holds and the one asked for, as a list ("keys, class"). */
static void identity_diff(const struct mota_provision *have, const struct mota_provision *want, char *out, size_t cap)
{
    bool keys = have->n_keys != want->n_keys, models = have->n_models != want->n_models;
    for (unsigned k = 0; !keys && k < want->n_keys; k++)
        keys = have->keys[k].index != want->keys[k].index ||
               memcmp(have->keys[k].pub, want->keys[k].pub, MOTA_P256_PUB_LEN) != 0;
    for (unsigned m = 0; !models && m < want->n_models; m++)
        models = strcmp(have->models[m], want->models[m]) != 0;
    bool keks = have->n_keks != want->n_keks;
    for (unsigned k = 0; !keks && k < want->n_keks; k++)
        keks = have->keks[k].kid_len != want->keks[k].kid_len ||
               memcmp(have->keks[k].kid, want->keks[k].kid, want->keks[k].kid_len) != 0 ||
               mota_ct_memcmp(have->keks[k].k, want->keks[k].k, sizeof(want->keks[k].k)) != 0;
    const struct {
        bool differs;
        const char *what;
    } fields[] = {
        {keys, "keys"},
        {memcmp(have->vendor_id, want->vendor_id, 16) != 0, "vendor"},
        {memcmp(have->class_id, want->class_id, 16) != 0, "class"},
        {strcmp(have->name, want->name) != 0, "name"},
        {models, "models"},
        {have->max_trial_boots != want->max_trial_boots, "trial boots"},
        {want->device_id_len > 0, "device id"}, /* given, and the record is not the same: its id differs */
        {keks, "key-encryption keys"},
    };
    size_t n = 0;
    out[0] = 0;
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]) && n < cap; i++)
        if (fields[i].differs)
            n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? ", " : "", fields[i].what);
}

/* A board provisioned already, with another record than the one asked for: said precisely, and the way out. */
static int refuse_reprovision(const char *flash, int have_ret, const struct mota_provision *have,
                              const struct mota_provision *want, const char *fix)
{
    if (have_ret != MOTA_OK)
        return tool_fail(MOTA_ERR_PROVISION,
                         "%s: its provisioning sector (offset 0x%X) holds a damaged record; "
                         "a board is provisioned once: %s",
                         flash, MOTA_BOARD_PROVISION, fix);
    char diff[128], models[MOTA_PROVISION_MODELS * 25] = "";
    identity_diff(have, want, diff, sizeof(diff));
    for (unsigned m = 0; m < have->n_models && m < MOTA_PROVISION_MODELS; m++)
        snprintf(models + strlen(models), sizeof(models) - strlen(models), "%s%s", m ? " " : "", have->models[m]);
    /* not tool_fail: the table's text for MOTA_ERR_PROVISION is about a damaged record, not this one */
    tool_err("%s: board already provisioned, with another identity: %s holds '%s' (%u key%s, model%s %s, %u trial "
             "boots); asked for other %s: %s",
             mota_err_name(MOTA_ERR_PROVISION), flash, have->name, have->n_keys, have->n_keys == 1 ? "" : "s",
             have->n_models == 1 ? "" : "s", models, (unsigned)have->max_trial_boots, diff[0] ? diff : "contents", fix);
    return MOTA_ERR_PROVISION;
}
/* The record into the flash's provisioning sector, durably. */
static int write_record(int fd, const char *flash, const uint8_t *rec, size_t n)
{
    errno = 0;
    if (pwrite(fd, rec, n, MOTA_BOARD_PROVISION) != (ssize_t)n)
        return tool_fail(MOTA_ERR_IO, "%s: cannot write its provisioning sector: %s", flash,
                         io_reason(errno, "short write"));
    if (fsync(fd) != 0)
        return tool_fail(MOTA_ERR_IO, "%s: cannot write its provisioning sector: %s", flash, strerror(errno));
    return MOTA_OK;
}

/* The public half of the device key of a record (the bytes as written). */
static void device_key_of(const uint8_t *rec, size_t len, struct board_device_key *dk)
{
    struct mota_provision p;
    if (dk == NULL)
        return;
    memset(dk, 0, sizeof(*dk));
    if (mota_provision_decode(rec, len, &p) == MOTA_OK && p.has_device_key) {
        dk->has = true;
        memcpy(dk->pub, p.device_pub, sizeof(dk->pub));
        memcpy(dk->kid, p.device_kid, sizeof(dk->kid));
    }
    mota_provision_wipe(&p);
}

/* The board's provisioning sector into cur (a record's size of it). */
static int read_sector(int fd, const char *flash, uint8_t cur[sizeof(struct mota_provision_rec)])
{
    errno = 0;
    if (pread(fd, cur, sizeof(struct mota_provision_rec), MOTA_BOARD_PROVISION) !=
        (ssize_t)sizeof(struct mota_provision_rec))
        return tool_fail(MOTA_ERR_IO, "%s: cannot read its provisioning sector: %s", flash,
                         io_reason(errno, "short read"));
    return MOTA_OK;
}

int board_provision(const char *flash, const struct board_identity *id, const char *fix, bool *done,
                    struct board_device_key *dk)
{
    uint8_t rec[sizeof(struct mota_provision_rec)], cur[sizeof(rec)];
    struct mota_provision want, have;
    int fd = -1;
    *done = false;
    memset(&have, 0, sizeof(have));
    int ret = build_identity(id, &want); /* the identity's own errors first, before any file is made */
    if (ret != MOTA_OK || (ret = board_flash_create(flash)) != MOTA_OK || (ret = open_flash(flash, &fd)) != MOTA_OK ||
        (ret = read_sector(fd, flash, cur)) != MOTA_OK) {
        if (fd >= 0)
            close(fd);
        mota_provision_wipe(&want);
        return ret;
    }
    int have_ret = mota_provision_decode(cur, sizeof(cur), &have);
    ret = build_record(&want, &have, have_ret, true, rec);
    if (ret == MOTA_OK && (have_ret == MOTA_OK || have_ret == MOTA_ERR_PROVISION)) {
        /* the record the board holds, as this mota writes it (an older version's too): the same identity is
         * nothing to do, and the record stays as it is */
        if (have_ret != MOTA_OK || mota_provision_encode(&have, cur, sizeof(cur)) < 0 || memcmp(cur, rec, sizeof(rec)))
            ret = refuse_reprovision(flash, have_ret, &have, &want, fix);
    } else if (ret == MOTA_OK && (ret = write_record(fd, flash, rec, sizeof(rec))) == MOTA_OK) {
        *done = true;
    }
    close(fd);
    if (ret == MOTA_OK)
        device_key_of(rec, sizeof(rec), dk);
    mota_provision_wipe(&want); /* what held keys: the identity's KEKs, the board's record, the new one */
    mota_provision_wipe(&have);
    mota_cipher_wipe(rec, sizeof(rec));
    mota_cipher_wipe(cur, sizeof(cur));
    return ret;
}

/* One Intel HEX record: ":", its length, offset and type, its data, a checksum making the bytes sum to 0. */
static int hex_record(struct outfile *o, unsigned type, uint16_t off, const uint8_t *d, size_t n)
{
    char line[16 + 2 * 32];
    unsigned sum = (unsigned)n + (off >> 8) + (off & 0xFFu) + type;
    int k = snprintf(line, sizeof(line), ":%02X%04X%02X", (unsigned)n, off, type);
    for (size_t i = 0; i < n && i < 32; i++) {
        k += snprintf(line + k, sizeof(line) - (size_t)k, "%02X", d[i]);
        sum += d[i];
    }
    k += snprintf(line + k, sizeof(line) - (size_t)k, "%02X\r\n", (0x100u - (sum & 0xFFu)) & 0xFFu);
    return tool_out_write(o, line, (size_t)k);
}

/* n bytes at addr as Intel HEX: an extended linear address record (type 04) for each 64 KiB they touch,
 * data records (00) of at most 16 bytes that never cross one, the end-of-file record (01). */
static int hex_write(struct outfile *o, const uint8_t *d, size_t n, uint32_t addr)
{
    int ret = MOTA_OK;
    for (size_t i = 0; i < n && ret == MOTA_OK;) {
        uint32_t a = addr + (uint32_t)i;
        size_t chunk = n - i < 16 ? n - i : 16;
        if (chunk > 0x10000u - (a & 0xFFFFu))
            chunk = 0x10000u - (a & 0xFFFFu);
        if (i == 0 || (a & 0xFFFFu) == 0) {
            uint8_t upper[2] = {(uint8_t)(a >> 24), (uint8_t)(a >> 16)};
            ret = hex_record(o, 0x04, 0, upper, 2);
        }
        if (ret == MOTA_OK)
            ret = hex_record(o, 0x00, (uint16_t)(a & 0xFFFFu), d + i, chunk);
        i += chunk;
    }
    return ret == MOTA_OK ? hex_record(o, 0x01, 0, NULL, 0) : ret;
}

/* The record as version 1 (480 bytes: no names, its CRC where version 2 has them) or 2 (608 bytes: no keys,
 * its CRC where version 3 has them) for a part whose firmware reads only that, else as it is; its length.
 * Such a record was built without keys (parse_provision refuses --kek with it). */
static size_t record_as(uint8_t rec[sizeof(struct mota_provision_rec)], unsigned version)
{
    size_t len = version == 1 ? MOTA_PROVISION_V1_SIZE : MOTA_PROVISION_V2_SIZE;
    if (version != 1 && version != 2)
        return sizeof(struct mota_provision_rec);
    mota_put16(rec + offsetof(struct mota_provision_rec, version), (uint16_t)version);
    mota_put16(rec + offsetof(struct mota_provision_rec, size), (uint16_t)len);
    mota_put32(rec + len - 4u, mota_crc32(0, rec, len - 4u));
    return len;
}

/* The record's bytes to a raw file and an Intel HEX one (either NULL: none), both or neither written. */
static int write_image(const uint8_t *rec, size_t len, const char *bin, const char *hex, uint32_t addr)
{
    struct outfile ob, oh;
    int ret = MOTA_OK;
    /* private: a version 3 record holds the device's private key and the KEKs */
    if (bin != NULL && (ret = tool_out_open(&ob, bin, 0600)) != MOTA_OK)
        return ret;
    if (hex != NULL && (ret = tool_out_open(&oh, hex, 0600)) != MOTA_OK) {
        if (bin != NULL)
            tool_out_abort(&ob);
        return ret;
    }
    if (bin != NULL && ret == MOTA_OK)
        ret = tool_out_write(&ob, rec, len);
    if (hex != NULL && ret == MOTA_OK)
        ret = hex_write(&oh, rec, len, addr);
    if (ret != MOTA_OK) {
        if (bin != NULL)
            tool_out_abort(&ob);
        if (hex != NULL)
            tool_out_abort(&oh);
        return ret;
    }
    if (bin != NULL && (ret = tool_out_commit(&ob)) != MOTA_OK) {
        if (hex != NULL)
            tool_out_abort(&oh);
        return ret;
    }
    return hex != NULL ? tool_out_commit(&oh) : MOTA_OK;
}

int board_provision_image(const struct board_identity *id, const char *bin, const char *hex, uint32_t addr,
                          uint8_t did[MOTA_AGENT_DEVICE_ID_MAX], size_t *did_len, struct board_device_key *dk)
{
    uint8_t rec[sizeof(struct mota_provision_rec)];
    struct mota_provision want;
    bool v3 = id->record_version == 0 || id->record_version == MOTA_PROVISION_VERSION;
    int ret = build_identity(id, &want);
    if (ret == MOTA_OK)
        ret = build_record(&want, NULL, MOTA_ERR_NOT_PROVISIONED, v3, rec);
    mota_provision_wipe(&want);
    if (ret == MOTA_OK) {
        const struct mota_provision_rec *r = (const void *)rec;
        *did_len = r->device_id_len;
        memcpy(did, r->device_id, r->device_id_len);
        device_key_of(rec, sizeof(rec), dk);
        ret = write_image(rec, record_as(rec, id->record_version), bin, hex, addr);
    }
    mota_cipher_wipe(rec, sizeof(rec));
    return ret;
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
    case 'K':
        if (id->n_keks == MOTA_PROVISION_KEKS)
            return tool_err("at most %u --kek", MOTA_PROVISION_KEKS), -1;
        id->keks[id->n_keks++] = arg;
        return 1;
    case 'T':
        if (!tool_parse_u64(arg, &v) || v == 0 || v > 255)
            return tool_err("--trial-boots: 1 to 255"), -1;
        id->trial_boots = (uint32_t)v;
        return 1;
    default: return 0;
    }
}

int board_identity_fits(const struct board_identity *id, const struct board_target *t, const char *cmd)
{
    if (id->n_models > t->max_models)
        return tool_usage_err(cmd,
                              "%u --model: the %s firmware serves at most %u models (a record naming more "
                              "is refused at boot, and the board would come up unprovisioned)",
                              id->n_models, t->name, t->max_models);
    return EXIT_OK;
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
        return tool_usage_err("provision", "--target: " BOARD_TARGET_CHOICE), -1;
    return 1;
}

static void help_provision(FILE *f)
{
    fprintf(f, "usage: mota provision --flash FILE --key PUBLIC.pem [--key ...] [identity options]\n"
               "       mota provision --image OUT.bin|--hex OUT.hex --address ADDR --key PUBLIC.pem [...]\n"
               "identity options: [--vendor DOMAIN] [--class NAME] [--name DEVICE] [--model C_NAME ...]\n"
               "                  [--trial-boots N] [--device-id HEX] [--kek KEK.jwk ...]\n"
               "                  [--device-key-out PUB.pem]\n"
               "                  [--target " BOARD_TARGET_NAMES "]\n\n"
               "The factory step. With --flash, for a QEMU board (an547, an505, an386, an500:\n"
               "one flash layout): writes the device's identity (vendor and class, checked\n"
               "against every container), its trusted keys (key slots 1, 2, ...), its name and\n"
               "model slots into the provisioning sector of its flash file (created erased if\n"
               "absent), with a random 12-byte device id (HELLO, `mota status`: device id).\n"
               "A board is provisioned once: a different record over an existing one is refused;\n"
               "the same identity again keeps the board's device id and device key.\n"
               "Every new record holds a device key: a P-256 key pair made here (the QEMU boards\n"
               "have no TRNG), its private half written into the record and nowhere else, for\n"
               "containers encrypted to the device (pack --encrypt-to); its key id is printed,\n"
               "--device-key-out writes its public key (PEM; later: mota getpub --device).\n"
               "  --kek KEK.jwk          a key-encryption key the device decrypts with (at most 2;\n"
               "                         mota keygen --kek): its kid is shown, never its key\n"
               "With --image and/or --hex, for a real part: the same 816-byte record alone, raw\n"
               "(--image) and as Intel HEX placed at ADDR (--hex), for a programmer to write at\n"
               "ADDR, the part's provisioning sector (docs/porting.md, \"Provisioning a real\n"
               "part\"). ADDR: a 32-bit address, 0x... or decimal, 16-byte aligned.\n"
               "The image files are private (0600): the record holds the device's keys.\n"
               "--record-version 1 writes the 480-byte version 1 (no vendor and class names), 2 the\n"
               "608-byte version 2 (no keys: no --kek, no device key) for a part whose firmware\n"
               "predates version 2 or 3.\n"
               "  --device-id HEX        the record's device id, 1 to 16 bytes as hex digits\n"
               "                         (default: the board's own, or 12 random bytes)\n"
               "Defaults: example.com / mota-TARGET (an547), model network, 3 trial boots.\n");
}

/* What mota provision is asked: where the record goes, and whose it is. */
struct provision_opts {
    struct board_identity id;
    const struct board_target *t;
    const char *flash, *bin, *hex;
    const char *device_key_out; /* --device-key-out PUB.pem */
    bool have_addr;
    uint32_t addr;
};

/* --address ADDR: a 32-bit address with room for the record after it, 16-byte aligned (a program unit). */
static int address_opt(struct provision_opts *o, const char *arg)
{
    uint64_t v;
    if (!tool_parse_u64(arg, &v) || v > 0x100000000ull - sizeof(struct mota_provision_rec) || v % 16 != 0)
        return tool_usage_err("provision",
                              "--address '%s': a 32-bit address (0x... or decimal), 16-byte aligned, with room for "
                              "the %zu-byte record",
                              arg, sizeof(struct mota_provision_rec)),
               -1;
    o->addr = (uint32_t)v;
    o->have_addr = true;
    return 1;
}

/* One of provision's own options: 1 when taken, 0 if not one, <0 on a usage error (said). */
static int provision_opt(struct provision_opts *o, int c, const char *arg)
{
    size_t n = strlen(arg) / 2;
    switch (c) {
    case 'f': o->flash = arg; return 1;
    case 'I': o->bin = arg; return 1;
    case 'H': o->hex = arg; return 1;
    case 'A': return address_opt(o, arg);
    case 'O': o->device_key_out = arg; return 1;
    case 'R':
        if (strcmp(arg, "1") != 0 && strcmp(arg, "2") != 0 && strcmp(arg, "3") != 0)
            return tool_usage_err("provision", "--record-version '%s': 1, 2 or 3", arg), -1;
        o->id.record_version = (unsigned)(arg[0] - '0');
        return 1;
    case 'D':
        if (strlen(arg) % 2 != 0 || n == 0 || n > MOTA_AGENT_DEVICE_ID_MAX || !tool_parse_hex(arg, o->id.device_id, n))
            return tool_usage_err("provision", "--device-id '%s': 1 to %u bytes as hex digits", arg,
                                  MOTA_AGENT_DEVICE_ID_MAX),
                   -1;
        o->id.device_id_len = (uint8_t)n;
        return 1;
    default: return target_opt(&o->t, c, arg);
    }
}

/* The command line into o: EXIT_OK (answered: --help printed), or EXIT_USAGE (said). */
static int parse_provision(int argc, char **argv, struct provision_opts *o, bool *answered)
{
    /* clang-format off */ /* a table packed by hand */
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"flash", required_argument, 0, 'f'}, {"key", required_argument, 0, 'k'},
        {"model", required_argument, 0, 'm'}, {"vendor", required_argument, 0, 'V'},
        {"class", required_argument, 0, 'C'}, {"name", required_argument, 0, 'N'},
        {"trial-boots", required_argument, 0, 'T'}, {"target", required_argument, 0, 'B'},
        {"image", required_argument, 0, 'I'}, {"hex", required_argument, 0, 'H'},
        {"address", required_argument, 0, 'A'}, {"device-id", required_argument, 0, 'D'},
        {"record-version", required_argument, 0, 'R'}, {"kek", required_argument, 0, 'K'},
        {"device-key-out", required_argument, 0, 'O'}, {0, 0, 0, 0}};
    /* clang-format on */
    int c;
    memset(o, 0, sizeof(*o));
    o->t = board_target_default();
    optind = 1;
    while ((c = tool_getopt(argc, argv, "hf:k:", opts, "provision")) != -1) {
        if (c == 'h') {
            help_provision(stdout);
            *answered = true;
            return EXIT_OK;
        }
        int r = c == '?' ? -1 : board_identity_opt(&o->id, c, optarg);
        if (r == 0)
            r = provision_opt(o, c, optarg);
        if (r <= 0)
            return EXIT_USAGE;
    }
    if (optind != argc)
        return tool_usage_err("provision", "unexpected argument '%s'", argv[optind]);
    bool image = o->bin != NULL || o->hex != NULL;
    if ((o->flash == NULL) == !image || o->id.n_keys == 0)
        return tool_usage_err("provision", "needs --flash, or --image and/or --hex, and at least one --key");
    if (image != o->have_addr)
        return tool_usage_err("provision", image ? "--image and --hex need --address, where the record is programmed"
                                                 : "--address goes with --image or --hex");
    if (o->id.record_version != 0 && !image)
        return tool_usage_err("provision", "--record-version goes with --image or --hex (a board's flash file gets "
                                           "the version its firmware reads)");
    if (o->bin != NULL && o->hex != NULL && tool_same_file(o->bin, o->hex))
        return tool_usage_err("provision", "--image and --hex name the same file");
    if ((o->id.record_version == 1 || o->id.record_version == 2) && (o->id.n_keks > 0 || o->device_key_out))
        return tool_usage_err("provision", "--record-version %u has no keys: --kek and --device-key-out need 3",
                              o->id.record_version);
    return EXIT_OK;
}

/* The device key's id on its own line (the record's secrets are never printed), and --device-key-out: its
 * public half as PEM. EXIT_OK or EXIT_IO (said). */
static int tell_device_key(const struct provision_opts *o, const struct board_device_key *dk)
{
    struct mota_p256_key pub;
    char pem[512];
    struct outfile out;
    if (dk->has) {
        printf("device key id ");
        tool_hex(stdout, dk->kid, sizeof(dk->kid));
        printf("\n");
    }
    if (o->device_key_out == NULL)
        return EXIT_OK;
    if (!dk->has) {
        tool_fail(MOTA_ERR_ENC_NO_KEY,
                  "--device-key-out %s: the board's record has no device key (it was "
                  "provisioned before version 3 records): nothing written",
                  o->device_key_out);
        return EXIT_INVALID;
    }
    memset(&pub, 0, sizeof(pub));
    memcpy(pub.pub, dk->pub, sizeof(pub.pub));
    if (mota_key_write_public_pem(&pub, pem, sizeof(pem)) != MOTA_OK ||
        tool_out_open(&out, o->device_key_out, 0644) != MOTA_OK)
        return EXIT_IO;
    if (tool_out_write(&out, pem, strlen(pem)) != MOTA_OK) {
        tool_out_abort(&out);
        return EXIT_IO;
    }
    return tool_out_commit(&out) == MOTA_OK ? EXIT_OK : EXIT_IO;
}

/* The record for a real part's programmer, and what was written where. */
static int provision_image(const struct provision_opts *o)
{
    uint8_t id[MOTA_AGENT_DEVICE_ID_MAX];
    size_t id_len = 0;
    struct board_device_key dk;
    int ret = board_provision_image(&o->id, o->bin, o->hex, o->addr, id, &id_len, &dk);
    if (ret != MOTA_OK)
        return ret == MOTA_ERR_PROVISION ? EXIT_INVALID : EXIT_IO;
    char did[2 * MOTA_AGENT_DEVICE_ID_MAX + 1];
    tool_hex_str(id, id_len, did, sizeof(did));
    unsigned v = o->id.record_version, size = v == 1   ? MOTA_PROVISION_V1_SIZE
                                              : v == 2 ? MOTA_PROVISION_V2_SIZE
                                                       : (unsigned)sizeof(struct mota_provision_rec);
    const char *files[2] = {o->bin, o->hex}, *what[2] = {"raw", "Intel HEX"};
    for (int i = 0; i < 2; i++)
        if (files[i] != NULL)
            printf("%s: provisioning record, %u bytes %s, for 0x%08X (%u key%s, class %s, device id %s)\n", files[i],
                   size, what[i], o->addr, o->id.n_keys, o->id.n_keys == 1 ? "" : "s", o->id.klass, did);
    return tell_device_key(o, &dk);
}

int cmd_provision(int argc, char **argv)
{
    struct provision_opts o;
    bool answered = false;
    int rc = parse_provision(argc, argv, &o, &answered);
    if (rc != EXIT_OK || answered)
        return rc;
    board_identity_defaults(&o.id, o.t);
    if (o.flash == NULL)
        return provision_image(&o); /* a real part: its own firmware's limit, up to the record's 4 */
    if ((rc = board_identity_fits(&o.id, o.t, "provision")) != EXIT_OK)
        return rc;
    char fix[PATH_MAX + 160];
    snprintf(fix, sizeof(fix),
             "give --flash another file for another board, delete %s to provision it anew, or provision it "
             "with the identity it holds",
             o.flash);
    bool done = false;
    struct board_device_key dk;
    int ret = board_provision(o.flash, &o.id, fix, &done, &dk);
    if (ret != MOTA_OK)
        return ret == MOTA_ERR_PROVISION ? EXIT_INVALID : EXIT_IO;
    printf("%s: %s (%u key%s, class %s)\n", o.flash, done ? "provisioned" : "already provisioned with this identity",
           o.id.n_keys, o.id.n_keys == 1 ? "" : "s", o.id.klass);
    return tell_device_key(&o, &dk);
}

int sim_device_key(const char *flash, bool keep, struct mota_p256_key *key)
{
    char path[PATH_MAX + 16], pem[512];
    struct outfile out;
    snprintf(path, sizeof(path), "%s.device-key", flash);
    int ret = MOTA_ERR_KEY_INVALID;
    if (keep && access(path, F_OK) == 0) {
        if ((ret = tool_load_key(path, key)) != MOTA_OK)
            return ret; /* said */
        return key->has_private ? MOTA_OK
                                : tool_fail(MOTA_ERR_KEY_INVALID,
                                            "%s: the simulated device's key file holds no "
                                            "private key (delete it for a new one)",
                                            path);
    }
    ret = mota_key_generate(key);
    if (ret != MOTA_OK)
        return tool_fail(ret, "the device key");
    if (!keep)
        return MOTA_OK;
    ret = mota_key_write_private_pem(key, pem, sizeof(pem));
    if (ret == MOTA_OK && (ret = tool_out_open(&out, path, 0600)) == MOTA_OK &&
        (ret = tool_out_write(&out, pem, strlen(pem))) != MOTA_OK)
        tool_out_abort(&out);
    if (ret == MOTA_OK)
        ret = tool_out_commit(&out);
    mota_cipher_wipe(pem, sizeof(pem));
    return ret;
}
