/* SPDX-License-Identifier: Apache-2.0 */
/* Test model: int8 conv 3x3x4 (ReLU) on 12x12, max-pool 2x2, dense 100 -> 4.
 * Built as a split model: its params blob is a separate file. */
#include "mota_model.h"

extern const int8_t conv_k[4 * 9];
extern const int32_t conv_b[4];
extern const int8_t conv_w[4 * 100];
extern const int32_t conv_wb[4];

static int8_t fmap[4 * 100];
static int8_t pooled[100];
const char *model_note = "conv-3x3x4"; /* a string pointer in RW data */

static int8_t requant(int32_t acc, int shift)
{
    int32_t v = (acc + (1 << (shift - 1))) >> shift;
    return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

static int32_t init(void)
{
    return model_note[0] == 'c' ? 0 : -1;
}

static int32_t run(const int8_t *in, int8_t *out)
{
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 10; r++)
            for (int q = 0; q < 10; q++) {
                int32_t acc = conv_b[c];
                for (int dr = 0; dr < 3; dr++)
                    for (int dq = 0; dq < 3; dq++)
                        acc += in[(r + dr) * 12 + q + dq] * conv_k[c * 9 + dr * 3 + dq];
                fmap[c * 100 + r * 10 + q] = requant(acc < 0 ? 0 : acc, 6);
            }
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 5; r++)
            for (int q = 0; q < 5; q++) {
                int8_t m = -128;
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 2; b++) {
                        int8_t v = fmap[c * 100 + (2 * r + a) * 10 + 2 * q + b];
                        m = v > m ? v : m;
                    }
                pooled[c * 25 + r * 5 + q] = m;
            }
    for (int o = 0; o < 4; o++) {
        int32_t acc = conv_wb[o];
        for (int i = 0; i < 100; i++)
            acc += pooled[i] * conv_w[o * 100 + i];
        out[o] = requant(acc, 9);
    }
    return 0;
}

MOTA_MODEL("conv", init, run, 144, 4, sizeof(fmap) + sizeof(pooled));
