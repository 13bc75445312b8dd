/* SPDX-License-Identifier: Apache-2.0 */
/* Simulated inference for the posix port (see mota/posix_sim.h). */
#include "mota/posix_sim.h"

#include "mota/crypto.h"
#include "mota/err.h"

#include <string.h>

void mota_sim_inference(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
    uint8_t block[MOTA_SHA256_LEN];
    for (uint32_t i = 0; out_len > 0; i++) {
        struct mota_sha256 ctx;
        uint8_t ctr[4] = {(uint8_t)i, (uint8_t)(i >> 8), (uint8_t)(i >> 16), (uint8_t)(i >> 24)};
        mota_sha256_init(&ctx);
        mota_sha256_update(&ctx, "mota-sim", 8);
        mota_sha256_update(&ctx, in, in_len);
        mota_sha256_update(&ctx, ctr, sizeof(ctr));
        mota_sha256_finish(&ctx, block);
        size_t n = out_len < sizeof(block) ? out_len : sizeof(block);
        memcpy(out, block, n);
        out += n;
        out_len -= n;
    }
}

int mota_posix_sim_infer(void *ctx, const struct mota_installed *model, const uint8_t *in, size_t in_len, uint8_t *out,
                         size_t out_len, uint64_t *latency_us)
{
    struct mota_posix_sim *sim = ctx;
    if (sim == NULL || model == NULL || out == NULL)
        return MOTA_ERR_ARG;
    sim->runs++;
    mota_sim_inference(in, in_len, out, out_len);
    *latency_us = sim->latency_us;
    if (sim->mode == MOTA_SIM_FAIL && out_len > 0)
        out[0] ^= 0xFF;
    if (sim->mode == MOTA_SIM_SLOW)
        *latency_us = sim->slow_latency_us;
    return MOTA_OK;
}
