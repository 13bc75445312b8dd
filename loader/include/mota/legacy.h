/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Driving an installed X-CUBE-AI legacy model (reloc v2.0) through its own
 * entry points, as ST's ai_reloc_network API does (docs/model-abi.md):
 * create (ai_rel_network_load_and_create), init_v2 with the weights and the
 * activations the model asked for (ai_rel_network_init), the model's report
 * (ai_rel_network_get_report) and run (ai_rel_network_run).
 *
 * The model is third-party code and its report is its own data: every
 * pointer in it is read through the caller's `peek` callback, which answers
 * only for memory the model owns; every size is bounded before use. The
 * calls themselves go through the caller's `call` callback (on a board:
 * the guarded call, which turns faults and hangs into reason codes).
 *
 * Layouts: ST X-CUBE-AI 7.x (ai_platform.h, tools API 1.5): ai_buffer 28
 * bytes, ai_network_report 124 bytes, ai_error {type:8, code:24}.
 */
#ifndef MOTA_LEGACY_H
#define MOTA_LEGACY_H

#include "mota/loader.h"

#include <stddef.h>
#include <stdint.h>

/* Entry points, header order (words 13..23). */
enum mota_legacy_entry {
    MOTA_LEGACY_CREATE = 0,
    MOTA_LEGACY_INIT = 1,
    MOTA_LEGACY_INIT_V2 = 2,
    MOTA_LEGACY_RUN = 3,
    MOTA_LEGACY_REPORT = 4,
    MOTA_LEGACY_ERROR = 5,
    MOTA_LEGACY_DESTROY = 6,
    MOTA_LEGACY_FORWARD = 7,
};

#define MOTA_LEGACY_BUFFER_SIZE 28u  /* sizeof(ai_buffer) */
#define MOTA_LEGACY_REPORT_SIZE 124u /* sizeof(ai_network_report) */
#define MOTA_LEGACY_MAX_IO 4u        /* inputs and outputs each */

struct mota_legacy_env {
    /* Run entry point `entry` with up to three arguments: MOTA_OK and the
     * model's r0 in *ret, or the reason the call ended (fault, time). */
    int (*call)(void *ctx, unsigned entry, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t *ret);
    /* Host view of [addr, addr+len) if the model owns all of it (its code,
     * weights, RW data, activations or the I/O buffer), else NULL. */
    const void *(*peek)(void *ctx, uint32_t addr, uint32_t len);
    void *ctx;
    uint8_t *io;      /* a buffer the model may read and write: descriptors, input, output */
    uint32_t io_addr; /* its device address, 8-aligned */
    uint32_t io_size;
};

struct mota_legacy_tensor {
    uint32_t format; /* ai_buffer_format */
    uint32_t bytes;
};

/* What the model says of itself (its report), with strings copied out. */
struct mota_legacy_about {
    char name[32];
    char compiled[32]; /* compile_datetime */
    char tool_revision[24];
    uint32_t tool_version;            /* major << 16 | minor << 8 | micro */
    uint32_t acts_size, weights_size; /* from the report's buffer maps */
    uint32_t n_macc;
    unsigned n_inputs, n_outputs;
    struct mota_legacy_tensor in[MOTA_LEGACY_MAX_IO], out[MOTA_LEGACY_MAX_IO];
    uint32_t in_bytes, out_bytes; /* all inputs, all outputs */
    uint32_t in_desc, out_desc;   /* where its ai_buffer descriptors are */
};

/*
 * create, init_v2 (weights at m->param0_addr, activations at m->acts_addr)
 * and the report. *handle is the model's network handle for the calls after.
 * MOTA_ERR_SELFTEST_API when the model refuses (create's ai_error, init's
 * false), MOTA_ERR_SELFTEST_REPORT when its report is malformed, or the
 * call's own reason.
 */
int mota_legacy_open(const struct mota_legacy_env *env, const struct mota_installed *m, uint32_t *handle,
                     struct mota_legacy_about *about);

/*
 * One inference: `in` is every input in report order, concatenated, `out`
 * receives every output the same way; the lengths must match the report.
 */
int mota_legacy_run(const struct mota_legacy_env *env, uint32_t handle, const struct mota_legacy_about *about,
                    const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len);

/* Bytes of one tensor: elements x bits per element (1..32), or 0 if the format is not one we size. */
uint32_t mota_legacy_tensor_bytes(uint32_t format, uint32_t elements);

#endif /* MOTA_LEGACY_H */
