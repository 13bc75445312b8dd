/* SPDX-License-Identifier: Apache-2.0 */
/* The installer on the host, with simulated device memory. */
#include "mota/err.h"
#include "mota/loader.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture_yolo.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct region {
    uint32_t addr, size;
    uint8_t *host;
};

struct sim {
    struct region r[8];
    int n;
};

static void *sim_map(void *ctx, uint32_t addr, uint32_t len, bool write)
{
    struct sim *s = ctx;
    (void)write;
    for (int i = 0; i < s->n; i++) {
        if (addr >= s->r[i].addr && (uint64_t)addr + len <= (uint64_t)s->r[i].addr + s->r[i].size)
            return s->r[i].host + (addr - s->r[i].addr);
    }
    return NULL;
}

static void sim_add(struct sim *s, uint32_t addr, uint32_t size)
{
    s->r[s->n].addr = addr;
    s->r[s->n].size = size;
    s->r[s->n].host = calloc(1, size);
    memset(s->r[s->n].host, 0xA5, size); /* so that missing writes show */
    s->n++;
}

static void sim_free(struct sim *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->r[i].host);
    s->n = 0;
}


static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Undo the relocation of one word, by the region its value falls into. */
static uint32_t unrelocate(const struct mota_installed *m, const struct mota_nbin_info *in, uint32_t v)
{
    if (v == 0)
        return 0;
    if (v >= m->rom_addr && v < m->rom_addr + in->ro_size) /* COPY: RAM follows RO directly */
        return 0x20000000u | (v - m->rom_addr);
    if (v >= m->ram_addr && v <= m->ram_addr + in->rw_size)
        return 0x40000000u | (v - m->ram_addr);
    if (v >= m->param0_addr && v <= m->param0_addr + in->params_len)
        return 0x80000000u | (v - m->param0_addr);
    if (v >= m->ext_addr && v <= m->ext_addr + in->ext_ram_size)
        return 0x90000000u | (v - m->ext_addr);
    return 0xDEADBEEFu;
}

/* The installed RW image with every patched word turned back into its link-time value. */
static uint8_t *normalised_ram(const struct sim *s, const struct mota_installed *m, const struct mota_nbin_info *in)
{
    uint8_t *ram = sim_map((void *)s, m->ram_addr, in->rw_size, false);
    uint8_t *copy = malloc(in->rw_size);
    memcpy(copy, ram, in->rw_size);
    for (uint32_t off = in->got_off; off < in->got_end; off += 4) {
        uint32_t v = unrelocate(m, in, rd32(copy + off));
        memcpy(copy + off, &v, 4);
    }
    for (uint32_t i = 0; i < in->rel_count; i++) {
        uint32_t off = rd32(yolo + in->rel_off + 4 * i) & 0x0FFFFFFFu;
        uint32_t v = unrelocate(m, in, rd32(copy + off));
        memcpy(copy + off, &v, 4);
    }
    /* the runtime-context words the installer fills */
    memset(copy + in->ctx_off, 0, 20);
    memset(copy + in->ctx_off + 60, 0, 4);
    return copy;
}

struct placement {
    uint32_t image, exec, ext;
};

static void install_yolo(struct sim *s, const struct placement *p, uint32_t mode, struct mota_installed *m)
{
    struct mota_install_mem mem = {.map = sim_map, .ctx = s};
    sim_add(s, p->exec, 600 * 1024);
    sim_add(s, p->ext, 3u << 20);
    sim_add(s, 0x34200000u, 0x80000); /* AXISRAM3/4, the RESET pools' fixed addresses */
    struct mota_install_config c = {
        .image = yolo,
        .image_len = yolo_len,
        .image_addr = p->image,
        .exec_ram_addr = p->exec,
        .exec_ram_size = 600 * 1024,
        .ext_ram_addr = p->ext,
        .ext_ram_size = 3u << 20,
        .mode = mode,
        .clear = true,
        .callbacks_addr = 0x0C000100,
        .ll_instance_addr = 0x0C000200,
        .mem = &mem,
    };
    assert_int_equal(mota_loader_install(&c, m), MOTA_OK);
}


/* The ranges an install asked to clean from the data cache. */
struct cleaned {
    struct sim *s;
    unsigned n;
    uint32_t addr[16], len[16];
};

static void *cleaned_map(void *ctx, uint32_t addr, uint32_t len, bool write)
{
    return sim_map(((struct cleaned *)ctx)->s, addr, len, write);
}

static void record_clean(void *ctx, uint32_t addr, uint32_t len)
{
    struct cleaned *c = ctx;
    if (c->n < 16) {
        c->addr[c->n] = addr;
        c->len[c->n++] = len;
    }
}

static bool was_cleaned(const struct cleaned *c, uint32_t addr, uint32_t len)
{
    for (unsigned i = 0; i < c->n; i++)
        if (addr >= c->addr[i] && (uint64_t)addr + len <= (uint64_t)c->addr[i] + c->len[i])
            return true;
    return false;
}

/* On an N6 the NPU reads its pools from memory, past the core's data cache: whatever the installer wrote
 * there (the external pool's copy, the cleared RESET pools) must be cleaned, as the RW data is. */
static void test_every_pool_the_installer_writes_is_cleaned_from_the_data_cache(void **state)
{
    (void)state;
    NEED_YOLO();
    struct sim s = {0};
    struct cleaned cl = {.s = &s};
    struct mota_install_mem mem = {.map = cleaned_map, .clean_dcache = record_clean, .ctx = &cl};
    sim_add(&s, 0x24000000u, 600 * 1024);
    sim_add(&s, 0x90000000u, 3u << 20);
    sim_add(&s, 0x34200000u, 0x80000);
    struct mota_install_config c = {
        .image = yolo,
        .image_len = yolo_len,
        .image_addr = 0x70000000u,
        .exec_ram_addr = 0x24000000u,
        .exec_ram_size = 600 * 1024,
        .ext_ram_addr = 0x90000000u,
        .ext_ram_size = 3u << 20,
        .mode = MOTA_INSTALL_XIP,
        .clear = true,
        .mem = &mem,
    };
    struct mota_installed m;
    int ret = mota_loader_install(&c, &m);
    bool all = ret == MOTA_OK && was_cleaned(&cl, 0x90000000u, 3011688) /* xSPI1: RELOC MIXED, copied */
               && was_cleaned(&cl, 0x34270000u, 16384)                  /* AXISRAM4: RESET, cleared */
               && was_cleaned(&cl, 0x34200000u, 458752)                 /* AXISRAM3: RESET, cleared */
               && was_cleaned(&cl, m.ram_addr, 4);                      /* the RW data */
    sim_free(&s);
    assert_true(all);
}

static void test_yolo_installs_identically_at_two_addresses_in_xip_and_copy(void **state)
{
    (void)state;
    NEED_YOLO();
    static const struct placement at[2] = {{0x70000000u, 0x24000000u, 0x90000000u},
                                           {0x71234560u, 0x34000008u, 0xA1000000u}};
    struct mota_nbin_info in;
    assert_int_equal(mota_nbin_validate(yolo, yolo_len, &in), MOTA_OK);
    /* the file's own RW image, as the reference every install must come back to */
    uint8_t *ref = calloc(1, in.rw_size);
    memcpy(ref, yolo + in.ro_size, in.data_copy);
    memset(ref + in.ctx_off, 0, 20);
    memset(ref + in.ctx_off + 60, 0, 4);

    for (uint32_t mode = MOTA_INSTALL_XIP; mode <= MOTA_INSTALL_COPY; mode++) {
        uint8_t *norm[2];
        for (int k = 0; k < 2; k++) {
            struct sim s = {0};
            struct mota_installed m;
            install_yolo(&s, &at[k], mode, &m);
            assert_true(m.npu); /* ST's Neural-ART model: its inference is the NPU runtime's */
            assert_int_equal(m.got_patched, 63);
            assert_int_equal(m.rel_patched, 213);
            assert_int_equal(m.rom_addr, mode == MOTA_INSTALL_XIP ? at[k].image : at[k].exec);
            assert_int_equal(m.ram_addr, mode == MOTA_INSTALL_XIP ? at[k].exec : at[k].exec + 274088);
            assert_int_equal(m.param0_addr, at[k].image + 280408);
            assert_int_equal(m.entries[0], m.rom_addr + 0x94 + 1);
            uint8_t *ctx = sim_map(&s, m.ctx_addr, 68, false);
            assert_int_equal(rd32(ctx), mode == MOTA_INSTALL_XIP ? 3 : 1);
            assert_int_equal(rd32(ctx + 8), m.ram_addr);
            assert_int_equal(rd32(ctx + 12), m.rom_addr);
            assert_int_equal(rd32(ctx + 16), 0x0C000100u);
            assert_int_equal(rd32(ctx + 20), m.rom_addr + (0x20000000u ^ rd32(yolo + in.ro_size + in.ctx_off + 20)));
            /* the xSPI1 pool (RELOC MIXED, id 1) was copied to external RAM, the RESET pools cleared */
            assert_memory_equal(sim_map(&s, at[k].ext, 4096, false), yolo + 280408, 4096);
            uint8_t *axi3 = sim_map(&s, 0x34200000u, 458752, false);
            for (uint32_t i = 0; i < 458752; i += 4093)
                assert_int_equal(axi3[i], 0);
            if (mode == MOTA_INSTALL_COPY)
                assert_memory_equal(sim_map(&s, at[k].exec, in.ro_size, false), yolo, in.ro_size);
            norm[k] = normalised_ram(&s, &m, &in);
            for (uint32_t off = 0; off < in.rw_size; off += 4) {
                if (memcmp(norm[k] + off, ref + off, 4) != 0)
                    fail_msg("mode %u placement %d: RW word at 0x%x is 0x%08x, file says 0x%08x", mode, k, off,
                             rd32(norm[k] + off), rd32(ref + off));
            }
            sim_free(&s);
        }
        assert_memory_equal(norm[0], norm[1], in.rw_size);
        free(norm[0]);
        free(norm[1]);
    }
    free(ref);
}

static void test_installer_refuses_what_does_not_fit(void **state)
{
    (void)state;
    NEED_YOLO();
    struct sim s = {0};
    struct mota_install_mem mem = {.map = sim_map, .ctx = &s};
    struct mota_installed m;
    sim_add(&s, 0x24000000u, 600 * 1024);
    sim_add(&s, 0x90000000u, 3u << 20);
    sim_add(&s, 0x34200000u, 0x80000);
    struct mota_install_config good = {
        .image = yolo,
        .image_len = yolo_len,
        .image_addr = 0x70000000u,
        .exec_ram_addr = 0x24000000u,
        .exec_ram_size = 600 * 1024,
        .ext_ram_addr = 0x90000000u,
        .ext_ram_size = 3u << 20,
        .mode = MOTA_INSTALL_COPY,
        .clear = true,
        .mem = &mem,
    };
    struct mota_install_config c;
    assert_int_equal(mota_loader_install(&good, &m), MOTA_OK);
    c = good;
    c.exec_ram_size = 523728 - 8;
    assert_int_equal(mota_loader_install(&c, &m), MOTA_ERR_INSTALL_EXEC_RAM);
    c = good;
    c.mode = MOTA_INSTALL_XIP;
    c.exec_ram_size = 249640;
    assert_int_equal(mota_loader_install(&c, &m), MOTA_OK);
    c = good;
    c.exec_ram_addr += 4;
    assert_int_equal(mota_loader_install(&c, &m), MOTA_ERR_INSTALL_ALIGN);
    c = good;
    c.ext_ram_size = 3011680;
    assert_int_equal(mota_loader_install(&c, &m), MOTA_ERR_INSTALL_EXT_RAM);
    c = good;
    c.ext_ram_addr = 0;
    assert_int_equal(mota_loader_install(&c, &m), MOTA_ERR_INSTALL_EXT_RAM);
    c = good;
    c.ext_ram_addr = 0x24000000u; /* cacheable xSPI1 pool in internal RAM */
    assert_int_equal(mota_loader_install(&c, &m), MOTA_ERR_INSTALL_CACHEABLE);
    c = good;
    c.mode = 3;
    assert_int_equal(mota_loader_install(&c, &m), MOTA_ERR_INSTALL_ARG);
    c = good;
    c.params = yolo;
    c.params_len = 8;
    c.params_addr = 0x71000000u;
    assert_int_equal(mota_loader_install(&c, &m), MOTA_ERR_NBIN_SPLIT);
    c = good;
    c.image_len = yolo_len - 1; /* no length, no install */
    assert_int_not_equal(mota_loader_install(&c, &m), MOTA_OK);
    sim_free(&s);
    /* RESET pools at addresses the device does not allow */
    sim_add(&s, 0x24000000u, 600 * 1024);
    sim_add(&s, 0x90000000u, 3u << 20);
    assert_int_equal(mota_loader_install(&good, &m), MOTA_ERR_INSTALL_REGION);
    sim_free(&s);
}

static void test_split_model_takes_its_params_from_their_own_address(void **state)
{
    (void)state;
    NEED_YOLO();
    struct sim s = {0};
    struct mota_install_mem mem = {.map = sim_map, .ctx = &s};
    struct mota_installed m;
    uint8_t *img = malloc(280408);
    memcpy(img, yolo, 280408);
    img[48] = img[49] = img[50] = img[51] = 0; /* params_offset = 0: split */
    sim_add(&s, 0x24000000u, 600 * 1024);
    sim_add(&s, 0x90000000u, 3u << 20);
    sim_add(&s, 0x34200000u, 0x80000);
    struct mota_install_config c = {
        .image = img,
        .image_len = 280408,
        .image_addr = 0x70000000u,
        .exec_ram_addr = 0x24000000u,
        .exec_ram_size = 600 * 1024,
        .ext_ram_addr = 0x90000000u,
        .ext_ram_size = 3u << 20,
        .mode = MOTA_INSTALL_XIP,
        .clear = false,
        .mem = &mem,
    };
    assert_int_equal(mota_loader_install(&c, &m), MOTA_ERR_INSTALL_PARAMS);
    c.params = yolo + 280408;
    c.params_len = yolo_len - 280408;
    c.params_addr = 0x78000000u;
    assert_int_equal(mota_loader_install(&c, &m), MOTA_OK);
    assert_int_equal(m.param0_addr, 0x78000000u);
    assert_memory_equal(sim_map(&s, 0x90000000u, 3011688, false), yolo + 280408, 3011688);
    /* without CLEAR the RESET pools are left alone */
    assert_int_equal(((uint8_t *)sim_map(&s, 0x34200000u, 4, false))[0], 0xA5);
    free(img);
    sim_free(&s);
}

static void test_code_relocations_need_copy_mode(void **state)
{
    (void)state;
    NEED_YOLO();
    struct sim s = {0};
    struct mota_install_mem mem = {.map = sim_map, .ctx = &s};
    struct mota_installed m;
    struct mota_nbin_info in;
    uint8_t *img = malloc(yolo_len);
    memcpy(img, yolo, yolo_len);
    /* turn the first REL entry into one that patches a zero word of rodata */
    uint32_t zero = 0;
    for (uint32_t off = 0x1000; off < 274088; off += 4) {
        if (rd32(img + off) == 0) {
            zero = off;
            break;
        }
    }
    assert_true(zero != 0);
    uint32_t e = 0x20000000u | zero;
    memcpy(img + 279552, &e, 4);
    assert_int_equal(mota_nbin_validate(img, yolo_len, &in), MOTA_OK);
    assert_int_equal(in.rel_code_entries, 1);
    sim_add(&s, 0x24000000u, 600 * 1024);
    sim_add(&s, 0x90000000u, 3u << 20);
    sim_add(&s, 0x34200000u, 0x80000);
    struct mota_install_config c = {
        .image = img,
        .image_len = yolo_len,
        .image_addr = 0x70000000u,
        .exec_ram_addr = 0x24000000u,
        .exec_ram_size = 600 * 1024,
        .ext_ram_addr = 0x90000000u,
        .ext_ram_size = 3u << 20,
        .mode = MOTA_INSTALL_XIP,
        .mem = &mem,
    };
    assert_int_equal(mota_loader_install(&c, &m), MOTA_ERR_NBIN_REL_XIP);
    c.mode = MOTA_INSTALL_COPY;
    assert_int_equal(mota_loader_install(&c, &m), MOTA_OK);
    assert_int_equal(m.rel_patched, 213);
    free(img);
    sim_free(&s);
}

/* ST's U585 model: installed with the port's CRC callbacks in its rt_ctx (words 13, 14), as ST's
 * ai_rel_network_load_and_create_ext does; a 52-byte rt_ctx is left as the file has it. */
#define U585_FILE "st-legacy/u585_network_rel.bin"

static int install_u585(const uint8_t *img, size_t len, uint32_t mode, uint32_t acquire, uint32_t release,
                        uint32_t words[2])
{
    struct sim s = {0};
    struct mota_install_mem mem = {.map = sim_map, .ctx = &s, .crc_acquire = acquire, .crc_release = release};
    struct mota_installed m;
    sim_add(&s, 0x38200000u, 64 * 1024);
    static const uint8_t weights[42120];
    struct mota_install_config c = {.image = img,
                                    .image_len = len,
                                    .image_addr = 0x80002000u,
                                    .params = weights,
                                    .params_len = sizeof(weights),
                                    .params_addr = 0x80010000u,
                                    .exec_ram_addr = 0x38200000u,
                                    .exec_ram_size = 64 * 1024,
                                    .mode = mode,
                                    .mem = &mem};
    int ret = mota_loader_install(&c, &m);
    if (ret == MOTA_OK) {
        assert_false(m.npu); /* legacy: its own runtime, called under guard */
        const uint8_t *ctx = sim_map(&s, m.ctx_addr, 60, false);
        words[0] = rd32(ctx + 52);
        words[1] = rd32(ctx + 56);
    }
    sim_free(&s);
    return ret;
}

static void test_legacy_rt_ctx_gets_the_ports_crc_callbacks_where_it_has_their_words(void **state)
{
    (void)state;
    size_t n = 0;
    uint8_t *f = fixture_load(U585_FILE, &n);
    FIXTURE_NEEDED(f, U585_FILE);
    uint32_t w[2] = {0};
    assert_int_equal(install_u585(f, n, MOTA_INSTALL_XIP, 0x10000401u, 0x1000040Bu, w), MOTA_OK);
    assert_int_equal(w[0], 0x10000401u);
    assert_int_equal(w[1], 0x1000040Bu);
    assert_int_equal(install_u585(f, n, MOTA_INSTALL_COPY, 0x10000401u, 0x1000040Bu, w), MOTA_OK);
    assert_int_equal(w[0], 0x10000401u);
    assert_int_equal(w[1], 0x1000040Bu);
    assert_int_equal(install_u585(f, n, MOTA_INSTALL_XIP, 0, 0, w), MOTA_OK); /* a port without: NULL */
    assert_int_equal(w[0], 0);
    assert_int_equal(w[1], 0);
    f[12] = 0xA0; /* data_end 0x800007A0: rt_ctx is 52 bytes, what follows it is not the port's to write */
    assert_int_equal(install_u585(f, n, MOTA_INSTALL_XIP, 0x10000401u, 0x1000040Bu, w), MOTA_OK);
    assert_int_equal(w[0], 0);
    assert_int_equal(w[1], 0);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yolo_installs_identically_at_two_addresses_in_xip_and_copy),
        cmocka_unit_test(test_every_pool_the_installer_writes_is_cleaned_from_the_data_cache),
        cmocka_unit_test(test_installer_refuses_what_does_not_fit),
        cmocka_unit_test(test_split_model_takes_its_params_from_their_own_address),
        cmocka_unit_test(test_code_relocations_need_copy_mode),
        cmocka_unit_test(test_legacy_rt_ctx_gets_the_ports_crc_callbacks_where_it_has_their_words),
    };
    return cmocka_run_group_tests_name("loader", tests, yolo_setup, yolo_teardown);
}
