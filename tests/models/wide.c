/* SPDX-License-Identifier: Apache-2.0 */
/* Test model: per-element int8 scale and bias, 600 bytes in, two outputs per input (1200 bytes out): an input
 * and an output larger than the an547's 512-byte frames, for `mota invoke` through the device's I/O buffer. */
#include "mota_model.h"

extern const int8_t wide_w[32];
extern const int32_t wide_b[32];

uint32_t runs;

static int8_t requant(int32_t acc, int shift)
{
    int32_t v = (acc + (1 << (shift - 1))) >> shift;
    return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

static int32_t init(void)
{
    runs = 0;
    return 0;
}

static int32_t run(const int8_t *in, int8_t *out)
{
    for (int i = 0; i < 600; i++) {
        int32_t acc = wide_b[i % 32] + in[i] * wide_w[i % 32];
        out[2 * i] = requant(acc, 4);
        out[2 * i + 1] = requant(-acc, 5);
    }
    runs++;
    return 0;
}

MOTA_MODEL("wide", init, run, 600, 1200, sizeof(runs));
