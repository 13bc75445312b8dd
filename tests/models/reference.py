# SPDX-License-Identifier: Apache-2.0
"""Host reference of the test models' arithmetic (int8 in, int32 accumulate,
rounding right shift, saturation), written independently of the C sources."""

SPECS = {
    "dense": {
        "input_size": 64, "output_size": 10,
        # name, C type, count, min, max
        "params": [("dense_w1", "int8_t", 32 * 64, -64, 64), ("dense_b1", "int32_t", 32, -2000, 2000),
                   ("dense_w2", "int8_t", 10 * 32, -64, 64), ("dense_b2", "int32_t", 10, -500, 500)],
    },
    "wide": {
        "input_size": 600, "output_size": 1200,
        "params": [("wide_w", "int8_t", 32, -64, 64), ("wide_b", "int32_t", 32, -500, 500)],
    },
    "conv": {
        "input_size": 12 * 12, "output_size": 4,
        "params": [("conv_k", "int8_t", 4 * 9, -40, 40), ("conv_b", "int32_t", 4, -300, 300),
                   ("conv_w", "int8_t", 4 * 100, -50, 50), ("conv_wb", "int32_t", 4, -1000, 1000)],
    },
}


def requant(acc, shift):
    v = (acc + (1 << (shift - 1))) >> shift
    return max(-128, min(127, v))


def dense(x, w, b, n_out, shift, relu):
    n_in = len(x)
    y = []
    for o in range(n_out):
        acc = b[o] + sum(x[i] * w[o * n_in + i] for i in range(n_in))
        if relu and acc < 0:
            acc = 0
        y.append(requant(acc, shift))
    return y


def run(model, p, x):
    if model == "dense":
        h = dense(x, p["dense_w1"], p["dense_b1"], 32, 8, True)
        return dense(h, p["dense_w2"], p["dense_b2"], 10, 7, False)
    if model == "wide":  # per element: w * x + b, then the value and its negation at two scales
        y = []
        for i, v in enumerate(x):
            acc = p["wide_b"][i % 32] + v * p["wide_w"][i % 32]
            y += [requant(acc, 4), requant(-acc, 5)]
        return y
    # conv: 12x12x1 -> conv3x3x4 (valid) ReLU -> 10x10x4 -> maxpool 2x2 -> 5x5x4 -> dense 100->4
    fm = []
    for c in range(4):
        for r in range(10):
            for q in range(10):
                acc = p["conv_b"][c]
                for dr in range(3):
                    for dq in range(3):
                        acc += x[(r + dr) * 12 + q + dq] * p["conv_k"][c * 9 + dr * 3 + dq]
                fm.append(requant(max(acc, 0), 6))
    pooled = []
    for c in range(4):
        for r in range(5):
            for q in range(5):
                base = c * 100
                pooled.append(max(fm[base + (2 * r + a) * 10 + 2 * q + b] for a in range(2) for b in range(2)))
    return dense(pooled, p["conv_w"], p["conv_wb"], 4, 9, False)
