/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the NBIN parser, validator, params check, epoch report, inputs and outputs, and host-side
 * installer.
 * The input is a model file, or a split model's image followed by its params file. Whatever the
 * input, the installer may only touch the simulated regions it is given, each heap memory of
 * exactly its size (ASan checks every access to them, to the image and to the params). */
#include "mota/epochs.h"
#include "mota/err.h"
#include "mota/loader.h"
#include "mota/nbin.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP (8u << 20) /* largest exec or external RAM a run allocates */

struct region {
    uint32_t addr, size;
    uint8_t *host;
};

/* One device's memory for an install: exec RAM, external RAM, NPU RAM (COPY and RESET pools);
 * and the code in place, which cache maintenance may also name. */
struct space {
    struct region r[3];
    uint32_t code_addr, code_len;
};

static const struct region *find(const struct space *sp, uint32_t addr, uint32_t len)
{
    for (int i = 0; i < 3; i++) {
        const struct region *r = &sp->r[i];
        if (r->host && addr >= r->addr && (uint64_t)addr + len <= (uint64_t)r->addr + r->size)
            return r;
    }
    return NULL;
}

static void *map(void *ctx, uint32_t addr, uint32_t len, bool write)
{
    const struct region *r = find(ctx, addr, len);
    (void)write;
    return r ? r->host + (addr - r->addr) : NULL;
}

/* Cache maintenance names memory the installer was given, or the code it runs in place. */
static void cache_op(void *ctx, uint32_t addr, uint32_t len)
{
    const struct space *sp = ctx;
    if (find(sp, addr, len) == NULL &&
        (addr < sp->code_addr || (uint64_t)addr + len > (uint64_t)sp->code_addr + sp->code_len))
        abort();
}

/* The devices every valid model is installed on: code, params and external RAM in external
 * memory (above the installer's EXT_ADDR_MIN: cacheable pools allowed) or in internal memory
 * (refused). short_map: the map grants less than the config claims, the exec RAM of XIP for a
 * COPY install and no external RAM, and the installer must stop at the refusal. */
static const struct device {
    uint32_t mode, image_addr, params_addr, ext_addr;
    bool short_map, clear, caches;
} devices[] = {
    {MOTA_INSTALL_XIP, 0x70000000u, 0x71000000u, 0x90000000u, false, false, true}, /* N6-like, no CLEAR */
    {MOTA_INSTALL_COPY, 0x70000000u, 0x71000000u, 0x90000000u, false, true, true}, /* N6-like */
    {MOTA_INSTALL_COPY, 0x08000000u, 0x08100000u, 0x24000000u, true, true, false}, /* internal memory */
    {MOTA_INSTALL_XIP, 0x70000000u, 0x71000000u, 0, false, true, false},           /* no external RAM */
};

/* Heap memory of exactly each region's size, which the installs of one model share. */
struct heap {
    uint8_t *xip, *copy, *ext, *npu;
};

/* Install on device d: through mota_loader_install, which validates again, or with validated
 * through mota_loader_install_validated and the caller's validation, as the agent does. */
static void install(const uint8_t *img, size_t img_len, const uint8_t *params, size_t params_len,
                    const struct mota_nbin_info *in, const struct heap *h, const struct device *d, bool validated)
{
    bool xip_ram = d->mode == MOTA_INSTALL_XIP || d->short_map;
    uint32_t ext = d->ext_addr ? in->ext_ram_size : 0;
    struct space sp = {
        .r = {{0x20000000u, xip_ram ? in->exec_ram_xip : in->exec_ram_copy, xip_ram ? h->xip : h->copy},
              {d->ext_addr, ext, d->ext_addr && !d->short_map ? h->ext : NULL},
              {0x34000000u, 0x10000, h->npu}},
        .code_addr = d->image_addr,
        .code_len = (uint32_t)((img_len + 7) & ~(size_t)7),
    };
    struct mota_install_mem mem = {
        .map = map,
        .ctx = &sp,
        .clean_dcache = d->caches ? cache_op : NULL,
        .invalidate_icache = d->caches ? cache_op : NULL,
    };
    struct mota_install_config c = {
        .image = img,
        .image_len = img_len,
        .image_addr = d->image_addr,
        .params = params,
        .params_len = params_len,
        .params_addr = d->params_addr,
        .exec_ram_addr = sp.r[0].addr,
        .exec_ram_size = d->mode == MOTA_INSTALL_XIP ? in->exec_ram_xip : in->exec_ram_copy,
        .ext_ram_addr = d->ext_addr,
        .ext_ram_size = ext,
        .mode = d->mode,
        .clear = d->clear,
        .mem = &mem,
    };
    struct mota_installed m;
    int ret = validated ? mota_loader_install_validated(&c, in, &m) : mota_loader_install(&c, &m);
    if (mota_err_name(ret) == NULL)
        abort();
}

/* Every slice the parser hands out lies inside the image. */
static void check_slices(const uint8_t *buf, size_t size, const struct mota_nbin_info *in)
{
    const char *lo = (const char *)buf, *hi = (const char *)buf + size;
    if (in->c_name < lo || in->c_name + in->c_name_len > hi)
        abort();
    for (unsigned i = 0; i < in->n_pools; i++)
        if (in->pools[i].name < lo || in->pools[i].name + in->pools[i].name_len > hi)
            abort();
}

static struct mota_epoch_block blocks[MOTA_EPOCH_MAX_BLOCKS];
static struct mota_epoch_buffer bufs[MOTA_EPOCH_MAX_BUFFERS];

/* The epoch report of a valid model: a reason code or a report whose every slice and count is bounded. */
static void epochs(const uint8_t *buf, size_t size, const struct mota_nbin_info *in)
{
    struct mota_epoch_report rep;
    int ret = mota_epochs_decode(buf, size, in, blocks, MOTA_EPOCH_MAX_BLOCKS, bufs, MOTA_EPOCH_MAX_BUFFERS, &rep);
    if (mota_err_name(ret) == NULL)
        abort();
    if (ret != MOTA_OK)
        return;
    const struct mota_epoch_summary *s = &rep.sum;
    if (rep.n_blocks > MOTA_EPOCH_MAX_BLOCKS || rep.n_buffers > MOTA_EPOCH_MAX_BUFFERS || s->blocks != rep.n_blocks ||
        s->blob + s->hw + s->hybrid + s->sw != s->blocks || s->hybrid_epochs + s->sw_epochs > s->blocks)
        abort();
    for (size_t i = 0; i < rep.n_blocks; i++)
        if (blocks[i].start_fn >= in->ro_size || blocks[i].end_fn >= in->ro_size ||
            blocks[i].n_ops > MOTA_EPOCH_MAX_OPS)
            abort();
    for (size_t i = 0; i < rep.n_buffers; i++)
        if (bufs[i].name < (const char *)buf || bufs[i].name + bufs[i].name_len > (const char *)buf + size ||
            bufs[i].ndims > MOTA_EPOCH_MAX_DIMS || bufs[i].mem_ndims > MOTA_EPOCH_MAX_DIMS ||
            bufs[i].block >= (int32_t)rep.n_blocks)
            abort();
}

/* The inputs and outputs of a valid model: a reason code and no tensors, or tensors within their bounds whose
 * names lie in the image and whose bytes add up. */
static void inputs_outputs(const uint8_t *buf, size_t size, const struct mota_nbin_info *in)
{
    static struct mota_nbin_io io;
    int ret = mota_nbin_io(buf, size, in, &io);
    if (mota_err_name(ret) == NULL || io.source < MOTA_NBIN_IO_TABLES || io.source > MOTA_NBIN_IO_NONE ||
        io.n_in > MOTA_NBIN_IO_MAX || io.n_out > MOTA_NBIN_IO_MAX || (ret != MOTA_OK && io.n_in + io.n_out > 0) ||
        (in->family != MOTA_NBIN_FAMILY_NPU && (ret != MOTA_OK || io.source != MOTA_NBIN_IO_RUN_TIME)))
        abort();
    const struct mota_nbin_tensor *ts[2] = {io.in, io.out};
    unsigned n[2] = {io.n_in, io.n_out};
    uint64_t sum[2] = {0, 0};
    for (int k = 0; k < 2; k++)
        for (unsigned i = 0; i < n[k]; i++) {
            const struct mota_nbin_tensor *t = &ts[k][i];
            if ((t->name != NULL &&
                 (t->name < (const char *)buf || t->name + t->name_len > (const char *)buf + size)) ||
                t->ndims > MOTA_NBIN_IO_MAX_DIMS || t->name_len > MOTA_NBIN_IO_MAX_NAME)
                abort();
            sum[k] += t->bytes;
        }
    if (sum[0] != io.in_bytes || sum[1] != io.out_bytes)
        abort();
}

static uint8_t *alloc(size_t n)
{
    return malloc(n ? n : 1);
}

static uint8_t *copy_of(const uint8_t *p, size_t n)
{
    uint8_t *q = alloc(n);
    if (q != NULL)
        memcpy(q, p, n);
    return q;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mota_nbin_info in;
    uint8_t *buf = copy_of(data, size), *img = buf, *params = NULL;
    size_t img_len = size, params_len = 0;
    if (buf == NULL)
        return 0;
    int ret = mota_nbin_parse(buf, size, &in);
    if (mota_err_name(ret) == NULL)
        abort();
    if (ret == MOTA_OK)
        check_slices(buf, size, &in);
    ret = mota_nbin_validate(buf, size, &in);
    if (ret == MOTA_ERR_NBIN_TRAILING && in.image_len > 0 && in.image_len < size) {
        /* an image and what follows it (the parser measured the image before it refused the
         * rest): the params file, each in a buffer of its exact size */
        img_len = in.image_len;
        params_len = size - img_len;
        img = copy_of(data, img_len);
        params = copy_of(data + img_len, params_len);
        ret = img && params ? mota_nbin_validate(img, img_len, &in) : MOTA_ERR_NOSPC;
        if (ret == MOTA_OK)
            check_slices(img, img_len, &in);
    }
    if (ret == MOTA_OK) {
        epochs(img, img_len, &in);
        inputs_outputs(img, img_len, &in);
        /* a split model's own file, or the params the image holds */
        int pret =
            in.split ? mota_nbin_check_params(&in, params, params_len) : mota_nbin_check_params(&in, img, img_len);
        if (mota_err_name(pret) == NULL)
            abort();
    }
    if (ret == MOTA_OK && in.exec_ram_copy <= CAP && in.ext_ram_size <= CAP) {
        struct heap h = {alloc(in.exec_ram_xip), alloc(in.exec_ram_copy), alloc(in.ext_ram_size), alloc(0x10000)};
        for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++)
            install(img, img_len, params, params_len, &in, &h, &devices[i], i > 0);
        free(h.xip);
        free(h.copy);
        free(h.ext);
        free(h.npu);
    }
    if (img != buf)
        free(img);
    free(params);
    free(buf);
    return 0;
}
