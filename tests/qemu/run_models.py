#!/usr/bin/python3
"""Build the test models, install and run them on QEMU mps3-an547 (Cortex-M55)
at two load addresses in XIP and in COPY mode, and compare every output with
the host reference (tests/models/reference.py).

usage: run_models.py MOTA FIRMWARE_ELF SOURCE_DIR WORKDIR
"""
import os
import struct
import subprocess
import sys

mota, fw, src, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
models_dir = os.path.join(src, "tests", "models")
gen = os.path.join(work, "gen")

MODELS = {"dense": False, "conv": True}  # name -> split params
for name, split in MODELS.items():
    subprocess.run(["/usr/bin/python3", os.path.join(models_dir, "gen_weights.py"), name, gen], check=True)
    cmd = [mota, "build-model", "-o", os.path.join(work, name + "_rel.bin")]
    if split:
        cmd += ["--split", os.path.join(work, name + "_params.bin")]
    cmd += [os.path.join(models_dir, name + ".c"), os.path.join(gen, name + "_weights.c")]
    subprocess.run(cmd, check=True)


def blob(path):
    return open(path, "rb").read()


QSPI, DDR = 0x28000000, 0x60000000
qspi = bytearray()
ddr = bytearray(0x800000)


def put_qspi(addr, data):
    off = addr - QSPI
    if len(qspi) < off + len(data):
        qspi.extend(b"\xff" * (off + len(data) - len(qspi)))
    qspi[off:off + len(data)] = data


def put_ddr(addr, data):
    off = addr - DDR
    assert 0x10000 <= off and off + len(data) <= len(ddr)
    ddr[off:off + len(data)] = data


# (model, mode, image address, exec RAM address): two placements per mode
placements = [
    ("dense", 1, 0x28000000, 0x21000000), ("dense", 1, 0x28123458, 0x01000000),
    ("dense", 2, 0x60100000, 0x01000000), ("dense", 2, 0x60234568, 0x21000100),
    ("conv", 1, 0x28040000, 0x21000000), ("conv", 1, 0x281C0008, 0x01080000),
    ("conv", 2, 0x60300000, 0x01000000), ("conv", 2, 0x60377778, 0x21000100),
]
jobs = []
data_cursor = 0x60010000
params_addr = {"conv": [0x60400000, 0x60456788]}
pcount = {"conv": 0}
for name, mode, image_addr, exec_addr in placements:
    image = blob(os.path.join(work, name + "_rel.bin"))
    (put_qspi if image_addr < DDR else put_ddr)(image_addr, image)
    p_addr = p_len = 0
    if MODELS[name]:
        params = blob(os.path.join(work, name + "_params.bin"))
        p_addr = params_addr[name][pcount[name] % 2]
        pcount[name] += 1
        p_len = len(params)
        put_ddr(p_addr, params)
    ins = b"".join(blob(os.path.join(gen, "%s_in_%d.bin" % (name, i))) for i in range(3))
    outs = b"".join(blob(os.path.join(gen, "%s_out_%d.bin" % (name, i))) for i in range(3))
    in_addr = data_cursor
    put_ddr(in_addr, ins)
    exp_addr = in_addr + ((len(ins) + 7) & ~7)
    put_ddr(exp_addr, outs)
    data_cursor = exp_addr + ((len(outs) + 7) & ~7)
    label = "%s-%s-%d" % (name, "xip" if mode == 1 else "copy", len([j for j in jobs if j[0].startswith(name)]))
    jobs.append((label, image_addr, len(image), p_addr, p_len, mode, exec_addr, 0x80000, 3, in_addr, len(ins),
                 exp_addr, len(outs)))

table = struct.pack("<II", 0x424F4A4D, len(jobs))
for j in jobs:
    table += struct.pack("<24s12I", j[0].encode(), *j[1:])
ddr[0:len(table)] = table
open(os.path.join(work, "ddr.bin"), "wb").write(ddr)
open(os.path.join(work, "qspi.bin"), "wb").write(qspi)

cmd = ["qemu-system-arm", "-M", "mps3-an547", "-nographic", "-monitor", "none",
       "-semihosting-config", "enable=on,target=native", "-kernel", fw,
       "-device", "loader,file=%s,addr=0x%x,force-raw=on" % (os.path.join(work, "ddr.bin"), DDR),
       "-device", "loader,file=%s,addr=0x%x,force-raw=on" % (os.path.join(work, "qspi.bin"), QSPI)]
print(" ".join(cmd), flush=True)
r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
print(r.stdout.replace("\r", ""))
if r.stderr.strip():
    print(r.stderr)
ok = r.returncode == 0 and ("summary: %d passed, 0 failed" % len(jobs)) in r.stdout
print("%d passed, %d failed" % (len(jobs) if ok else 0, 0 if ok else len(jobs)))
sys.exit(0 if ok else 1)
