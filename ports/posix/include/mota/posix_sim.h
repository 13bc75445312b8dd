/* SPDX-License-Identifier: Apache-2.0 */
/*
 * posix port: simulated inference. The posix port cannot execute Cortex-M
 * model code, so the self-test inference the agent runs on it is a
 * simulation, and says so: the "output" is a deterministic expansion of the
 * input (SHA-256 of the input and a block counter), which a test or demo
 * can compute on the host to build a container whose self-test passes.
 * Modes make the simulated model pass, produce a wrong output, or be slow.
 */
#ifndef MOTA_POSIX_SIM_H
#define MOTA_POSIX_SIM_H

#include "mota/loader.h"

#include <stddef.h>
#include <stdint.h>

enum mota_sim_mode { MOTA_SIM_PASS = 0, MOTA_SIM_FAIL = 1, MOTA_SIM_SLOW = 2 };

struct mota_posix_sim {
    enum mota_sim_mode mode;
    uint64_t latency_us;      /* reported latency in PASS/FAIL mode */
    uint64_t slow_latency_us; /* reported latency in SLOW mode */
    unsigned runs;
};

/* The simulated model's output for an input. */
void mota_sim_inference(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len);

/* The port's inference (mota_port_infer_fn) for the posix port (ctx: struct mota_posix_sim). */
int mota_posix_sim_infer(void *ctx, const struct mota_installed *model, const uint8_t *in, size_t in_len, uint8_t *out,
                         size_t out_len, uint64_t *latency_us);

#endif
