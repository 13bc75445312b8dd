/* SPDX-License-Identifier: Apache-2.0 */
/* The integrated payloads of a container, as the host reads them (wire bytes and images) and as pack
 * encrypts them (draft-ietf-suit-firmware-encryption: mota/encinfo.h). */
#ifndef MOTA_TOOL_PAYLOADS_H
#define MOTA_TOOL_PAYLOADS_H

#include "mota/container.h"
#include "mota/encinfo.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The payload of the component with `role` in a container whose envelope and manifest r holds and
 * whose payloads were checked (mota_container_check_payloads or _verify): MOTA_OK, its component and
 * its bytes as sent, or MOTA_ERR_PAYLOAD_MISSING. */
int tool_payload_find(const uint8_t *buf, size_t len, const struct mota_verify_result *r, enum mota_component_role role,
                      const struct mota_component **comp, const uint8_t **wire, size_t *wire_len);

/* A transformed component's image rebuilt from its payload by the device's code (mota_payload_reconstruct:
 * decrypted with cek when it is encrypted, NULL otherwise; decompressed; checked against the image's signed
 * digest) into a malloc'd *out of c->size bytes (the caller frees it). MOTA_OK or the refusal. */
int tool_payload_rebuild(const struct mota_component *c, const uint8_t *wire, size_t wire_len, const uint8_t *cek,
                         uint8_t **out);

/* ... a delta payload's with the image it predicts from (src, src_len: the source its manifest names). */
int tool_payload_rebuild_from(const struct mota_component *c, const uint8_t *wire, size_t wire_len, const uint8_t *cek,
                              const uint8_t *src, size_t src_len, uint8_t **out);

/* A component's image: its payload itself, or the payload rebuilt (tool_payload_rebuild) into a malloc'd
 * *owned (the caller frees it; NULL when nothing was allocated). An encrypted one takes its content key
 * from keys (mota_enc_cek): MOTA_ERR_ENC_NO_KEY without keys, or when none is a recipient's,
 * MOTA_ERR_ENC_UNWRAP when none unwraps it. */
int tool_payload_image(const struct mota_component *c, const uint8_t *wire, size_t wire_len,
                       const struct mota_enc_keys *keys, const uint8_t **img, size_t *img_len, uint8_t **owned);

/* After mota_container_verify: every transformed payload rebuilds to its signed image (size and digest),
 * an encrypted one with keys (NULL: none), and *unchecked counts the encrypted ones left unchecked for
 * want of keys and the deltas (rebuilt by a device from its source model). MOTA_OK, or the first refusal, with the component in *failed. */
int tool_verify_images(const uint8_t *buf, size_t len, const struct mota_verify_result *r,
                       const struct mota_enc_keys *keys, const struct mota_component **failed, size_t *unchecked);

/* ---- encryption (mota pack) ---- */

/* A recipient of a container's content key, as pack's command line names it. */
struct tool_recipient {
    bool ecdh; /* --encrypt-to: a device's P-256 public key file; else --encrypt-kek: a KEK file */
    const char *path;
};

/* One container's encryption: a random content key (CEK) wrapped for every recipient, the same
 * recipients for each payload. Holds the CEK: tool_enc_wipe it. */
struct tool_enc {
    uint8_t cek[MOTA_AES128_KEY_LEN];
    struct mota_enc_info_spec spec;                          /* alg and recipients; each payload gets its own IV */
    uint8_t kids[MOTA_ENC_MAX_RECIPIENTS][MOTA_ENC_MAX_KID]; /* what spec.r[].kid points at */
    char who[MOTA_ENC_MAX_RECIPIENTS * 96]; /* the recipients for people: algorithms and key ids, no key */
};

/* A new CEK for content alg (MOTA_ENC_A128GCM or _A128CTR), wrapped for the n recipients: with each KEK
 * file's key (A128KW), and for each device public key with a fresh ephemeral P-256 key (ECDH-ES+A128KW;
 * the recipient's kid: the device key's id). Secrets read or derived are wiped. MOTA_OK, or the reason,
 * said with the file it concerns (MOTA_ERR_KEK_INVALID, MOTA_ERR_KEY_INVALID, MOTA_ERR_IO,
 * MOTA_ERR_RANDOM...). */
int tool_enc_start(struct tool_enc *e, int alg, const struct tool_recipient *r, size_t n);

/* in[0..n) encrypted under the CEK and a fresh random IV into a malloc'd *out (n bytes, then GCM's
 * 16-byte tag), described by its SUIT_Encryption_Info in info (MOTA_ENC_MAX_INFO bytes). */
int tool_enc_payload(const struct tool_enc *e, const uint8_t *in, size_t n, uint8_t **out, size_t *out_len,
                     uint8_t *info, size_t *info_len);

void tool_enc_wipe(struct tool_enc *e);

/* Names for people: "A128GCM", "A128CTR", "A128KW", "ECDH-ES+A128KW" ("unknown" otherwise). */
const char *tool_enc_alg_name(int alg);

/* A kid to show: printable UTF-8 text (no control characters), or else NULL (show it in hex). */
bool tool_kid_is_text(const uint8_t *kid, size_t len);

#endif
