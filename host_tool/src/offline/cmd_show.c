/* SPDX-License-Identifier: Apache-2.0 */
/* inspect and verify: what a container holds, and whether it is valid (text or JSON); with the keys of an
 * encrypted one (--kek, --device-key), whether its images decrypt to their signed digests. */
#include "cmds.h"
#include "compress.h"
#include "epochs_report.h"
#include "payloads.h"

#include "common/files.h"
#include "common/json.h"
#include "common/kek.h"
#include "common/util.h"

#include "mota/cipher.h"
#include "mota/container.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"
#include "mota/decompress.h"
#include "mota/delta.h"
#include "mota/nbin.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 8
#define MAX_KEKS MOTA_ENC_MAX_RECIPIENTS

/* The keys an encrypted container's images are decrypted with: --kek files and --device-key. */
struct dec_keys {
    struct mota_kek keks[MAX_KEKS];
    struct mota_p256_key device;
    uint8_t device_kid[MOTA_KEY_ID_LEN];
    struct mota_enc_keys view;
};

/* What the images' check found: the encrypted ones left unchecked for want of a key. */
struct image_check {
    size_t unchecked;
    const struct mota_component *failed;
};

static void uuid_print(FILE *f, const uint8_t u[16])
{
    char s[37];
    fputs(tool_uuid_str(u, s), f);
}

/* A delta's regions: [start, len, src] each, as its manifest has them (little-endian records, checked). */
static void region_list_json(struct json *j, const struct mota_component *c)
{
    json_arr(j, "region_list");
    for (size_t i = 0; i + MOTA_DELTA_REGION_LEN <= c->regions_len; i += MOTA_DELTA_REGION_LEN) {
        json_arr(j, NULL);
        for (size_t f = 0; f < 3; f++) {
            const uint8_t *p = c->regions + i + 4 * f;
            json_uint(j, NULL, (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        }
        json_arr_end(j);
    }
    json_arr_end(j);
}

static void uuid_json(struct json *j, const char *key, const uint8_t u[16])
{
    char s[37];
    json_str(j, key, tool_uuid_str(u, s));
}

/* The envelope, its signatures, the manifest and its texts. */
static void manifest_text(const char *path, const struct mota_verify_result *r)
{
    const struct mota_manifest *m = &r->manifest;
    printf("container:   %s\n", path);
    printf("envelope:    SUIT (tag 107), %zu authentication block(s), %zu integrated payload(s)\n", r->env.n_blocks,
           r->env.n_payloads);
    for (size_t b = 0; b < r->env.n_blocks; b++) {
        const struct mota_auth_block *blk = &r->env.blocks[b];
        printf("signature:   COSE_Sign1 %s, key id ", blk->alg == MOTA_COSE_ALG_ES256 ? "ES256" : "ESP256");
        if (blk->kid)
            tool_hex(stdout, blk->kid, blk->kid_len);
        else
            printf("(none)");
        printf("%s\n", blk->no_sig ? "; UNSIGNED: `mota sign` signs it, nothing accepts it before" : "");
    }
    printf("manifest:    version %llu, sequence number %llu, digest ", (unsigned long long)m->version,
           (unsigned long long)m->seq);
    tool_hex(stdout, r->env.digest, sizeof(r->env.digest));
    printf("\n");
    const struct {
        const char *label, *s;
        size_t n;
    } texts[] = {{"model:       ", m->text.model_name, m->text.model_name_len},
                 {"version:     ", m->text.version, m->text.version_len},
                 {"vendor:      ", m->text.vendor_name, m->text.vendor_name_len},
                 {"class:       ", m->text.class_name, m->text.class_name_len},
                 {"description: ", m->text.description, m->text.description_len},
                 {"created:     ", m->text.created, m->text.created_len}};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) { /* the signer's text: escaped */
        if (texts[i].s == NULL)
            continue;
        fputs(texts[i].label, stdout);
        tool_put_text(stdout, texts[i].s, texts[i].n);
        fputc('\n', stdout);
    }
}

/* An ECDH recipient's ephemeral public key, as a point and by its key id. */
static void epk_point(const struct mota_enc_recipient *r, uint8_t point[MOTA_P256_PUB_LEN], uint8_t id[MOTA_KEY_ID_LEN])
{
    point[0] = 0x04; /* uncompressed */
    memcpy(point + 1, r->epk_x, 32);
    memcpy(point + 33, r->epk_y, 32);
    mota_key_id(point, id);
}

/* A recipient's kid for people: quoted text when it is printable, else hex; "(none)". */
static const char *kid_str(const struct mota_enc_recipient *r, char *buf, size_t cap)
{
    if (r->kid == NULL)
        return "(none)";
    if (!tool_kid_is_text(r->kid, r->kid_len))
        return tool_hex_str(r->kid, r->kid_len, buf, cap);
    snprintf(buf, cap, "'%.*s'", (int)r->kid_len, (const char *)r->kid);
    return buf;
}

/* Who can decrypt a payload, with which algorithms: the recipients' algorithms and key ids, an ECDH
 * sender's ephemeral key by its id. The wrapped keys are not shown (nor is any key: the host holds none). */
static void encryption_text(const struct mota_component *comp)
{
    struct mota_enc_info ei;
    int ret = mota_enc_info_decode(comp->enc_info, comp->enc_len, &ei);
    if (!comp->compressed) {
        printf("  sent as:   %llu bytes (the image encrypted), sha256 ", (unsigned long long)comp->wire_size);
        tool_hex(stdout, comp->wire_digest, sizeof(comp->wire_digest));
        printf("\n");
    }
    if (ret != MOTA_OK) {
        printf("  encrypted: its encryption info does not decode (%s)\n", mota_err_name(ret));
        return;
    }
    printf("  encrypted: %s, iv ", tool_enc_alg_name(ei.alg));
    tool_hex(stdout, ei.iv, ei.iv_len);
    printf(", %zu recipient%s\n", ei.n_recipients, ei.n_recipients > 1 ? "s" : "");
    for (size_t i = 0; i < ei.n_recipients; i++) {
        const struct mota_enc_recipient *r = &ei.r[i];
        char kid[2 * MOTA_ENC_MAX_KID + 3];
        printf("  recipient: %s, kid %s", tool_enc_alg_name(r->alg), kid_str(r, kid, sizeof(kid)));
        if (r->alg == MOTA_ENC_ECDH_ES_A128KW && r->epk_x != NULL) {
            uint8_t point[MOTA_P256_PUB_LEN], id[MOTA_KEY_ID_LEN];
            epk_point(r, point, id);
            printf(", ephemeral key id ");
            tool_hex(stdout, id, sizeof(id));
        }
        printf("\n");
    }
}

static void components_text(const struct mota_manifest *m)
{
    for (size_t i = 0; i < m->n_components; i++) {
        const struct mota_component *comp = &m->comp[i];
        printf("component %zu: %s", i, mota_component_name(comp->role));
        if (comp->has_size)
            printf(", %llu bytes", (unsigned long long)comp->size);
        if (comp->has_uri)
            printf(", payload %.*s", (int)comp->uri_len, comp->uri);
        printf("\n");
        if (comp->has_digest) {
            printf("  sha256:    ");
            tool_hex(stdout, comp->digest, sizeof(comp->digest));
            printf("\n");
        }
        if (comp->compressed) {
            printf("  sent as:   %s, %llu bytes (%.3fx), %u-byte blocks, sha256 ",
                   comp->z_alg == MOTA_DECOMP_LZ4    ? "LZ4 frame"
                   : comp->z_alg == MOTA_DECOMP_LZMA ? "LZMA blocks"
                                                     : "deflate stream",
                   (unsigned long long)comp->wire_size,
                   comp->wire_size ? (double)comp->size / (double)comp->wire_size : 0.0, (unsigned)comp->z_block);
            tool_hex(stdout, comp->wire_digest, sizeof(comp->wire_digest));
            printf("\n");
        }
        if (comp->delta) {
            printf("  delta:     from the %u-byte image sha256 ", (unsigned)comp->src_size);
            tool_hex(stdout, comp->src_digest, sizeof(comp->src_digest));
            printf(" (what the device must run), %zu region%s\n", comp->regions_len / MOTA_DELTA_REGION_LEN,
                   comp->regions_len == MOTA_DELTA_REGION_LEN ? "" : "s");
        }
        if (comp->encrypted)
            encryption_text(comp);
        if (comp->has_vendor) {
            printf("  vendor id: ");
            uuid_print(stdout, comp->vendor_id);
            printf("\n");
        }
        if (comp->has_class) {
            printf("  class id:  ");
            uuid_print(stdout, comp->class_id);
            printf("\n");
        }
    }
}

static void compat_text(const struct mota_manifest *m)
{
    const struct mota_compat *c = &m->compat;
    if (!m->has_compat) {
        printf("compatibility: none (generic SUIT manifest, not a mota model container)\n");
        return;
    }
    printf("compatibility:\n");
    printf("  c_name:          %.*s\n", (int)c->c_name_len, c->c_name);
    printf("  reloc runtime:   %u.%u (%s)\n", c->reloc_major, c->reloc_minor,
           c->reloc_major == 8   ? "Neural-ART NPU"
           : c->reloc_major == 2 ? "X-CUBE-AI legacy"
                                 : "unknown");
    printf("  cpu:             0x%03X %s\n", c->cpu_part, mota_nbin_cpu_name((uint16_t)c->cpu_part));
    printf("  fpu:             %s, float ABI %s\n", c->fpu ? "yes" : "no", mota_nbin_float_abi_name(c->float_abi));
    printf("  secure:          %s\n", c->secure ? "yes" : "no");
    printf("  dbg-info, async: %s, %s\n", c->dbg_info ? "yes" : "no", c->async ? "yes" : "no");
    printf("  toolchain:       %u %s\n", c->toolchain, mota_nbin_toolchain_name(c->toolchain));
    if (c->has_runtime_version)
        printf("  LL_ATON:         %u.%u.%u\n", c->rt_major, c->rt_minor, c->rt_micro);
    if (c->rt_desc)
        printf("  runtime:         %.*s\n", (int)c->rt_desc_len, c->rt_desc);
    if (c->has_struct_sizes)
        printf("  struct sizes:    0x%04X\n", c->struct_sizes);
    printf("  activations:     %llu bytes\n", (unsigned long long)c->acts_size);
    printf("  params:          %llu bytes\n", (unsigned long long)c->params_size);
    printf("  external RAM:    %llu bytes\n", (unsigned long long)c->ext_ram_size);
    printf("  exec RAM:        XIP %llu, COPY %llu bytes\n", (unsigned long long)c->exec_ram_xip,
           (unsigned long long)c->exec_ram_copy);
    printf("  install mode:    %s\n", tool_install_mode(c->install_mode));
    if (c->has_epochs) {
        printf("  npu epochs:      ");
        epochs_summary_line(stdout, &c->epochs);
        printf(" (informational)\n");
    }
    if (c->selftest.present) {
        printf("  self-test:       output %llu bytes, max latency %llu us, output sha256 ",
               (unsigned long long)c->selftest.output_size, (unsigned long long)c->selftest.max_latency_us);
        tool_hex(stdout, c->selftest.output_digest, MOTA_SHA256_LEN);
        printf("\n");
    }
}

struct epoch_views {
    const struct epochs_view *cur, *old; /* NULL: not asked */
};

static void report_text(const char *path, const struct mota_verify_result *r, bool verified, int status,
                        const struct epoch_views *ev, const struct image_check *ic)
{
    manifest_text(path, r);
    components_text(&r->manifest);
    compat_text(&r->manifest);
    if (verified)
        printf("verification: %s\n", status == 0 ? "OK" : mota_err_name(status));
    else
        printf("verification: not done (mota verify --key checks signature and digests)\n");
    size_t encrypted = 0, deltas = 0;
    for (size_t i = 0; i < r->manifest.n_components; i++) {
        encrypted += r->manifest.comp[i].encrypted;
        deltas += r->manifest.comp[i].delta;
    }
    if (verified && deltas > 0)
        printf("image digests of %zu delta payload%s not checked: a device rebuilds them from its source model and "
               "checks them from flash\n",
               deltas, deltas > 1 ? "s" : "");
    if (verified && ic->unchecked > deltas)
        printf("image digests not checked: encrypted (%zu payload%s; --kek or --device-key decrypts them)\n",
               ic->unchecked - deltas, ic->unchecked - deltas > 1 ? "s" : "");
    else if (verified && encrypted > 0)
        printf("image digests checked: %zu encrypted payload%s decrypted with the keys given\n", encrypted,
               encrypted > 1 ? "s" : "");
    if (ev->cur != NULL)
        epochs_text(stdout, ev->cur);
    if (ev->old != NULL)
        epochs_compare_text(stdout, ev->old, ev->cur);
}

static void signatures_json(struct json *j, const struct mota_envelope *env)
{
    json_arr(j, "signatures");
    for (size_t b = 0; b < env->n_blocks; b++) {
        json_obj(j, NULL);
        json_str(j, "alg", env->blocks[b].alg == MOTA_COSE_ALG_ES256 ? "ES256" : "ESP256");
        if (env->blocks[b].kid)
            json_hex(j, "kid", env->blocks[b].kid, env->blocks[b].kid_len);
        else
            json_null(j, "kid");
        json_bool(j, "signed", !env->blocks[b].no_sig); /* false: pack --unsigned, waiting for mota sign */
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void texts_json(struct json *j, const struct mota_manifest *m)
{
    json_obj(j, "text");
#define TXT(k, f)                                                                                                      \
    if (m->text.f)                                                                                                     \
        json_strn(j, k, m->text.f, m->text.f##_len);                                                                   \
    else                                                                                                               \
        json_null(j, k)
    TXT("model_name", model_name);
    TXT("version", version);
    TXT("vendor_name", vendor_name);
    TXT("class_name", class_name);
    TXT("description", description);
    TXT("created", created);
#undef TXT
    json_obj_end(j);
}

static void recipient_json(struct json *j, const struct mota_enc_recipient *r)
{
    json_obj(j, NULL);
    json_str(j, "algorithm", tool_enc_alg_name(r->alg));
    if (r->kid != NULL)
        json_hex(j, "kid", r->kid, r->kid_len);
    else
        json_null(j, "kid");
    if (r->kid != NULL && tool_kid_is_text(r->kid, r->kid_len))
        json_strn(j, "kid_text", (const char *)r->kid, r->kid_len);
    else
        json_null(j, "kid_text");
    if (r->alg == MOTA_ENC_ECDH_ES_A128KW && r->epk_x != NULL) {
        uint8_t point[MOTA_P256_PUB_LEN], id[MOTA_KEY_ID_LEN];
        epk_point(r, point, id);
        json_hex(j, "ephemeral_key", point, sizeof(point));
        json_hex(j, "ephemeral_key_id", id, sizeof(id));
    } else {
        json_null(j, "ephemeral_key");
        json_null(j, "ephemeral_key_id");
    }
    json_obj_end(j);
}

/* "encryption": the content algorithm, IV, payload and recipients; never a key. */
static void encryption_json(struct json *j, const struct mota_component *comp)
{
    struct mota_enc_info ei;
    if (!comp->encrypted || mota_enc_info_decode(comp->enc_info, comp->enc_len, &ei) != MOTA_OK) {
        json_null(j, "encryption"); /* a container whose info does not decode is refused before a report */
        return;
    }
    json_obj(j, "encryption");
    json_str(j, "algorithm", tool_enc_alg_name(ei.alg));
    json_hex(j, "iv", ei.iv, ei.iv_len);
    json_uint(j, "size", comp->wire_size);
    json_hex(j, "sha256", comp->wire_digest, MOTA_SHA256_LEN);
    json_arr(j, "recipients");
    for (size_t i = 0; i < ei.n_recipients; i++)
        recipient_json(j, &ei.r[i]);
    json_arr_end(j);
    json_obj_end(j);
}

static void components_json(struct json *j, const struct mota_manifest *m)
{
    json_arr(j, "components");
    for (size_t i = 0; i < m->n_components; i++) {
        const struct mota_component *comp = &m->comp[i];
        json_obj(j, NULL);
        json_str(j, "role", mota_component_name(comp->role));
        json_hex(j, "id_cbor", comp->id, comp->id_len);
        if (comp->has_size)
            json_uint(j, "size", comp->size);
        else
            json_null(j, "size");
        if (comp->has_digest)
            json_hex(j, "sha256", comp->digest, MOTA_SHA256_LEN);
        else
            json_null(j, "sha256");
        if (comp->has_uri)
            json_strn(j, "payload", comp->uri, comp->uri_len);
        else
            json_null(j, "payload");
        if (comp->compressed) {
            json_obj(j, "compression");
            json_str(j, "algorithm", comp->z_alg == MOTA_DECOMP_LZ4 ? "lz4-frame" : tool_compress_name(comp->z_alg));
            json_uint(j, "block", comp->z_block);
            json_uint(j, "size", comp->wire_size);
            json_hex(j, "sha256", comp->wire_digest, MOTA_SHA256_LEN);
            json_obj_end(j);
        } else {
            json_null(j, "compression");
        }
        if (comp->delta) {
            json_obj(j, "delta");
            json_hex(j, "source_sha256", comp->src_digest, MOTA_SHA256_LEN);
            json_uint(j, "source_size", comp->src_size);
            json_uint(j, "regions", comp->regions_len / MOTA_DELTA_REGION_LEN);
            region_list_json(j, comp);
            json_obj_end(j);
        } else {
            json_null(j, "delta");
        }
        encryption_json(j, comp);
        if (comp->has_vendor)
            uuid_json(j, "vendor_id", comp->vendor_id);
        else
            json_null(j, "vendor_id");
        if (comp->has_class)
            uuid_json(j, "class_id", comp->class_id);
        else
            json_null(j, "class_id");
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void compat_json(struct json *j, const struct mota_manifest *m)
{
    const struct mota_compat *c = &m->compat;
    if (!m->has_compat) {
        json_null(j, "compat");
        return;
    }
    json_obj(j, "compat");
    json_uint(j, "reloc_major", c->reloc_major);
    json_uint(j, "reloc_minor", c->reloc_minor);
    json_uint(j, "cpu_part", c->cpu_part);
    json_str(j, "cpu", mota_nbin_cpu_name((uint16_t)c->cpu_part));
    json_bool(j, "fpu", c->fpu);
    json_str(j, "float_abi", mota_nbin_float_abi_name(c->float_abi));
    json_bool(j, "secure", c->secure);
    json_bool(j, "dbg_info", c->dbg_info);
    json_bool(j, "async", c->async);
    json_str(j, "toolchain", mota_nbin_toolchain_name(c->toolchain));
    if (c->has_runtime_version) {
        char v[32];
        snprintf(v, sizeof(v), "%u.%u.%u", c->rt_major, c->rt_minor, c->rt_micro);
        json_str(j, "ll_aton_version", v);
    } else {
        json_null(j, "ll_aton_version");
    }
    if (c->rt_desc)
        json_strn(j, "runtime_desc", c->rt_desc, c->rt_desc_len);
    else
        json_null(j, "runtime_desc");
    if (c->has_struct_sizes)
        json_uint(j, "struct_sizes", c->struct_sizes);
    else
        json_null(j, "struct_sizes");
    json_strn(j, "c_name", c->c_name, c->c_name_len);
    json_uint(j, "activations_size", c->acts_size);
    json_uint(j, "params_size", c->params_size);
    json_uint(j, "ext_ram_size", c->ext_ram_size);
    json_uint(j, "exec_ram_xip", c->exec_ram_xip);
    json_uint(j, "exec_ram_copy", c->exec_ram_copy);
    json_str(j, "install_mode", tool_install_mode(c->install_mode));
    if (c->selftest.present) {
        json_obj(j, "selftest");
        json_hex(j, "output_sha256", c->selftest.output_digest, MOTA_SHA256_LEN);
        json_uint(j, "output_size", c->selftest.output_size);
        json_uint(j, "max_latency_us", c->selftest.max_latency_us);
        json_obj_end(j);
    } else {
        json_null(j, "selftest");
    }
    epochs_summary_json(j, "npu_epochs", c->has_epochs ? &c->epochs : NULL);
    json_obj_end(j);
}

static void report_json(const char *cmd, const char *path, const struct mota_verify_result *r, bool verified,
                        int status, const struct epoch_views *ev, const struct image_check *ic)
{
    const struct mota_manifest *m = &r->manifest;
    struct json j;
    json_doc(&j, stdout, cmd, false);
    json_reason(&j, status);
    json_str(&j, "container", path);
    json_str(&j, "detail", "");
    json_bool(&j, "verified", verified); /* signature and every payload digest checked (a key was given) */
    json_bool(&j, "images_checked", verified && ic->unchecked == 0); /* false: encrypted, and no key given */
    json_bool(&j, "valid", status == 0);
    json_uint(&j, "manifest_version", m->version);
    json_uint(&j, "seq", m->seq);
    json_hex(&j, "digest", r->env.digest, MOTA_SHA256_LEN);
    signatures_json(&j, &r->env);
    texts_json(&j, m);
    components_json(&j, m);
    compat_json(&j, m);
    if (ev->cur != NULL)
        epochs_json(&j, ev->cur);
    if (ev->old != NULL)
        epochs_compare_json(&j, ev->old, ev->cur);
    json_end(&j);
}

/* MOTA_OK, or the reason (said on stderr) of the key file *bad */
static int load_keys(char **paths, size_t n, struct mota_trusted_key *keys, const char **bad)
{
    for (size_t i = 0; i < n; i++) {
        struct mota_p256_key k;
        int ret = tool_load_key(paths[i], &k);
        *bad = paths[i];
        if (ret != MOTA_OK)
            return ret;
        mota_trusted_key_set(&keys[i], k.pub);
        memset(&k, 0, sizeof(k));
    }
    return MOTA_OK;
}

/* --kek files and --device-key into k (none: an empty view); MOTA_OK, or the reason (said on stderr) of
 * the file *bad, given with option *bad_opt. */
static int load_dec_keys(char **kek_paths, size_t n_keks, const char *device, struct dec_keys *k, const char **bad,
                         const char **bad_opt)
{
    int ret = MOTA_OK;
    memset(k, 0, sizeof(*k));
    for (size_t i = 0; i < n_keks && ret == MOTA_OK; i++) {
        *bad = kek_paths[i];
        *bad_opt = "--kek";
        if ((ret = tool_kek_read(kek_paths[i], &k->keks[i])) == MOTA_ERR_KEK_INVALID)
            tool_fail(ret, "--kek %s", kek_paths[i]); /* tool_map says why a file cannot be read */
    }
    k->view = (struct mota_enc_keys){.keks = k->keks, .n_keks = n_keks};
    if (ret != MOTA_OK || device == NULL)
        return ret;
    *bad = device;
    *bad_opt = "--device-key";
    if ((ret = tool_load_key(device, &k->device)) != MOTA_OK) /* said with the path */
        return ret;
    if (!k->device.has_private)
        return tool_fail(MOTA_ERR_KEY_INVALID,
                         "--device-key %s: a public key; decrypting takes the device's private key", device);
    mota_key_id(k->device.pub, k->device_kid); /* the kid pack --encrypt-to gives its recipient */
    k->view.device_d = k->device.d;
    k->view.device_pub = k->device.pub;
    k->view.device_kid = k->device_kid;
    k->view.device_kid_len = sizeof(k->device_kid);
    return MOTA_OK;
}

static void show_help(bool verify)
{
    if (verify)
        printf("usage: mota verify --key PUBLIC.pem [--key ...] [--kek FILE ...] [--device-key PRIV.pem]\n"
               "                   [--json] [--quiet] CONTAINER\n\n"
               "Full check: envelope structure, manifest digest, signature by one of the\n"
               "given keys (public or private PEM/DER), manifest semantics, and the size\n"
               "and SHA-256 of every integrated payload; a compressed payload decoded to\n"
               "its image's size and digest. An encrypted payload's image is checked only\n"
               "with a key of one of its recipients (else: \"image digests not checked:\n"
               "encrypted\"):\n"
               "  --kek FILE           a key-encryption key (keygen --kek; repeatable, %u)\n"
               "  --device-key FILE    a device's P-256 private key (pack --encrypt-to)\n"
               "Exit codes: 0 valid; 1 rejected (the reason name is printed on stderr);\n"
               "2 usage error; 3 unreadable container or key file.\n",
               MAX_KEKS);
    else
        printf("usage: mota inspect [--json] [--key PUBLIC.pem] [--epochs [--baseline OLD]] CONTAINER\n\n"
               "Prints the manifest, components, compatibility data and self-test of a\n"
               "container. Without --key it checks the structure (envelope, manifest, the\n"
               "mota profile, the framing and size of every payload) but not the signature\n"
               "or the payload digests; with --key it runs the full verification too\n"
               "(and takes verify's --kek and --device-key). Each encrypted payload shows\n"
               "its cipher and its recipients (algorithm, kid), never a key.\n"
               "--epochs adds the epoch report of the model it carries (mota info --epochs);\n"
               "--baseline OLD (a container or a model) what moved between NPU and CPU since.\n"
               "Exit codes: 0 ok; 1 malformed or (with --key) invalid; 2 usage; 3 I/O.\n");
}

struct show_opts {
    bool answered; /* --help: printed, nothing to show */
    char *key_paths[MAX_KEYS];
    size_t n_keys;
    char *kek_paths[MAX_KEKS];
    size_t n_keks;
    const char *device_key;
    bool json, quiet, epochs;
    const char *path, *baseline;
};

static int parse_args(int argc, char **argv, bool verify, struct show_opts *o)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"key", required_argument, 0, 'k'},
                                         {"json", no_argument, 0, 'j'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"epochs", no_argument, 0, 'e'},
                                         {"baseline", required_argument, 0, 'b'},
                                         {"kek", required_argument, 0, 'K'},
                                         {"device-key", required_argument, 0, 'D'},
                                         {0, 0, 0, 0}};
    int c;
    memset(o, 0, sizeof(*o));
    optind = 1;
    while ((c = tool_getopt(argc, argv, "hk:jqeb:", opts, verify ? "verify" : "inspect")) != -1) {
        if (c == 'K' || c == 'D') {
            if ((c == 'K' && o->n_keks == MAX_KEKS) || (c == 'D' && o->device_key != NULL))
                return tool_usage_err(verify ? "verify" : "inspect", "at most %u --kek and one --device-key", MAX_KEKS);
            if (c == 'K')
                o->kek_paths[o->n_keks++] = optarg;
            else
                o->device_key = optarg;
            continue;
        }
        if (c == 'h') {
            show_help(verify);
            o->answered = true;
            return EXIT_OK;
        } else if (c == 'k') {
            if (o->n_keys == MAX_KEYS) {
                tool_err("at most %d keys", MAX_KEYS);
                return EXIT_USAGE;
            }
            o->key_paths[o->n_keys++] = optarg;
        } else if (c == 'j') {
            o->json = true;
        } else if (c == 'q' && !verify) {
            return tool_usage_err("inspect", "-q is verify's (an exit code only): inspect prints what it finds");
        } else if (c == 'q') {
            o->quiet = true;
        } else if (c == 'e') {
            o->epochs = true;
        } else if (c == 'b') {
            o->baseline = optarg;
        } else {
            return EXIT_USAGE;
        }
    }
    if (argc - optind != 1)
        return tool_usage_err(verify ? "verify" : "inspect", "takes exactly one container file");
    if (verify && o->n_keys == 0)
        return tool_usage_err("verify", "needs at least one --key");
    if (o->n_keys == 0 && (o->n_keks > 0 || o->device_key != NULL))
        return tool_usage_err("inspect", "--kek and --device-key check the images with the full verification: "
                                         "they need --key");
    if (o->baseline != NULL && !o->epochs)
        return tool_usage_err(verify ? "verify" : "inspect", "--baseline compares epoch reports: it needs --epochs");
    o->path = argv[optind];
    return EXIT_OK;
}

/* With keys, the full verification (the images of encrypted payloads with dec, NULL: no key for them);
 * without, the structure: envelope, manifest, the payloads' framing. */
static int check_container(const struct mapped *f, const struct mota_trusted_key *keys, size_t n_keys,
                           const struct mota_enc_keys *dec, struct mota_verify_result *r, struct image_check *ic)
{
    if (n_keys > 0) {
        int ret = mota_container_verify(f->data, f->len, keys, n_keys, r);
        return ret == MOTA_OK ? tool_verify_images(f->data, f->len, r, dec, &ic->failed, &ic->unchecked) : ret;
    }
    memset(r, 0, sizeof(*r));
    int ret = mota_envelope_decode(f->data, f->len, &r->env);
    if (ret == MOTA_OK)
        ret = mota_manifest_decode(&r->env, &r->manifest);
    if (ret == MOTA_OK)
        ret = mota_container_check_payloads(f->data, f->len, r);
    return ret;
}

static void show_fail_json(const char *cmd, const char *path, int ret, bool checked, const char *detail)
{
    struct json j;
    json_doc(&j, stdout, cmd, false);
    json_reason(&j, ret);
    json_str(&j, "container", path);
    if (detail[0] != 0) /* a file that cannot be used; a container that does not decode says no more */
        json_str(&j, "detail", detail);
    json_bool(&j, "verified", checked);
    json_bool(&j, "valid", false);
    json_end(&j);
}

/* --epochs: the container's model (an encrypted one decrypted with dec, NULL: no key), and the baseline's;
 * MOTA_OK or the reason, *bad the file it concerns */
static int load_epochs(const struct show_opts *o, const struct mapped *f, const struct mota_enc_keys *dec,
                       struct epochs_view *cur, struct epochs_view *old, struct mapped *fb, const char **bad)
{
    const uint8_t *code = NULL;
    size_t code_len = 0;
    int ret = epochs_container_code(f->data, f->len, dec, &code, &code_len, &cur->image);
    *bad = o->path;
    cur->path = o->path;
    cur->container = true;
    if (ret == MOTA_OK)
        ret = epochs_view_decode(cur, code, code_len);
    if (ret == MOTA_OK && o->baseline != NULL) {
        *bad = o->baseline;
        ret = epochs_view_load(old, o->baseline, fb);
    }
    return ret;
}

/* A signature no given key verifies: the key ids the container names and the ones given, so that a user sees
 * which key signed it (mota getpub --lang id KEY names a key file's). */
static void key_ids(const struct mota_envelope *env, const struct mota_trusted_key *keys, size_t n_keys, char *out,
                    size_t cap)
{
    char id[2 * MOTA_KEY_ID_LEN + 1];
    size_t len = (size_t)snprintf(out, cap, "signed with key id"), named = 0;
    for (size_t b = 0; b < env->n_blocks && len < cap; b++) {
        const struct mota_auth_block *blk = &env->blocks[b];
        if (!blk->no_sig && blk->kid != NULL && blk->kid_len == MOTA_KEY_ID_LEN)
            len += (size_t)snprintf(out + len, cap - len, "%s %s", named++ ? "," : "",
                                    tool_hex_str(blk->kid, MOTA_KEY_ID_LEN, id, sizeof(id)));
    }
    if (named == 0 && len < cap)
        len += (size_t)snprintf(out + len, cap - len, " (none named)");
    for (size_t k = 0; k < n_keys && len < cap; k++)
        len +=
            (size_t)snprintf(out + len, cap - len, "%s%s",
                             k ? ", " : "; trusted here: ", tool_hex_str(keys[k].kid, MOTA_KEY_ID_LEN, id, sizeof(id)));
}

/* An image that was refused: which payload, and for a key problem who can decrypt it. */
static void image_note(const struct image_check *ic, int ret, char *out, size_t cap)
{
    struct mota_enc_info ei;
    char kid[2 * MOTA_ENC_MAX_KID + 3];
    if (ic->failed == NULL)
        return;
    size_t len = (size_t)snprintf(out, cap, "the %s payload%s", mota_component_name(ic->failed->role),
                                  ret == MOTA_ERR_ENC_NO_KEY   ? ": none of the keys given is for one of its recipients"
                                  : ret == MOTA_ERR_ENC_UNWRAP ? ": the key given for its recipient does not unwrap "
                                                                 "its content key (another key with that kid?)"
                                                               : "");
    if ((ret != MOTA_ERR_ENC_NO_KEY && ret != MOTA_ERR_ENC_UNWRAP) || !ic->failed->encrypted ||
        mota_enc_info_decode(ic->failed->enc_info, ic->failed->enc_len, &ei) != MOTA_OK)
        return;
    for (size_t i = 0; i < ei.n_recipients && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s kid %s",
                                i ? ", " : "; its recipients: ", tool_enc_alg_name(ei.r[i].alg),
                                kid_str(&ei.r[i], kid, sizeof(kid)));
}

/* A container, key or baseline that could not be used, *bad the file (key_opt: the option a key file came
 * with): said on stderr (unless it was said already: a file that cannot be read, a key file) and, with
 * --json, in the document (note: more on a refused signature or image). The exit code. */
static int show_fail(const char *cmd, const struct show_opts *o, int ret, const char *bad, const char *key_opt,
                     bool checked, const char *note)
{
    char detail[640] = "", why[560];
    bool key = bad != o->path && bad != o->baseline;
    if (ret == MOTA_ERR_IO) {
        json_file_why(bad, why, sizeof(why));
        snprintf(detail, sizeof(detail), "%s%s%s",
                 key                  ? key_opt
                 : bad == o->baseline ? "--baseline"
                                      : "",
                 key || bad == o->baseline ? " " : "", why);
    } else if (key) {
        snprintf(detail, sizeof(detail), "%s %s", key_opt, bad);
    } else if (note[0] != 0) {
        snprintf(detail, sizeof(detail), "%s", note);
    }
    if (ret != MOTA_ERR_IO && !key)
        tool_fail(ret, "%s%s%s", bad, note[0] ? ": " : "", note);
    if (o->json)
        show_fail_json(cmd, key ? o->path : bad, ret, checked && !key && !(ret == MOTA_ERR_IO && bad == o->path),
                       detail);
    return ret == MOTA_ERR_IO || key ? EXIT_IO : EXIT_INVALID;
}

static int show(int argc, char **argv, bool verify)
{
    const char *cmd = verify ? "verify" : "inspect", *bad = NULL, *key_opt = "--key";
    struct show_opts o;
    struct mota_trusted_key keys[MAX_KEYS];
    struct mapped f = {0}, fb = {0};
    struct epoch_views ev = {0};
    struct epochs_view cur = {0}, old = {0};
    struct image_check ic = {0};
    static struct mota_verify_result r;
    static struct dec_keys dk; /* secrets: wiped before returning */
    int rc = parse_args(argc, argv, verify, &o);
    if (rc != EXIT_OK || o.answered)
        return rc;
    bool checked = o.n_keys > 0, dec = o.n_keks > 0 || o.device_key != NULL;
    int ret = load_keys(o.key_paths, o.n_keys, keys, &bad);
    if (ret == MOTA_OK)
        ret = load_dec_keys(o.kek_paths, o.n_keks, o.device_key, &dk, &bad, &key_opt);
    if (ret == MOTA_OK) {
        bad = o.path;
        ret = tool_map(o.path, &f);
    }
    if (ret == MOTA_OK)
        ret = check_container(&f, keys, o.n_keys, dec ? &dk.view : NULL, &r, &ic);
    if (ret == MOTA_OK && o.epochs)
        ret = load_epochs(&o, &f, dec ? &dk.view : NULL, &cur, &old, &fb, &bad);
    char note[400] = "";
    if (ret == MOTA_ERR_KEY_UNKNOWN || ret == MOTA_ERR_SIGNATURE)
        key_ids(&r.env, keys, o.n_keys, note, sizeof(note));
    else if (ret == MOTA_ERR_ENC_NO_KEY && ic.failed == NULL) /* --epochs */
        snprintf(note, sizeof(note),
                 "its model is encrypted: --epochs reads it with --key and a --kek or "
                 "--device-key of one of its recipients");
    else if (ret != MOTA_OK && bad == o.path)
        image_note(&ic, ret, note, sizeof(note));
    if (ret != MOTA_OK) {
        /* verified says a check ran: not on a file that is not a container at all (no envelope) */
        static struct mota_envelope env;
        bool decoded = f.data != NULL && mota_envelope_decode(f.data, f.len, &env) == MOTA_OK;
        rc = show_fail(cmd, &o, ret, bad, key_opt, checked && decoded, note);
    } else {
        ev = (struct epoch_views){o.epochs ? &cur : NULL, o.baseline != NULL ? &old : NULL};
        if (o.json)
            report_json(cmd, o.path, &r, checked, ret, &ev, &ic);
        else if (!(verify && o.quiet))
            report_text(o.path, &r, checked, ret, &ev, &ic);
    }
    mota_cipher_wipe(&dk, sizeof(dk));
    epochs_view_free(&cur);
    epochs_view_free(&old);
    if (fb.map != NULL)
        tool_unmap(&fb);
    tool_unmap(&f); /* the report's strings point into the mapping */
    return rc;
}

int cmd_inspect(int argc, char **argv)
{
    return show(argc, argv, false);
}

int cmd_verify(int argc, char **argv)
{
    return show(argc, argv, true);
}
