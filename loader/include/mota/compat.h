/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Model compatibility: what a model requires (read from its NBIN header by
 * mota_nbin_compat, carried signed in the container's compat extension) and
 * what a device offers (its profile). mota_compat_check() applies the rules
 * in a fixed order and reports the first one that fails, with the expected
 * (device) and found (model) values, before anything is erased.
 */
#ifndef MOTA_COMPAT_H
#define MOTA_COMPAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Runtime description of CPU-executable models (loader/model/mota_model.h):
 * the NPU family's layout, no NPU needed. */
#define MOTA_CPU_ABI_PREFIX "mota-cpu-abi-"

enum mota_install_mode { MOTA_INSTALL_XIP = 1, MOTA_INSTALL_COPY = 2 };

struct mota_selftest {
    bool present;
    uint8_t output_digest[32]; /* SHA-256 of the expected output */
    uint64_t output_size;
    uint64_t max_latency_us;
};

/*
 * Where a Neural-ART model's work runs (mota_epochs_decode): blocks of each
 * kind, and epochs. A hybrid or SW epoch is known without debug info; the
 * epochs inside an epoch-controller blob are counted only with it.
 * Informational in the container: not checked against a device's profile
 * (a device decodes it, and refuses one whose counts disagree).
 */
#define MOTA_EPOCH_MAX_BLOCKS 4096u /* epoch records before the terminator: mota's limit */

struct mota_epoch_summary {
    uint32_t blocks;                   /* epoch blocks, the terminator excluded */
    uint32_t blob, hw, hybrid, sw;     /* blocks of each kind */
    bool epochs_known;                 /* false: blob ranges unknown (no debug info) */
    uint32_t epochs, npu_epochs;       /* all epochs; those with no CPU work (if epochs_known) */
    uint32_t hybrid_epochs, sw_epochs; /* epochs with a hybrid block; with SW blocks only */
};

/* What a model requires. */
struct mota_compat {
    uint32_t reloc_major, reloc_minor; /* 8.0 Neural-ART NPU, 2.0 legacy */
    uint32_t cpu_part;
    bool fpu;
    uint32_t float_abi; /* 0 soft, 1 softfp, 2 hard */
    bool secure, dbg_info, async;
    uint32_t toolchain;
    bool has_runtime_version;
    uint32_t rt_major, rt_minor, rt_micro; /* LL_ATON */
    const char *c_name;
    size_t c_name_len;
    uint64_t acts_size, params_size, ext_ram_size;
    uint64_t exec_ram_xip, exec_ram_copy;
    uint32_t install_mode; /* preferred: enum mota_install_mode */
    bool has_struct_sizes;
    uint32_t struct_sizes;
    const char *rt_desc;
    size_t rt_desc_len;
    struct mota_selftest selftest;
    bool has_epochs; /* informational (npu-epochs): not checked */
    struct mota_epoch_summary epochs;
};

enum mota_split_policy {
    MOTA_SPLIT_ALLOWED = 0,   /* params appended or in a separate component */
    MOTA_SPLIT_REQUIRED = 1,  /* params must be separate (placed in external memory) */
    MOTA_SPLIT_FORBIDDEN = 2, /* params must be appended to the image */
};

/* What a device offers. Zeroed fields mean "none" (not "any"). */
struct mota_device_profile {
    const char *name;        /* the profile's name, for reports (HELLO key 11); not checked. NULL: none */
    uint32_t cpu_part;       /* SCB CPUID[15:4] */
    bool fpu_enabled;        /* CPACR CP10/CP11 */
    uint32_t float_abi;      /* of the firmware */
    bool secure;             /* firmware runs in the secure state */
    bool dbg_info, async;    /* LL_ATON_EB_DBG_INFO, LL_ATON_RT_ASYNC of the runtime */
    uint32_t reloc_families; /* bit (1 << major) per runtime family the firmware runs: 8, 2 */
    uint32_t reloc_minor_max;
    bool has_ll_aton; /* Neural-ART NPU and its LL_ATON runtime present; version below */
    uint32_t ll_aton_major, ll_aton_minor, ll_aton_micro;
    uint32_t struct_sizes;  /* rt_c_struct_sizes of the runtime; 0: not checked */
    uint64_t exec_ram_size; /* bytes available for the RW (and, in COPY, RO) image */
    uint64_t ext_ram_size;  /* bytes of the external RAM region for params/activations */
    uint32_t install_modes; /* bit mask of (1 << MOTA_INSTALL_XIP) | (1 << MOTA_INSTALL_COPY) */
    uint32_t split_policy;  /* enum mota_split_policy */
};

struct mota_compat_result {
    int reason;            /* MOTA_OK or the first failing rule's code */
    const char *field;     /* rule name, e.g. "cpu_part" */
    uint64_t expected;     /* the device's value */
    uint64_t found;        /* the model's value */
    uint32_t install_mode; /* on success: the mode to install with */
};

/*
 * Rules, in order: family, reloc minor, CPU, FPU, float ABI, secure state,
 * NPU (an NPU-family model other than a CPU-ABI one needs a device with the
 * LL_ATON runtime), then, where the device has that runtime: debug info,
 * async mode, LL_ATON version, runtime struct sizes; then split
 * policy, install mode and exec RAM, external RAM. The preferred install
 * mode is used when the device supports it and it fits, else the other one.
 * `split` says whether the params come as a separate component.
 */
int mota_compat_check(const struct mota_device_profile *dev, const struct mota_compat *model, bool split,
                      struct mota_compat_result *res);

#endif /* MOTA_COMPAT_H */
