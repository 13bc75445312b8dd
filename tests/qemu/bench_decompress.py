#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Decode cost of compressed payloads on QEMU's Cortex-M55, in instructions.

usage: bench_decompress.py MOTA FIRMWARE_ELF WORKDIR FIXTURES_DIR [DEVICE_MAP] [--quick]
Packs the yolov8n fixture (when present) and the test models with
`mota pack --compress=lz4`, `--compress=deflate` and `--compress=lzma`, takes each code
payload, and has the firmware (tests/qemu/bench_decompress.c) decode it the
agent's way under
`-icount shift=0` (31.25 instructions per SysTick tick), next to memcpy of
the image and SHA-256 of the frame in the same run. Prints instructions per
image byte and per frame byte, the decoders' RAM, and LZMA's cost against
its goals (issue: at most 4096 B of code and 8 KiB of RAM, fewer instructions
per image byte than deflate's 175). With the device firmware's linker map, also
the code the decoder and the agent's sink take in it. --quick (CI's run): the test models only, no yolov8n.
"""
import json
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu_jobs as Q  # noqa: E402

INSN_PER_TICK = 31.25
DDR = 0x60000000
args = [a for a in sys.argv[1:] if a != "--quick"]
quick = len(args) < len(sys.argv) - 1
mota, fw, work, fixtures = args[:4]
os.makedirs(work, exist_ok=True)
key = os.path.join(work, "k.pem")
if not os.path.exists(key):
    subprocess.run([mota, "keygen", key], check=True, stdout=subprocess.DEVNULL)


def frame_of(name, rel, alg):
    """(image, payload, block) of the code payload `mota pack --compress=alg` makes of rel, or None."""
    out = os.path.join(work, name + "." + alg + ".mota")
    subprocess.run([mota, "pack", "-k", key, "--vendor", "example.com", "--class", "bench", "--seq", "1",
                    "--compress=" + alg, "-o", out, rel], check=True, stdout=subprocess.DEVNULL)
    comp = json.loads(subprocess.run([mota, "inspect", "--json", out], check=True, capture_output=True,
                                     text=True).stdout)["components"][0]
    if comp["compression"] is None:
        return None
    data = open(out, "rb").read()  # the code payload is the only one: the frame is the container's end
    return open(rel, "rb").read(), data[-comp["compression"]["size"]:], comp["compression"]["block"]


models = []
yolo = os.path.join(fixtures, "st-n6", "yolov8n_network_rel.bin")
if quick:
    print("yolov8n: left out (--quick)")
elif os.path.exists(yolo):
    models.append(("yolov8n", yolo))
else:
    print("SKIPPED: yolov8n (../shared/fixtures absent)")
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
for name in ("dense", "conv", "wide"):
    subprocess.run(["/usr/bin/python3", os.path.join(src, "gen_weights.py"), name, work], check=True,
                   stdout=subprocess.DEVNULL)
    Q.build(mota, work, name, [os.path.join(src, name + ".c"), os.path.join(work, name + "_weights.c")])
    models.append((name, os.path.join(work, name + "_rel.bin")))

def delta_of(name, rel, how):
    """(new image, payload, block, source image, regions) of the code payload `mota pack --delta-from` makes of
    a variant of rel (tests/tools/model_variant.py HOW) against rel packed with LZMA."""
    new = os.path.join(work, name + "_new_rel.bin")
    subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                                                      "model_variant.py"), rel, new, *how], check=True,
                   capture_output=True)
    old = os.path.join(work, name + ".old.mota")
    out = os.path.join(work, name + ".delta.mota")
    base = [mota, "pack", "-k", key, "--vendor", "example.com", "--class", "bench"]
    subprocess.run(base + ["--seq", "1", "--compress=lzma", "-o", old, rel], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(base + ["--seq", "2", "--delta-from", old, "-o", out, new], check=True, stdout=subprocess.DEVNULL)
    comp = json.loads(subprocess.run([mota, "inspect", "--json", out], check=True, capture_output=True,
                                     text=True).stdout)["components"][0]
    if comp["delta"] is None:
        return None
    regions = b"".join(struct.pack("<III", *r) for r in comp["delta"]["region_list"])
    data = open(out, "rb").read()
    return open(new, "rb").read(), data[-comp["compression"]["size"]:], comp["compression"]["block"], \
        open(rel, "rb").read(), regions


ddr = bytearray(0x10000)
jobs = b""
JOB = "<20s11I"  # struct job of bench_decompress.c
ALGS = {"lz4": 1, "deflate": 2, "lzma": 3}  # the firmware's job: MOTA_DECOMP_*
for (name, rel), alg in [(m, a) for m in models for a in ALGS]:
    got = frame_of(name, rel, alg)
    if got is None:
        print("%-8s %-7s not compressed: no smaller so" % (name, alg))
        continue
    image, frame, block = got
    addrs = []
    for blob in (frame, image, bytes(len(image))):  # frame, reference, output
        addrs.append(DDR + len(ddr))
        ddr += blob + bytes((-len(blob)) % 64)
    jobs += struct.pack(JOB, name.encode(), ALGS[alg], addrs[0], len(frame), addrs[2], len(image), block,
                        addrs[1], 0, 0, 0, 0)
# deltas (LZMA): yolov8n with its last 6 layers retrained, dense with 1% of its bytes moved
for name, rel in models:
    if name not in ("yolov8n", "dense"):
        continue
    got = delta_of(name, rel, ["head", "--layers", "6"] if name == "yolov8n" else ["bytes", "--percent", "1"])
    if got is None:
        print("%-8s delta: not smaller than the full container" % name)
        continue
    image, frame, block, src_img, regions = got
    addrs = []
    for blob in (frame, image, bytes(len(image)), src_img, regions):
        addrs.append(DDR + len(ddr))
        ddr += blob + bytes((-len(blob)) % 64)
    jobs += struct.pack(JOB, (name + "+delta").encode(), ALGS["lzma"], addrs[0], len(frame), addrs[2], len(image),
                        block, addrs[1], addrs[3], len(src_img), addrs[4], len(regions))
ddr[0:8 + len(jobs)] = struct.pack("<II", 0x345A4C4D, len(jobs) // struct.calcsize(JOB)) + jobs
open(os.path.join(work, "ddr.bin"), "wb").write(ddr)
cmd = ["qemu-system-arm", "-M", "mps3-an547", "-nographic", "-monitor", "none", "-icount", "shift=0",
       "-semihosting-config", "enable=on,target=native", "-kernel", fw,
       "-device", "loader,file=%s,addr=0x%x,force-raw=on" % (os.path.join(work, "ddr.bin"), DDR)]
r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
out = r.stdout.replace("\r", "")
print("%-12s %-7s %9s %9s %6s %14s %14s %10s %10s" % ("model", "alg", "image", "payload", "ratio", "decode/image B",
                                                       "decode/sent B", "memcpy/B", "sha256/B"))
per_byte, patched = {}, {}
for line in out.splitlines():
    if not line.startswith("decode "):
        continue
    f = line.split()
    if "PASS" not in line:
        sys.exit("FAILED: " + line)
    name, alg, plain, frm = f[1], f[2], int(f[4]), int(f[6])
    dec, cpy, sha = (int(f[i].rstrip(":")) * INSN_PER_TICK for i in (9, 12, 15))
    per_byte[(name, alg)] = dec / plain
    m = re.search(r" unpatched ticks (\d+)", line)
    if m:  # a delta: the same stream decoded without the patcher
        patched[name] = (dec - int(m.group(1)) * INSN_PER_TICK) / plain
    print("%-12s %-7s %9d %9d %5.3fx %14.2f %14.2f %10.2f %10.2f" % (name, alg, plain, frm, plain / frm, dec / plain,
                                                                    dec / frm, cpy / plain, sha / frm))
if r.returncode != 0:
    sys.exit("firmware failed (%d):\n%s" % (r.returncode, out[-2000:]))
print("instructions under QEMU -icount shift=0 (no cycle model): decode = the agent's way (256-byte program "
      "buffer, matches read back from the image written), memcpy of the image and SHA-256 of the frame for "
      "reference, in the same run")

m = re.search(r"decoder state lz4 (\d+) deflate (\d+) bytes", out)
print("decoder state on the Cortex-M55: lz4 %s bytes, deflate %s bytes (its Huffman tables)" %
      (m.group(1) if m else "?", m.group(2) if m else "?"))
m = re.search(r"decoder state lz4 \d+ deflate \d+ bytes lzma (\d+) bytes", out)
lzma_ram = int(m.group(1)) if m else None
print("decoder state on the Cortex-M55: lzma %s bytes (its probability models; goal <= 8192: %s)" %
      (lzma_ram if m else "?", "?" if not m else "met" if lzma_ram <= 8192 else "NOT MET"))
m = re.search(r"bytes patcher (\d+) bytes", out)
print("patcher state on the Cortex-M55: %s bytes (its regions and source; goal <= 2048: %s)" %
      (m.group(1) if m else "?", "?" if not m else "met" if int(m.group(1)) <= 2048 else "NOT MET"))
for name, cost in patched.items():
    print("delta %s: %.2f instructions per image byte for the patcher (decoding and patching: %.2f)" %
          (name.split("+")[0], cost, per_byte[(name, "lzma")]))
for name in [n for n, _ in models if (n, "lzma") in per_byte]:  # the goal is yolov8n's, where deflate takes 175
    lz, de = per_byte[(name, "lzma")], per_byte.get((name, "deflate"))
    print("lzma decode on %s: %.2f instructions per image byte (deflate here %s%s)" %
          (name, lz, "%.2f" % de if de else "?",
           "; goal < 175: " + ("met" if lz < 175 else "NOT MET") if name == "yolov8n" else ""))


def code_in_map(path):
    """{object: {section: size}} for the decoder's and the agent's sink's code kept in a linked firmware."""
    text = open(path).read()
    text = text[text.index("Linker script and memory map"):]
    sizes = {}
    rx = re.compile(r"^ (\.(?:text|rodata)[^\s]*)?\s*\n?\s+0x[0-9a-f]+\s+(0x[0-9a-f]+) (\S+)$", re.M)
    for sec, size, obj in rx.findall(text):
        if sec and (obj.split("(")[-1] in ("lz4.c.obj)", "inflate.c.obj)", "lzma.c.obj)", "decompress.c.obj)",
                                           "delta.c.obj)") or
                    (obj.endswith("(upload.c.obj)") and
                     sec.startswith((".text.z_", ".text.zd_", ".text.delta_", ".text.src_read"))) or
                    (obj.endswith("(agent.c.obj)") and sec == ".text.mota_agent_delta_source")):
            sizes.setdefault(obj.split("(")[1][:-1], {})[sec] = int(size, 16)
    return sizes


if len(args) > 4:
    sizes = code_in_map(args[4])
    lz4, inf = sum(sizes.get("lz4.c.obj", {}).values()), sum(sizes.get("inflate.c.obj", {}).values())
    disp = sum(sizes.get("decompress.c.obj", {}).values())
    sink = {k: v for k, v in sizes.get("upload.c.obj", {}).items() if k.startswith(".text.z_") and k != ".text.z_delta"}
    print("code in the an547 firmware (Cortex-M55, -Os): lz4 decoder %d bytes (decompress/src/lz4.c), deflate "
          "decoder %d bytes (inflate.c), their common interface %d bytes (decompress.c), the agent's sink %d bytes "
          "(%s; the rest of its glue is inlined into the upload path)" %
          (lz4, inf, disp, sum(sink.values()), ", ".join("%s %d" % (k[6:], v) for k, v in sorted(sink.items()))))
    lzma = sizes.get("lzma.c.obj", {})
    print("code in the an547 firmware (Cortex-M55, -Os): lzma decoder %d bytes (decompress/src/lzma.c; goal <= 4096: "
          "%s): %s" % (sum(lzma.values()), "met" if 0 < sum(lzma.values()) <= 4096 else "NOT MET",
                       ", ".join("%s %d" % (k[6:], v) for k, v in sorted(lzma.items(), key=lambda kv: -kv[1]))))
    patch = dict(sizes.get("delta.c.obj", {}))
    patch.update({k: v for k, v in sizes.get("upload.c.obj", {}).items() if k not in sink})
    patch.update(sizes.get("agent.c.obj", {}))
    print("code in the an547 firmware (Cortex-M55, -Os): patcher %d bytes (decompress/src/delta.c and the agent's "
          "source check and sink; goal <= 3072: %s): %s" % (
              sum(patch.values()), "met" if 0 < sum(patch.values()) <= 3072 else "NOT MET",
              ", ".join("%s %d" % (k[6:], v) for k, v in sorted(patch.items(), key=lambda kv: -kv[1]))))
