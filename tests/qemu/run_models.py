#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Build the test models, install and run them on QEMU mps3-an547 (Cortex-M55)
at two load addresses in XIP and in COPY mode, and compare every output with
the host reference (tests/models/reference.py).

usage: run_models.py MOTA FIRMWARE_ELF SOURCE_DIR WORKDIR
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu_jobs as Q  # noqa: E402

mota, fw, src, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
models_dir = os.path.join(src, "tests", "models")
gen = os.path.join(work, "gen")

MODELS = {"dense": False, "conv": True}  # name -> split params
built = {}
for name, split in MODELS.items():
    subprocess.run(["/usr/bin/python3", os.path.join(models_dir, "gen_weights.py"), name, gen], check=True)
    built[name] = Q.build(mota, work, name, [os.path.join(models_dir, name + ".c"),
                                             os.path.join(gen, name + "_weights.c")], split)


def vectors(name, kind):
    return b"".join(open(os.path.join(gen, "%s_%s_%d.bin" % (name, kind, i)), "rb").read() for i in range(3))


# (model, mode, image address, exec RAM address, split params address): two placements per mode
placements = [
    ("dense", 1, 0x28000000, 0x21000000, 0), ("dense", 1, 0x28123458, 0x01000000, 0),
    ("dense", 2, 0x60100000, 0x01000000, 0), ("dense", 2, 0x60234568, 0x21000100, 0),
    ("conv", 1, 0x28040000, 0x21000000, 0x60400000), ("conv", 1, 0x281C0008, 0x01080000, 0x60456788),
    ("conv", 2, 0x60300000, 0x01000000, 0x60400000), ("conv", 2, 0x60377778, 0x21000100, 0x60456788),
]
jobs = []
for i, (name, mode, image_addr, exec_addr, p_addr) in enumerate(placements):
    image, params = built[name]
    jobs.append(Q.Job("%s-%s-%d" % (name, "xip" if mode == 1 else "copy", i % 4), image, mode, image_addr, exec_addr,
                      vectors(name, "in"), vectors(name, "out"), 3, params, p_addr))
rc, out, parsed = Q.run(fw, work, jobs)
print(out)
ok = rc == 0 and len(parsed) == len(jobs) and all(p["pass"] for p in parsed.values()) and \
    ("summary: %d passed, 0 failed" % len(jobs)) in out
npass = sum(p["pass"] for p in parsed.values())
print("%d passed, %d failed" % (npass, len(jobs) - npass))
sys.exit(0 if ok else 1)
