/* libFuzzer target: the NBIN parser, validator and host-side installer.
 * Whatever the input, the installer may only touch the simulated regions it
 * is given (ASan checks every access to them and to the input). */
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
