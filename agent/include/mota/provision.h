/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provisioning record: a device's identity and trust anchors, written
 * once into a flash sector of its own by the factory (`mota provision`)
 * before the first boot, read by the firmware at every boot. Not compiled
 * into the image, so one firmware serves every customer and board class.
 *
 * On flash (little-endian, struct mota_provision_rec, 608 bytes, CRC-32 of
 * everything before the crc field): magic "MPRV", version 2, vendor and
 * class ids (the UUID5s containers are checked against), a device name,
 * up to 4 trusted P-256 keys with their key-slot indices, up to 4 model
 * names (one A/B slot pair each), the trial boot limit, the device's
 * unique id (12 random bytes from `mota provision`, in what were reserved
 * bytes: a record written before it has length 0 there, and the device's id
 * is then derived from the record), and the names the ids are made from
 * (the vendor's domain, the class's name; "" when too long to keep).
 * Version 1 (480 bytes, its crc where version 2 has the names) is read as
 * one without names. docs/agent.md, docs/porting.md.
 */
#ifndef MOTA_PROVISION_H
#define MOTA_PROVISION_H

#include "mota/agent.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOTA_PROVISION_MAGIC 0x5652504Du /* "MPRV" */
#define MOTA_PROVISION_VERSION 2u
#define MOTA_PROVISION_V1_SIZE 480u    /* version 1: no names */
#define MOTA_PROVISION_ID_NAME_MAX 63u /* the vendor's domain, the class's name */
#define MOTA_PROVISION_KEYS 4u
#define MOTA_PROVISION_MODELS 4u
#define MOTA_PROVISION_NAME_MAX 31u
#define MOTA_PROVISION_DEVICE_ID_LEN 12u /* what `mota provision` writes: as long as an STM32's UID */

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
    uint32_t crc;
};
_Static_assert(sizeof(struct mota_provision_rec) == 608, "provisioning record is 608 bytes on flash");
_Static_assert(offsetof(struct mota_provision_rec, vendor_name) == MOTA_PROVISION_V1_SIZE - 4u,
               "version 2 adds the names where version 1 has its crc");

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
};

/* Check and decode a record read from flash: MOTA_OK, MOTA_ERR_NOT_PROVISIONED
 * for an erased sector, MOTA_ERR_PROVISION for anything malformed. */
int mota_provision_decode(const uint8_t *buf, size_t len, struct mota_provision *p);

/* Encode p as a record (out must hold sizeof(struct mota_provision_rec)). */
int mota_provision_encode(const struct mota_provision *p, uint8_t *out, size_t cap);

/* Put the identity (vendor, class, device id, the names; p must outlive cfg), keys and trial limit into an
 * agent configuration. */
void mota_provision_apply(const struct mota_provision *p, struct mota_agent_config *cfg);

#endif /* MOTA_PROVISION_H */
