/* SPDX-License-Identifier: Apache-2.0 */
/* What the host-side link commands share: their options, reaching the device, and reading what it reports. */
#ifndef MOTA_TOOL_DEVLINK_H
#define MOTA_TOOL_DEVLINK_H

#include "model_io.h"
#include "client.h"
#include "mota/compat.h"
#include "mota/loader.h"
#include "mota/proto_keys.h"

#include <limits.h>
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
     * status_uptime_ms); or in an earlier boot (!last_error_this_boot), time unknown */
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

struct link_opts {
    const char *port;
    unsigned baud;
    bool json, quiet, confirm;
    bool reinstall; /* push: install even the container the device runs already */
    double timeout_s;
    const char *model;
    const char *expect_digest; /* confirm, rollback: the manifest digest (64 hex digits) they are about */
    const char *input, *output;
    uint64_t out_size;
    double wait_s; /* status --wait S: how long to keep trying to reach the device; 0: one attempt */
};

#define LINK_EXITS                                                                                                     \
    "--timeout S bounds every wait for the device (default 10).\n"                                                     \
    "Exit codes: 0 done; 1 refused by the device and 2 usage: final (the same command\n"                               \
    "gets the same answer); 3 port unusable: final for a path that is no port, may be\n"                               \
    "transient (a USB port re-enumerating); 5 device busy and 6 timed out: transient\n"                                \
    "(try again; a push resumes).\n"

/* What every link command's --help adds: PORT may be left out. */
#define LINK_PORT_HELP                                                                                                 \
    "PORT may be left out: then $MOTA_PORT, else the one port `mota ports` finds that looks\n"                         \
    "like a device (said on stderr); none or several: a usage error naming them.\n"

/* The ports `mota ports` finds that look like a device, by the name it gives them (the stable
 * /dev/serial/by-id one when there is one): the first cap into names; how many there are. */
size_t ports_devices(char (*names)[PATH_MAX], size_t cap);
/* The port a link command uses when its command line gives none: $MOTA_PORT, else the one device
 * ports_devices finds (said on stderr). EXIT_OK with *port set, else a usage error already printed. */
int link_default_port(const char *cmd, const char **port);

void copy_str(char *dst, size_t cap, const char *s, size_t n);
void parse_profile(const uint8_t *info, size_t len, struct dev_profile *out);
int parse_models(const uint8_t *p, size_t len, int64_t want_key, struct dev_model *out, unsigned *n_out);
bool info_uint(const uint8_t *p, size_t len, int64_t want, uint64_t *v);
bool info_bool(const uint8_t *p, size_t len, int64_t want, bool *v);
/* HELLO key 5, [vendor id, class id]: which 0 or 1 into out; false when absent. */
bool dev_identity(const uint8_t *info, size_t len, unsigned which, uint8_t out[16]);
/* HELLO key 15: the name vendor (which 0) or class (1) id is made from; "" when the device does not say */
void dev_identity_name(const uint8_t *info, size_t len, unsigned which, char *out, size_t cap);
/* name makes id: a vendor id is UUID5(DNS, name) (vendor_id NULL), a class id UUID5(vendor_id, name) */
bool dev_name_makes_id(const char *name, const uint8_t *vendor_id, const uint8_t id[16]);
/* "NAME (id UUID)", or "id UUID" when there is no name or it does not make the id: how an identity is shown */
void dev_named_id(const char *name, const uint8_t *vendor_id, const uint8_t id[16], char *out, size_t cap);
/* HELLO key 14, the device's unique id (1 to 16 bytes) into out, its length in *n; false when the device
 * does not send one or sends something else. */
bool dev_id(const uint8_t *info, size_t len, uint8_t out[16], size_t *n);
/* HELLO key 18: the ids of the keys the device decrypts with (never a key). */
struct dev_dec_keys {
    unsigned n_keks;
    uint8_t kek_id[MOTA_DECRYPT_KEKS_MAX][32]; /* a KEK's kid, kek_id_len[i] bytes (1..32) */
    size_t kek_id_len[MOTA_DECRYPT_KEKS_MAX];
    bool has_device_key;
    uint8_t device_kid[16]; /* its P-256 key's id (mota's key id of the point) */
};
/* Key 18 into out: false (out zeroed) when the device does not send it or sends something else. */
bool dev_dec_keys(const uint8_t *info, size_t len, struct dev_dec_keys *out);
/* A key id as the host shows it: its text when it is 1..32 printable characters, else 0x and hex digits. */
void dev_kid_str(const uint8_t *kid, size_t n, char *out, size_t cap);
/* STATUS key 7: the device's P-256 public point (0x04 x y) into pub; false when it has none. */
bool status_device_key(const uint8_t *status, size_t len, uint8_t pub[65]);
/* A text field of the device info (key 1 name, 11 profile name); "" when absent. */
void dev_text(const uint8_t *info, size_t len, int64_t key, char *out, size_t cap);
/* The device's uptime in ms when it answered STATUS (key 5); false from a device that does not say. */
bool status_uptime_ms(const uint8_t *status, size_t len, uint64_t *ms);
int model_index(const struct dev_model *m, unsigned n, const char *name, size_t len);
/* uptime_ms: the device's clock when it answered (STATUS key 5), for "N s ago"; max_boots: HELLO key 13
 * (0 when unknown). Negative uptime: unknown. */
void print_models(const struct dev_model *m, unsigned n, int64_t uptime_ms, unsigned max_boots);
struct json;
/* "models": [...] as docs/json.md describes them. */
void json_models(struct json *j, const struct dev_model *m, unsigned n, unsigned max_boots);
/* Options a link command takes besides --baud and --timeout. */
enum {
    LO_JSON = 1,
    LO_QUIET = 2,
    LO_MODEL = 4,
    LO_CONFIRM = 8,
    LO_INVOKE = 16,
    LO_EXPECT = 32,
    LO_WAIT = 64,
    LO_REINSTALL = 128
};
int link_args(int argc, char **argv, struct link_opts *o, const char *cmd, unsigned allowed, const char *usage,
              bool want_container, const char **container, double default_timeout);
int connect_device(struct client *c, const struct link_opts *o, double deadline, bool first, const uint8_t **info,
                   size_t *info_len);
/* connect_device, tried again for up to o->wait_s seconds (status --wait) while the device cannot be reached
 * or is busy: the first success, or the last attempt's failure. */
int connect_waiting(struct client *c, const struct link_opts *o, const uint8_t **info, size_t *info_len);
int link_exit(int ret);
/* Run model idx on the device: one INVOKE when input and output fit a frame, else through its I/O buffer
 * (io_buffer: HELLO key 12). out gets out_size bytes. *status is the device's verdict, detail its words
 * (a guarding port's "where") or why the sizes do not fit; the return value is the link's. */
int dev_invoke(struct client *c, uint64_t io_buffer, unsigned idx, const uint8_t *in, size_t in_len, uint8_t *out,
               size_t out_size, double timeout_s, uint32_t *us, int *status, char *detail, size_t cap);
void link_fail(int ret, const struct client *c, const struct link_opts *o);

#endif
