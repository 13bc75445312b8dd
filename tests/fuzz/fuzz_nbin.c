/* libFuzzer target: the NBIN parser, validator, epoch report and host-side installer.
 * Whatever the input, the installer may only touch the simulated regions it
 * is given (ASan checks every access to them and to the input). */
#include "mota/epochs.h"
#include "mota/err.h"
#include "mota/loader.h"
#include "mota/nbin.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct region {
    uint32_t addr, size;
    uint8_t *host;
};

static void *map(void *ctx, uint32_t addr, uint32_t len, bool write)
{
    struct region *r = ctx;
    (void)write;
    for (int i = 0; i < 3; i++) {
        if (r[i].host && addr >= r[i].addr && (uint64_t)addr + len <= (uint64_t)r[i].addr + r[i].size)
            return r[i].host + (addr - r[i].addr);
    }
    return NULL;
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
        if (blocks[i].start_fn >= in->ro_size || blocks[i].end_fn >= in->ro_size || blocks[i].n_ops > MOTA_EPOCH_MAX_OPS)
            abort();
    for (size_t i = 0; i < rep.n_buffers; i++)
        if (bufs[i].name < (const char *)buf || bufs[i].name + bufs[i].name_len > (const char *)buf + size ||
            bufs[i].ndims > MOTA_EPOCH_MAX_DIMS || bufs[i].mem_ndims > MOTA_EPOCH_MAX_DIMS ||
            bufs[i].block >= (int32_t)rep.n_blocks)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mota_nbin_info in;
    uint8_t *buf = malloc(size ? size : 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    int ret = mota_nbin_parse(buf, size, &in);
    if (mota_err_name(ret) == NULL)
        abort();
    if (ret == MOTA_OK) {
        /* every slice the parser hands out lies inside the input */
        if (in.c_name < (const char *)buf || in.c_name + in.c_name_len > (const char *)buf + size)
            abort();
        for (unsigned i = 0; i < in.n_pools; i++) {
            if (in.pools[i].name + in.pools[i].name_len > (const char *)buf + size)
                abort();
        }
    }
    ret = mota_nbin_validate(buf, size, &in);
    if (ret == MOTA_OK)
        epochs(buf, size, &in);
    if (ret == MOTA_OK && in.exec_ram_copy <= (8u << 20) && in.ext_ram_size <= (8u << 20)) {
        /* the params of a split model: the tail of the input stands in for them */
        const uint8_t *params = in.split ? buf + size / 2 : NULL;
        size_t params_len = in.split ? size - size / 2 : 0;
        struct region r[3] = {
            {0x20000000u, in.exec_ram_copy + 8, malloc(in.exec_ram_copy + 8)},
            {0x90000000u, in.ext_ram_size + 8, malloc(in.ext_ram_size + 8)},
            {0x34000000u, 0x10000, malloc(0x10000)},
        };
        struct mota_loader_mem mem = {.map = map, .ctx = r};
        for (uint32_t mode = MOTA_INSTALL_XIP; mode <= MOTA_INSTALL_COPY; mode++) {
            struct mota_install_config c = {
                .image = buf, .image_len = size, .image_addr = 0x70000000u,
                .params = params, .params_len = params_len, .params_addr = 0x78000000u,
                .exec_ram_addr = r[0].addr, .exec_ram_size = r[0].size,
                .ext_ram_addr = r[1].addr, .ext_ram_size = r[1].size,
                .mode = mode, .clear = true, .mem = &mem,
            };
            struct mota_installed m;
            if (mota_err_name(mota_loader_install(&c, &m)) == NULL)
                abort();
        }
        for (int i = 0; i < 3; i++)
            free(r[i].host);
    }
    free(buf);
    return 0;
}
