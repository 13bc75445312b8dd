/* SPDX-License-Identifier: Apache-2.0 */
/* Test model: int8 dense 64 -> 32 (ReLU) -> 10. The activation of each layer
 * is picked through a table of function pointers in RW data (R_ARM_ABS32,
 * patched by the REL pass); weights live in the params blob (GOT, tag 8). */
#include "mota_model.h"

extern const int8_t dense_w1[32 * 64];
extern const int32_t dense_b1[32];
extern const int8_t dense_w2[10 * 32];
extern const int32_t dense_b2[10];

typedef int32_t (*act_fn)(int32_t);

static int32_t relu(int32_t x)
{
    return x < 0 ? 0 : x;
}

static int32_t identity(int32_t x)
{
    return x;
}

act_fn layer_act[2] = {relu, identity};
int8_t hidden[32];
int8_t *hidden_ptr = hidden; /* a pointer into .bss: another REL entry */
uint32_t runs;

static int8_t requant(int32_t acc, int shift)
{
    int32_t v = (acc + (1 << (shift - 1))) >> shift;
    return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

static void dense(const int8_t *x, int n_in, const int8_t *w, const int32_t *b, int n_out, int shift, act_fn act,
                  int8_t *y)
{
    for (int o = 0; o < n_out; o++) {
        int32_t acc = b[o];
        for (int i = 0; i < n_in; i++)
            acc += x[i] * w[o * n_in + i];
        y[o] = requant(act(acc), shift);
    }
}

static int32_t init(void)
{
    runs = 0;
    return 0;
}

static int32_t run(const int8_t *in, int8_t *out)
{
    dense(in, 64, dense_w1, dense_b1, 32, 8, layer_act[0], hidden_ptr);
    dense(hidden_ptr, 32, dense_w2, dense_b2, 10, 7, layer_act[1], out);
    runs++;
    return 0;
}

MOTA_MODEL("dense", init, run, 64, 10, sizeof(hidden));
