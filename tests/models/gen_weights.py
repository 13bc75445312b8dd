#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Deterministic weights and inputs for the test models, and their reference.

usage: gen_weights.py MODEL OUT_DIR
Writes OUT_DIR/MODEL_weights.c (MOTA_PARAM arrays for the C model),
OUT_DIR/MODEL_in_N.bin inputs and OUT_DIR/MODEL_out_N.bin expected outputs.
The expected outputs come from reference.py, an independent Python
implementation of the same layers: the C model never sees them.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

N_INPUTS = 3


def c_array(name, ctype, values, per_line=16):
    lines = []
    for i in range(0, len(values), per_line):
        lines.append("    " + ", ".join(str(v) for v in values[i:i + per_line]) + ",")
    return "MOTA_PARAM const %s %s[%d] = {\n%s\n};\n" % (ctype, name, len(values), "\n".join(lines))


def main():
    model, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rng = random.Random({"dense": 11, "conv": 23, "wide": 37}[model])
    spec = reference.SPECS[model]
    params = {}
    src = ['#include "mota_model.h"\n']
    for name, ctype, count, lo, hi in spec["params"]:
        params[name] = [rng.randint(lo, hi) for _ in range(count)]
        src.append(c_array(name, ctype, params[name]))
    open(os.path.join(out, model + "_weights.c"), "w").write("\n".join(src))
    for i in range(N_INPUTS):
        x = [rng.randint(-128, 127) for _ in range(spec["input_size"])]
        y = reference.run(model, params, x)
        assert len(y) == spec["output_size"]
        open(os.path.join(out, "%s_in_%d.bin" % (model, i)), "wb").write(bytes(v & 0xFF for v in x))
        open(os.path.join(out, "%s_out_%d.bin" % (model, i)), "wb").write(bytes(v & 0xFF for v in y))


if __name__ == "__main__":
    main()
