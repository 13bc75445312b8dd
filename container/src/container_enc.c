/* SPDX-License-Identifier: Apache-2.0 */
/* Host-side container encoder: deterministic SUIT envelope with COSE_Sign1. */
#include "mota/container.h"

#include "mota/cbor.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"
#include "mota/decompress.h"
#include "mota/encinfo.h"
#include "mota/suit_keys.h"

#include <string.h>

const uint8_t mota_uuid_ns_dns[16] = {0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1,
                                      0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8};

void mota_uuid5(const uint8_t ns[16], const void *name, size_t name_len, uint8_t out[16])
{
    uint8_t buf[16 + 256];
    uint8_t h[20];
    if (name_len > 256)
        name_len = 256;
    memcpy(buf, ns, 16);
    memcpy(buf + 16, name, name_len);
    mota_sha1(buf, 16 + name_len, h);
    memcpy(out, h, 16);
    out[6] = (uint8_t)((out[6] & 0x0f) | 0x50); /* version 5 */
    out[8] = (uint8_t)((out[8] & 0x3f) | 0x80); /* RFC 4122 variant */
}

static void put_component_id(struct mota_cbor_enc *e, enum mota_component_role role)
{
    const char *name = mota_component_name(role);
    mota_cbor_put_array(e, 1);
    mota_cbor_put_bstr(e, name, strlen(name));
}

static bool transformed(const struct mota_pack_component *c)
{
    return c->compressed || c->encrypted;
}

/* Identifiers: the images first, in the spec's order, then a transport for each transformed one */
static size_t n_ids(const struct mota_pack_spec *s)
{
    size_t n = s->n_components;
    for (size_t i = 0; i < s->n_components; i++)
        n += transformed(&s->comp[i]);
    return n;
}

/* The index of image i's transport component */
static size_t transport_index(const struct mota_pack_spec *s, size_t i)
{
    size_t t = s->n_components;
    for (size_t j = 0; j < i; j++)
        t += transformed(&s->comp[j]);
    return t;
}

static void put_components(struct mota_cbor_enc *e, const struct mota_pack_spec *s)
{
    mota_cbor_put_array(e, n_ids(s));
    for (size_t i = 0; i < s->n_components; i++)
        put_component_id(e, s->comp[i].role);
    for (size_t i = 0; i < s->n_components; i++) {
        if (!transformed(&s->comp[i]))
            continue;
        const char *name = mota_component_name(s->comp[i].role);
        mota_cbor_put_array(e, 2);
        mota_cbor_put_bstr(e, name, strlen(name));
        mota_cbor_put_bstr(e, MOTA_SUIT_TRANSPORT, strlen(MOTA_SUIT_TRANSPORT));
    }
}

static void put_digest(struct mota_cbor_enc *e, const uint8_t d[MOTA_SHA256_LEN])
{
    mota_cbor_put_array(e, 2);
    mota_cbor_put_int(e, MOTA_SUIT_DIGEST_SHA256);
    mota_cbor_put_bstr(e, d, MOTA_SHA256_LEN);
}

static void put_set_index(struct mota_cbor_enc *e, const struct mota_pack_spec *s, size_t i)
{
    if (n_ids(s) > 1) {
        mota_cbor_put_uint(e, MOTA_SUIT_CMD_SET_INDEX);
        mota_cbor_put_uint(e, i);
    }
}

/* vendor, class, image-digest and image-size of one identifier */
static void put_identity(struct mota_cbor_enc *e, const struct mota_pack_spec *s, const uint8_t *digest, uint64_t size)
{
    mota_cbor_put_uint(e, MOTA_SUIT_CMD_OVERRIDE_PARAMS);
    mota_cbor_put_map(e, 4);
    mota_cbor_put_uint(e, MOTA_PAR_VENDOR);
    mota_cbor_put_bstr(e, s->vendor_id, 16);
    mota_cbor_put_uint(e, MOTA_PAR_CLASS);
    mota_cbor_put_bstr(e, s->class_id, 16);
    mota_cbor_put_uint(e, MOTA_PAR_DIGEST);
    size_t o = mota_cbor_bstr_open(e);
    put_digest(e, digest);
    mota_cbor_bstr_close(e, o);
    mota_cbor_put_uint(e, MOTA_PAR_SIZE);
    mota_cbor_put_uint(e, size);
}

static void put_shared(struct mota_cbor_enc *e, const struct mota_pack_spec *s)
{
    size_t ids = n_ids(s);
    mota_cbor_put_array(e, ids * 2 + 4 + (ids > 1 ? ids * 2 + 2 : 0));
    for (size_t i = 0; i < s->n_components; i++) {
        put_set_index(e, s, i);
        put_identity(e, s, s->comp[i].digest, s->comp[i].size);
    }
    for (size_t i = 0; i < s->n_components; i++) {
        if (transformed(&s->comp[i])) {
            put_set_index(e, s, transport_index(s, i));
            put_identity(e, s, s->comp[i].wire_digest, s->comp[i].wire_size);
        }
    }
    if (ids > 1) {
        mota_cbor_put_uint(e, MOTA_SUIT_CMD_SET_INDEX);
        mota_cbor_put_bool(e, true);
    }
    mota_cbor_put_uint(e, MOTA_SUIT_CMD_VENDOR);
    mota_cbor_put_uint(e, MOTA_SUIT_REPORT_ALL);
    mota_cbor_put_uint(e, MOTA_SUIT_CMD_CLASS);
    mota_cbor_put_uint(e, MOTA_SUIT_REPORT_ALL);
}

/* image-match of the stored images: all of them, not their transports */
static void put_validate(struct mota_cbor_enc *e, const struct mota_pack_spec *s)
{
    size_t ids = n_ids(s), n = s->n_components;
    mota_cbor_put_array(e, ids > 1 ? 4 : 2);
    if (ids > 1) {
        mota_cbor_put_uint(e, MOTA_SUIT_CMD_SET_INDEX);
        if (ids == n) {
            mota_cbor_put_bool(e, true);
        } else if (n == 1) {
            mota_cbor_put_uint(e, 0);
        } else {
            mota_cbor_put_array(e, n);
            for (size_t i = 0; i < n; i++)
                mota_cbor_put_uint(e, i);
        }
    }
    mota_cbor_put_uint(e, MOTA_SUIT_CMD_IMAGE_MATCH);
    mota_cbor_put_uint(e, MOTA_SUIT_REPORT_ALL);
}

/* fetch into component i, then image-match it */
static void put_fetch(struct mota_cbor_enc *e, const struct mota_pack_spec *s, size_t i, enum mota_component_role role)
{
    put_set_index(e, s, i);
    mota_cbor_put_uint(e, MOTA_SUIT_CMD_OVERRIDE_PARAMS);
    mota_cbor_put_map(e, 1);
    mota_cbor_put_uint(e, MOTA_PAR_URI);
    mota_cbor_put_tstr(e, mota_component_payload_name(role));
    mota_cbor_put_uint(e, MOTA_SUIT_CMD_FETCH);
    mota_cbor_put_uint(e, MOTA_SUIT_REPORT_FAILURE);
    mota_cbor_put_uint(e, MOTA_SUIT_CMD_IMAGE_MATCH);
    mota_cbor_put_uint(e, MOTA_SUIT_REPORT_ALL);
}

/* mota-directive-patch's source (the image the device runs in this role) and regions */
static void put_patch_source(struct mota_cbor_enc *e, const struct mota_pack_component *c)
{
    mota_cbor_put_uint(e, MOTA_P_SOURCE);
    size_t o = mota_cbor_bstr_open(e);
    put_digest(e, c->src_digest);
    mota_cbor_bstr_close(e, o);
    mota_cbor_put_uint(e, MOTA_P_SOURCE_SIZE);
    mota_cbor_put_uint(e, c->src_size);
    mota_cbor_put_uint(e, MOTA_P_REGIONS);
    mota_cbor_put_bstr(e, c->regions, c->regions_len);
}

/* Image i made from its transport: copy with encryption info, or mota-directive-decompress (which also
 * decrypts when encryption info is set), then image-match */
static void put_make(struct mota_cbor_enc *e, const struct mota_pack_spec *s, size_t i)
{
    const struct mota_pack_component *c = &s->comp[i];
    put_set_index(e, s, i);
    mota_cbor_put_uint(e, MOTA_SUIT_CMD_OVERRIDE_PARAMS);
    mota_cbor_put_map(e, c->encrypted ? 2 : 1);
    if (c->encrypted) {
        mota_cbor_put_uint(e, MOTA_PAR_ENCRYPTION_INFO);
        mota_cbor_put_bstr(e, c->enc_info, c->enc_len);
    }
    mota_cbor_put_uint(e, MOTA_PAR_SOURCE);
    mota_cbor_put_uint(e, transport_index(s, i));
    if (c->compressed) {
        mota_cbor_put_int(e, c->delta ? MOTA_SUIT_CMD_PATCH : MOTA_SUIT_CMD_DECOMPRESS);
        size_t o = mota_cbor_bstr_open(e);
        mota_cbor_put_map(e, c->delta ? 5 : 2);
        mota_cbor_put_uint(e, MOTA_Z_ALG);
        mota_cbor_put_uint(e, c->z_alg);
        mota_cbor_put_uint(e, MOTA_Z_BLOCK);
        mota_cbor_put_uint(e, c->z_block);
        if (c->delta)
            put_patch_source(e, c);
        mota_cbor_bstr_close(e, o);
    } else {
        mota_cbor_put_uint(e, MOTA_SUIT_CMD_COPY);
        mota_cbor_put_uint(e, MOTA_SUIT_REPORT_ALL);
    }
    mota_cbor_put_uint(e, MOTA_SUIT_CMD_IMAGE_MATCH);
    mota_cbor_put_uint(e, MOTA_SUIT_REPORT_ALL);
}

static void put_install(struct mota_cbor_enc *e, const struct mota_pack_spec *s)
{
    size_t items = 0, per = n_ids(s) > 1 ? 8 : 6;
    for (size_t i = 0; i < s->n_components; i++)
        items += transformed(&s->comp[i]) ? 16 : per;
    mota_cbor_put_array(e, items);
    for (size_t i = 0; i < s->n_components; i++) {
        if (!transformed(&s->comp[i])) {
            put_fetch(e, s, i, s->comp[i].role);
            continue;
        }
        put_fetch(e, s, transport_index(s, i), s->comp[i].role);
        put_make(e, s, i);
    }
}

static bool has(const char *s)
{
    return s != NULL && s[0] != '\0';
}

static void put_text(struct mota_cbor_enc *e, const struct mota_pack_spec *s)
{
    size_t top = (size_t)has(s->description) + (size_t)has(s->created);
    size_t comp =
        (size_t)has(s->vendor_name) + (size_t)has(s->model_name) + (size_t)has(s->class_name) + (size_t)has(s->version);
    mota_cbor_put_map(e, 1);
    mota_cbor_put_tstr(e, "en");
    mota_cbor_put_map(e, top + (comp > 0));
    if (has(s->description)) {
        mota_cbor_put_uint(e, MOTA_TEXT_DESCRIPTION);
        mota_cbor_put_tstr(e, s->description);
    }
    if (has(s->created)) {
        mota_cbor_put_int(e, MOTA_TEXT_CREATED);
        mota_cbor_put_tstr(e, s->created);
    }
    if (comp > 0) {
        put_component_id(e, MOTA_COMPONENT_CODE);
        mota_cbor_put_map(e, comp);
        if (has(s->vendor_name)) {
            mota_cbor_put_uint(e, MOTA_CTEXT_VENDOR_NAME);
            mota_cbor_put_tstr(e, s->vendor_name);
        }
        if (has(s->model_name)) {
            mota_cbor_put_uint(e, MOTA_CTEXT_MODEL_NAME);
            mota_cbor_put_tstr(e, s->model_name);
        }
        if (has(s->class_name)) {
            mota_cbor_put_uint(e, MOTA_CTEXT_MODEL_INFO);
            mota_cbor_put_tstr(e, s->class_name);
        }
        if (has(s->version)) {
            mota_cbor_put_uint(e, MOTA_CTEXT_VERSION);
            mota_cbor_put_tstr(e, s->version);
        }
    }
}

/* mota-compat keys 1 to 9: what the model was built for (runtime, CPU, FPU, ABI, security, runtime flags) */
static void put_compat_target(struct mota_cbor_enc *e, const struct mota_compat *c)
{
    mota_cbor_put_uint(e, MOTA_COMPAT_RELOC);
    mota_cbor_put_array(e, 2);
    mota_cbor_put_uint(e, c->reloc_major);
    mota_cbor_put_uint(e, c->reloc_minor);
    mota_cbor_put_uint(e, MOTA_COMPAT_CPU);
    mota_cbor_put_uint(e, c->cpu_part);
    mota_cbor_put_uint(e, MOTA_COMPAT_FPU);
    mota_cbor_put_bool(e, c->fpu);
    mota_cbor_put_uint(e, MOTA_COMPAT_ABI);
    mota_cbor_put_uint(e, c->float_abi);
    mota_cbor_put_uint(e, MOTA_COMPAT_SECURE);
    mota_cbor_put_bool(e, c->secure);
    mota_cbor_put_uint(e, MOTA_COMPAT_DBG);
    mota_cbor_put_bool(e, c->dbg_info);
    mota_cbor_put_uint(e, MOTA_COMPAT_ASYNC);
    mota_cbor_put_bool(e, c->async);
    mota_cbor_put_uint(e, MOTA_COMPAT_TOOLCHAIN);
    mota_cbor_put_uint(e, c->toolchain);
    if (c->has_runtime_version) {
        mota_cbor_put_uint(e, MOTA_COMPAT_RTVER);
        mota_cbor_put_array(e, 3);
        mota_cbor_put_uint(e, c->rt_major);
        mota_cbor_put_uint(e, c->rt_minor);
        mota_cbor_put_uint(e, c->rt_micro);
    }
}

/* keys 10 to 16: the model's name and the memory it needs */
static void put_compat_memory(struct mota_cbor_enc *e, const struct mota_compat *c)
{
    mota_cbor_put_uint(e, MOTA_COMPAT_CNAME);
    mota_cbor_put_tstr_n(e, c->c_name, c->c_name_len);
    mota_cbor_put_uint(e, MOTA_COMPAT_ACTS);
    mota_cbor_put_uint(e, c->acts_size);
    mota_cbor_put_uint(e, MOTA_COMPAT_PARAMS);
    mota_cbor_put_uint(e, c->params_size);
    mota_cbor_put_uint(e, MOTA_COMPAT_EXTRAM);
    mota_cbor_put_uint(e, c->ext_ram_size);
    mota_cbor_put_uint(e, MOTA_COMPAT_XIP);
    mota_cbor_put_uint(e, c->exec_ram_xip);
    mota_cbor_put_uint(e, MOTA_COMPAT_COPY);
    mota_cbor_put_uint(e, c->exec_ram_copy);
    mota_cbor_put_uint(e, MOTA_COMPAT_MODE);
    mota_cbor_put_uint(e, c->install_mode);
}

/* keys 17, 19, 20: present when the model has them */
static void put_compat_optional(struct mota_cbor_enc *e, const struct mota_compat *c)
{
    if (c->has_struct_sizes) {
        mota_cbor_put_uint(e, MOTA_COMPAT_STRUCTS);
        mota_cbor_put_uint(e, c->struct_sizes);
    }
    if (c->selftest.present) {
        mota_cbor_put_uint(e, MOTA_COMPAT_SELFTEST);
        mota_cbor_put_map(e, 3);
        mota_cbor_put_uint(e, MOTA_SELFTEST_DIGEST);
        put_digest(e, c->selftest.output_digest);
        mota_cbor_put_uint(e, MOTA_SELFTEST_SIZE);
        mota_cbor_put_uint(e, c->selftest.output_size);
        mota_cbor_put_uint(e, MOTA_SELFTEST_LATENCY);
        mota_cbor_put_uint(e, c->selftest.max_latency_us);
    }
    if (c->rt_desc != NULL && c->rt_desc_len > 0) {
        mota_cbor_put_uint(e, MOTA_COMPAT_RTDESC);
        mota_cbor_put_tstr_n(e, c->rt_desc, c->rt_desc_len);
    }
    if (c->has_epochs) { /* a negative key: devices that do not know it skip it */
        mota_cbor_put_int(e, MOTA_COMPAT_EPOCHS);
        mota_epoch_summary_put(e, &c->epochs);
    }
}

static void put_compat(struct mota_cbor_enc *e, const struct mota_compat *c)
{
    size_t n = 15 + (size_t)c->has_runtime_version + (size_t)c->has_struct_sizes + (size_t)c->selftest.present +
               (size_t)(c->rt_desc != NULL && c->rt_desc_len > 0) + (size_t)c->has_epochs;
    mota_cbor_put_map(e, n);
    put_compat_target(e, c);
    put_compat_memory(e, c);
    put_compat_optional(e, c);
}

static void put_manifest(struct mota_cbor_enc *e, const struct mota_pack_spec *s)
{
    size_t o;
    bool text = has(s->description) || has(s->created) || has(s->vendor_name) || has(s->model_name) ||
                has(s->version) || has(s->class_name);
    mota_cbor_put_map(e, 6 + (size_t)text);
    mota_cbor_put_uint(e, MOTA_MAN_VERSION);
    mota_cbor_put_uint(e, 1); /* the only SUIT manifest version */
    mota_cbor_put_uint(e, MOTA_MAN_SEQ);
    mota_cbor_put_uint(e, s->seq);
    mota_cbor_put_uint(e, MOTA_MAN_COMMON);
    o = mota_cbor_bstr_open(e);
    mota_cbor_put_map(e, 2);
    mota_cbor_put_uint(e, MOTA_COMMON_COMPONENTS);
    put_components(e, s);
    mota_cbor_put_uint(e, MOTA_COMMON_SHARED);
    size_t o2 = mota_cbor_bstr_open(e);
    put_shared(e, s);
    mota_cbor_bstr_close(e, o2);
    mota_cbor_bstr_close(e, o);
    mota_cbor_put_uint(e, MOTA_MAN_VALIDATE);
    o = mota_cbor_bstr_open(e);
    put_validate(e, s);
    mota_cbor_bstr_close(e, o);
    mota_cbor_put_uint(e, MOTA_MAN_INSTALL);
    o = mota_cbor_bstr_open(e);
    put_install(e, s);
    mota_cbor_bstr_close(e, o);
    if (text) {
        mota_cbor_put_uint(e, MOTA_MAN_TEXT);
        o = mota_cbor_bstr_open(e);
        put_text(e, s);
        mota_cbor_bstr_close(e, o);
    }
    mota_cbor_put_int(e, MOTA_MAN_COMPAT);
    o = mota_cbor_bstr_open(e);
    put_compat(e, &s->compat);
    mota_cbor_bstr_close(e, o);
}

static int check_spec(const struct mota_pack_spec *s)
{
    if (s->n_components == 0 || s->n_components > MOTA_CONTAINER_MAX_COMPONENTS)
        return MOTA_ERR_COMPONENTS;
    if (s->comp[0].role != MOTA_COMPONENT_CODE)
        return MOTA_ERR_COMPONENTS;
    for (size_t i = 1; i < s->n_components; i++) {
        /* roles ascend so that payload keys come out in canonical order */
        if (s->comp[i].role <= s->comp[i - 1].role || s->comp[i].role > MOTA_COMPONENT_SELFTEST)
            return MOTA_ERR_COMPONENTS;
    }
    for (size_t i = 0; i < s->n_components; i++) {
        const struct mota_pack_component *c = &s->comp[i];
        if ((c->encrypted && (c->enc_info == NULL || c->enc_len == 0 || c->enc_len > MOTA_ENC_MAX_INFO)) ||
            (transformed(c) && c->wire_size == 0))
            return MOTA_ERR_ARG;
    }
    if (s->compat.c_name == NULL || s->compat.c_name_len == 0)
        return MOTA_ERR_COMPAT_FIELD;
    return MOTA_OK;
}

#define HEAD_RESERVE 512u /* tag, map, authentication wrapper, manifest bstr head */

/* SUIT_Authentication with one COSE_Sign1 block; sig NULL: an empty signature (unsigned). */
static void put_auth(struct mota_cbor_enc *a, const uint8_t *digest_enc, size_t digest_enc_len, const uint8_t *prot,
                     size_t prot_len, const uint8_t *sig)
{
    mota_cbor_put_array(a, 2);
    mota_cbor_put_bstr(a, digest_enc, digest_enc_len);
    size_t o = mota_cbor_bstr_open(a);
    mota_cbor_put_tag(a, MOTA_COSE_TAG_SIGN1);
    mota_cbor_put_array(a, 4);
    mota_cbor_put_bstr(a, prot, prot_len);
    mota_cbor_put_map(a, 0);
    mota_cbor_put_null(a);
    mota_cbor_put_bstr(a, sig, sig != NULL ? MOTA_P256_SIG_LEN : 0);
    mota_cbor_bstr_close(a, o);
}

/* Tag, map head and the authentication wrapper member; the manifest member follows. */
static void put_envelope_head(struct mota_cbor_enc *h, size_t members, const uint8_t *auth, size_t auth_len)
{
    mota_cbor_put_tag(h, MOTA_SUIT_TAG_ENVELOPE);
    mota_cbor_put_map(h, members);
    mota_cbor_put_uint(h, MOTA_ENV_AUTH);
    mota_cbor_put_bstr(h, auth, auth_len);
    mota_cbor_put_uint(h, MOTA_ENV_MANIFEST);
}

/* The SUIT_Digest of the bstr-wrapped manifest (m bytes at out), encoded; *mhead: the wrapper's head. */
static void digest_manifest(const uint8_t *man, size_t len, uint8_t mhead[9], size_t *mhead_len, uint8_t digest_enc[64],
                            size_t *digest_enc_len)
{
    struct mota_cbor_enc h;
    struct mota_sha256 ctx;
    uint8_t md[MOTA_SHA256_LEN];
    mota_cbor_enc_init(&h, mhead, 9);
    mota_cbor_put_bstr_head(&h, len);
    *mhead_len = h.len;
    mota_sha256_init(&ctx);
    mota_sha256_update(&ctx, mhead, *mhead_len);
    mota_sha256_update(&ctx, man, len);
    mota_sha256_finish(&ctx, md);
    mota_cbor_enc_init(&h, digest_enc, 64);
    put_digest(&h, md);
    *digest_enc_len = h.len;
}

/* The COSE_Sign1's protected header {alg: ES256, kid} and, with a signer, its signature over the
 * Sig_structure of the detached SUIT_Digest (the same Sig_structure the verifier builds). */
static int sign_digest(const uint8_t kid[MOTA_KEY_ID_LEN], const uint8_t *digest_enc, size_t digest_enc_len,
                       mota_sign_cb sign, void *sign_ctx, uint8_t prot[64], size_t *prot_len,
                       uint8_t sig[MOTA_P256_SIG_LEN])
{
    struct mota_cbor_enc h;
    uint8_t tbs[MOTA_SIG_STRUCTURE_MAX], hash[MOTA_SHA256_LEN];
    size_t tbs_len;
    mota_cbor_enc_init(&h, prot, 64);
    mota_cbor_put_map(&h, 2);
    mota_cbor_put_uint(&h, MOTA_COSE_LABEL_ALG);
    mota_cbor_put_int(&h, MOTA_COSE_ALG_ES256);
    mota_cbor_put_uint(&h, MOTA_COSE_LABEL_KID);
    mota_cbor_put_bstr(&h, kid, MOTA_KEY_ID_LEN);
    *prot_len = h.len;
    if (h.err != 0)
        return MOTA_ERR_INTERNAL;
    if (sign == NULL)
        return MOTA_OK;
    struct mota_envelope env = {.digest_enc = digest_enc, .digest_enc_len = digest_enc_len};
    struct mota_auth_block blk = {.protected_hdr = prot, .protected_len = *prot_len};
    if (mota_sig_structure(&env, &blk, tbs, sizeof(tbs), &tbs_len) != MOTA_OK)
        return MOTA_ERR_INTERNAL;
    mota_sha256(tbs, tbs_len, hash);
    return sign(sign_ctx, hash, sig);
}

int mota_container_encode_head(const struct mota_pack_spec *spec, const uint8_t kid[MOTA_KEY_ID_LEN], mota_sign_cb sign,
                               void *sign_ctx, uint8_t *out, size_t cap, size_t *len)
{
    int ret = MOTA_ERR_ARG;
    struct mota_cbor_enc m, a, h;
    uint8_t auth[HEAD_RESERVE], prot[64], digest_enc[64], sig[MOTA_P256_SIG_LEN], mhead[9];
    size_t mhead_len, digest_enc_len, prot_len;

    if (spec == NULL || kid == NULL || out == NULL || len == NULL || cap <= HEAD_RESERVE)
        return ret;
    if ((ret = check_spec(spec)) != MOTA_OK)
        return ret;
    /* the manifest, encoded after room for everything that precedes it */
    mota_cbor_enc_init(&m, out + HEAD_RESERVE, cap - HEAD_RESERVE);
    put_manifest(&m, spec);
    if (m.err != 0)
        return m.err;
    if (m.len > MOTA_CONTAINER_MAX_MANIFEST)
        return MOTA_ERR_ENV_TOO_LARGE;
    digest_manifest(out + HEAD_RESERVE, m.len, mhead, &mhead_len, digest_enc, &digest_enc_len);
    if ((ret = sign_digest(kid, digest_enc, digest_enc_len, sign, sign_ctx, prot, &prot_len, sig)) != MOTA_OK)
        return ret;
    mota_cbor_enc_init(&a, auth, sizeof(auth));
    put_auth(&a, digest_enc, digest_enc_len, prot, prot_len, sign != NULL ? sig : NULL);
    /* the envelope's head in front, then the manifest moved up to it */
    mota_cbor_enc_init(&h, out, HEAD_RESERVE);
    put_envelope_head(&h, 2 + spec->n_components, auth, a.len);
    mota_cbor_put_raw(&h, mhead, mhead_len);
    if (a.err != 0 || h.err != 0)
        return MOTA_ERR_INTERNAL;
    memmove(out + h.len, out + HEAD_RESERVE, m.len);
    *len = h.len + m.len;
    return MOTA_OK;
}

int mota_payload_head_encode(enum mota_component_role role, uint64_t size, uint8_t *out, size_t cap, size_t *len)
{
    struct mota_cbor_enc e;
    const char *name = mota_component_payload_name(role);
    if (name == NULL || out == NULL || len == NULL)
        return MOTA_ERR_ARG;
    mota_cbor_enc_init(&e, out, cap);
    mota_cbor_put_tstr(&e, name);
    mota_cbor_put_bstr_head(&e, (size_t)size);
    if (e.err != 0)
        return e.err;
    *len = e.len;
    return MOTA_OK;
}

/* Stands in for the signer while the head is measured: a signature's bytes do not change its length. */
static int zero_sign(void *ctx, const uint8_t hash[MOTA_SHA256_LEN], uint8_t sig[MOTA_P256_SIG_LEN])
{
    (void)ctx;
    (void)hash;
    memset(sig, 0, MOTA_P256_SIG_LEN);
    return MOTA_OK;
}

int mota_container_layout(const struct mota_pack_spec *spec, const uint8_t kid[MOTA_KEY_ID_LEN], bool signed_,
                          struct mota_container_layout *out)
{
    uint8_t head[MOTA_CONTAINER_MAX_MANIFEST + 1024]; /* measured, then dropped: the writer encodes it again */
    int ret;
    if (spec == NULL || kid == NULL || out == NULL)
        return MOTA_ERR_ARG;
    memset(out, 0, sizeof(*out));
    if ((ret = mota_container_encode_head(spec, kid, signed_ ? zero_sign : NULL, NULL, head, sizeof(head),
                                          &out->head_len)) != MOTA_OK)
        return ret;
    uint64_t off = out->head_len;
    for (size_t i = 0; i < spec->n_components; i++) {
        const struct mota_pack_component *c = &spec->comp[i];
        struct mota_container_part *p = &out->payload[i];
        p->len = transformed(c) ? c->wire_size : c->size;
        if ((ret = mota_payload_head_encode(c->role, p->len, p->head, sizeof(p->head), &p->head_len)) != MOTA_OK)
            return ret;
        p->head_off = off;
        p->off = off + p->head_len;
        off = p->off + p->len;
    }
    out->n_payloads = spec->n_components;
    out->len = off;
    return MOTA_OK;
}

int mota_container_sign_head(const uint8_t *in, size_t in_len, const uint8_t sig[MOTA_P256_SIG_LEN], uint8_t *out,
                             size_t cap, size_t *len)
{
    int ret = MOTA_ERR_ARG;
    struct mota_envelope env;
    struct mota_cbor_enc a, h;
    uint8_t auth[HEAD_RESERVE];

    if (in == NULL || sig == NULL || out == NULL || len == NULL)
        goto out;
    if ((ret = mota_envelope_decode(in, in_len, &env)) != MOTA_OK)
        goto out;
    ret = MOTA_ERR_ALREADY_SIGNED;
    if (env.n_blocks != 1 || !env.blocks[0].no_sig)
        goto out;
    /* the unprotected map is kept as pack writes it (empty): the signed bytes do not cover it, and a
     * signer adds nothing there */
    mota_cbor_enc_init(&a, auth, sizeof(auth));
    put_auth(&a, env.digest_enc, env.digest_enc_len, env.blocks[0].protected_hdr, env.blocks[0].protected_len, sig);
    mota_cbor_enc_init(&h, out, cap);
    put_envelope_head(&h, 2 + env.n_payloads, auth, a.len);
    mota_cbor_put_raw(&h, env.manifest_wrapped, env.manifest_wrapped_len);
    ret = a.err != 0 ? MOTA_ERR_INTERNAL : h.err;
    if (ret != MOTA_OK)
        goto out;
    *len = h.len;
out:
    return ret;
}
