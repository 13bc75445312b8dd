/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The installer: turns a validated NBIN image into a runnable model
 * instance, the clean-room equivalent of ST's reloc installer, with every
 * read and write bounded.
 *
 * It works on device addresses (32-bit) and reaches memory only through the
 * caller's `map` callback, which turns a device range into a host pointer or
 * refuses it. On the target the callback is an identity map restricted to
 * the regions the firmware allows; on the host it maps simulated device
 * addresses onto buffers, so the same code installs models for tests and
 * for `mota`. Model code runs on Cortex-M only (mota_model_call).
 *
 * Install sequence (docs/model-abi.md): validate; memory pools (COPY, RESET
 * with CLEAR, RELOC id 0 param base, RELOC id 1 external RAM); COPY mode
 * copies the RO image to exec RAM; data image copied and .bss zeroed; GOT
 * pass; REL pass; runtime context filled; caches maintained.
 */
#ifndef MOTA_LOADER_H
#define MOTA_LOADER_H

#include "mota/compat.h"
#include "mota/nbin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the installer reaches memory (a board gives it as struct mota_install_mem, mota/port.h, whose
 * members these are): map a device range to a host pointer or refuse it, keep caches coherent after the
 * install, and the CRC-unit callbacks of legacy models' rt_ctx. */
struct mota_install_mem {
    void *(*map)(void *ctx, uint32_t addr, uint32_t len, bool write);
    void (*clean_dcache)(void *ctx, uint32_t addr, uint32_t len); /* NULL: none needed */
    void (*invalidate_icache)(void *ctx, uint32_t addr, uint32_t len);
    void *ctx;
    uint32_t crc_acquire, crc_release; /* device addresses, Thumb bit set; 0: none */
};

struct mota_install_config {
    const uint8_t *image; /* the verified NBIN file, readable (host view) */
    size_t image_len;
    uint32_t image_addr;   /* its device address (XIP executes from here); 4-aligned */
    const uint8_t *params; /* split params blob, or NULL when appended to the image */
    size_t params_len;
    uint32_t params_addr;   /* device address of the split params; 4-aligned */
    uint32_t exec_ram_addr; /* RW segment (XIP) or RO + RW (COPY); 8-aligned */
    uint32_t exec_ram_size;
    uint32_t ext_ram_addr; /* external RAM for the RELOC id 1 pool (tag 9); 0 if none */
    uint32_t ext_ram_size;
    uint32_t mode;             /* MOTA_INSTALL_XIP or MOTA_INSTALL_COPY */
    bool clear;                /* zero activation pools (ST's CLEAR mode bit) */
    uint32_t callbacks_addr;   /* NPU: host callback table for rt_ctx.cbs; 0 if none */
    uint32_t ll_instance_addr; /* NPU: the caller's NN instance; 0 if none */
    const struct mota_install_mem *mem;
};

struct mota_installed {
    enum mota_nbin_family family;
    bool npu; /* its inference is ST's Neural-ART runtime's (an NPU-family image not of the mota CPU ABI) */
    uint32_t mode;
    uint32_t rom_addr;    /* where the code runs */
    uint32_t ram_addr;    /* RW segment base: r9 for calls into the model */
    uint32_t param0_addr; /* base of tag-8 (params_0) addresses, NPU; the weights, legacy */
    uint32_t acts_addr;   /* legacy: the activations buffer the installer set aside (after RW) */
    uint32_t acts_size;
    uint32_t ext_addr; /* base of tag-9 addresses, NPU */
    uint32_t ctx_addr; /* runtime context in RAM */
    unsigned n_entries;
    uint32_t entries[12]; /* device addresses of the entry points (Thumb bit kept) */
    /* work done, for benchmarks and reports */
    uint32_t got_patched, rel_patched, bytes_copied, bytes_zeroed;
};

/* Install the model described by cfg; on success out describes the instance. */
int mota_loader_install(const struct mota_install_config *cfg, struct mota_installed *out);

/*
 * The same without validating again: info is what mota_nbin_validate found
 * over exactly cfg->image and cfg->image_len (bytes the caller has not let
 * change since: e.g. validated at verification time, right after their
 * digest was checked). Every bound the passes rely on is in info; the
 * install-time ones (memory, mode, params, external RAM) are checked here
 * before the first write.
 */
int mota_loader_install_validated(const struct mota_install_config *cfg, const struct mota_nbin_info *info,
                                  struct mota_installed *out);

/*
 * Cortex-M only: call entry point `index` of an installed model with r9 set
 * to its RW base (and the caller's r9 restored), passing up to three
 * arguments. Returns the entry's r0.
 */
uint32_t mota_model_call(const struct mota_installed *m, unsigned index, uint32_t a0, uint32_t a1, uint32_t a2);

#endif /* MOTA_LOADER_H */
