/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mota container: a SUIT envelope (CBOR tag 107) with a COSE_Sign1 ES256
 * authentication block, a manifest with a model-compatibility extension and
 * integrated payloads. Format: docs/container-format.md (CDDL).
 *
 * Decoding is bounded and allocation-free: all results are slices into the
 * caller's buffer, all counts are capped by the MOTA_CONTAINER_MAX_* limits.
 * The device path is, in this order:
 *   mota_envelope_decode()        structure of envelope + auth wrapper
 *   mota_envelope_authenticate()  manifest digest, then the signature
 *   mota_manifest_decode()        manifest, only once it is authentic
 *   mota_manifest_check_profile() what a mota model container must carry
 *   mota_payload_head() per payload, then stream + hash its content
 * mota_container_verify() runs all of it over a container held in memory.
 */
#ifndef MOTA_CONTAINER_H
#define MOTA_CONTAINER_H

#include "mota/compat.h"
#include "mota/crypto.h"
#include "mota/features.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOTA_CONTAINER_MAX_COMPONENTS 3u /* roles: code, params, selftest */
#define MOTA_CONTAINER_MAX_IDS 6u        /* identifiers: a role's image and its transport */
#define MOTA_CONTAINER_MAX_AUTH_BLOCKS 4u
#define MOTA_CONTAINER_MAX_AUTH 1024u       /* bytes of the authentication wrapper */
#define MOTA_CONTAINER_MAX_MANIFEST 8192u   /* bytes of the manifest */
#define MOTA_CONTAINER_MAX_COMPONENT_ID 32u /* bytes of one component identifier element */
#define MOTA_CONTAINER_MAX_TEXT 256u        /* bytes of one text field */
#define MOTA_CONTAINER_MAX_PAYLOAD_NAME 16u /* bytes of an integrated payload key */

#define MOTA_SUIT_TAG_ENVELOPE 107u
#define MOTA_COSE_TAG_SIGN1 18u
#define MOTA_COSE_ALG_ES256 (-7)
#define MOTA_COSE_ALG_ESP256 (-9) /* fully-specified ES256: same algorithm */
#define MOTA_SUIT_DIGEST_SHA256 (-16)

enum mota_component_role {
    MOTA_COMPONENT_OTHER = 0,
    MOTA_COMPONENT_CODE,     /* [h'636f6465'] "code": network_rel.bin */
    MOTA_COMPONENT_PARAMS,   /* [h'706172616d73'] "params": split params blob */
    MOTA_COMPONENT_SELFTEST, /* [h'73656c6674657374'] "selftest": self-test input */
};

struct mota_component {
    const uint8_t *id; /* encoded SUIT_Component_Identifier (CBOR array) */
    size_t id_len;
    enum mota_component_role role;
    bool has_digest, has_size, has_uri, has_vendor, has_class;
    uint8_t digest[MOTA_SHA256_LEN];
    uint64_t size;
    const char *uri; /* "#code": integrated payload key */
    size_t uri_len;
    uint8_t vendor_id[16], class_id[16];
    bool image_match; /* validate checks image-match */
    bool fetched;     /* install fetches its integrated payload (into its transport component, if it has one) */
    /* The two-component pattern: the payload is fetched into [role, 'transport'] and the image made from
     * it by suit-directive-copy with encryption info (encrypted) or by mota-directive-decompress
     * (compressed, and decrypted when encryption info is set). digest and size above are the image's
     * (what the device checks from flash), wire_* the transported bytes'. */
    bool transport;
    bool has_wire_digest, has_wire_size;
    uint64_t wire_size;
    uint8_t wire_digest[MOTA_SHA256_LEN];
    bool compressed; /* mota-directive-decompress (or -patch): a compressed stream (mota/decompress.h) */
    uint32_t z_alg, z_block;
    /* mota-directive-patch: the stream is the difference from the image the device runs in this role
     * (mota/delta.h), named by its digest and size; regions: packed records, checked by the profile */
    bool delta;
#if MOTA_FEATURE_DELTA /* a build without the patcher refuses the directive (MOTA_ERR_DELTA_OFF) */
    uint8_t src_digest[MOTA_SHA256_LEN];
    uint32_t src_size;
    const uint8_t *regions;
    size_t regions_len;
#endif
    bool encrypted;          /* suit-parameter-encryption-info: a SUIT_Encryption_Info (mota/encinfo.h) */
    const uint8_t *enc_info; /* its bytes, in the manifest */
    size_t enc_len;
    uint8_t pattern; /* the decoder's record of the pattern's steps (MOTA_PAT_*), for the profile */
};

/* Which side of a role's component pair a parameter or command went to */
#define MOTA_PAT_URI_IMAGE 0x01u   /* a URI on the image component */
#define MOTA_PAT_URI_WIRE 0x02u    /* a URI on the transport component */
#define MOTA_PAT_FETCH_IMAGE 0x04u /* fetch into the image component */
#define MOTA_PAT_FETCH_WIRE 0x08u  /* fetch into the transport component */
#define MOTA_PAT_MADE 0x10u        /* copy or decompress made the image from its transport */
#define MOTA_PAT_MADE_TWICE 0x20u  /* ... more than once */
#define MOTA_PAT_WIRE_MATCH 0x40u  /* image-match of the transport, after its fetch */

/* Bytes of a component's integrated payload: the transported ones. */
static inline uint64_t mota_component_wire_size(const struct mota_component *c)
{
    return c->transport ? c->wire_size : c->size;
}

struct mota_text {
    const char *description;
    size_t description_len; /* manifest-description (1) */
    const char *created;
    size_t created_len; /* mota-text-creation-time (-257): RFC 3339 UTC */
    const char *vendor_name;
    size_t vendor_name_len; /* component: vendor-name (1) */
    const char *model_name;
    size_t model_name_len; /* component: model-name (2) */
    const char *class_name;
    size_t class_name_len; /* component: model-info (4): the name the class id is UUID5(vendor id, .) of */
    const char *version;
    size_t version_len; /* component: component-version (6) */
};

struct mota_manifest {
    uint64_t version;
    uint64_t seq;
    size_t n_components;
    struct mota_component comp[MOTA_CONTAINER_MAX_COMPONENTS];
    bool checks_vendor, checks_class; /* in the shared sequence */
    bool has_validate, has_install, has_invoke, has_load, has_text;
    struct mota_text text;
    bool has_compat;
    struct mota_compat compat;
};

struct mota_auth_block {
    int alg;
    const uint8_t *protected_hdr; /* bstr content of the protected header */
    size_t protected_len;
    const uint8_t *kid; /* NULL if absent */
    size_t kid_len;
    const uint8_t *sig; /* 64 bytes; NULL when no_sig */
    bool no_sig;        /* an empty signature: left by `mota pack --unsigned` for `mota sign` */
};

struct mota_envelope {
    uint8_t digest[MOTA_SHA256_LEN]; /* signed SUIT_Digest of the manifest */
    const uint8_t *digest_enc;       /* encoded SUIT_Digest: the detached COSE payload */
    size_t digest_enc_len;
    size_t n_blocks;
    struct mota_auth_block blocks[MOTA_CONTAINER_MAX_AUTH_BLOCKS];
    const uint8_t *manifest_wrapped; /* bstr head + manifest: what the digest covers */
    size_t manifest_wrapped_len;
    const uint8_t *manifest; /* manifest content */
    size_t manifest_len;
    size_t head_len;   /* bytes from the start up to the end of the manifest */
    size_t n_payloads; /* envelope members after the manifest */
};

struct mota_trusted_key {
    uint8_t pub[MOTA_P256_PUB_LEN];
    uint8_t kid[MOTA_KEY_ID_LEN];
};

/*
 * Decode the envelope head (tag, map, authentication wrapper, manifest bstr)
 * from buf. Only the first head_len bytes are needed: with fewer, this
 * returns MOTA_ERR_CBOR_TRUNCATED and the caller may retry with more data.
 */
int mota_envelope_decode(const uint8_t *buf, size_t len, struct mota_envelope *env);

/*
 * Check the manifest digest, then the signatures: MOTA_OK once one
 * authentication block verifies with one of keys (selected by key id when
 * the block carries one). *key_index (may be NULL) names that key.
 * Blocks with an empty signature are skipped; when no block has a
 * signature the result is MOTA_ERR_UNSIGNED.
 */
int mota_envelope_authenticate(const struct mota_envelope *env, const struct mota_trusted_key *keys, size_t n_keys,
                               size_t *key_index);

/* Bytes of the Sig_structure mota_sig_structure writes for a valid envelope (its
 * protected header is at most 128 bytes, its SUIT_Digest 36). */
#define MOTA_SIG_STRUCTURE_MAX 256u

/*
 * The COSE Sig_structure of block b (RFC 9052 section 4.4, detached payload):
 * ["Signature1", protected, h'', bstr(SUIT_Digest)], the bytes an ES256
 * signature covers (through their SHA-256). MOTA_ERR_CBOR_TOO_LARGE if out
 * is too small.
 */
int mota_sig_structure(const struct mota_envelope *env, const struct mota_auth_block *b, uint8_t *out, size_t cap,
                       size_t *len);

/* Decode an authenticated manifest. */
int mota_manifest_decode(const struct mota_envelope *env, struct mota_manifest *m);

/*
 * A decoded manifest's slices point into the buffer it was decoded from
 * (from, len bytes): point them at a copy of those bytes at `to` instead,
 * e.g. from a head received in RAM to the same head written to flash.
 */
void mota_manifest_rebase(struct mota_manifest *m, const uint8_t *from, size_t len, const uint8_t *to);

/* The mota model-container profile: compat data, code component, payload URIs... */
int mota_manifest_check_profile(const struct mota_manifest *m);

/* Component whose URI names integrated payload `name`, or NULL. */
const struct mota_component *mota_manifest_find_payload(const struct mota_manifest *m, const char *name,
                                                        size_t name_len);

/*
 * Decode an integrated payload's head (tstr key, then the bstr head) at buf;
 * the content need not be present. *head_len bytes precede the content.
 */
int mota_payload_head(const uint8_t *buf, size_t len, const char **name, size_t *name_len, uint64_t *size,
                      size_t *head_len);

/* Bytes of the canonical head of an integrated payload (key and bstr head);
 * 0 for a role without a payload name. */
size_t mota_payload_head_size(enum mota_component_role role, uint64_t size);

/*
 * The npu-epochs summary (container-format.md, mota_compat key -1; protocol.md,
 * model-info key 17): one encoding for the manifest and the device's answers.
 * get fails the decoder (MOTA_ERR_COMPAT_FIELD) on a malformed or inconsistent one.
 */
struct mota_cbor_enc;
struct mota_cbor_dec;
void mota_epoch_summary_put(struct mota_cbor_enc *e, const struct mota_epoch_summary *s);
void mota_epoch_summary_get(struct mota_cbor_dec *d, struct mota_epoch_summary *s);

/* Result of a full verification, for reports. */
struct mota_verify_result {
    struct mota_envelope env;
    struct mota_manifest manifest;
    size_t key_index;
    bool mota_profile; /* carries integrated payloads or compat data */
    size_t n_payloads_checked;
};

/*
 * Everything, over a whole container in memory: structure, digest,
 * signature, manifest, profile (for mota containers), every payload's size
 * and digest, no trailing bytes.
 */
int mota_container_verify(const uint8_t *buf, size_t len, const struct mota_trusted_key *keys, size_t n_keys,
                          struct mota_verify_result *res);

/*
 * What mota_container_verify checks after the manifest, but the payload
 * digests: the mota profile, each integrated payload's head, order, name
 * and size, none missing, nothing after the last. For a container whose
 * envelope and manifest res already holds (mota_envelope_decode,
 * mota_manifest_decode): a structure check without a trusted key.
 */
int mota_container_check_payloads(const uint8_t *buf, size_t len, struct mota_verify_result *res);

/*
 * Everything mota_container_verify checks but the signature: structure, the
 * manifest's digest, manifest, profile, every payload's size and digest. For a
 * host that forwards containers to devices which hold the trusted keys (a
 * gateway): a copy damaged on its way is refused before it is sent.
 */
int mota_container_check_digests(const uint8_t *buf, size_t len, struct mota_verify_result *res);

/*
 * A transformed component's image from its payload (wire, wire_len bytes: the
 * transport component's) into out (c->size bytes, and room for the decrypted
 * stream after them when it is compressed and encrypted): decrypted with
 * cek when it is encrypted (NULL otherwise), then decompressed when it is
 * compressed, and checked against the image's signed digest: MOTA_OK, a
 * MOTA_ERR_ENC_* / MOTA_ERR_DECRYPT_TAG / MOTA_ERR_DECOMP_* code, or
 * MOTA_ERR_DECRYPT_IMAGE_DIGEST / MOTA_ERR_DECOMP_IMAGE_DIGEST. The payload's
 * own digest is mota_container_verify's. Host use: the whole payload in memory.
 */
int mota_payload_reconstruct(const struct mota_component *c, const uint8_t *wire, size_t wire_len, const uint8_t *cek,
                             uint8_t *out, size_t cap);

/* ... and of a delta payload (c->delta), with the image it predicts from: src, the source the manifest names
 * (else MOTA_ERR_DELTA_SOURCE). Not a delta: src is not looked at. */
int mota_payload_reconstruct_from(const struct mota_component *c, const uint8_t *wire, size_t wire_len,
                                  const uint8_t *cek, const uint8_t *src, size_t src_len, uint8_t *out, size_t cap);

/* Fill a trusted-key slot from a public key (computes the key id). */
void mota_trusted_key_set(struct mota_trusted_key *k, const uint8_t pub[MOTA_P256_PUB_LEN]);

/* Component role from an encoded identifier. */
enum mota_component_role mota_component_role_of(const uint8_t *id, size_t id_len);

/* ---- encoder (host) ---- */

struct mota_pack_component {
    enum mota_component_role role;
    uint8_t digest[MOTA_SHA256_LEN]; /* of the image */
    uint64_t size;
    bool compressed;         /* the payload is the image compressed (mota/decompress.h) */
    uint32_t z_alg, z_block; /* MOTA_DECOMP_LZ4, _DEFLATE or _LZMA; image bytes per block */
    bool delta;              /* compressed, it encodes the difference from src (mota/delta.h) */
    uint8_t src_digest[MOTA_SHA256_LEN];
    uint32_t src_size;
    const uint8_t *regions; /* packed records (MOTA_DELTA_REGION_LEN each), regions_len bytes */
    size_t regions_len;
    bool encrypted;          /* the payload is encrypted (after compression) */
    const uint8_t *enc_info; /* its SUIT_Encryption_Info (mota_enc_info_encode), enc_len bytes */
    size_t enc_len;
    uint64_t wire_size; /* compressed or encrypted: bytes of the payload (a GCM tag included) */
    uint8_t wire_digest[MOTA_SHA256_LEN];
};

struct mota_pack_spec {
    uint64_t seq;
    uint8_t vendor_id[16], class_id[16];
    size_t n_components; /* code first, then params, then selftest */
    struct mota_pack_component comp[MOTA_CONTAINER_MAX_COMPONENTS];
    const char *description, *created, *vendor_name, *model_name, *version; /* may be NULL */
    const char *class_name;    /* may be NULL: the class's name (model-info text) */
    struct mota_compat compat; /* strings: NUL-terminated or with lengths set */
};

/* Signs the 32-byte Sig_structure hash; returns MOTA_OK or an error code. */
typedef int (*mota_sign_cb)(void *ctx, const uint8_t hash[MOTA_SHA256_LEN], uint8_t sig[MOTA_P256_SIG_LEN]);

/*
 * Encode the envelope head (tag, map, authentication wrapper, manifest) into
 * out; the payloads follow, each as mota_payload_head_encode() + content,
 * where mota_container_layout puts them.
 * Deterministic: the same spec and key give the same bytes. sign NULL
 * writes an unsigned container: the COSE_Sign1 (kid included) with an
 * empty signature, for mota_container_sign_head later.
 */
int mota_container_encode_head(const struct mota_pack_spec *spec, const uint8_t kid[MOTA_KEY_ID_LEN], mota_sign_cb sign,
                               void *sign_ctx, uint8_t *out, size_t cap, size_t *len);

/*
 * The head of an unsigned container (in: at least its head) with sig put
 * into its one COSE_Sign1: the same bytes mota_container_encode_head gives
 * with a signer that returns sig. Its payloads follow unchanged (they start
 * at the unsigned envelope's head_len in the input). The caller computes
 * sig over mota_sig_structure() of the unsigned envelope, which signing does
 * not change. MOTA_ERR_ALREADY_SIGNED unless the container has exactly one
 * authentication block, with an empty signature.
 */
int mota_container_sign_head(const uint8_t *in, size_t in_len, const uint8_t sig[MOTA_P256_SIG_LEN], uint8_t *out,
                             size_t cap, size_t *len);

/* Head of an integrated payload: tstr key then bstr head of size bytes. */
int mota_payload_head_encode(enum mota_component_role role, uint64_t size, uint8_t *out, size_t cap, size_t *len);

/* Bytes of an integrated payload's head at the most: the key "#selftest" and a 9-byte bstr head. */
#define MOTA_PAYLOAD_HEAD_MAX 24u

/* One integrated payload's place in a container. */
struct mota_container_part {
    uint64_t head_off; /* its head (mota_payload_head_encode), head_len bytes */
    uint8_t head[MOTA_PAYLOAD_HEAD_MAX];
    size_t head_len;
    uint64_t off, len; /* its bytes: the image, or the image transformed (wire_size) */
};

/* Where each part of a container goes. */
struct mota_container_layout {
    size_t head_len;   /* the envelope head (mota_container_encode_head), from offset 0 */
    size_t n_payloads; /* spec->n_components */
    struct mota_container_part payload[MOTA_CONTAINER_MAX_COMPONENTS];
    uint64_t len; /* the whole container */
};

/*
 * The layout of the container spec describes, decided before its digests and
 * its signature are known (they have fixed sizes): the envelope head first,
 * as mota_container_encode_head will encode it with kid and a signer
 * (signed) or none (an unsigned container), then each component's integrated
 * payload in the spec's order (code, params, self-test), its head and then
 * its bytes: wire_size of them for a compressed or encrypted
 * component, else size. A writer
 * puts the payloads at their offsets while it hashes them, then the head,
 * encoded once the digests are in, at 0: head_len bytes of it.
 */
int mota_container_layout(const struct mota_pack_spec *spec, const uint8_t kid[MOTA_KEY_ID_LEN], bool signed_,
                          struct mota_container_layout *out);

/* "#code", "#params", "#selftest"; NULL for OTHER. */
const char *mota_component_payload_name(enum mota_component_role role);
/* "code", "params", "selftest" (the identifier's single element). */
const char *mota_component_name(enum mota_component_role role);

/* UUID version 5 (RFC 4122, SHA-1) of name in namespace ns: SUIT vendor/class ids. */
void mota_uuid5(const uint8_t ns[16], const void *name, size_t name_len, uint8_t out[16]);
extern const uint8_t mota_uuid_ns_dns[16];

#endif /* MOTA_CONTAINER_H */
