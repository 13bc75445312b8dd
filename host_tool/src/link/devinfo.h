/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a device reports in its HELLO and STATUS answers: the structs they are read into, and the functions of
 * devinfo_decode.c (devinfo_: reading the answers), devinfo_print.c (devprint_: text for a person) and
 * devinfo_json.c (devjson_: JSON).
 */
#ifndef MOTA_TOOL_DEVINFO_H
#define MOTA_TOOL_DEVINFO_H

#include "model_io.h"
#include "mota/compat.h"
#include "mota/proto_keys.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEV_MAX_MODELS 4 /* the most models a device lists: MOTA_AGENT_MAX_MODELS, its largest setting */

struct dev_model {
    char name[65];
    uint64_t slot_size, committed, seq;
    int last_error;
    unsigned up_state;
    uint64_t up_off, up_len;
    bool has;
    char version[257]; /* up to 256 bytes, as a manifest may carry */
    uint8_t digest[32];
    unsigned slot, mode, boots;
    bool testing;
    uint64_t exec_used, faults;
    uint64_t exec_size, ext_size; /* what a model may use here (key 14) */
    bool has_about;               /* the model's own description (key 13) */
    char about_name[33], about_compiled[33], about_tool[25];
    uint64_t about_tool_version, about_acts, about_weights;
    /* the model a rollback would bring back (key 15): [seq, version, manifest digest, slot] */
    bool has_previous;
    uint64_t previous_seq;
    char previous_version[257];
    uint8_t previous_digest[32];
    unsigned previous_slot;
    /* when last_error happened (key 16): in this boot, last_error_ms after it began (compare STATUS key 5,
     * devinfo_uptime_ms); or in an earlier boot (!last_error_this_boot), time unknown */
    bool has_last_error_time;
    bool last_error_this_boot;
    uint64_t last_error_ms;
    /* where the active model's work runs (key 17): its manifest's npu-epochs */
    bool has_epochs;
    struct mota_epoch_summary epochs;
    struct dev_io io; /* its inputs and outputs, where the device says them (key 18) */
};

/* The device's compatibility profile (HELLO key 6) and its name (key 11). */
struct dev_profile {
    struct mota_device_profile p;
    uint64_t key_floor;
    char name[48];
    bool valid;
};

/* HELLO key 18: the ids of the keys the device decrypts with (never a key). */
struct dev_dec_keys {
    unsigned n_keks;
    uint8_t kek_id[MOTA_DECRYPT_KEKS_MAX][32]; /* a KEK's kid, kek_id_len[i] bytes (1..32) */
    size_t kek_id_len[MOTA_DECRYPT_KEKS_MAX];
    bool has_device_key;
    uint8_t device_kid[16]; /* its P-256 key's id (mota's key id of the point) */
};

/* ---- devinfo_decode.c ---- */

/* s, n bytes, into dst as text a terminal may show (control characters as '?'), cut to fit cap */
void devinfo_copy_str(char *dst, size_t cap, const char *s, size_t n);
void devinfo_profile(const uint8_t *info, size_t len, struct dev_profile *out);
int devinfo_models(const uint8_t *p, size_t len, int64_t want_key, struct dev_model *out, unsigned *n_out);
bool devinfo_uint(const uint8_t *p, size_t len, int64_t want, uint64_t *v);
bool devinfo_bool(const uint8_t *p, size_t len, int64_t want, bool *v);
/* HELLO key 5, [vendor id, class id]: which 0 or 1 into out; false when absent. */
bool devinfo_identity(const uint8_t *info, size_t len, unsigned which, uint8_t out[16]);
/* HELLO key 15: the name vendor (which 0) or class (1) id is made from; "" when the device does not say */
void devinfo_identity_name(const uint8_t *info, size_t len, unsigned which, char *out, size_t cap);
/* name makes id: a vendor id is UUID5(DNS, name) (vendor_id NULL), a class id UUID5(vendor_id, name) */
bool devinfo_name_makes_id(const char *name, const uint8_t *vendor_id, const uint8_t id[16]);
/* HELLO key 14, the device's unique id (1 to 16 bytes) into out, its length in *n; false when the device
 * does not send one or sends something else. */
bool devinfo_device_id(const uint8_t *info, size_t len, uint8_t out[16], size_t *n);
/* Key 18 into out: false (out zeroed) when the device does not send it or sends something else. */
bool devinfo_dec_keys(const uint8_t *info, size_t len, struct dev_dec_keys *out);
/* STATUS key 7: the device's P-256 public point (0x04 x y) into pub; false when it has none. */
bool devinfo_device_key(const uint8_t *status, size_t len, uint8_t pub[65]);
/* A text field of the device info (key 1 name, 11 profile name); "" when absent. */
void devinfo_text(const uint8_t *info, size_t len, int64_t key, char *out, size_t cap);
/* The device's uptime in ms when it answered STATUS (key 5); false from a device that does not say. */
bool devinfo_uptime_ms(const uint8_t *status, size_t len, uint64_t *ms);
/* The index of the model named name (len bytes) in m; -1 when there is none. */
int devinfo_model_index(const struct dev_model *m, unsigned n, const char *name, size_t len);

/* ---- devinfo_print.c ---- */

/* "NAME (id UUID)", or "id UUID" when there is no name or it does not make the id: how an identity is shown */
void devprint_named_id(const char *name, const uint8_t *vendor_id, const uint8_t id[16], char *out, size_t cap);
/* A key id as the host shows it: its text when it is 1..32 printable characters, else 0x and hex digits. */
void devprint_kid(const uint8_t *kid, size_t n, char *out, size_t cap);
/* uptime_ms: the device's clock when it answered (STATUS key 5), for "N s ago"; max_boots: HELLO key 13
 * (0 when unknown). Negative uptime: unknown. */
void devprint_models(const struct dev_model *m, unsigned n, int64_t uptime_ms, unsigned max_boots);

/* ---- devinfo_json.c ---- */

struct json;
/* "models": [...] as docs/json.md describes them. */
void devjson_models(struct json *j, const struct dev_model *m, unsigned n, unsigned max_boots);

#endif
