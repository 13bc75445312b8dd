#!/usr/bin/python3
"""The seed corpus of fuzz_nbin, kept small and in the repository
(tests/fuzz/corpus/fuzz_nbin): models `mota build-model` makes of the test
models, in both families, appended and split, for two CPUs, and their headers
cut short. A few KiB each, so the fuzzer runs at its speed, not at the speed
of copying a 3.3 MB model (issue 16).

usage: nbin_corpus.py MOTA OUT_DIR
"""
import os
import subprocess
import sys
import tempfile

mota, out = sys.argv[1:3]
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
os.makedirs(out, exist_ok=True)
with tempfile.TemporaryDirectory() as w:
    for name in ("dense", "conv", "wide"):
        subprocess.run(["/usr/bin/python3", os.path.join(src, "gen_weights.py"), name, w], check=True,
                       stdout=subprocess.DEVNULL)
        sources = [os.path.join(src, name + ".c"), os.path.join(w, name + "_weights.c")]
        for family in ("npu", "legacy"):
            for cpu in ("cortex-m55", "cortex-m33"):
                if name != "dense" and cpu != "cortex-m55":
                    continue  # one CPU is enough for the other models
                base = "%s_%s_%s" % (name, family, cpu.split("-")[1])
                rel = os.path.join(out, base + ".bin")
                subprocess.run([mota, "build-model", "--family", family, "--cpu", cpu, "-o", rel, *sources],
                               check=True, stdout=subprocess.DEVNULL)
                if name == "dense":  # split: the image alone (its params are the input's tail to the target)
                    subprocess.run([mota, "build-model", "--family", family, "--cpu", cpu, "--split",
                                    os.path.join(w, "p.bin"), "-o", os.path.join(out, base + "_split.bin"), *sources],
                                   check=True, stdout=subprocess.DEVNULL)
                    data = open(rel, "rb").read()
                    for cut in (96, 192):  # headers cut short: the parser's bounds
                        open(os.path.join(out, "%s_cut%d.bin" % (base, cut)), "wb").write(data[:cut])
total = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
print("%d seeds, %d bytes in %s" % (len(os.listdir(out)), total, out))
