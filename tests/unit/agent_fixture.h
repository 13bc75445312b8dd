/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test device for the agent tests: a posix NOR flash in memory, a key, a
 * device profile, simulated exec RAM, and containers built with the
 * project's encoder around small valid NBIN models generated here.
 */
#ifndef MOTA_TEST_AGENT_FIXTURE_H
#define MOTA_TEST_AGENT_FIXTURE_H

#include "encoders.h"

#include "mota/agent.h"
#include "mota/container.h"
#include "mota/crypto_sign.h"
#include "mota/crc32.h"
#include "mota/err.h"
#include "mota/posix_device.h"

#include <stdlib.h>
#include <string.h>

#define DEV_FLASH_SIZE (1024u * 1024u)
#define DEV_SECTOR 4096u
#define DEV_PROG 16u
#define DEV_SLOT_SIZE (192u * 1024u)
#define DEV_XIP_BASE MOTA_POSIX_XIP_BASE
#define DEV_EXEC_ADDR MOTA_POSIX_EXEC_BASE
#define DEV_EXEC_SIZE (128u * 1024u)


static struct mota_p256_key dev_key, dev_key2;
static int dev_keys_ready;
/* the keys of encrypted payloads every test device holds: a key-encryption key and a P-256 key for ECDH */
static struct mota_kek dev_kek = {.kid = "dev-kek", .kid_len = 7, .k = "0123456789abcdef"};
static struct mota_p256_key dev_ecdh;
static uint8_t dev_ecdh_kid[16];

static inline void dev_keys(void)
{
    if (!dev_keys_ready) {
        mota_key_generate(&dev_key);
        mota_key_generate(&dev_key2);
        mota_key_generate(&dev_ecdh);
        mota_key_id(dev_ecdh.pub, dev_ecdh_kid);
        dev_keys_ready = 1;
    }
}

/* The part the next devices are made of (NULL: a NOR of DEV_SECTOR sectors and DEV_PROG units). */
static const struct mota_posix_flash_part *dev_part;

/* A NOR of mixed sectors, DEV_FLASH_SIZE in all: the journal on 4 KiB, slot A on 4, 16 and 64 KiB sectors,
 * slot B on 128 KiB ones (an F401-like flash). */
static const struct mota_posix_flash_part dev_part_mixed = {
    .prog_size = DEV_PROG,
    .n_regions = 4,
    .regions = {{4, 4096, 0, 0}, {3, 16384, 0, 0}, {3, 65536, 0, 0}, {6, 131072, 0, 0}},
    .prog_block = DEV_PROG};

/* ECC flash: 4 KiB sectors, 16-byte units programmed once per erase, torn units unreadable (a U5-like
 * flash with the sweeps' sector size). */
static const struct mota_posix_flash_part dev_part_ecc = {.prog_size = DEV_PROG,
                                                          .flags = MOTA_FLASH_PROGRAM_ONCE,
                                                          .n_regions = 1,
                                                          .regions = {{DEV_FLASH_SIZE / 4096, 4096, 0, 0}},
                                                          .prog_block = DEV_PROG};

/* The whole flash, units' state included, as a blob (dev_flash_restore puts it back). */
static inline uint8_t *dev_flash_save(const struct mota_posix_device *d)
{
    size_t units = d->pf.units ? d->pf.size / d->pf.prog_size : 0;
    uint8_t *img = malloc(d->pf.size + units);
    memcpy(img, d->pf.mem, d->pf.size);
    if (units)
        memcpy(img + d->pf.size, d->pf.units, units);
    return img;
}

static inline void dev_flash_restore(struct mota_posix_device *d, const uint8_t *img)
{
    memcpy(d->pf.mem, img, d->pf.size);
    if (d->pf.units)
        memcpy(d->pf.units, img + d->pf.size, d->pf.size / d->pf.prog_size);
}

/* A blank device of the given flash and slot sizes with one model "network"
 * (and optionally a second, "kws"), two trusted keys, a fixed clock. */
static inline struct mota_posix_device *dev_new_sized(int n_models, uint32_t flash_size, uint32_t slot_size)
{
    struct mota_posix_device *d = calloc(1, sizeof(*d));
    struct mota_posix_device_options o = {.part = dev_part,
                                          .flash_size = flash_size,
                                          .sector_size = DEV_SECTOR,
                                          .prog_size = DEV_PROG,
                                          .n_models = (unsigned)n_models,
                                          .models = {"network", "kws"},
                                          .slot_size = slot_size,
                                          .exec_ram_size = DEV_EXEC_SIZE / 2,
                                          .clock_at_zero = true};
    dev_keys();
    if (mota_posix_device_open(d, &o) != MOTA_OK)
        abort();
    d->sim.latency_us = 1000;
    d->sim.slow_latency_us = 1000000;
    struct mota_agent_config *c = &d->cfg;
    c->n_keys = 2;
    memcpy(c->keys[0].pub, dev_key.pub, 65);
    c->keys[0].index = 1;
    memcpy(c->keys[1].pub, dev_key2.pub, 65);
    c->keys[1].index = 2;
    mota_posix_device_identity(d, "example.com", "board");
    c->enc = (struct mota_enc_keys){.keks = &dev_kek,
                                    .n_keks = 1,
                                    .device_d = dev_ecdh.d,
                                    .device_pub = dev_ecdh.pub,
                                    .device_kid = dev_ecdh_kid,
                                    .device_kid_len = sizeof(dev_ecdh_kid)};
    return d;
}

static inline struct mota_posix_device *dev_new(int n_models)
{
    return dev_new_sized(n_models, DEV_FLASH_SIZE, DEV_SLOT_SIZE);
}

static inline void dev_free(struct mota_posix_device *d)
{
    mota_posix_device_close(d);
    free(d);
}

/* Boot (or reboot) the device's agent from its flash. */
static inline int dev_boot(struct mota_posix_device *d)
{
    return mota_agent_init(&d->device.agent, &d->cfg);
}

static inline void wr32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

struct model_opts {
    const char *c_name;
    uint32_t flags;        /* NBIN flags word (default 0x80085D22: M55, hard float, FPU) */
    uint32_t rt_version;   /* default 1.1.1 */
    uint32_t code_bytes;   /* extra RO bytes (model size) */
    uint32_t params_bytes; /* appended params blob */
    uint8_t fill;          /* varies the code bytes between versions */
    bool noise;            /* code bytes like a real model's: compressible about 1.5x, not 100x */
    uint32_t tweak;        /* a retrained stretch: this many code bytes from the middle moved by 1..3 */
};

/* A small valid NPU-family model (24-word header, 17-word rt_ctx). */
static inline uint8_t *make_model(const struct model_opts *o, size_t *len)
{
    uint32_t ro = (0x100u + o->code_bytes + 7u) & ~7u;
    /* .data: rt_ctx (17 words), the pool descriptors (one RELOC PARAM pool and
     * the terminator), the 3 reserved GOT words; REL where ST's post-processor
     * puts it: right after the data image, padded to 8 */
    uint32_t data = 0x6C, got = 0x6C, got_end = 0x78, bss = 0x78, bss_end = 0xC8;
    uint32_t rel = (ro + got_end + 7u) & ~7u, img = rel;
    uint32_t params = (o->params_bytes + 7u) & ~7u;
    *len = img + params;
    uint8_t *b = calloc(1, *len);
    memset(b + 0x60, o->fill, ro - 0x60);
    for (uint32_t i = 0x100, x = o->fill + 1u; o->noise && i < ro; i++) { /* noise, small numbers, repeats */
        x = x * 1103515245u + 12345u;
        uint32_t kind = i < 0x100u + 1500u ? 0 : (i / 600u) % 3u;
        b[i] = kind == 0 ? (uint8_t)(x >> 24) : kind == 1 ? (uint8_t)((x >> 29) + o->fill) : b[i - 1500u];
    }
    for (uint32_t i = ro / 2; i < ro / 2 + o->tweak && i < ro; i++)
        b[i] = (uint8_t)(b[i] + 1u + i % 3u);
    uint32_t h[24] = {MOTA_NBIN_MAGIC,       o->flags ? o->flags : 0x80085D22u,
                      0x40000000u,           0x40000000u | data,
                      0x20000000u | ro,      0x40000000u | bss,
                      0x40000000u | bss_end, 0x40000000u | got,
                      0x40000000u | got_end, 0x20000000u | rel,
                      0x20000000u | rel,     0x40000044u,
                      params ? img : 0};
    for (int i = 13; i < 23; i++)
        h[i] = 0x20000061u;
    h[23] = 0x40000000u;
    for (int i = 0; i < 24; i++)
        wr32le(b + 4 * i, h[i]);
    const char *name = o->c_name ? o->c_name : "network";
    memcpy(b + 0x80, name, strlen(name) + 1);
    memcpy(b + 0xC0, "test (RELOC.GCC)", 17);
    memcpy(b + 0xE0, "params", 7);
    uint32_t rt[17] = {
        0, 0,      0, 0, 0, 0x20000080u, 4096, params, 0, 0x200000C0u, o->rt_version ? o->rt_version : 0x01010100u,
        0, params, 0, 0, 0, 0x40000000u};
    for (uint32_t i = 0; i < params; i++)
        b[img + i] = (uint8_t)(i * 13 + o->fill);
    rt[13] = mota_crc32(0, b + img, params);
    for (int i = 0; i < 17; i++)
        wr32le(b + ro + 4 * i, rt[i]);
    if (params) { /* the pool that carries them: RELOC, PARAM, READ, id 0 */
        uint32_t pool[5] = {0x200000E0u, 0x01010100u, 0, 0, params};
        for (int i = 0; i < 5; i++)
            wr32le(b + ro + 0x44 + 4 * i, pool[i]);
    }
    return b;
}

struct container_opts {
    uint64_t seq;
    const char *vendor, *klass, *version;
    const struct mota_p256_key *key;
    struct model_opts model;
    uint32_t install_mode; /* default XIP */
    bool selftest;         /* with a self-test whose expected output is the simulation's */
    uint32_t selftest_in, selftest_out;
    uint64_t max_latency_us;
    bool split; /* params as a separate component */
    uint64_t exec_ram_xip_override;
    uint32_t poke_off, poke_val; /* overwrite a model word after its compat data is read (0: no) */
    uint32_t compress;           /* payloads compressed (MOTA_DECOMP_LZ4 or _DEFLATE, 4 KiB blocks) where smaller */
    /* a hostile signer: rewrites the code's frame (malloc'd) before it is hashed and signed */
    void (*z_mangle)(uint8_t **z, size_t *zl, const uint8_t *plain, size_t plain_len);
    uint64_t z_params_image_size;   /* and signs this image size for compressed params (0: their own) */
    uint32_t z_block;               /* and this block size (0: 4096) */
    int encrypt;                    /* MOTA_ENC_A128GCM or _A128CTR: every payload encrypted (after compression) */
    bool enc_ecdh;                  /* to the device's P-256 key (ECDH-ES+A128KW), not to dev_kek (A128KW) */
    const struct mota_kek *enc_kek; /* another key-encryption key than dev_kek */
    bool enc_flip;                  /* a hostile signer: one ciphertext bit of the code flipped, then signed */
    /* a delta from the model of these options (code and params: LZMA unless compress names another coder;
     * the self-test input whole), as pack --delta-from writes it: needs MOTA_TEST_LZMA */
    const struct model_opts *delta_from;
    bool delta_code_only;         /* the params compressed as they are, after the code's delta */
    const uint8_t *delta_regions; /* a hostile signer: these regions signed instead of the diff's */
    size_t delta_regions_len;
};

/* The content key every test container is encrypted with. */
static const uint8_t test_cek[16] = {0xc3, 0x1f, 0x5a, 0x07, 0x9e, 0x44, 0x21, 0xd8,
                                     0x6b, 0x90, 0x3e, 0x12, 0xaf, 0x75, 0x08, 0xe1};

/* The SUIT_Encryption_Info of component i (its own IV) for the options' recipient, into info. */
static inline size_t test_enc_info(const struct container_opts *o, size_t i, uint8_t *info, uint8_t iv[16])
{
    struct mota_enc_info_spec es = {.alg = o->encrypt, .n_recipients = 1};
    uint8_t kek[16];
    size_t len = 0;
    for (size_t k = 0; k < 12; k++)
        es.iv[k] = (uint8_t)(0xA0 + 16 * i + k);
    if (o->enc_ecdh) {
        struct mota_p256_key eph;
        struct mota_enc_recipient r = {
            .alg = MOTA_ENC_ECDH_ES_A128KW, .protected_hdr = mota_enc_ecdh_protected, .protected_len = 4};
        mota_key_generate(&eph);
        if (mota_enc_ecdh_kek(eph.d, dev_ecdh.pub, &r, kek) != MOTA_OK)
            abort();
        es.r[0] = (struct mota_enc_recipient_spec){.alg = MOTA_ENC_ECDH_ES_A128KW, .kid = dev_ecdh_kid, .kid_len = 16};
        memcpy(es.r[0].epk, eph.pub, 65);
    } else {
        const struct mota_kek *k = o->enc_kek ? o->enc_kek : &dev_kek;
        memcpy(kek, k->k, 16);
        es.r[0] = (struct mota_enc_recipient_spec){.alg = MOTA_ENC_A128KW, .kid = k->kid, .kid_len = k->kid_len};
    }
    if (mota_kw_wrap(kek, test_cek, 16, es.r[0].wrapped) != MOTA_OK ||
        mota_enc_info_encode(&es, info, MOTA_ENC_MAX_INFO, &len) != MOTA_OK)
        abort();
    memcpy(iv, es.iv, 16);
    return len;
}

/* n bytes encrypted as component i's payload (malloc'd: n, and 16 more with GCM's tag). */
static inline uint8_t *test_encrypt(const struct container_opts *o, size_t i, const uint8_t *in, size_t n,
                                    uint8_t *info, size_t *info_len, size_t *out_len)
{
    uint8_t iv[16], aad[MOTA_ENC_AAD_MAX];
    size_t aad_len = 0;
    struct mota_aes128 aes;
    struct mota_enc_info ei;
    uint8_t *out = malloc(n + 16);
    *info_len = test_enc_info(o, i, info, iv);
    mota_aes128_setkey(&aes, test_cek, false);
    *out_len = n;
    if (o->encrypt == MOTA_ENC_A128CTR) {
        struct mota_ctr c;
        mota_ctr_start(&c, &aes, iv, 0);
        mota_ctr_xor(&c, in, out, n);
        return out;
    }
    struct mota_gcm g;
    if (mota_enc_info_decode(info, *info_len, &ei) != MOTA_OK || mota_enc_aad(&ei, aad, sizeof(aad), &aad_len))
        abort();
    mota_gcm_start(&g, &aes, iv, false, aad, aad_len);
    mota_gcm_update(&g, in, out, n);
    mota_gcm_finish(&g, out + n);
    *out_len = n + 16;
    return out;
}

static inline int sign_cb(void *ctx, const uint8_t h[32], uint8_t sig[64])
{
    return mota_ecdsa_p256_sign(ctx, h, sig);
}

/* A signed container; *len bytes, malloc'd. */
/* Payload bytes of an algorithm (4 KiB blocks): LZ4, deflate, or (MOTA_TEST_LZMA builds) pack's LZMA. */
static inline uint8_t *test_compress(uint32_t alg, const uint8_t *in, size_t n, uint32_t block, size_t *zl)
{
#if MOTA_TEST_LZMA
    if (alg == MOTA_DECOMP_LZMA)
        return test_lzma(in, n, block, zl);
#endif
    return alg == MOTA_DECOMP_DEFLATE ? test_deflate(in, n, block, zl) : test_lz4_compress(in, n, block, zl);
}

/* The image of a component of o->delta_from's model (code, or params when split): a malloc'd copy. */
static inline uint8_t *test_delta_source(const struct container_opts *o, enum mota_component_role role, size_t *n)
{
    struct model_opts mo = *o->delta_from;
    size_t model_len = 0;
    uint8_t *model = make_model(&mo, &model_len), *img = NULL;
    struct mota_nbin_info info;
    if (mota_nbin_parse(model, model_len, &info) != MOTA_OK)
        abort();
    size_t code_len = o->split && info.params_offset ? info.params_offset : model_len;
    if (o->split && info.params_offset)
        wr32le(model + 48, 0); /* as make_container splits it */
    size_t from = role == MOTA_COMPONENT_CODE ? 0 : code_len;
    *n = role == MOTA_COMPONENT_CODE ? code_len : model_len - code_len;
    img = malloc(*n + 1);
    memcpy(img, model + from, *n);
    free(model);
    return img;
}

/* Component c (its image in, n bytes) as a delta from o->delta_from's, compressed: the payload (malloc'd),
 * c described as pack describes it, *regions its packed regions (malloc'd: the spec points at them). */
static inline uint8_t *test_delta_component(const struct container_opts *o, struct mota_pack_component *c,
                                            const uint8_t *in, size_t n, uint8_t **regions, size_t *zl)
{
#if MOTA_TEST_LZMA
    size_t old_n = 0, count = 0;
    uint8_t *old = test_delta_source(o, c->role, &old_n), *t = malloc(n + 1), *z = NULL;
    struct tool_delta_region *r = NULL;
    uint32_t alg = o->compress ? o->compress : MOTA_DECOMP_LZMA;
    if (tool_delta_diff(old, old_n, in, n, MOTA_DELTA_MAX_REGIONS, &r, &count) != MOTA_OK)
        abort();
    tool_delta_transform(old, in, n, r, count, t);
    if ((z = test_compress(alg, t, n, 4096, zl)) == NULL || (*regions = malloc(count * 12 + 1)) == NULL)
        abort();
    for (size_t i = 0; i < count * 12; i++) {
        const uint32_t v[3] = {r[i / 12].start, r[i / 12].len, r[i / 12].src};
        (*regions)[i] = (uint8_t)(v[i % 12 / 4] >> (8 * (i % 4)));
    }
    c->compressed = c->delta = true;
    c->z_alg = alg;
    c->z_block = 4096;
    mota_sha256(old, old_n, c->src_digest);
    c->src_size = (uint32_t)old_n;
    c->regions = o->delta_regions ? o->delta_regions : *regions;
    c->regions_len = o->delta_regions ? o->delta_regions_len : count * 12;
    c->wire_size = *zl;
    mota_sha256(z, *zl, c->wire_digest);
    free(old);
    free(t);
    free(r);
    return z;
#else
    (void)o, (void)c, (void)in, (void)n, (void)regions, (void)zl;
    abort(); /* a test with deltas links mota_test_compress */
#endif
}

static inline uint8_t *make_container(const struct container_opts *o, size_t *len)
{
    size_t model_len;
    struct model_opts mo = o->model;
    uint8_t *model = make_model(&mo, &model_len);
    struct mota_nbin_info info;
    if (mota_nbin_parse(model, model_len, &info) != MOTA_OK)
        abort();
    struct mota_pack_spec s;
    memset(&s, 0, sizeof(s));
    s.seq = o->seq;
    const char *v = o->vendor ? o->vendor : "example.com", *k = o->klass ? o->klass : "board";
    mota_uuid5(mota_uuid_ns_dns, v, strlen(v), s.vendor_id);
    mota_uuid5(s.vendor_id, k, strlen(k), s.class_id);
    s.version = o->version ? o->version : "1.0.0";
    s.model_name = info.c_name;
    mota_nbin_compat(&info, o->install_mode ? o->install_mode : MOTA_INSTALL_XIP, &s.compat);
    if (o->exec_ram_xip_override) /* both modes: a model too big for the device */
        s.compat.exec_ram_xip = s.compat.exec_ram_copy = o->exec_ram_xip_override;
    if (o->poke_off)
        wr32le(model + o->poke_off, o->poke_val);
    const uint8_t *parts[3];
    size_t plen[3];
    size_t code_len = model_len;
    uint8_t *params = NULL;
    if (o->split && info.params_offset) {
        /* split: the image without its blob, params_offset zeroed */
        code_len = info.params_offset;
        params = model + info.params_offset;
        wr32le(model + 48, 0);
    }
    s.comp[0].role = MOTA_COMPONENT_CODE;
    s.comp[0].size = code_len;
    parts[0] = model;
    plen[0] = code_len;
    s.n_components = 1;
    if (params) {
        s.comp[1].role = MOTA_COMPONENT_PARAMS;
        s.comp[1].size = model_len - code_len;
        parts[1] = params;
        plen[1] = model_len - code_len;
        s.n_components = 2;
    }
    static uint8_t st_in[4096], st_out[4096];
    if (o->selftest) {
        uint32_t in_n = o->selftest_in ? o->selftest_in : 64, out_n = o->selftest_out ? o->selftest_out : 10;
        for (uint32_t i = 0; i < in_n; i++)
            st_in[i] = (uint8_t)(i * 7 + o->seq);
        mota_sim_inference(st_in, in_n, st_out, out_n);
        s.comp[s.n_components].role = MOTA_COMPONENT_SELFTEST;
        s.comp[s.n_components].size = in_n;
        parts[s.n_components] = st_in;
        plen[s.n_components] = in_n;
        s.n_components++;
        s.compat.selftest.present = true;
        s.compat.selftest.output_size = out_n;
        s.compat.selftest.max_latency_us = o->max_latency_us ? o->max_latency_us : 50000;
        mota_sha256(st_out, out_n, s.compat.selftest.output_digest);
    }
    uint8_t *z[3] = {NULL, NULL, NULL}, *regions[3] = {NULL, NULL, NULL};
    for (size_t i = 0; i < s.n_components; i++) {
        mota_sha256(parts[i], plen[i], s.comp[i].digest);
        size_t zl = 0;
        if (o->delta_from != NULL && s.comp[i].role != MOTA_COMPONENT_SELFTEST &&
            !(o->delta_code_only && s.comp[i].role == MOTA_COMPONENT_PARAMS)) {
            z[i] = test_delta_component(o, &s.comp[i], parts[i], plen[i], &regions[i], &zl);
            parts[i] = z[i];
            plen[i] = zl;
            continue;
        }
        if ((o->compress != 0 || o->delta_from != NULL) &&
            (z[i] = test_compress(o->compress ? o->compress : MOTA_DECOMP_LZMA, parts[i], plen[i], 4096, &zl)) !=
                NULL &&
            zl < plen[i]) {
            if (i == 0 && o->z_mangle != NULL)
                o->z_mangle(&z[i], &zl, parts[i], plen[i]);
            s.comp[i].compressed = true;
            s.comp[i].z_alg = o->compress ? o->compress : MOTA_DECOMP_LZMA;
            s.comp[i].z_block = o->z_block ? o->z_block : 4096;
            if (o->z_params_image_size && s.comp[i].role == MOTA_COMPONENT_PARAMS)
                s.comp[i].size = o->z_params_image_size;
            s.comp[i].wire_size = zl;
            mota_sha256(z[i], zl, s.comp[i].wire_digest);
            parts[i] = z[i];
            plen[i] = zl;
        }
    }
    static uint8_t infos[3][MOTA_ENC_MAX_INFO];
    uint8_t *e[3] = {NULL, NULL, NULL};
    for (size_t i = 0; o->encrypt != 0 && i < s.n_components; i++) {
        size_t el = 0;
        e[i] = test_encrypt(o, i, parts[i], plen[i], infos[i], &s.comp[i].enc_len, &el);
        if (i == 0 && o->enc_flip)
            e[i][el / 2] ^= 0x10;
        s.comp[i].encrypted = true;
        s.comp[i].enc_info = infos[i];
        s.comp[i].wire_size = el;
        mota_sha256(e[i], el, s.comp[i].wire_digest);
        parts[i] = e[i];
        plen[i] = el;
    }
    const struct mota_p256_key *key = o->key ? o->key : &dev_key;
    uint8_t kid[16];
    mota_key_id(key->pub, kid);
    size_t cap = 16384 + model_len + 8192;
    uint8_t *out = malloc(cap);
    size_t n = 0, ph;
    if (mota_container_encode_head(&s, kid, sign_cb, (void *)key, out, cap, &n) != MOTA_OK)
        abort();
    for (size_t i = 0; i < s.n_components; i++) {
        mota_payload_head_encode(s.comp[i].role, plen[i], out + n, cap - n, &ph);
        n += ph;
        memcpy(out + n, parts[i], plen[i]);
        n += plen[i];
    }
    free(model);
    for (size_t i = 0; i < 3; i++) {
        free(z[i]);
        free(e[i]);
        free(regions[i]);
    }
    *len = n;
    return out;
}

/* Send a whole container in chunks, following the agent's offsets. */
static inline int send_container(struct mota_agent *a, const uint8_t *c, size_t len, size_t chunk)
{
    uint32_t off = 0;
    int ret = 0;
    while (off < len) {
        size_t n = len - off < chunk ? len - off : chunk;
        ret = mota_agent_write(a, off, c + off, n);
        if (ret < 0)
            return ret;
        if ((size_t)ret == len && off + n >= len)
            return MOTA_OK;
        off = (uint32_t)ret;
        if ((size_t)ret == len)
            return MOTA_OK;
    }
    return ret < 0 ? ret : MOTA_OK;
}

static inline void manifest_digest(const uint8_t *c, size_t len, uint8_t out[32])
{
    struct mota_envelope env;
    if (mota_envelope_decode(c, len, &env) != MOTA_OK)
        abort();
    memcpy(out, env.digest, 32);
}

/* What a power-cut sweep sees of model 0 after a reboot: whether a model runs, whether it is the new one
 * (its manifest digest is new_digest, else old_digest), on trial, and the committed sequence number (0: none).
 * False when the model that runs is neither the old nor the new one. */
struct dev_outcome {
    bool has_model, is_new, testing;
    uint64_t committed;
};

static inline bool dev_observe(struct mota_posix_device *d, const uint8_t old_digest[32], const uint8_t new_digest[32],
                               struct dev_outcome *o)
{
    struct mota_agent_model_info info;
    memset(o, 0, sizeof(*o));
    o->committed = d->device.agent.st[0].has_committed ? d->device.agent.st[0].committed_seq : 0;
    if (mota_agent_model_info(&d->device.agent, 0, &info) != MOTA_OK)
        return true;
    o->has_model = true;
    o->is_new = memcmp(info.digest, new_digest, 32) == 0;
    o->testing = info.testing;
    return o->is_new || memcmp(info.digest, old_digest, 32) == 0;
}

#endif
