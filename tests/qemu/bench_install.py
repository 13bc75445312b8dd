#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Install cost of the loader on QEMU's Cortex-M55, in instructions.

usage: bench_install.py MOTA FIRMWARE_ELF WORKDIR [--quick]
Builds synthetic models that differ in GOT entries, REL entries, RO size and
.bss size, installs each in XIP and COPY mode under `-icount shift=0` (one
instruction = 1 ns of virtual time; the AN547 SysTick at 32 MHz then counts
31.25 instructions per tick), and fits
    instructions = fixed + a*GOT + b*REL + c*bytes copied + d*bytes zeroed
by least squares over all runs. Instruction counts, not cycles: QEMU has no
timing model. --quick (CI's run): one model of each kind instead of two, still enough for the fit.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu_jobs as Q  # noqa: E402

INSN_PER_TICK = 31.25
mota, fw, work = sys.argv[1:4]
quick = "--quick" in sys.argv[4:]
os.makedirs(work, exist_ok=True)


def synth(name, n_got, n_rel, ro_kib, bss_kib):
    lines = ['#include "mota_model.h"', "int32_t tgt[4];"]
    lines += ["int32_t g%d;" % i for i in range(n_got)]
    if n_rel:
        lines.append("int32_t *ptrs[%d] = {%s};" % (n_rel, ", ".join("&tgt[%d]" % (i % 4) for i in range(n_rel))))
    if ro_kib:
        lines.append("const uint8_t blob[%d] = {1, 2, 3};" % (ro_kib * 1024))
    if bss_kib:
        lines.append("uint8_t scratch[%d];" % (bss_kib * 1024))
    lines.append("static int32_t init(void) { return 0; }")
    body = ["int32_t s = tgt[0];"] + ["s += g%d;" % i for i in range(n_got)]
    if n_rel:
        body.append("s += *ptrs[%d];" % (n_rel - 1))
    if ro_kib:
        body.append("s += blob[in[0] & 1023];")
    if bss_kib:
        body.append("s += scratch[in[1] & 1023];")
    lines.append("static int32_t run(const int8_t *in, int8_t *out) { %s out[0] = (int8_t)s; return 0; }"
                 % " ".join(body))
    lines.append('MOTA_MODEL("%s", init, run, 2, 1, 0);' % name)
    path = os.path.join(work, name + ".c")
    open(path, "w").write("\n".join(lines) + "\n")
    return Q.build(mota, work, name, [path])[0]


variants = [("base", 0, 0, 0, 0), ("got1k", 1000, 0, 0, 0), ("got2k", 2000, 0, 0, 0),
            ("rel1k", 0, 1000, 0, 0), ("rel3k", 0, 3000, 0, 0), ("ro16k", 0, 0, 16, 0),
            ("ro64k", 0, 0, 64, 0), ("bss32k", 0, 0, 0, 32)]
if quick:
    variants = [v for v in variants if v[0] in ("base", "got1k", "rel1k", "ro16k", "bss32k")]
jobs = []
for name, g, r, ro, bss in variants:
    image = synth(name, g, r, ro, bss)
    for mode, addr in ((1, 0x28000000 + 0x20000 * len(jobs)), (2, 0x60100000 + 0x20000 * len(jobs))):
        # input [0, 0] and the output the synthetic sum gives: all globals are zero
        expected = bytes([{"ro16k": 1, "ro64k": 1}.get(name, 0)])
        jobs.append(Q.Job("%s-%s" % (name, "xip" if mode == 1 else "copy"), image, mode, addr, 0x01000000,
                          b"\x00\x00", expected, 1))
rc, out, parsed = Q.run(fw, work, jobs)
if rc != 0 or len(parsed) != len(jobs) or not all(p["pass"] for p in parsed.values()):
    print(out)
    sys.exit("benchmark firmware run failed")

def fit(rows, n):
    """Least squares: coefficients of y = sum(c_i * x_i), and the largest residual."""
    ata = [[sum(x[i] * x[j] for _, x in rows) for j in range(n)] for i in range(n)]
    aty = [sum(x[i] * y for y, x in rows) for i in range(n)]
    for c in range(n):  # Gauss-Jordan
        piv = max(range(c, n), key=lambda r: abs(ata[r][c]))
        ata[c], ata[piv], aty[c], aty[piv] = ata[piv], ata[c], aty[piv], aty[c]
        for r in range(n):
            if r != c and ata[c][c]:
                f = ata[r][c] / ata[c][c]
                ata[r] = [a - f * b for a, b in zip(ata[r], ata[c])]
                aty[r] -= f * aty[c]
    coef = [aty[i] / ata[i][i] for i in range(n)]
    return coef, max(abs(y - sum(c * v for c, v in zip(coef, x))) for y, x in rows)


coef, worst = fit([(p["ticks"] * INSN_PER_TICK, [1.0, p["got"], p["rel"], p["copied"], p["zeroed"]])
                   for p in parsed.values()], 5)
# validation reads the image, whatever the mode: fixed + per GOT + per REL entry
vcoef, vworst = fit([(p["validate"] * INSN_PER_TICK, [1.0, p["got"], p["rel"]]) for p in parsed.values()], 3)

print("%-12s %6s %6s %8s %8s %12s %12s" % ("run", "GOT", "REL", "copied", "zeroed", "install", "validate"))
for label, p in parsed.items():
    print("%-12s %6d %6d %8d %8d %12.0f %12.0f" % (label, p["got"], p["rel"], p["copied"], p["zeroed"],
                                                   p["ticks"] * INSN_PER_TICK, p["validate"] * INSN_PER_TICK))
print()
print("install cost on Cortex-M55 (QEMU mps3-an547, -icount shift=0), least-squares fit over %d installs:" % len(parsed))
print("  fixed (config, pools, header, rt_ctx) %8.0f instructions" % coef[0])
print("  per GOT entry                     %8.1f instructions" % coef[1])
print("  per REL entry                     %8.1f instructions" % coef[2])
print("  per KiB copied                    %8.0f instructions" % (coef[3] * 1024))
print("  per KiB zeroed                    %8.0f instructions" % (coef[4] * 1024))
print("  largest residual                  %8.0f instructions (SysTick resolution: 31)" % worst)
print("validation (mota_nbin_validate: once per verification, on the bytes whose digest was checked):")
print("  fixed                             %8.0f instructions" % vcoef[0])
print("  per GOT entry                     %8.1f instructions" % vcoef[1])
print("  per REL entry                     %8.1f instructions" % vcoef[2])
print("  largest residual                  %8.0f instructions" % vworst)

# The reference for the board's guarded self-test: the same calls (two size queries, init, one run) of the
# dense test model, unguarded, on the same CPU and clock
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
gen = os.path.join(work, "gen")
import subprocess  # noqa: E402
subprocess.run(["/usr/bin/python3", os.path.join(src, "gen_weights.py"), "dense", gen], check=True,
               stdout=subprocess.DEVNULL)
image = Q.build(mota, work, "dense", [os.path.join(src, "dense.c"), os.path.join(gen, "dense_weights.c")])[0]
rc, out, parsed = Q.run(fw, work, [Q.Job("dense-xip", image, 1, 0x28000000, 0x01000000,
                                         open(os.path.join(gen, "dense_in_0.bin"), "rb").read(),
                                         open(os.path.join(gen, "dense_out_0.bin"), "rb").read(), 1)])
if rc != 0 or "calls" not in parsed.get("dense-xip", {}):
    print(out)
    sys.exit("reference run failed")
print()
print("dense model, the calls of one self-test (2 size queries, init, 1 run), unguarded: %8.0f instructions"
      % (parsed["dense-xip"]["calls"] * INSN_PER_TICK))
print("  (the board's guarded self-test of the same model: bench_board.py above; the difference is the guard)")
