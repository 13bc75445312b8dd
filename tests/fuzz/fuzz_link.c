/* libFuzzer target: the device's link server (frame decoder, request
 * parsing, the agent behind it) fed arbitrary bytes, in arbitrary chunks,
 * as a UART would deliver them. */
#include "mota/agent.h"
#include "mota/err.h"
#include "mota/link.h"
#include "mota/posix_flash.h"
#include "mota/posix_sim.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SECTOR 4096u

struct feed {
    const uint8_t *p;
    size_t len, off;
};

static int feed_read(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms)
{
    struct feed *f = ctx;
    (void)timeout_ms;
    if (f->off >= f->len)
        return MOTA_ERR_TRANSPORT;
    /* chunk sizes from the data itself, 1..64 bytes */
    size_t n = (size_t)(f->p[f->off] % 64) + 1;
    if (n > len)
        n = len;
    if (n > f->len - f->off)
        n = f->len - f->off;
    memcpy(buf, f->p + f->off, n);
    f->off += n;
    return (int)n;
}

static int sink_write(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    (void)len;
    return MOTA_OK;
}

static uint8_t exec_ram[64 * 1024];
static uint8_t scratch[MOTA_AGENT_SCRATCH_MIN];
static uint8_t selftest[256];

static void *map(void *ctx, uint32_t addr, uint32_t len, bool write)
{
    (void)ctx;
    (void)write;
    if (addr >= 0x20000000u && (uint64_t)addr + len <= 0x20000000u + sizeof(exec_ram))
        return exec_ram + (addr - 0x20000000u);
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct mota_posix_flash pf;
    static struct mota_flash fl;
    static struct mota_agent agent;
    static struct mota_link link;
    static struct mota_posix_sim sim;
    static const struct mota_loader_mem mem = {.map = map};
    static struct mota_agent_config cfg;
    if (pf.mem == NULL) {
        if (mota_posix_flash_init(&pf, 2 * SECTOR + 2 * 32 * 1024, SECTOR, 16) != MOTA_OK)
            abort();
        mota_posix_flash_hal(&pf, &fl, 0x08000000u);
        cfg.flash = &fl;
        cfg.n_models = 1;
        cfg.models[0].c_name = "network";
        cfg.models[0].slot_offset[0] = 2 * SECTOR;
        cfg.models[0].slot_offset[1] = 2 * SECTOR + 32 * 1024;
        cfg.models[0].slot_size = 32 * 1024;
        cfg.models[0].exec_ram_addr = 0x20000000u;
        cfg.models[0].exec_ram_size = sizeof(exec_ram);
        cfg.n_keys = 1;
        memset(cfg.keys[0].pub, 0x04, 65);
        cfg.profile.reloc_major = 8;
        cfg.profile.install_modes = 6;
        cfg.loader_mem = &mem;
        cfg.infer = mota_posix_sim_infer;
        cfg.infer_ctx = &sim;
        cfg.selftest_buf = selftest;
        cfg.selftest_buf_size = sizeof(selftest);
        cfg.scratch = scratch;
        cfg.scratch_size = sizeof(scratch);
    }
    memset(pf.mem, 0xFF, pf.size);
    if (mota_agent_init(&agent, &cfg) != MOTA_OK)
        abort(); /* a blank flash always boots */
    struct feed f = {data, size, 0};
    struct mota_transport tr = {.read = feed_read, .write = sink_write, .ctx = &f};
    mota_link_init(&link, &agent, &tr, NULL, "fuzz");
    for (int i = 0; i < 100000; i++) {
        int ret = mota_link_poll(&link, 0);
        if (ret == MOTA_ERR_TRANSPORT)
            break;
        if (ret != MOTA_OK && mota_err_name(ret) == NULL)
            abort();
    }
    return 0;
}
