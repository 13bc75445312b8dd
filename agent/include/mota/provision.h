/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provisioning record: a device's identity and trust anchors, written
 * once into a flash sector of its own by the factory (`mota provision`)
 * before the first boot, read by the firmware at every boot. Not compiled
 * into the image, so one firmware serves every customer and board class.
 *
 * On flash (little-endian, struct mota_provision_rec, 816 bytes, CRC-32 of
 * everything before the crc field): magic "MPRV", version 3, vendor and
 * class ids (the UUID5s containers are checked against), a device name,
 * up to 4 trusted P-256 keys with their key-slot indices, up to 4 model
 * names (one A/B slot pair each), the trial boot limit, the device's
 * unique id (12 random bytes from `mota provision`, in what were reserved
 * bytes: a record written before it has length 0 there, and the device's id
 * is then derived from the record), and the names the ids are made from
 * (the vendor's domain, the class's name; "" when too long to keep), then
 * the keys of encrypted payloads: up to 2 key-encryption keys (KEKs, each
 * with its kid) and the device's own P-256 key pair for ECDH (created by the
 * provisioning host, which writes its private half into the record only).
 * Version 1 (480 bytes, its crc where version 2 has the names) is read as
 * one without names, version 2 (608 bytes, its crc where version 3 has the
 * keys) as one without keys. docs/agent.md, docs/porting.md.
 */
#ifndef MOTA_PROVISION_H
#define MOTA_PROVISION_H

#include "mota/agent.h"
#include "mota/crypto.h"
#include "mota/encinfo.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOTA_PROVISION_MAGIC 0x5652504Du /* "MPRV" */
#define MOTA_PROVISION_VERSION 3u
#define MOTA_PROVISION_V1_SIZE 480u    /* version 1: no names */
#define MOTA_PROVISION_V2_SIZE 608u    /* version 2: no keys for encrypted payloads */
#define MOTA_PROVISION_ID_NAME_MAX 63u /* the vendor's domain, the class's name */
#define MOTA_PROVISION_KEYS 4u
#define MOTA_PROVISION_MODELS 4u
#define MOTA_PROVISION_NAME_MAX 31u
#define MOTA_PROVISION_DEVICE_ID_LEN 12u /* what `mota provision` writes: as long as an STM32's UID */
#define MOTA_PROVISION_KEKS 2u           /* key-encryption keys a record holds */

struct __attribute__((packed)) mota_provision_rec {
    uint32_t magic;
    uint16_t version;
    uint16_t size; /* sizeof(struct mota_provision_rec) */
    uint8_t vendor_id[16];
    uint8_t class_id[16];
    char name[MOTA_PROVISION_NAME_MAX + 1]; /* NUL-terminated */
    uint8_t n_keys, n_models, max_trial_boots;
    uint8_t device_id_len; /* 0: none (a record of an older mota: reserved, zero), else 1..16 */
    struct __attribute__((packed)) {
        uint32_t index;
        uint8_t pub[MOTA_P256_PUB_LEN]; /* uncompressed point, 0x04 first */
        uint8_t pad[3];
    } keys[MOTA_PROVISION_KEYS];
    char models[MOTA_PROVISION_MODELS][24];           /* c_names, NUL-terminated */
    uint8_t device_id[MOTA_AGENT_DEVICE_ID_MAX];      /* its first device_id_len bytes; the rest zero */
    char vendor_name[MOTA_PROVISION_ID_NAME_MAX + 1]; /* NUL-terminated; "": not kept */
    char class_name[MOTA_PROVISION_ID_NAME_MAX + 1];
    /* version 3: the keys of encrypted payloads (secret: never logged, never in an answer) */
    uint8_t n_keks;     /* 0..MOTA_PROVISION_KEKS */
    uint8_t device_key; /* 1: device_d and device_pub hold the device's key pair; 0: none (both zero) */
    uint8_t reserved[2];
    struct __attribute__((packed)) {
        uint8_t kid_len; /* 1..32 */
        uint8_t kid[MOTA_ENC_MAX_KID];
        uint8_t k[MOTA_AES128_KEY_LEN];
        uint8_t pad[3];
    } keks[MOTA_PROVISION_KEKS];
    uint8_t device_d[32];                  /* the private scalar, big-endian */
    uint8_t device_pub[MOTA_P256_PUB_LEN]; /* d.G, 0x04 x y */
    uint8_t pad[3];
    uint32_t crc;
};
_Static_assert(sizeof(struct mota_provision_rec) == 816, "provisioning record is 816 bytes on flash");
_Static_assert(offsetof(struct mota_provision_rec, vendor_name) == MOTA_PROVISION_V1_SIZE - 4u,
               "version 2 adds the names where version 1 has its crc");
_Static_assert(offsetof(struct mota_provision_rec, n_keks) == MOTA_PROVISION_V2_SIZE - 4u,
               "version 3 adds the keys where version 2 has its crc");
_Static_assert(offsetof(struct mota_provision_rec, keks) == 608 &&
                   offsetof(struct mota_provision_rec, device_d) == 712 &&
                   offsetof(struct mota_provision_rec, device_pub) == 744,
               "the version 3 layout docs/porting.md gives");

/* Decoded view. */
struct mota_provision {
    uint8_t vendor_id[16], class_id[16];
    char name[MOTA_PROVISION_NAME_MAX + 1];
    unsigned n_keys;
    struct mota_agent_key keys[MOTA_PROVISION_KEYS];
    unsigned n_models;
    char models[MOTA_PROVISION_MODELS][24];
    uint32_t max_trial_boots;
    /* the device's unique id: the record's, or one derived from the record when it has none (derived:
     * the first 12 bytes of SHA-256 of "mota-provision:" and the record), which encode leaves out */
    uint8_t device_id[MOTA_AGENT_DEVICE_ID_MAX];
    uint8_t device_id_len;
    bool device_id_derived;
    char vendor_name[MOTA_PROVISION_ID_NAME_MAX + 1], class_name[MOTA_PROVISION_ID_NAME_MAX + 1]; /* "": unknown */
    /* the keys of encrypted payloads (none from a version 1 or 2 record); device_kid is the key id of
     * device_pub (mota_key_id), computed by decode, what `mota pack --encrypt-to` names the key by */
    unsigned n_keks;
    struct mota_kek keks[MOTA_PROVISION_KEKS];
    bool has_device_key;
    uint8_t device_d[32], device_pub[MOTA_P256_PUB_LEN];
    uint8_t device_kid[MOTA_KEY_ID_LEN];
};

/* Check and decode a record read from flash: MOTA_OK, MOTA_ERR_NOT_PROVISIONED
 * for an erased sector, MOTA_ERR_PROVISION for anything malformed (a KEK's kid
 * of 0 or over 32 bytes, a device key whose public point is not its private
 * key's). p holds secrets afterwards: wipe it (mota_provision_wipe) when done. */
int mota_provision_decode(const uint8_t *buf, size_t len, struct mota_provision *p);

/* Encode p as a record (out must hold sizeof(struct mota_provision_rec)): its length, or MOTA_ERR_ARG (a
 * device key is written as given: decode checks it). */
int mota_provision_encode(const struct mota_provision *p, uint8_t *out, size_t cap);

/* Put the identity (vendor, class, device id, the names; p must outlive cfg), keys, the keys of encrypted
 * payloads (cfg->enc points into p) and trial limit into an agent configuration. */
void mota_provision_apply(const struct mota_provision *p, struct mota_agent_config *cfg);

/* Zero p, secrets included (not optimised away). */
void mota_provision_wipe(struct mota_provision *p);

#endif /* MOTA_PROVISION_H */
