/* SPDX-License-Identifier: Apache-2.0 */
/*
 * posix port: a whole simulated device, assembled once for `mota sim`, the
 * agent tests, the fuzz targets and the benchmarks. A NOR flash (in memory
 * or backed by a file, with the part's geometry, rules and timings) laid out as
 * a two-sector journal then two equal slots per model, each from a sector start, simulated exec RAM, a clock, a reset that reboots in
 * place, a reset cause the caller sets (to test watchdog reverts), a
 * watchdog that counts kicks, and the simulated self-test inference
 * (mota/posix_sim.h: the posix port cannot execute Cortex-M models).
 */
#ifndef MOTA_POSIX_DEVICE_H
#define MOTA_POSIX_DEVICE_H

#include "mota/agent.h"
#include "mota/device.h"
#include "mota/posix_flash.h"
#include "mota/posix_sim.h"

#include <stdbool.h>
#include <stdint.h>

#define MOTA_POSIX_XIP_BASE 0x08000000u  /* CPU address of the simulated flash */
#define MOTA_POSIX_EXEC_BASE 0x20000000u /* CPU address of the simulated exec RAM */
#define MOTA_POSIX_EXT_BASE 0x90000000u  /* default CPU address of the simulated external RAM */
#define MOTA_POSIX_MAX_REGIONS 8

/* Internal RAM a model's memory pools may claim by address (an NPU's activation RAMs). */
struct mota_posix_region {
    uint32_t base, size;
};

struct mota_posix_device_options {
    const char *flash_path; /* NULL: a flash in memory */
    /* the part (a profile's flash); NULL: NOR of flash_size (default 8 MiB) in sectors of sector_size
     * (default 4096), programmed in units of prog_size (default 16), instantly */
    const struct mota_posix_flash_part *part;
    uint32_t flash_size;
    uint32_t sector_size;
    uint32_t prog_size;
    enum mota_posix_flash_timing timing; /* how long its operations take */
    /* where the journal's two sectors start, and where the slots start (0: right after the journal):
     * a part's firmware keeps the rest */
    uint32_t journal_offset, slots_offset;
    unsigned n_models; /* default 1, named "network" */
    const char *models[MOTA_AGENT_MAX_MODELS];
    uint32_t slot_size;     /* 0: the flash shared out evenly */
    uint32_t exec_ram_size; /* per model; default 1 MiB */
    uint32_t ext_ram_size;  /* external RAM per model (params, NPU tag-9 pool); default none */
    uint32_t ext_ram_base;  /* its CPU address (default MOTA_POSIX_EXT_BASE) */
    unsigned n_regions;     /* fixed-address RAM the models share */
    struct mota_posix_region regions[MOTA_POSIX_MAX_REGIONS];
    bool clock_at_zero; /* now_us always 0 (deterministic tests) */
};

struct mota_posix_device {
    struct mota_posix_flash pf;
    struct mota_flash flash;
    struct mota_system sys;
    struct mota_posix_sim sim;
    struct mota_loader_mem mem;
    struct mota_port port;        /* the above, and the transport of the current boot */
    struct mota_agent_config cfg; /* keys, identity (vendor, class, device id) and profile: the caller fills them */
    struct mota_device device;
    enum mota_reset_cause cause; /* what the next boot reports */
    unsigned resets, kicks;
    bool clock_at_zero;
    uint64_t boot_us;
    uint8_t *exec_ram;
    uint32_t exec_size;
    uint8_t *ext_ram;
    uint32_t ext_base, ext_size;
    unsigned n_regions;
    struct mota_posix_region regions[MOTA_POSIX_MAX_REGIONS];
    uint8_t *region_mem[MOTA_POSIX_MAX_REGIONS];
    uint8_t scratch[MOTA_AGENT_SCRATCH_ANY + 1024];
    /* the self-test output, and between updates invoke's I/O buffer (INPUT, RUN, OUTPUT; HELLO key 12):
     * room for a 64 KiB input and a 128 KiB output */
    uint8_t selftest[192u * 1024u];
};

/* The default profile: Cortex-M55, FPU, hard float, secure, NPU with LL_ATON 1.1.1, XIP and COPY. */
extern const struct mota_device_profile mota_posix_default_profile;

/*
 * Assemble the device: flash, layout, RAM, system callbacks, the simulated
 * inference, and the default profile. MOTA_OK or a reason.
 */
int mota_posix_device_open(struct mota_posix_device *d, const struct mota_posix_device_options *o);

/* Boot the device (mota_device_start) on a transport. */
int mota_posix_device_boot(struct mota_posix_device *d, const struct mota_transport *tr, const char *name);

void mota_posix_device_close(struct mota_posix_device *d);

/* Set the trust anchors and identity, as provisioning does on a board (vendor and klass are kept, not copied). */
void mota_posix_device_identity(struct mota_posix_device *d, const char *vendor, const char *klass);

#endif
