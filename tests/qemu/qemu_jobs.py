# SPDX-License-Identifier: Apache-2.0
"""Shared harness: place models, params and vectors in QEMU mps3-an547 memory,
run the test firmware (run_models.c) and parse its report."""
import os
import re
import struct
import subprocess

QSPI, DDR = 0x28000000, 0x60000000
JOB_RE = re.compile(r"job (\S+) (xip|copy) image (0x[0-9a-f]+) exec (0x[0-9a-f]+)(?: r9 (0x[0-9a-f]+) ticks (\d+) "
                    r"got (\d+) rel (\d+) copied (\d+) zeroed (\d+))?(.*)")


class Job:
    def __init__(self, label, image, mode, image_addr, exec_addr, inputs, outputs, n_vectors,
                 params=b"", params_addr=0, exec_size=0x80000):
        self.__dict__.update(locals())
        del self.__dict__["self"]


def run(fw, work, jobs, timeout=300):
    """Returns (exit code, stdout, {label: parsed line dict})."""
    qspi = bytearray()
    ddr = bytearray(0x800000)

    def put(addr, data):
        if addr < DDR:
            off = addr - QSPI
            if len(qspi) < off + len(data):
                qspi.extend(b"\xff" * (off + len(data) - len(qspi)))
            qspi[off:off + len(data)] = data
        else:
            off = addr - DDR
            assert 0x10000 <= off and off + len(data) <= len(ddr), hex(addr)
            ddr[off:off + len(data)] = data

    cursor = DDR + 0x10000
    table = struct.pack("<II", 0x424F4A4D, len(jobs))
    for j in jobs:
        put(j.image_addr, j.image)
        if j.params:
            put(j.params_addr, j.params)
        in_addr = cursor
        put(in_addr, j.inputs)
        exp_addr = in_addr + ((len(j.inputs) + 7) & ~7)
        put(exp_addr, j.outputs)
        cursor = exp_addr + ((len(j.outputs) + 7) & ~7)
        table += struct.pack("<24s12I", j.label.encode(), j.image_addr, len(j.image), j.params_addr if j.params else 0,
                             len(j.params), j.mode, j.exec_addr, j.exec_size, j.n_vectors, in_addr, len(j.inputs),
                             exp_addr, len(j.outputs))
    ddr[0:len(table)] = table
    open(os.path.join(work, "ddr.bin"), "wb").write(ddr)
    open(os.path.join(work, "qspi.bin"), "wb").write(qspi or b"\xff")
    cmd = ["qemu-system-arm", "-M", "mps3-an547", "-nographic", "-monitor", "none", "-icount", "shift=0",
           "-semihosting-config", "enable=on,target=native", "-kernel", fw,
           "-device", "loader,file=%s,addr=0x%x,force-raw=on" % (os.path.join(work, "ddr.bin"), DDR),
           "-device", "loader,file=%s,addr=0x%x,force-raw=on" % (os.path.join(work, "qspi.bin"), QSPI)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    out = r.stdout.replace("\r", "")
    parsed = {}
    for line in out.splitlines():
        m = JOB_RE.match(line)
        if m and m.group(6):
            parsed[m.group(1)] = {"ticks": int(m.group(6)), "got": int(m.group(7)), "rel": int(m.group(8)),
                                  "copied": int(m.group(9)), "zeroed": int(m.group(10)),
                                  "pass": "PASS" in m.group(11)}
            c = re.search(r"calls ticks (\d+)", m.group(11))
            if c:
                parsed[m.group(1)]["calls"] = int(c.group(1))
            v = re.search(r"validate ticks (\d+)", m.group(11))
            if v:
                parsed[m.group(1)]["validate"] = int(v.group(1))
    return r.returncode, out + r.stderr, parsed


def build(mota, work, name, sources, split=False):
    out = os.path.join(work, name + "_rel.bin")
    params = os.path.join(work, name + "_params.bin")
    cmd = [mota, "build-model", "-o", out] + (["--split", params] if split else []) + sources
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return open(out, "rb").read(), (open(params, "rb").read() if split else b"")
