/* libFuzzer target: the agent at boot and on upload, with hostile inputs:
 * the first half of the input becomes the flash journal (a corrupted or
 * forged state), the second half is sent as a container. Nothing may crash,
 * read or write out of bounds, or return a code outside the reason table. */
#include "mota/agent.h"
#include "mota/err.h"
#include "mota/posix_flash.h"
#include "mota/posix_sim.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SECTOR 4096u

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
    size_t jlen = size / 2 < 2 * SECTOR ? size / 2 : 2 * SECTOR;
    memset(pf.mem, 0xFF, pf.size);
    memcpy(pf.mem, data, jlen);
    int ret = mota_agent_init(&agent, &cfg);
    if (mota_err_name(ret) == NULL)
        abort();
    if (ret == MOTA_OK) {
        const uint8_t *c = data + jlen;
        size_t n = size - jlen;
        uint32_t off = 0;
        for (int i = 0; i < 64 && off < n; i++) {
            size_t chunk = n - off < 512 ? n - off : 512;
            int r = mota_agent_write(&agent, off, c + off, chunk);
            if (r < 0) {
                if (mota_err_name(r) == NULL)
                    abort();
                break;
            }
            if ((uint32_t)r <= off)
                break;
            off = (uint32_t)r;
        }
        (void)mota_agent_upload_offset(&agent);
        (void)mota_agent_confirm(&agent, 0);
        (void)mota_agent_abort(&agent);
    }
    return 0;
}
