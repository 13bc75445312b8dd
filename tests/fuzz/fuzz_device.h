/* The small simulated device both agent-level fuzz targets run against:
 * 4 KiB sectors, a two-sector journal, two 32 KiB slots, 64 KiB of exec
 * RAM and a key no signature can match (so nothing is ever activated and
 * the fuzzer explores the refusal paths, where the bugs would be). */
#ifndef MOTA_FUZZ_DEVICE_H
#define MOTA_FUZZ_DEVICE_H

#include "mota/agent.h"
#include "mota/err.h"
#include "mota/posix_flash.h"
#include "mota/posix_sim.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_SECTOR 4096u
#define FUZZ_JOURNAL (2 * FUZZ_SECTOR)
#define FUZZ_SLOT (32u * 1024u)

struct fuzz_device {
    struct mota_posix_flash pf;
    struct mota_flash fl;
    struct mota_agent agent;
    struct mota_posix_sim sim;
    struct mota_loader_mem mem;
    struct mota_agent_config cfg;
    uint8_t exec_ram[64 * 1024];
    uint8_t scratch[MOTA_AGENT_SCRATCH_MIN];
    uint8_t selftest[256];
};

static void *fuzz_device_map(void *ctx, uint32_t addr, uint32_t len, bool write)
{
    struct fuzz_device *d = ctx;
    (void)write;
    if (addr >= 0x20000000u && (uint64_t)addr + len <= 0x20000000u + sizeof(d->exec_ram))
        return d->exec_ram + (addr - 0x20000000u);
    return NULL;
}

/* Once per process: the flash simulator and the agent's configuration. */
static void fuzz_device_setup(struct fuzz_device *d)
{
    if (d->pf.mem != NULL)
        return;
    if (mota_posix_flash_init(&d->pf, FUZZ_JOURNAL + 2 * FUZZ_SLOT, FUZZ_SECTOR, 16) != MOTA_OK)
        abort();
    mota_posix_flash_hal(&d->pf, &d->fl, 0x08000000u);
    d->mem.map = fuzz_device_map;
    d->mem.ctx = d;
    struct mota_agent_config *cfg = &d->cfg;
    cfg->flash = &d->fl;
    cfg->n_models = 1;
    cfg->models[0].c_name = "network";
    cfg->models[0].slot_offset[0] = FUZZ_JOURNAL;
    cfg->models[0].slot_offset[1] = FUZZ_JOURNAL + FUZZ_SLOT;
    cfg->models[0].slot_size = FUZZ_SLOT;
    cfg->models[0].exec_ram_addr = 0x20000000u;
    cfg->models[0].exec_ram_size = sizeof(d->exec_ram);
    cfg->n_keys = 1;
    memset(cfg->keys[0].pub, 0x04, 65);
    cfg->profile.reloc_major = 8;
    cfg->profile.install_modes = 6;
    cfg->loader_mem = &d->mem;
    cfg->infer = mota_posix_sim_infer;
    cfg->infer_ctx = &d->sim;
    cfg->selftest_buf = d->selftest;
    cfg->selftest_buf_size = sizeof(d->selftest);
    cfg->scratch = d->scratch;
    cfg->scratch_size = sizeof(d->scratch);
}

#endif
