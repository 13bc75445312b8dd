/* SPDX-License-Identifier: Apache-2.0 */
/* The QEMU boards (an547, an505, an386, an500) and their factory step: a board's identity written into its flash file, or
 * into a provisioning image a real part's programmer writes. */
#ifndef MOTA_TOOL_PROVISION_H
#define MOTA_TOOL_PROVISION_H

#include "mota/crypto_sign.h"
#include "mota/provision.h"

#include <stdbool.h>
#include <stdint.h>

/* The QEMU boards of the MPS layer (ports/mps/common, ports/mps/<name>): one flash layout, one firmware each. */
/* Their names, as the usage lines and errors list them (the table in provision.c) */
#define BOARD_TARGET_NAMES "an547|an505|an386|an500"
#define BOARD_TARGET_CHOICE "an547, an505, an386 or an500"
struct board_target {
    const char *name;         /* ports/mps/<name>, mota-<name>.elf, its log lines start "mota-<name>: " */
    const char *machine;      /* qemu-system-arm -M */
    const char *firmware_dir; /* where this build put its firmware */
    unsigned max_models;      /* the models its firmware serves (ports/mps/common/sizes.cmake) */
};

/* The board called name, or NULL. */
const struct board_target *board_target_find(const char *name);
/* The board when none is named: an547. */
const struct board_target *board_target_default(void);

/* What a board is told at the factory (mota provision, and mota sim --target with --key). */
struct board_identity {
    const char *keys[MOTA_PROVISION_KEYS];
    unsigned n_keys;
    const char *keks[MOTA_PROVISION_KEKS]; /* --kek FILE: key-encryption key files (JWK, common/kek.h) */
    unsigned n_keks;
    const char *models[MOTA_PROVISION_MODELS];
    unsigned n_models;
    const char *vendor, *klass, *name;
    uint32_t trial_boots;
    uint8_t device_id[MOTA_AGENT_DEVICE_ID_MAX]; /* --device-id; device_id_len 0: the board's own, or random */
    uint8_t device_id_len;
    unsigned record_version; /* --record-version: 1 or 2 for a part whose firmware predates 2 or 3; 0: 3 */
};

/* The public half of the device key a record holds, what the factory shows and exports (never d). */
struct board_device_key {
    bool has; /* false: the record has none (version 1 or 2, or a board provisioned before version 3) */
    uint8_t pub[MOTA_P256_PUB_LEN];
    uint8_t kid[MOTA_KEY_ID_LEN]; /* its key id: what `mota pack --encrypt-to` names it by */
};

/* The identity's options both commands take (getopt values 'k' --key, 'm' --model, 'V' --vendor,
 * 'C' --class, 'N' --name, 'T' --trial-boots, 'K' --kek): 1 when c is one of them, 0 if not, <0 on an error
 * (said). */
int board_identity_opt(struct board_identity *id, int c, const char *arg);
/* The identity fits the board's firmware (its models): EXIT_OK, else a usage error of cmd, said. */
int board_identity_fits(const struct board_identity *id, const struct board_target *t, const char *cmd);
/* Defaults for what the options left out: vendor example.com, class and name "mota-<board>", 3 trial boots. */
void board_identity_defaults(struct board_identity *id, const struct board_target *t);

/* A new board's flash: erased (all 0xFF), MOTA_BOARD_FLASH_SIZE bytes; MOTA_OK if path exists already. */
int board_flash_create(const char *path);
/* The identity's record into the provisioning sector of the flash (created if absent), once: *done when
 * written now; MOTA_OK without writing for the same record; MOTA_ERR_PROVISION for another (said: what
 * differs, then fix, the caller's way out); MOTA_ERR_IO with the path and the system's reason. A new board
 * gets a device key pair made here (the QEMU boards have no TRNG); one provisioned already keeps its own.
 * dk (NULL: not wanted): the public half of the device key the board holds. */
int board_provision(const char *flash, const struct board_identity *id, const char *fix, bool *done,
                    struct board_device_key *dk);
/* The identity's record alone (the bytes board_provision writes, a new device id unless given, a new device
 * key for version 3) for a real part's programmer: bin raw (NULL: none), hex Intel HEX at addr (NULL:
 * none), both written atomically; its device id and the public half of its device key into did, dk. */
int board_provision_image(const struct board_identity *id, const char *bin, const char *hex, uint32_t addr,
                          uint8_t did[MOTA_AGENT_DEVICE_ID_MAX], size_t *did_len, struct board_device_key *dk);

/* The posix simulator's device key pair, its factory step: kept beside its flash in FLASH.device-key (SEC1
 * PEM, mode 0600: the simulated device's own storage) so that a restart of the same state keeps it; made
 * the first time, and for a throw-away flash (keep false) kept nowhere. MOTA_OK or the reason (said). */
int sim_device_key(const char *flash, bool keep, struct mota_p256_key *key);

/* The --kek files into keks (at most MOTA_PROVISION_KEKS, each kid once): MOTA_OK or the reason (said). */
int board_read_keks(const char *const *paths, unsigned n, struct mota_kek *keks);

#endif
