/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota CPU model ABI (docs/model-abi.md): what a model source includes to
 * become a runtime-loadable model with `mota build-model`: NBIN v8.0 (the
 * Neural-ART layout) by default, ST's legacy X-CUBE-AI reloc v2.0 layout
 * with `--family legacy` (MOTA_MODEL_LEGACY). The same source builds both.
 *
 * A model provides four functions and one MOTA_MODEL() line:
 *
 *   static int32_t init(void);                          // 0 on success
 *   static int32_t run(const int8_t *in, int8_t *out);  // 0 on success
 *   MOTA_MODEL("name", init, run, INPUT_BYTES, OUTPUT_BYTES, ACTIVATION_BYTES);
 *
 * Constant parameters (weights) are declared MOTA_PARAM: they go to the
 * params blob (relocatable pool 0, tag 8), which may be appended to the
 * image or shipped as a split params file. Everything else follows the ST
 * relocatable code model: compiled with -fpic -msingle-pic-base
 * -mpic-register=r9 -mno-pic-data-is-text-relative, r9 holds the RW base.
 */
#ifndef MOTA_MODEL_H
#define MOTA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define MOTA_PARAM __attribute__((section(".params_0"), aligned(8)))

/* NBIN flags word, as ST's generator emits it (st-reloc-format.md 2.1). */
#ifndef MOTA_MODEL_CPU_PART
#define MOTA_MODEL_CPU_PART 0xD22u /* Cortex-M55 */
#endif
#if defined(__ARM_FP)
#define MOTA_MODEL_FPU_ (1u << 12)
#else
#define MOTA_MODEL_FPU_ 0u
#endif
#if defined(__ARM_PCS_VFP)
#define MOTA_MODEL_ABI_ (2u << 13)
#elif defined(__ARM_FP)
#define MOTA_MODEL_ABI_ (1u << 13)
#else
#define MOTA_MODEL_ABI_ 0u
#endif
#if defined(__ARM_FEATURE_CMSE) && (__ARM_FEATURE_CMSE & 2)
#define MOTA_MODEL_SECURE_ (1u << 20)
#else
#define MOTA_MODEL_SECURE_ 0u
#endif
#define MOTA_MODEL_FLAGS                                                                                               \
    (0x80000000u | MOTA_MODEL_SECURE_ | (8u << 16) | MOTA_MODEL_ABI_ | MOTA_MODEL_FPU_ | MOTA_MODEL_CPU_PART)

/* The runtime version CPU models claim: the 17-word LL_ATON >= 1.1.1 context. */
#define MOTA_MODEL_RT_VERSION 0x01010100u
#define MOTA_MODEL_RT_DESC "mota-cpu-abi-1 (RELOC.GCC)"

#if defined(MOTA_MODEL_LEGACY)
/*
 * The legacy X-CUBE-AI layout (`mota build-model --family legacy`): reloc
 * v2.0, driven through ST's ai_rel_network API (create, init_v2, run,
 * report...), implemented over init/run by mota_legacy_rt.c. Weights are
 * bound at init to the address the application passes, as ST's are.
 */
#define MOTA_MODEL_LEGACY_FLAGS (0x20000000u | (8u << 16) | MOTA_MODEL_ABI_ | MOTA_MODEL_FPU_ | MOTA_MODEL_CPU_PART)

struct mota_legacy_model {
    const char *name;
    int32_t (*init)(void);
    int32_t (*run)(const int8_t *in, int8_t *out);
    uint32_t input_size, output_size, activations_size;
};

/* ST's rt_ctx (60 bytes, X-CUBE-AI 7.2): the loader fills the first words. */
struct mota_legacy_rt_ctx {
    uint32_t state;
    void *network;
    uint32_t ram_addr, rom_addr, ram_alloc_addr;
    const char *c_name;
    uint32_t act_size, weights_size; /* the builder sets weights_size */
    uint32_t obs_ctx[5];
    uint32_t acquire_crc, release_crc;
};

/* the entry points (mota_legacy_rt.c), ST's header order */
uint32_t mota_legacy_create_(void **network, const void *config);
uint32_t mota_legacy_init_(void *network, const void *params);
uint32_t mota_legacy_init_v2_(void *network, void *const *weights, void *const *acts);
int32_t mota_legacy_run_(void *network, const void *in, void *out);
uint32_t mota_legacy_report_(void *network, void *report);
uint32_t mota_legacy_error_(void *network);
void *mota_legacy_destroy_(void *network);
int32_t mota_legacy_forward_(void *network, const void *in);
uint32_t mota_legacy_obs_register_(void *network, void *exec_ctx);
uint32_t mota_legacy_obs_unregister_(void *network, void *exec_ctx);
uint32_t mota_legacy_obs_node_info_(void *network, void *node);

extern const struct mota_legacy_model mota_legacy_model_;
extern struct mota_legacy_rt_ctx _network_rt_ctx;

#define MOTA_MODEL(NAME, INIT, RUN, IN_SIZE, OUT_SIZE, ACTS_SIZE)                                                      \
    const uint32_t mota_model_flags_ __attribute__((section(".network_rt_flags"), used)) = MOTA_MODEL_LEGACY_FLAGS;    \
    const struct mota_legacy_model mota_legacy_model_ = {(NAME), (INIT), (RUN), (IN_SIZE), (OUT_SIZE), (ACTS_SIZE)};   \
    struct mota_legacy_rt_ctx _network_rt_ctx                                                                          \
        __attribute__((section(".network_rt_ctx"), used)) = {0, 0, 0, 0, 0, (NAME), (ACTS_SIZE), 0, {0}, 0, 0};        \
    const uintptr_t _network_entries[12] __attribute__((section(".network_rt_init"), used)) = {                        \
        (uintptr_t)mota_legacy_create_,        (uintptr_t)mota_legacy_init_,                                           \
        (uintptr_t)mota_legacy_init_v2_,       (uintptr_t)mota_legacy_run_,                                            \
        (uintptr_t)mota_legacy_report_,        (uintptr_t)mota_legacy_error_,                                          \
        (uintptr_t)mota_legacy_destroy_,       (uintptr_t)mota_legacy_forward_,                                        \
        (uintptr_t)mota_legacy_obs_register_,  (uintptr_t)mota_legacy_obs_unregister_,                                 \
        (uintptr_t)mota_legacy_obs_node_info_, (uintptr_t)&_network_rt_ctx}

#else /* the NBIN v8 layout */

/* Entry table index (header words 13..22). */
enum { MOTA_MODEL_INIT = 0, MOTA_MODEL_RUN = 1, MOTA_MODEL_INPUT_SIZE = 2, MOTA_MODEL_OUTPUT_SIZE = 3 };

struct mota_model_info {
    const char *name;
    uint32_t input_size, output_size, activations_size;
};

/* rt_ctx, 17 words: the layout of LL_ATON >= 1.1.1 (st-reloc-format.md 5). */
struct mota_model_rt_ctx {
    uint32_t state, file_addr, ram_addr, rom_addr, cbs;
    const char *c_name;
    uint32_t acts_sz, params_sz, ext_ram_sz;
    const char *rt_version_desc;
    uint32_t rt_version, rt_version_extra, params_bin_sz, params_bin_crc32, rt_c_struct_sizes, ll_instance;
    const struct mota_model_info *itf_network;
};

struct mota_model_pool_desc {
    const char *name;
    uint32_t flags, foff, dst, size;
};

typedef int32_t (*mota_model_fn)(void);

uint32_t mota_model_reserved_(void);

/* The builder patches params_sz, params_bin_sz, params_bin_crc32 and the
 * params pool descriptor once the params blob is known. */
#define MOTA_MODEL(NAME, INIT, RUN, IN_SIZE, OUT_SIZE, ACTS_SIZE)                                                      \
    static uint32_t mota_in_size_(void)                                                                                \
    {                                                                                                                  \
        return (IN_SIZE);                                                                                              \
    }                                                                                                                  \
    static uint32_t mota_out_size_(void)                                                                               \
    {                                                                                                                  \
        return (OUT_SIZE);                                                                                             \
    }                                                                                                                  \
    const uint32_t mota_model_flags_ __attribute__((section(".network_flags"), used)) = MOTA_MODEL_FLAGS;              \
    const struct mota_model_info mota_model_info_ = {(NAME), (IN_SIZE), (OUT_SIZE), (ACTS_SIZE)};                      \
    struct mota_model_rt_ctx _network_rt_ctx __attribute__((section(".network_rt_ctx"), used)) = {                     \
        0, 0, 0, 0, 0, (NAME),           (ACTS_SIZE), 0, 0, MOTA_MODEL_RT_DESC, MOTA_MODEL_RT_VERSION,                 \
        0, 0, 0, 0, 0, &mota_model_info_};                                                                             \
    struct mota_model_pool_desc _params_desc[2]                                                                        \
        __attribute__((section(".params_desc"), used)) = {{"params", 0, 0, 0, 0}, {0, 0, 0, 0, 0}};                    \
    const uintptr_t _network_entries[11]                                                                               \
        __attribute__((section(".network_entries"), used)) = {(uintptr_t)(INIT),                                       \
                                                              (uintptr_t)(RUN),                                        \
                                                              (uintptr_t)mota_in_size_,                                \
                                                              (uintptr_t)mota_out_size_,                               \
                                                              (uintptr_t)mota_model_reserved_,                         \
                                                              (uintptr_t)mota_model_reserved_,                         \
                                                              (uintptr_t)mota_model_reserved_,                         \
                                                              (uintptr_t)mota_model_reserved_,                         \
                                                              (uintptr_t)mota_model_reserved_,                         \
                                                              (uintptr_t)mota_model_reserved_,                         \
                                                              (uintptr_t)&_network_rt_ctx}

#endif /* MOTA_MODEL_LEGACY */

#endif /* MOTA_MODEL_H */
