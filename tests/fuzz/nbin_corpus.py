#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The seed corpus of fuzz_nbin, kept small and in the repository
(tests/fuzz/corpus/fuzz_nbin): models `mota build-model` makes of the test
models, in both families, appended and split, for two CPUs, and their headers
cut short; the built model's params pool turned into the other pool kinds; and
synthetic Neural-ART models (no real code) with several mem-pools of every
kind, fixed and external destinations, tagged GOT words and a code relocation.
A split model's seed is its image followed by its params file, as the target
reads it. A few KiB each, so the fuzzer runs at its speed, not at the speed of
copying a 3.3 MB model (issue 16). Every seed but the cut ones validates.

usage: nbin_corpus.py MOTA OUT_DIR
"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

mota, out = sys.argv[1:3]
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
os.makedirs(out, exist_ok=True)

# pool flags <type:8><dtype:8><attr:8><id:8> (st-reloc-format 4.2)
RELOC, COPY, RESET = 1, 2, 3
PARAM, ACTIV, MIXED = 1, 2, 3
READ, WRITE, CACHED = 1, 2, 4
NPU_RAM, UNMAPPED = 0x34000000, 0x30000000  # the target maps 64 KiB of NPU RAM at 0x34000000, nothing at 0x30000000


def flags(typ, dtype, attr, pid=0):
    return typ << 24 | dtype << 16 | attr << 8 | pid


def write(name, image, params=b""):
    """A seed, after mota info validated its image."""
    with tempfile.NamedTemporaryFile(suffix=".bin") as t:
        t.write(image)
        t.flush()
        r = subprocess.run([mota, "info", t.name], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("%s: %s" % (name, r.stderr.strip()))
    open(os.path.join(out, name + ".bin"), "wb").write(image + params)


def w32(b, off, v):
    struct.pack_into("<I", b, off, v)


def r32(b, off):
    return struct.unpack_from("<I", b, off)[0]


def repool(model, pool_flags, dst=0, ext=False):
    """The built NPU model with its one pool (the params, RELOC PARAM id 0) of another kind; with ext, the
    model's external RAM (rt_ctx word 8) holds it."""
    b = bytearray(model)
    ro = r32(b, 16) & 0x0FFFFFFF
    rc, desc = ro + (r32(b, 92) & 0x0FFFFFFF), ro + (r32(b, 44) & 0x0FFFFFFF)  # 24-word header: ctx is word 23
    w32(b, desc + 4, pool_flags)
    w32(b, desc + 12, dst)
    if ext:
        w32(b, rc + 32, r32(b, desc + 16))
    return bytes(b)


def synth(pools, blob, ext_ram=0, got=(), code_rel=False, split=False, words=24):
    """A Neural-ART model as tests/tools/synth_nbin.py makes one (every entry returns 0), with a header of
    `words` words (24, or 26: 12 entries), the pool descriptors `pools` ((name, flags, foff, dst, size)...)
    over the params blob `blob`, external RAM ext_ram, GOT words `got` (then the 3 reserved ones), REL
    entries for the pointers in .data and with code_rel one in the code (COPY mode only). Returns the image
    and, split, the params file."""
    entry = 0x20000001 | 4 * words
    code = b"\x00\x20\x70\x47" + (struct.pack("<I", entry) if code_rel else b"")  # movs r0,#0; bx lr
    strings = bytearray()
    at = {}
    for s in [b"network", b"synthetic (RELOC.GCC)"] + [p[0] for p in pools]:
        at[s] = 4 * words + len(code) + len(strings)
        strings += s + b"\0"
    ro = (4 * words + len(code) + len(strings) + 7) & ~7
    desc = 0x44  # .params_desc follows the 17-word rt_ctx and ends .data proper
    data_end = desc + 20 * (len(pools) + 1)
    got = list(got) + [0, 0, 0]
    got_s, got_e = data_end, data_end + 4 * len(got)
    bss_s, bss_e = got_e, got_e + 64
    rel = [0x40000000 | o for o in [20, 36, 64] + [desc + 20 * i for i in range(len(pools))]]
    rel += [0x20000000 | 4 * words + 4] if code_rel else []
    rel_s = (ro + got_e + 7) & ~7
    rel_e = rel_s + 4 * len(rel)
    img_len = (rel_e + 7) & ~7
    img = bytearray(img_len)
    hdr = [0x4E49424E, 0x80085D22, 0x40000000, 0x40000000 | data_end, 0x20000000 | ro,
           0x40000000 | bss_s, 0x40000000 | bss_e, 0x40000000 | got_s, 0x40000000 | got_e,
           0x20000000 | rel_s, 0x20000000 | rel_e, 0x40000000 | desc, img_len if blob and not split else 0]
    struct.pack_into("<%dI" % words, img, 0, *hdr, *[entry] * (words - 14), 0x40000000)
    img[4 * words:4 * words + len(code) + len(strings)] = code + strings
    rt = [0, 0, 0, 0, 0, 0x20000000 | at[b"network"], 256, len(blob), ext_ram,
          0x20000000 | at[b"synthetic (RELOC.GCC)"], 0x01010100, 0, len(blob), zlib.crc32(blob), 0x3038, 0, 0x40000000]
    struct.pack_into("<17I", img, ro, *rt)
    for i, (name, f, foff, dst, size) in enumerate(pools):
        struct.pack_into("<5I", img, ro + desc + 20 * i, 0x20000000 | at[name], f, foff, dst, size)
    struct.pack_into("<%dI" % len(got), img, ro + got_s, *got)
    struct.pack_into("<%dI" % len(rel), img, rel_s, *sorted(rel))
    return (bytes(img), blob) if split else (bytes(img) + blob, b"")


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
                if name == "dense":  # split: the image, then its params
                    split, prm = os.path.join(w, "s.bin"), os.path.join(w, "p.bin")
                    subprocess.run([mota, "build-model", "--family", family, "--cpu", cpu, "--split", prm,
                                    "-o", split, *sources], check=True, stdout=subprocess.DEVNULL)
                    write(base + "_split", open(split, "rb").read(), open(prm, "rb").read())
                    if cpu == "cortex-m55" and family == "npu":
                        write(base + "_split_alone", open(split, "rb").read())  # no params to install from
                    data = open(rel, "rb").read()
                    for cut in (96, 192):  # headers cut short: the parser's bounds
                        open(os.path.join(out, "%s_cut%d.bin" % (base, cut)), "wb").write(data[:cut])
    # a params file after a model whose weights are appended
    wide = open(os.path.join(out, "wide_legacy_m55.bin"), "rb").read()
    write("wide_legacy_m55_extra", wide, bytes(8))
    # activations (rt_ctx word 6, placed after the RW segment) larger than the code
    wide = bytearray(wide)
    w32(wide, (r32(wide, 16) & 0x0FFFFFFF) + (r32(wide, 96) & 0x0FFFFFFF) + 24, 4096)  # 25-word header: ctx is word 24
    write("wide_legacy_m55_acts", bytes(wide))

    # the built model's params pool as the other kinds: copied to NPU RAM, the cacheable external pool
    # (refused in internal RAM), cacheable params (refused in internal flash)
    dense = open(os.path.join(out, "dense_npu_m55.bin"), "rb").read()
    write("dense_npu_m55_copy", repool(dense, flags(COPY, PARAM, READ), NPU_RAM))
    write("dense_npu_m55_ext", repool(dense, flags(RELOC, MIXED, WRITE | CACHED, 1), ext=True))
    write("dense_npu_m55_cached", repool(dense, flags(RELOC, PARAM, READ | CACHED)))

blob = bytes(range(192))
got = [0x20000061, 0x40000010, 0x80000008, 0x90000008]  # a code, a RAM, a params_0 and a params_1 address
pools = [(b"npu_ram", flags(COPY, MIXED, WRITE), 0, NPU_RAM, 64),
         (b"weights", flags(RELOC, PARAM, READ | CACHED), 64, 0, 64),
         (b"npu_acts", flags(RESET, ACTIV, WRITE), 0, NPU_RAM + 0x8000, 256),
         (b"xspi_ram", flags(RELOC, MIXED, WRITE | CACHED, 1), 128, 0, 64)]
write("synth_pools", *synth(pools, blob, 64, got))
write("synth_pools_split", *synth(pools, blob, 64, got, split=True))
# uncached pools (internal memory may hold them), split; external activations zeroed, or left alone without CLEAR
write("synth_uncached", *synth([(b"weights", flags(RELOC, PARAM, READ), 0, 0, 64),
                                (b"copy", flags(COPY, PARAM, READ), 64, NPU_RAM + 0x100, 64),
                                (b"ext_acts", flags(RELOC, ACTIV, WRITE, 1), 0, 0, 128)],
                               blob[:128], 128, got[:3] + [0x90000080], split=True))
# a params_1 address with no external RAM declared
write("synth_tag9", *synth([(b"weights", flags(RELOC, PARAM, READ), 0, 0, 64)], blob[:64], 0, [0x90000000]))
# a relocated word in the code: COPY mode only
write("synth_code_rel", *synth([(b"weights", flags(RELOC, PARAM, READ), 0, 0, 64)], blob[:64], 0, got[:3],
                               code_rel=True))
# the 26-word header; the most pools a table holds (nine activation pools, no params)
write("synth_hdr26", *synth([(b"weights", flags(RELOC, PARAM, READ), 0, 0, 64)], blob[:64], 0, got[:3], words=26))
write("synth_nine_pools", *synth([(b"acts%d" % i, flags(RESET, ACTIV, WRITE), 0, NPU_RAM + 0x1000 * i, 64)
                                  for i in range(9)], b""))
# pools the installer must refuse: a destination the device does not map, an external pool larger than
# the external RAM the model declares
write("synth_unmapped", *synth([(b"far", flags(COPY, PARAM, READ), 0, UNMAPPED, 64)], blob[:64]))
write("synth_ext_short", *synth([(b"ext", flags(RELOC, MIXED, WRITE, 1), 0, 0, 64)], blob[:64], 0))

total = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
print("%d seeds, %d bytes in %s" % (len(os.listdir(out)), total, out))
