/* SPDX-License-Identifier: Apache-2.0 */
/* Hostile and broken updates: each is refused with its reason, the active
 * model stays as it was, and what can be refused from the head is refused
 * before anything is erased. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_fixture.h"

/* V2(...) starts from a valid update and overrides the fields a case is about */
#pragma GCC diagnostic ignored "-Woverride-init"

static uint8_t *v1;
static size_t v1_len;
static uint8_t v1_digest[32];

/* A device running v1 (seq 10, confirmed). */
static struct mota_posix_device *device(void)
{
    struct mota_posix_device *d = dev_new(1);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(send_container(&d->device.agent, v1, v1_len, 4096), MOTA_OK);
    assert_int_equal(mota_agent_confirm(&d->device.agent, 0), MOTA_OK);
    return d;
}

static void still_v1(struct mota_posix_device *d)
{
    struct mota_agent_model_info info;
    assert_int_equal(mota_agent_model_info(&d->device.agent, 0, &info), MOTA_OK);
    assert_memory_equal(info.digest, v1_digest, 32);
    assert_false(info.testing);
    /* and after a reboot too */
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(mota_agent_model_info(&d->device.agent, 0, &info), MOTA_OK);
    assert_memory_equal(info.digest, v1_digest, 32);
}

enum { BEFORE_ERASE = 1, AFTER_ERASE = 0 };

/* Send c; expect `want` and, if before_erase, no erase at all. */
static void attempt(struct mota_posix_device *d, const uint8_t *c, size_t len, int want, int before_erase,
                    const char *what)
{
    uint64_t erases = d->pf.erases;
    int ret = send_container(&d->device.agent, c, len, 1500);
    if (ret != want)
        fail_msg("%s: got %s, want %s", what, mota_err_name(ret), mota_err_name(want));
    if (before_erase && d->pf.erases != erases)
        fail_msg("%s: refused only after erasing", what);
    still_v1(d);
}

static void hostile(const struct container_opts *o, int want, int before_erase, const char *what)
{
    struct mota_posix_device *d = device();
    size_t len;
    uint8_t *c = make_container(o, &len);
    attempt(d, c, len, want, before_erase, what);
    free(c);
    dev_free(d);
}

static int setup(void **state)
{
    (void)state;
    struct container_opts o = {
        .seq = 10, .selftest = true, .split = true, .model = {.code_bytes = 3000, .params_bytes = 1000, .fill = 1}};
    dev_keys();
    v1 = make_container(&o, &v1_len);
    manifest_digest(v1, v1_len, v1_digest);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(v1);
    return 0;
}

#define V2(...)                                                                                                        \
    {                                                                                                                  \
        .seq = 11, .selftest = true, .split = true, .model = {.code_bytes = 3000, .params_bytes = 1000, .fill = 2},    \
        __VA_ARGS__                                                                                                    \
    }

static void test_wrong_key(void **s)
{
    (void)s;
    static struct mota_p256_key stranger;
    mota_key_generate(&stranger);
    struct container_opts o = V2(.key = &stranger);
    hostile(&o, MOTA_ERR_KEY_UNKNOWN, BEFORE_ERASE, "wrong key");
}

static void test_revoked_key(void **s)
{
    (void)s;
    struct mota_posix_device *d = device();
    size_t len;
    struct container_opts o = V2(.seq = 12);
    uint8_t *c = make_container(&o, &len);
    assert_int_equal(mota_agent_revoke_keys(&d->device.agent, 2), MOTA_OK); /* key index 1 revoked */
    attempt(d, c, len, MOTA_ERR_KEY_REVOKED, BEFORE_ERASE, "revoked key");
    /* the stored v1, signed before the revocation, still boots (still_v1 rebooted) */
    struct container_opts o2 = V2(.seq = 12, .key = &dev_key2);
    size_t len2;
    uint8_t *c2 = make_container(&o2, &len2);
    assert_int_equal(send_container(&d->device.agent, c2, len2, 1500), MOTA_OK); /* the new key works */
    free(c);
    free(c2);
    dev_free(d);
}

static void test_rollback_attempt(void **s)
{
    (void)s;
    struct container_opts o = V2(.seq = 9);
    hostile(&o, MOTA_ERR_ROLLBACK, BEFORE_ERASE, "older sequence number");
}

static void test_same_sequence_other_content(void **s)
{
    (void)s;
    struct container_opts o = V2(.seq = 10);
    hostile(&o, MOTA_ERR_ROLLBACK_SAME_SEQ, BEFORE_ERASE, "same sequence number, other model");
}

static void test_wrong_vendor(void **s)
{
    (void)s;
    struct container_opts o = V2(.vendor = "evil.example");
    hostile(&o, MOTA_ERR_VENDOR_MISMATCH, BEFORE_ERASE, "wrong vendor");
}

static void test_wrong_class(void **s)
{
    (void)s;
    struct container_opts o = V2(.klass = "other-board");
    hostile(&o, MOTA_ERR_CLASS_MISMATCH, BEFORE_ERASE, "wrong class");
}

static void test_wrong_cpu(void **s)
{
    (void)s;
    struct container_opts o = V2(.model = {.flags = 0x80085D21u, .code_bytes = 3000, .params_bytes = 1000});
    hostile(&o, MOTA_ERR_COMPAT_CPU, BEFORE_ERASE, "Cortex-M33 model");
}

static void test_wrong_float_abi(void **s)
{
    (void)s;
    struct container_opts o = V2(.model = {.flags = 0x80081D22u, .code_bytes = 3000, .params_bytes = 1000});
    hostile(&o, MOTA_ERR_COMPAT_FLOAT_ABI, BEFORE_ERASE, "soft-float model");
}

static void test_wrong_ll_aton(void **s)
{
    (void)s;
    struct container_opts o = V2(.model = {.rt_version = 0x01010300u, .code_bytes = 3000, .params_bytes = 1000});
    hostile(&o, MOTA_ERR_COMPAT_LL_ATON, BEFORE_ERASE, "LL_ATON 1.1.3 model");
}

static void test_secure_model_on_non_secure_device(void **s)
{
    (void)s;
    struct mota_posix_device *d = dev_new(1);
    d->cfg.profile.secure = false;
    assert_int_equal(dev_boot(d), MOTA_OK);
    size_t len;
    struct container_opts o = V2(.model = {.flags = 0x80185D22u, .code_bytes = 3000, .params_bytes = 1000});
    uint8_t *c = make_container(&o, &len);
    assert_int_equal(send_container(&d->device.agent, c, len, 1500), MOTA_ERR_COMPAT_SECURE);
    assert_int_equal(d->pf.erases, 0 + 1); /* only the journal's first format */
    free(c);
    dev_free(d);
}

static void test_fpu_model_without_fpu(void **s)
{
    (void)s;
    struct mota_posix_device *d = dev_new(1);
    d->cfg.profile.fpu_enabled = false;
    assert_int_equal(dev_boot(d), MOTA_OK);
    size_t len;
    struct container_opts o = V2();
    uint8_t *c = make_container(&o, &len);
    assert_int_equal(send_container(&d->device.agent, c, len, 1500), MOTA_ERR_COMPAT_FPU);
    assert_int_equal(d->pf.erases, 1);
    struct mota_agent_model_info info;
    assert_int_equal(mota_agent_model_info(&d->device.agent, 0, &info), MOTA_ERR_NO_MODEL);
    free(c);
    dev_free(d);
}

static void test_head_larger_than_the_device_head_buffer_is_refused_before_any_erase(void **s)
{
    (void)s;
    struct mota_posix_device *d = dev_new(1);
    size_t len;
    struct container_opts o = V2();
    uint8_t *c = make_container(&o, &len);
    struct mota_envelope env;
    assert_int_equal(mota_envelope_decode(c, len, &env), MOTA_OK);
    /* a device that gives the head buffer less than this head */
    d->cfg.scratch_size = env.head_len - 1;
    assert_true(d->cfg.scratch_size >= MOTA_AGENT_SCRATCH_MIN);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(send_container(&d->device.agent, c, len, 1500), MOTA_ERR_ENV_TOO_LARGE);
    assert_int_equal(d->pf.erases, 1); /* only the journal's first format */
    /* the same device takes it with one byte more */
    d->cfg.scratch_size = env.head_len;
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(send_container(&d->device.agent, c, len, 1500), MOTA_OK);
    free(c);
    dev_free(d);
}

static void test_head_split_over_many_small_writes_is_collected(void **s)
{
    (void)s;
    struct mota_posix_device *d = dev_new(1);
    size_t len;
    struct container_opts o = V2();
    uint8_t *c = make_container(&o, &len);
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_int_equal(send_container(&d->device.agent, c, len, 100), MOTA_OK); /* a 100-byte link */
    struct mota_agent_model_info info;
    assert_int_equal(mota_agent_model_info(&d->device.agent, 0, &info), MOTA_OK);
    free(c);
    dev_free(d);
}

static void test_head_buffer_below_the_minimum_is_a_config_error(void **s)
{
    (void)s;
    struct mota_posix_device *d = dev_new(1);
    d->cfg.scratch_size = MOTA_AGENT_SCRATCH_MIN - 1;
    assert_int_equal(dev_boot(d), MOTA_ERR_CONFIG);
    dev_free(d);
}

/* A journal sector too small for a compaction's snapshot of every model (12 records each, with an upload
 * in progress) would be programmed past its end: refused at init. */
static void test_a_journal_sector_too_small_for_a_snapshot_is_a_config_error(void **s)
{
    (void)s;
    static const struct mota_posix_flash_part small = {
        .prog_size = 16, .n_regions = 1, .regions = {{512, 2048, 0, 0}}, .prog_block = 16};
    dev_part = &small;
    struct mota_posix_device *d = dev_new_sized(4, 1024u * 1024u, 96u * 1024u);
    dev_part = NULL;
    assert_int_equal(dev_boot(d), MOTA_ERR_CONFIG); /* 32 records, 4 models need 52 */
    d->cfg.n_models = 3;
    assert_int_equal(dev_boot(d), MOTA_ERR_CONFIG); /* 40 */
    d->cfg.n_models = 2;
    assert_int_equal(dev_boot(d), MOTA_OK); /* 28 */
    dev_free(d);
}

/* Slots that overlap, or share a sector, or reach into the journal: refused at init. */
static void test_slots_sharing_a_sector_are_a_config_error(void **s)
{
    (void)s;
    struct mota_posix_device *d = dev_new(1);
    uint32_t a = d->cfg.models[0].slot_offset[0];
    d->cfg.models[0].slot_offset[1] = a + d->cfg.models[0].slot_size - 4096u; /* its last sector is A's */
    assert_int_equal(dev_boot(d), MOTA_ERR_CONFIG);
    d->cfg.models[0].slot_offset[1] = a + 100u; /* not a sector's start */
    assert_int_equal(dev_boot(d), MOTA_ERR_CONFIG);
    d->cfg.models[0].slot_offset[1] = 4096u; /* the journal's second sector */
    assert_int_equal(dev_boot(d), MOTA_ERR_CONFIG);
    dev_free(d);
}

static void test_too_big_for_the_slot(void **s)
{
    (void)s;
    struct container_opts o = V2(.model = {.code_bytes = 200000});
    hostile(&o, MOTA_ERR_SLOT_TOO_SMALL, BEFORE_ERASE, "model larger than the slot");
}

/* A signed image size near 2^32 after a component far into the slot: the layout must not wrap around to a
 * small slot area (the decoder would then write past it, within the size it was given). */
static void test_a_compressed_image_size_that_wraps_the_slot_layout_is_refused_before_any_erase(void **s)
{
    (void)s;
    struct mota_posix_device *d = dev_new_sized(1, 4u << 20, 1536u * 1024u);
    assert_int_equal(dev_boot(d), MOTA_OK);
    /* a 400 KB uncompressible code component, then the params compressed in 64 KiB blocks, signed as
     * 2^32 - 256 KiB - 12 bytes: just under the frame bound, about 140 KiB into the slot once wrapped */
    struct container_opts o =
        V2(.compress = MOTA_DECOMP_LZ4, .z_block = 65536, .z_params_image_size = 0x100000000ull - 262156u,
           .model = {.code_bytes = 400000, .params_bytes = 8000, .fill = 2, .noise = true});
    size_t len;
    uint8_t *c = make_container(&o, &len);
    uint64_t erases = d->pf.erases, progs = d->pf.progs;
    int ret = send_container(&d->device.agent, c, len, 4096);
    if (ret != MOTA_ERR_SLOT_TOO_SMALL)
        fail_msg("got %s, want MOTA_ERR_SLOT_TOO_SMALL", mota_err_name(ret));
    assert_true(d->pf.erases == erases && d->pf.progs == progs);
    free(c);
    dev_free(d);
}

static void test_not_enough_exec_ram(void **s)
{
    (void)s;
    struct container_opts o = V2(.exec_ram_xip_override = 10u << 20);
    hostile(&o, MOTA_ERR_COMPAT_EXEC_RAM, BEFORE_ERASE, "needs 10 MiB of exec RAM");
}

static void test_unknown_model_name(void **s)
{
    (void)s;
    struct container_opts o = V2(.model = {.c_name = "other", .code_bytes = 3000});
    hostile(&o, MOTA_ERR_NO_SLOT, BEFORE_ERASE, "model the device has no slot for");
}

static void test_bad_signature_and_tampered_manifest(void **s)
{
    (void)s;
    struct mota_posix_device *d = device();
    size_t len;
    struct container_opts o = V2();
    uint8_t *c = make_container(&o, &len);
    struct mota_envelope env;
    assert_int_equal(mota_envelope_decode(c, len, &env), MOTA_OK);
    size_t sig_at = (size_t)(env.blocks[0].sig - c), man_at = (size_t)(env.manifest - c);
    c[sig_at + 5] ^= 1;
    attempt(d, c, len, MOTA_ERR_SIGNATURE, BEFORE_ERASE, "bit flip in the signature");
    c[sig_at + 5] ^= 1;
    c[man_at + env.manifest_len - 3] ^= 0x40;
    attempt(d, c, len, MOTA_ERR_MANIFEST_DIGEST, BEFORE_ERASE, "manifest changed after signing");
    free(c);
    dev_free(d);
}

static void test_garbage_stream(void **s)
{
    (void)s;
    struct mota_posix_device *d = device();
    uint8_t junk[3000];
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)(i * 31 + 7);
    attempt(d, junk, sizeof(junk), MOTA_ERR_ENV_TAG, BEFORE_ERASE, "not a container");
    dev_free(d);
}

static void test_digest_mismatch_in_second_payload(void **s)
{
    (void)s;
    struct mota_posix_device *d = device();
    size_t len;
    struct container_opts o = V2();
    uint8_t *c = make_container(&o, &len);
    struct mota_envelope env;
    struct mota_manifest man;
    assert_int_equal(mota_envelope_decode(c, len, &env), MOTA_OK);
    assert_int_equal(mota_manifest_decode(&env, &man), MOTA_OK);
    /* the params payload is the second; its last byte changed */
    size_t params_end = env.head_len + 8 + (size_t)man.comp[0].size + 10 + (size_t)man.comp[1].size;
    c[params_end - 1] ^= 0x01;
    attempt(d, c, len, MOTA_ERR_PAYLOAD_DIGEST, AFTER_ERASE, "second payload altered");
    free(c);
    dev_free(d);
}

static void test_truncated_stream(void **s)
{
    (void)s;
    struct mota_posix_device *d = device();
    size_t len;
    struct container_opts o = V2();
    uint8_t *c = make_container(&o, &len);
    uint32_t off = 0;
    while (off < len / 2) {
        int r = mota_agent_write(&d->device.agent, off, c + off, 700);
        assert_true(r > 0);
        off = (uint32_t)r;
    }
    /* the sender goes away; a reboot and an abort later, nothing changed */
    assert_int_equal(dev_boot(d), MOTA_OK);
    assert_true(mota_agent_upload_offset(&d->device.agent) > 0);
    assert_int_equal(mota_agent_abort(&d->device.agent), MOTA_OK);
    assert_int_equal(mota_agent_upload_offset(&d->device.agent), 0);
    still_v1(d);
    free(c);
    dev_free(d);
}

/* ---- compressed payloads, signed by a hostile signer: refused, nothing written outside the slot ---- */

static const uint8_t z_hdr[7] = {0x04, 0x22, 0x4D, 0x18, 0x40, 0x40, 0xC0};

static void z_append(uint8_t **z, size_t *zl, const uint8_t *b, size_t n)
{
    *z = realloc(*z, *zl + n);
    memcpy(*z + *zl, b, n);
    *zl += n;
}

/* one more block after the image's declared size (its end mark moved after it): a bomb */
static void z_bomb(uint8_t **z, size_t *zl, const uint8_t *plain, size_t plain_len)
{
    (void)plain, (void)plain_len;
    static const uint8_t more[] = {0x10, 0, 0, 0x80, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 0, 0, 0};
    *zl -= 4;
    z_append(z, zl, more, sizeof(more));
}

/* a match before the image's first byte */
static void z_backref(uint8_t **z, size_t *zl, const uint8_t *plain, size_t plain_len)
{
    (void)plain, (void)plain_len;
    static const uint8_t body[] = {0x06, 0, 0, 0, 0x1E, 'a', 0x02, 0x00, 0x10, 'b', 0, 0, 0, 0};
    *zl = 0;
    z_append(z, zl, z_hdr, sizeof(z_hdr));
    z_append(z, zl, body, sizeof(body));
}

/* literals declared far past the block (and the image) */
static void z_huge_literals(uint8_t **z, size_t *zl, const uint8_t *plain, size_t plain_len)
{
    (void)plain, (void)plain_len;
    uint8_t body[4 + 1 + 20 + 1 + 4] = {22, 0, 0, 0, 0xF0}; /* 15 + 20 * 255 literals in a 4 KiB block */
    memset(body + 5, 0xFF, 20);
    *zl = 0;
    z_append(z, zl, z_hdr, sizeof(z_hdr));
    z_append(z, zl, body, sizeof(body));
}

static void z_truncated(uint8_t **z, size_t *zl, const uint8_t *plain, size_t plain_len)
{
    (void)z, (void)plain, (void)plain_len;
    *zl -= 4; /* no end mark */
}

static void z_trailing(uint8_t **z, size_t *zl, const uint8_t *plain, size_t plain_len)
{
    (void)plain, (void)plain_len;
    static const uint8_t one = 0;
    z_append(z, zl, &one, 1);
}

/* a valid frame of other bytes of the same size: only the image's digest, read back from flash, tells */
static void z_other_image(uint8_t **z, size_t *zl, const uint8_t *plain, size_t plain_len)
{
    uint8_t *other = malloc(plain_len);
    memcpy(other, plain, plain_len);
    other[plain_len / 2] ^= 0x40;
    free(*z);
    *z = test_lz4_compress(other, plain_len, 4096, zl);
    free(other);
}

static void test_hostile_compressed_payloads_are_refused_inside_the_slot(void **s)
{
    (void)s;
    static const struct {
        void (*mangle)(uint8_t **, size_t *, const uint8_t *, size_t);
        int want;
        const char *what;
    } cases[] = {
        {z_bomb, MOTA_ERR_DECOMP_OVERRUN, "a block past the declared image size"},
        {z_backref, MOTA_ERR_DECOMP_OFFSET, "a back-reference before the start"},
        {z_huge_literals, MOTA_ERR_DECOMP_OVERRUN, "literals past the block"},
        {z_truncated, MOTA_ERR_DECOMP_TRUNCATED, "a frame without its end mark"},
        {z_trailing, MOTA_ERR_DECOMP_TRAILING, "a byte after the end mark"},
        {z_other_image, MOTA_ERR_DECOMP_IMAGE_DIGEST, "a valid frame of another image"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct mota_posix_device *d = device();
        const struct mota_agent_config *cfg = d->device.agent.cfg;
        uint32_t active = d->device.agent.st[0].active.slot, size = cfg->models[0].slot_size;
        uint32_t upload = cfg->models[0].slot_offset[active == 0 ? 1 : 0];
        uint8_t *before = malloc(DEV_FLASH_SIZE);
        memcpy(before, d->pf.mem, DEV_FLASH_SIZE);
        struct container_opts o = V2(.compress = MOTA_DECOMP_LZ4,
                                     .model = {.code_bytes = 30000, .params_bytes = 1000, .fill = 2, .noise = true},
                                     .z_mangle = cases[i].mangle);
        size_t len;
        uint8_t *c = make_container(&o, &len);
        attempt(d, c, len, cases[i].want, AFTER_ERASE, cases[i].what);
        /* every byte outside the upload slot and the journal is as it was */
        for (uint32_t a = 0; a < DEV_FLASH_SIZE; a++) {
            bool mine = (a >= upload && a < upload + size) ||
                        (a >= cfg->journal_offset && a < cfg->journal_offset + 2 * DEV_SECTOR);
            if (!mine && d->pf.mem[a] != before[a])
                fail_msg("%s: flash byte 0x%x outside the upload slot changed", cases[i].what, a);
        }
        free(before);
        free(c);
        dev_free(d);
    }
}

static void test_compressed_payload_altered_in_transit_is_refused_by_its_digest(void **s)
{
    (void)s;
    struct mota_posix_device *d = device();
    struct container_opts o =
        V2(.compress = MOTA_DECOMP_LZ4, .model = {.code_bytes = 30000, .params_bytes = 1000, .fill = 2, .noise = true});
    size_t len;
    uint8_t *c = make_container(&o, &len);
    struct mota_envelope env;
    struct mota_manifest man;
    assert_int_equal(mota_envelope_decode(c, len, &env), MOTA_OK);
    assert_int_equal(mota_manifest_decode(&env, &man), MOTA_OK);
    assert_true(man.comp[0].compressed);
    /* the code frame's last literal, just before its end mark: the frame still decodes */
    size_t code_end = env.head_len + mota_payload_head_size(MOTA_COMPONENT_CODE, man.comp[0].wire_size) +
                      (size_t)man.comp[0].wire_size;
    c[code_end - 5] ^= 0x01;
    attempt(d, c, len, MOTA_ERR_PAYLOAD_DIGEST, AFTER_ERASE, "compressed payload altered in transit");
    free(c);
    dev_free(d);
}

static void test_selftest_failure_and_slowness(void **s)
{
    (void)s;
    struct mota_posix_device *d = device();
    size_t len;
    struct container_opts o = V2();
    uint8_t *c = make_container(&o, &len);
    d->sim.mode = MOTA_SIM_FAIL;
    attempt(d, c, len, MOTA_ERR_SELFTEST_OUTPUT, AFTER_ERASE, "self-test output wrong");
    assert_int_equal(mota_agent_last_error(&d->device.agent, 0), MOTA_ERR_SELFTEST_OUTPUT);
    d->sim.mode = MOTA_SIM_SLOW;
    attempt(d, c, len, MOTA_ERR_SELFTEST_SLOW, AFTER_ERASE, "self-test too slow");
    d->sim.mode = MOTA_SIM_PASS;
    assert_int_equal(send_container(&d->device.agent, c, len, 1500), MOTA_OK); /* the same container, healthy device */
    free(c);
    dev_free(d);
}

static void test_model_that_does_not_load(void **s)
{
    (void)s;
    /* signed and compatible, but its NBIN header is broken: found at install */
    struct container_opts o = V2(.poke_off = 36, .poke_val = 0x2FFFFFF0u);
    hostile(&o, MOTA_ERR_NBIN_OVERLAP, AFTER_ERASE, "broken NBIN behind a valid signature");
}

static void test_an_upload_while_a_model_is_on_trial_is_refused_before_any_erase(void **s)
{
    (void)s;
    struct mota_posix_device *d = device();
    size_t l2, l3;
    struct container_opts o2 = V2(), o3 = V2(.seq = 12, .model = {.code_bytes = 3000, .fill = 3});
    uint8_t *c2 = make_container(&o2, &l2), *c3 = make_container(&o3, &l3);
    assert_int_equal(send_container(&d->device.agent, c2, l2, 1500), MOTA_OK);
    uint64_t erases = d->pf.erases;
    assert_int_equal(send_container(&d->device.agent, c3, l3, 1500), MOTA_ERR_TRIAL_PENDING);
    assert_int_equal(d->pf.erases, erases);
    assert_int_equal(mota_agent_rollback(&d->device.agent, 0), MOTA_OK);
    still_v1(d);
    free(c2);
    free(c3);
    dev_free(d);
}

static void test_bytes_past_the_end_and_wrong_offsets(void **s)
{
    (void)s;
    struct mota_posix_device *d = device();
    size_t len;
    struct container_opts o = V2();
    uint8_t *c = make_container(&o, &len);
    uint8_t *longer = malloc(len + 16);
    memcpy(longer, c, len);
    memset(longer + len, 0xAB, 16);
    assert_int_equal(mota_agent_write(&d->device.agent, 0, longer, len + 16), MOTA_ERR_UPLOAD_TOO_LONG);
    still_v1(d);
    assert_int_equal(mota_agent_write(&d->device.agent, 0, c, 100), 100);
    assert_int_equal(mota_agent_write(&d->device.agent, 200, c + 200, 100), MOTA_ERR_UPLOAD_OFFSET);
    still_v1(d);
    free(longer);
    free(c);
    dev_free(d);
}

/* An encrypted container this device holds no working key for: refused from the head, before any erase,
 * each with its own reason. */
static void test_encrypted_update_without_a_working_key_is_refused_before_any_erase(void **st)
{
    (void)st;
    static const struct mota_kek same_kid = {.kid = "dev-kek", .kid_len = 7, .k = "not the right k!"};
    static const struct mota_kek stranger = {.kid = "stranger", .kid_len = 8, .k = "0123456789abcdef"};
    struct container_opts o = V2(.encrypt = MOTA_ENC_A128GCM, .enc_kek = &same_kid);
    hostile(&o, MOTA_ERR_ENC_UNWRAP, BEFORE_ERASE, "the KEK's kid, another key");
    o.enc_kek = &stranger;
    hostile(&o, MOTA_ERR_ENC_NO_KEY, BEFORE_ERASE, "a KEK this device does not hold");
    struct container_opts e = V2(.encrypt = MOTA_ENC_A128CTR, .enc_ecdh = true);
    struct mota_posix_device *d = device();
    size_t len;
    uint8_t *c = make_container(&e, &len);
    static const uint8_t other_kid[16] = {1};
    d->cfg.enc.device_kid = other_kid; /* another device's key id */
    attempt(d, c, len, MOTA_ERR_ENC_NO_KEY, BEFORE_ERASE, "to another device's key");
    struct mota_p256_key other;
    mota_key_generate(&other);
    d->cfg.enc.device_kid = dev_ecdh_kid; /* the id, but another private key behind it */
    d->cfg.enc.device_d = other.d;
    attempt(d, c, len, MOTA_ERR_ENC_UNWRAP, BEFORE_ERASE, "to this key id, another private key");
    memset(&d->cfg.enc, 0, sizeof(d->cfg.enc)); /* a device provisioned without keys */
    attempt(d, c, len, MOTA_ERR_ENC_NO_KEY, BEFORE_ERASE, "ECDH, no device key");
    free(c);
    dev_free(d);
}

/* A ciphertext altered and signed again (a hostile signer): the GCM tag refuses it before install; CTR has
 * no tag, and its image fails its digest from flash. The running model stays. */
static void test_altered_ciphertext_is_refused_before_install(void **st)
{
    (void)st;
    struct container_opts o = V2(.encrypt = MOTA_ENC_A128GCM, .enc_flip = true);
    hostile(&o, MOTA_ERR_DECRYPT_TAG, AFTER_ERASE, "GCM ciphertext altered");
    o.encrypt = MOTA_ENC_A128CTR;
    hostile(&o, MOTA_ERR_DECRYPT_IMAGE_DIGEST, AFTER_ERASE, "CTR ciphertext altered");
    o.compress = MOTA_DECOMP_DEFLATE;
    o.model.code_bytes = 20000;
    o.model.noise = true;
    o.encrypt = MOTA_ENC_A128GCM;
    /* deflated first: the decoder meets the altered plaintext before the tag is checked, and says nothing */
    hostile(&o, MOTA_ERR_DECRYPT_TAG, AFTER_ERASE, "deflated, GCM ciphertext altered");
}

/* Bits of a compressed, encrypted payload flipped in transit, anywhere: every one is the transport digest's
 * refusal, never a decoder's (which would tell a holder of the container about the plaintext, bit by bit). */
static void test_flipped_ciphertext_bits_tell_nothing_about_the_plaintext(void **st)
{
    (void)st;
    static const struct {
        int alg;
        uint32_t z;
    } kinds[] = {{MOTA_ENC_A128GCM, MOTA_DECOMP_LZ4}, {MOTA_ENC_A128CTR, MOTA_DECOMP_DEFLATE}};
    for (size_t k = 0; k < 2; k++) {
        struct container_opts o = V2(.encrypt = kinds[k].alg, .compress = kinds[k].z);
        o.model.code_bytes = 12000;
        o.model.noise = true;
        size_t len;
        uint8_t *c = make_container(&o, &len);
        struct mota_envelope env;
        assert_int_equal(mota_envelope_decode(c, len, &env), MOTA_OK);
        struct mota_posix_device *d = device();
        for (size_t at = env.head_len + 12; at < env.head_len + 1500; at += 23) {
            c[at] ^= (uint8_t)(1u << (at % 8));
            attempt(d, c, len, MOTA_ERR_PAYLOAD_DIGEST, AFTER_ERASE, "a bit flipped in transit");
            c[at] ^= (uint8_t)(1u << (at % 8));
        }
        free(c);
        dev_free(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrong_key),
        cmocka_unit_test(test_revoked_key),
        cmocka_unit_test(test_rollback_attempt),
        cmocka_unit_test(test_same_sequence_other_content),
        cmocka_unit_test(test_wrong_vendor),
        cmocka_unit_test(test_wrong_class),
        cmocka_unit_test(test_wrong_cpu),
        cmocka_unit_test(test_wrong_float_abi),
        cmocka_unit_test(test_wrong_ll_aton),
        cmocka_unit_test(test_secure_model_on_non_secure_device),
        cmocka_unit_test(test_fpu_model_without_fpu),
        cmocka_unit_test(test_head_larger_than_the_device_head_buffer_is_refused_before_any_erase),
        cmocka_unit_test(test_head_split_over_many_small_writes_is_collected),
        cmocka_unit_test(test_head_buffer_below_the_minimum_is_a_config_error),
        cmocka_unit_test(test_too_big_for_the_slot),
        cmocka_unit_test(test_a_compressed_image_size_that_wraps_the_slot_layout_is_refused_before_any_erase),
        cmocka_unit_test(test_not_enough_exec_ram),
        cmocka_unit_test(test_unknown_model_name),
        cmocka_unit_test(test_bad_signature_and_tampered_manifest),
        cmocka_unit_test(test_garbage_stream),
        cmocka_unit_test(test_digest_mismatch_in_second_payload),
        cmocka_unit_test(test_truncated_stream),
        cmocka_unit_test(test_hostile_compressed_payloads_are_refused_inside_the_slot),
        cmocka_unit_test(test_compressed_payload_altered_in_transit_is_refused_by_its_digest),
        cmocka_unit_test(test_selftest_failure_and_slowness),
        cmocka_unit_test(test_a_journal_sector_too_small_for_a_snapshot_is_a_config_error),
        cmocka_unit_test(test_slots_sharing_a_sector_are_a_config_error),
        cmocka_unit_test(test_model_that_does_not_load),
        cmocka_unit_test(test_an_upload_while_a_model_is_on_trial_is_refused_before_any_erase),
        cmocka_unit_test(test_bytes_past_the_end_and_wrong_offsets),
        cmocka_unit_test(test_encrypted_update_without_a_working_key_is_refused_before_any_erase),
        cmocka_unit_test(test_altered_ciphertext_is_refused_before_install),
        cmocka_unit_test(test_flipped_ciphertext_bits_tell_nothing_about_the_plaintext),
    };
    return cmocka_run_group_tests_name("agent hostile updates", tests, setup, teardown);
}
