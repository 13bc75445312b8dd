/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The update link's CBOR keys, defined once: the device's link server
 * (agent/src/link_replies.c) writes them, the host tool (host_tool/src/link/devinfo_decode.c,
 * cmd_device.c, client.c) reads them. docs/protocol.md gives each in its
 * CDDL, named as in the third column; the test
 * protocol_keys_match_the_cddl checks that both agree.
 *
 * X(name, key, CDDL name)
 */
#ifndef MOTA_PROTO_KEYS_H
#define MOTA_PROTO_KEYS_H

/* HELLO's answer: the device */
#define MOTA_INFO_KEYS(X) /* cddl: device_info */                                                                      \
    X(MOTA_INFO_NAME, 1, "name")                                                                                       \
    X(MOTA_INFO_PROTOCOL, 2, "protocol-version")                                                                       \
    X(MOTA_INFO_PAYLOAD, 3, "max-payload")                                                                             \
    X(MOTA_INFO_WINDOW, 4, "window")                                                                                   \
    X(MOTA_INFO_IDENTITY, 5, "identity")                                                                               \
    X(MOTA_INFO_PROFILE, 6, "profile")                                                                                 \
    X(MOTA_INFO_MODELS, 7, "models")                                                                                   \
    X(MOTA_INFO_PROVISIONED, 8, "provisioned")                                                                         \
    X(MOTA_INFO_RESET_CAUSE, 9, "reset-cause")                                                                         \
    X(MOTA_INFO_HEAD_MAX, 10, "max-head")                                                                              \
    X(MOTA_INFO_PROFILE_NAME, 11, "profile-name")                                                                      \
    X(MOTA_INFO_IO_BUFFER, 12, "io-buffer")                                                                            \
    X(MOTA_INFO_TRIAL_BOOTS, 13, "max-trial-boots")                                                                    \
    X(MOTA_INFO_DEVICE_ID, 14, "device-id")                                                                            \
    X(MOTA_INFO_IDENTITY_NAMES, 15, "identity-names")                                                                  \
    X(MOTA_INFO_MODELS_FROM, 16, "models-from")                                                                        \
    X(MOTA_INFO_FEATURES, 17, "features")                                                                              \
    X(MOTA_INFO_DECRYPT, 18, "decrypt")

/* HELLO's key 18: the ids of the keys the device decrypts with (never a key) */
#define MOTA_DECRYPT_KEYS(X) /* cddl: decrypt */                                                                       \
    X(MOTA_DECRYPT_KEK_IDS, 1, "kek-ids")                                                                              \
    X(MOTA_DECRYPT_DEVICE_KEY_ID, 2, "device-key-id")

/* one model, in HELLO (MOTA_INFO_MODELS) and STATUS (MOTA_STATUS_MODELS) */
#define MOTA_MINFO_KEYS(X) /* cddl: model */                                                                           \
    X(MOTA_MINFO_C_NAME, 1, "c-name")                                                                                  \
    X(MOTA_MINFO_SLOT_SIZE, 2, "slot-size")                                                                            \
    X(MOTA_MINFO_COMMITTED, 3, "committed-seq")                                                                        \
    X(MOTA_MINFO_LAST_ERROR, 4, "last-error")                                                                          \
    X(MOTA_MINFO_UPLOAD, 5, "upload")                                                                                  \
    X(MOTA_MINFO_HAS_MODEL, 6, "has-model")                                                                            \
    X(MOTA_MINFO_SEQ, 7, "seq")                                                                                        \
    X(MOTA_MINFO_DIGEST, 8, "manifest-digest")                                                                         \
    X(MOTA_MINFO_VERSION, 9, "version")                                                                                \
    X(MOTA_MINFO_PLACEMENT, 10, "placement")                                                                           \
    X(MOTA_MINFO_EXEC_USED, 11, "exec-ram-used")                                                                       \
    X(MOTA_MINFO_FAULTS, 12, "faults")                                                                                 \
    X(MOTA_MINFO_ABOUT, 13, "about")                                                                                   \
    X(MOTA_MINFO_MEMORY, 14, "memory")                                                                                 \
    X(MOTA_MINFO_PREVIOUS, 15, "previous")                                                                             \
    X(MOTA_MINFO_ERROR_WHEN, 16, "last-error-when")                                                                    \
    X(MOTA_MINFO_EPOCHS, 17, "npu-epochs")                                                                             \
    X(MOTA_MINFO_IO, 18, "io")

/* STATUS's answer */
#define MOTA_STATUS_KEYS(X) /* cddl: status */                                                                         \
    X(MOTA_STATUS_MODELS, 1, "models")                                                                                 \
    X(MOTA_STATUS_COUNTERS, 2, "link-counters")                                                                        \
    X(MOTA_STATUS_RESULT, 3, "last-result")                                                                            \
    X(MOTA_STATUS_TIMING, 4, "timing")                                                                                 \
    X(MOTA_STATUS_UPTIME, 5, "uptime-ms")                                                                              \
    X(MOTA_STATUS_MODELS_FROM, 6, "models-from")                                                                       \
    X(MOTA_STATUS_DEVICE_KEY, 7, "device-key")

#define MOTA_PROTO_KEY_ENUM_(name, value, cddl) name = (value),
enum mota_info_key { MOTA_INFO_KEYS(MOTA_PROTO_KEY_ENUM_) };
enum mota_minfo_key { MOTA_MINFO_KEYS(MOTA_PROTO_KEY_ENUM_) };
enum mota_status_key { MOTA_STATUS_KEYS(MOTA_PROTO_KEY_ENUM_) };
enum mota_decrypt_key { MOTA_DECRYPT_KEYS(MOTA_PROTO_KEY_ENUM_) };
#undef MOTA_PROTO_KEY_ENUM_

/* array lengths both sides rely on */
#define MOTA_INFO_PROFILE_ITEMS 12u  /* MOTA_INFO_PROFILE */
#define MOTA_STATUS_COUNTER_ITEMS 6u /* MOTA_STATUS_COUNTERS */
#define MOTA_STATUS_TIMING_ITEMS 7u  /* MOTA_STATUS_TIMING */
#define MOTA_MINFO_ABOUT_ITEMS 6u    /* MOTA_MINFO_ABOUT */
#define MOTA_DECRYPT_KEKS_MAX 4u     /* KEK ids in HELLO key 18 at the most (a record holds 2) */

#endif /* MOTA_PROTO_KEYS_H */
