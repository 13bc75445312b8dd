/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SUIT_Encryption_Info (draft-ietf-suit-firmware-encryption): the COSE_Encrypt
 * (tag 96, detached ciphertext) a manifest carries in parameter 19 for an
 * encrypted payload. Defined once for the device, which decodes it and
 * unwraps the content key (CEK) before it erases anything, and for the host,
 * which encodes it. Bounded and allocation-free: results are slices into the
 * caller's buffer. Profile: content A128GCM (1) or A128CTR (-65534, RFC 9459);
 * 1 to MOTA_ENC_MAX_RECIPIENTS recipients, each A128KW (-3) with a pre-shared
 * key-encryption key (KEK) or ECDH-ES+A128KW (-29) on P-256 with the device's
 * key; every recipient's wrapped key is an AES-128 CEK (24 bytes).
 * docs/container-format.md gives the CDDL.
 */
#ifndef MOTA_ENCINFO_H
#define MOTA_ENCINFO_H

#include "mota/cipher.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOTA_COSE_TAG_ENCRYPT 96u
#define MOTA_ENC_MAX_RECIPIENTS 4u
#define MOTA_ENC_MAX_KID 32u          /* bytes of a recipient's key id */
#define MOTA_ENC_MAX_SALT 64u         /* bytes of an ECDH recipient's HKDF salt (COSE label -20) */
#define MOTA_ENC_MAX_INFO 768u        /* bytes of one SUIT_Encryption_Info */
#define MOTA_ENC_WRAPPED_LEN 24u      /* an AES-128 CEK wrapped with RFC 3394 */
#define MOTA_ENC_AAD_MAX 32u          /* Enc_structure bytes at the most */
#define MOTA_ENC_KDF_CONTEXT_MAX 128u /* COSE_KDF_Context bytes at the most */

/* COSE algorithm ids (IANA COSE Algorithms; A128CTR from RFC 9459) */
enum mota_enc_alg {
    MOTA_ENC_A128GCM = 1,
    MOTA_ENC_A128CTR = -65534,
    MOTA_ENC_A128KW = -3,
    MOTA_ENC_ECDH_ES_A128KW = -29,
};

/* COSE header labels and COSE_Key labels the profile reads */
enum mota_enc_label {
    MOTA_ENC_LABEL_ALG = 1,
    MOTA_ENC_LABEL_CRIT = 2,
    MOTA_ENC_LABEL_KID = 4,
    MOTA_ENC_LABEL_IV = 5,
    MOTA_ENC_LABEL_EPK = -1,   /* ephemeral key: a COSE_Key */
    MOTA_ENC_LABEL_SALT = -20, /* HKDF salt */
    MOTA_COSE_KEY_KTY = 1,     /* 2: EC2 */
    MOTA_COSE_KEY_CRV = -1,    /* 1: P-256 */
    MOTA_COSE_KEY_X = -2,
    MOTA_COSE_KEY_Y = -3,
};

struct mota_enc_recipient {
    int alg;                      /* MOTA_ENC_A128KW or MOTA_ENC_ECDH_ES_A128KW */
    const uint8_t *protected_hdr; /* the protected bstr's content, as sent (the KDF context covers it) */
    size_t protected_len;
    const uint8_t *kid; /* NULL when absent */
    size_t kid_len;
    const uint8_t *epk_x, *epk_y; /* ECDH: the ephemeral P-256 point, 32 bytes each */
    const uint8_t *salt;          /* ECDH: NULL when absent (an empty salt) */
    size_t salt_len;
    const uint8_t *wrapped; /* MOTA_ENC_WRAPPED_LEN bytes */
};

struct mota_enc_info {
    int alg;                      /* MOTA_ENC_A128GCM or MOTA_ENC_A128CTR */
    const uint8_t *protected_hdr; /* the body's protected bstr content: h'' or {1: alg} (the AAD covers it) */
    size_t protected_len;
    const uint8_t *iv; /* 12 bytes (GCM) or 16, the whole first counter block (CTR) */
    size_t iv_len;
    size_t n_recipients;
    struct mota_enc_recipient r[MOTA_ENC_MAX_RECIPIENTS];
};

/*
 * Decode a SUIT_Encryption_Info (the content of parameter 19's bstr).
 * MOTA_ERR_ENC_INFO for what is malformed or outside the profile, MOTA_ERR_ENC_ALG
 * for an algorithm the profile does not have, MOTA_ERR_COSE_CRIT for a crit
 * header, MOTA_ERR_ENC_EPK for an ephemeral key that is not an uncompressed
 * P-256 key (the point itself is checked when it is used). COSE header maps
 * are checked for repeats, not for key order: the draft's own manifests write
 * {-1, 4}. mota writes canonical order. A label twice in one map is
 * MOTA_ERR_CBOR_DUP_KEY, in both maps of a layer MOTA_ERR_COSE_DUP_LABEL; a
 * missing alg is MOTA_ERR_ENC_ALG; a label the profile does not read is
 * refused (MOTA_ERR_ENC_INFO), not skipped.
 */
int mota_enc_info_decode(const uint8_t *buf, size_t len, struct mota_enc_info *ei);

/*
 * The AAD the content cipher covers: Enc_structure ["Encrypt", protected, h'']
 * (RFC 9052 section 5.3); for CTR it is not used. *len bytes at out.
 */
int mota_enc_aad(const struct mota_enc_info *ei, uint8_t *out, size_t cap, size_t *len);

/*
 * An ECDH recipient's COSE_KDF_Context (RFC 9053 section 5.3, as the draft
 * fixes it): [A128KW, [nil,nil,nil], [nil,nil,nil], [128, protected,
 * 'SUIT Payload Encryption']]. MOTA_ERR_ARG for a KW recipient.
 */
int mota_enc_kdf_context(const struct mota_enc_recipient *r, uint8_t *out, size_t cap, size_t *len);

/* A pre-shared key-encryption key with its id. */
struct mota_kek {
    uint8_t kid[MOTA_ENC_MAX_KID];
    size_t kid_len;
    uint8_t k[MOTA_AES128_KEY_LEN];
};

/* The keys a device holds: KEKs and its P-256 key pair for ECDH (NULL if none). */
struct mota_enc_keys {
    const struct mota_kek *keks;
    size_t n_keks;
    const uint8_t *device_d;   /* 32 bytes, or NULL */
    const uint8_t *device_pub; /* 65 bytes (0x04 x y), or NULL */
    const uint8_t *device_kid; /* the id pack writes for this key, or NULL */
    size_t device_kid_len;
};

/*
 * The content key: the first recipient with a key here that unwraps it.
 * A recipient's kid selects a KEK (or must be the device key's id); without
 * a kid every key of the recipient's kind is tried. MOTA_ERR_ENC_NO_KEY when
 * no recipient has a key here, MOTA_ERR_ENC_UNWRAP when keys were tried and
 * none unwrapped, MOTA_ERR_ENC_EPK for an ephemeral point off the curve (when
 * no later recipient serves; it outranks UNWRAP and NO_KEY). Intermediate
 * secrets are wiped; cek is written only on success.
 */
int mota_enc_cek(const struct mota_enc_info *ei, const struct mota_enc_keys *keys, uint8_t cek[MOTA_AES128_KEY_LEN]);

/*
 * The KEK of an ECDH-ES+A128KW recipient: HKDF-SHA256(salt, x of d.pub, its
 * KDF context), 16 bytes. The device passes its key and the recipient's
 * ephemeral point; the sender its ephemeral key and the device's point.
 */
int mota_enc_ecdh_kek(const uint8_t d[32], const uint8_t pub[65], const struct mota_enc_recipient *r,
                      uint8_t kek[MOTA_AES128_KEY_LEN]);

/* The protected header of every ECDH recipient mota writes: {1: -29} */
extern const uint8_t mota_enc_ecdh_protected[4];

/* ---- encoder (host and tests): canonical CBOR ---- */

struct mota_enc_recipient_spec {
    int alg; /* MOTA_ENC_A128KW or MOTA_ENC_ECDH_ES_A128KW */
    const uint8_t *kid;
    size_t kid_len;  /* 0: no kid */
    uint8_t epk[65]; /* ECDH: the ephemeral public key, 0x04 x y */
    uint8_t wrapped[MOTA_ENC_WRAPPED_LEN];
};

struct mota_enc_info_spec {
    int alg;        /* MOTA_ENC_A128GCM or MOTA_ENC_A128CTR */
    uint8_t iv[16]; /* 12 bytes used for GCM */
    size_t n_recipients;
    struct mota_enc_recipient_spec r[MOTA_ENC_MAX_RECIPIENTS];
};

/*
 * Encode a SUIT_Encryption_Info as the draft's examples lay it out: GCM's alg
 * in the protected map, CTR's in the unprotected one with an empty protected
 * bstr; an ECDH recipient's protected map {1: -29} and its ephemeral key
 * under -1. mota_enc_info_decode reads back what this writes: a spec it would
 * refuse (no or too many recipients, a kid over MOTA_ENC_MAX_KID, an
 * ephemeral key not 0x04 x y, another alg) is MOTA_ERR_ARG.
 */
int mota_enc_info_encode(const struct mota_enc_info_spec *s, uint8_t *out, size_t cap, size_t *len);

#endif /* MOTA_ENCINFO_H */
