#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`mota info` names a model's inputs and outputs (issue 29): read from a Neural-ART model's buffer-info
tables, from a mota CPU model's struct mota_model_info, or said to come from a legacy model's own report
when it runs; a table or pointer it cannot read gives a reason and the rest of the report. One case per
invocation. The Neural-ART tables are decoded here again, from ST's LL_Buffer_InfoTypeDef layout
(docs/model-abi.md, "Inputs and outputs"), not through mota's C.

usage: test_info_io.py MOTA WORK SOURCE_DIR FIXTURES_DIR CASE
Exit 0 pass, 1 fail, 77 skipped (a fixture or arm-none-eabi-gcc absent: prints SKIPPED).
"""
import json
import os
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "link"))
from harness import PY, Skip, run_case  # noqa: E402

MOTA, WORK, SRC, FIXTURES, CASE = sys.argv[1:6]
WORK = os.path.join(WORK, CASE)
N6 = os.path.join(FIXTURES, "st-n6", "yolov8n_network_rel.bin")
LEGACY = os.path.join(FIXTURES, "st-legacy", "u585_network_rel.bin")
OFF = 0x0FFFFFFF
RUN_TIME = "reported by the model when it runs: `mota status` on a device that runs it shows them"
# Buffer_DataType_TypeDef of LL_ATON 1.1.1 (the fixture's) as mota names it: lower case, with the width
FORMATS_111 = [None, "float32", "uint2", "int2", "uint4", "int4", "uint8", "int8", "uint16", "int16", "int32",
               "int64", "string", "bool", "float16", "float64", "uint32", "uint64", "complex64", "complex128",
               "bfloat16"]
WIDTH = {"uint8": 1, "int8": 1, "float32": 4, "float16": 2, "int32": 4}


def p(name):
    return os.path.join(WORK, name)


def fresh():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)


def mota(*args, rc=0):
    r = subprocess.run([MOTA, *args], capture_output=True, text=True)
    assert r.returncode == rc, "mota %s: exit %d, want %d\n%s%s" % (" ".join(args), r.returncode, rc, r.stdout,
                                                                      r.stderr)
    return r


def info(path, rc=0):
    return mota("info", path, rc=rc).stdout


def info_json(path, rc=0):
    return json.loads(mota("info", "--json", path, rc=rc).stdout)


def line(text, label):
    """The one line of info's summary that starts with label."""
    got = [ln for ln in text.splitlines() if ln.startswith(label + ":")]
    assert len(got) == 1, (label, text)
    return got[0]


def need(path):
    if not os.path.exists(path):
        raise Skip("fixture %s absent" % path)
    return open(path, "rb").read()


def need_gcc():
    if shutil.which("arm-none-eabi-gcc") is None:
        raise Skip("build-model needs arm-none-eabi-gcc")


def write(name, data):
    open(p(name), "wb").write(bytes(data))
    return p(name)


def u32(d, off):
    return struct.unpack_from("<I", d, off)[0]


def cstr(d, off):
    return d[off:d.index(b"\0", off)].decode()


class St:
    """A Neural-ART model's buffer-info tables, as ST's headers lay them out."""

    def __init__(self, d):
        self.d = d
        self.ro = u32(d, 16) & OFF  # header word 4, data_data: the RW data image starts there
        self.got = (u32(d, 28) & OFF, u32(d, 32) & OFF)
        self.rel = [u32(d, o) for o in range(u32(d, 36) & OFF, u32(d, 40) & OFF, 4)]

    def table(self, word):
        """The RW offset of the table the getter at header word 21 (inputs) or 20 (outputs) returns: its
        `ldr rX,[pc,#imm]` loads a GOT slot's offset, the slot holds the table's address."""
        fn = (u32(self.d, 4 * word) & OFF) - 1
        h = struct.unpack_from("<H", self.d, fn)[0]
        assert h >> 11 == 0b01001, hex(h)
        lit = ((fn + 4) & ~3) + (h & 0xFF) * 4
        return u32(self.d, lit), u32(self.d, self.ro + u32(self.d, lit)) & OFF

    def words(self, ptr, n):
        at = ptr & OFF if ptr >> 28 == 2 else self.ro + (ptr & OFF)
        return list(struct.unpack_from("<%dI" % n, self.d, at)) if n else None

    def tensors(self, word):
        out, rec = [], self.ro + self.table(word)[1]
        while u32(self.d, rec):
            start, end = u32(self.d, rec + 8), u32(self.d, rec + 12)  # offset_start, offset_end
            mem_ndims, ndims = struct.unpack_from("<H", self.d, rec + 32)[0], self.d[rec + 39]
            shape = self.words(u32(self.d, rec + 28), mem_ndims) or self.words(u32(self.d, rec + 44), ndims)
            out.append({"name": cstr(self.d, u32(self.d, rec) & OFF), "bytes": end - start,
                        "format": FORMATS_111[self.d[rec + 35]], "shape": shape})
            rec += 56
        return out


def tensor_text(t):
    return "%s%s%s(%d B)" % (t["name"] + ": " if t["name"] else "", t["format"] + " " if t["format"] else "",
                             "x".join(map(str, t["shape"])) + " " if t["shape"] else "", t["bytes"])


def io_lines(io):
    """The two summary lines info prints for a described io (docs/host-tool.md, info)."""
    out = []
    for label, key in (("inputs", "inputs"), ("outputs", "outputs")):
        ts = io[key]
        s = "%s:%s%d tensor%s, %d bytes" % (label, " " * (14 - len(label)), len(ts), "" if len(ts) == 1 else "s",
                                            sum(t["bytes"] for t in ts))
        if any(t["name"] or t["format"] or t["shape"] for t in ts):
            s += ": " + "; ".join(tensor_text(t) for t in ts)
        out.append(s)
    return out


def documented(section):
    """The field paths docs/json.md lists under ```fields SECTION."""
    out, cur = [], False
    for ln in open(os.path.join(SRC, "docs", "json.md"), encoding="utf-8"):
        if ln.startswith("```"):
            cur = ln.strip() == "```fields " + section
        elif cur and ln.strip():
            out.append(ln.split()[0])
    return out


def build(name, *sources, family=None):
    args = ["build-model", "-o", p(name + ".bin")]
    if family:
        args += ["--family", family, "--cpu", "cortex-m33"]
    mota(*args, *sources)
    return p(name + ".bin")


def model_source(name, in_bytes, out_bytes, acts):
    """A CPU model of the given sizes: its output bytes sum strided input bytes and its activations."""
    src = p(name + ".c")
    open(src, "w").write('#include "mota_model.h"\n'
                         "int8_t acts[%d];\n"
                         "static int32_t init(void) { return 0; }\n"
                         "static int32_t run(const int8_t *in, int8_t *out)\n"
                         "{\n"
                         "    for (int i = 0; i < %d; i++)\n"
                         "        out[i] = (int8_t)(in[(i * 7) %% %d] + acts[i %% %d]);\n"
                         "    return 0;\n"
                         "}\n"
                         'MOTA_MODEL("%s", init, run, %d, %d, sizeof(acts));\n'
                         % (acts, out_bytes, in_bytes, acts, name, in_bytes, out_bytes))
    return src


def reason_kept_the_rest(path, reason, where):
    """A table or pointer info cannot read: exit 0, the reason in both forms, the rest of the report."""
    text = info(path)
    assert line(text, "inputs").startswith("inputs:        not read: %s in %s: " % (reason, where)), text
    assert line(text, "outputs") == "outputs:       not read: as the inputs", text
    assert line(text, "verdict").startswith("verdict:       valid"), text
    j = info_json(path)
    assert j["status"] == "MOTA_OK" and j["valid"] and j["io"] is None and j["io_reason"] == reason, j
    assert j["c_name"] and "pools" in j and j["ro_size"] > 0, j


def never_crashes(path, rcs=(0, 1)):
    """Whatever the file, info ends with an exit code it documents and one JSON document."""
    r = subprocess.run([MOTA, "info", "--json", path], capture_output=True, text=True)
    assert r.returncode in rcs, (path, r.returncode, r.stderr)
    j = json.loads(r.stdout)
    assert j["status"].startswith("MOTA_"), j
    if r.returncode == 0:
        assert j["io"] is None or set(j["io"]) == {"inputs", "outputs", "input_bytes", "output_bytes"}, j
        assert j["io_reason"] is None or j["io"] is None, j
        t = subprocess.run([MOTA, "info", path], capture_output=True)
        assert t.returncode == 0 and t.stdout.count(b"\ninputs:") == 1, t
    else:
        assert j["valid"] is False and "io" not in j, j
    return j


# ---------------------------------------------------------------- cases

def case_n6_fixture_shows_its_real_input_and_output_tensors():
    d = need(N6)
    st = St(d)
    want = {"inputs": st.tensors(21), "outputs": st.tensors(20)}
    # what the file says, read above from ST's layout; and what that is for yolov8n 256
    assert want == {"inputs": [{"name": "Input_3_out_0", "bytes": 196608, "format": "uint8",
                                "shape": [1, 256, 256, 3]}],
                    "outputs": [{"name": "Transpose_579_out_0", "bytes": 26880, "format": "float32",
                                 "shape": [1, 5, 1344]}]}, want
    for t in want["inputs"] + want["outputs"]:  # offset_end - offset_start is the shape's elements in memory
        n = 1
        for k in t["shape"]:
            n *= k
        assert n * WIDTH[t["format"]] == t["bytes"], t
    j = info_json(N6)
    want.update(input_bytes=196608, output_bytes=26880)
    assert j["status"] == "MOTA_OK" and j["io"] == want and j["io_reason"] is None, j["io"]
    text = info(N6)
    assert line(text, "inputs") == \
        "inputs:        1 tensor, 196608 bytes: Input_3_out_0: uint8 1x256x256x3 (196608 B)", text
    assert line(text, "outputs") == \
        "outputs:       1 tensor, 26880 bytes: Transpose_579_out_0: float32 1x5x1344 (26880 B)", text
    assert line(text, "inputs") == io_lines(want)[0] and line(text, "outputs") == io_lines(want)[1]
    # the epoch report, another decoder of the same tables, names the same buffers and shapes in memory
    bufs = json.loads(mota("info", "--json", "--epochs", N6).stdout)["epochs"]["buffers"]
    assert [(b["name"], b["mem_shape"]) for b in bufs] == \
        [(t["name"], t["shape"]) for t in want["inputs"] + want["outputs"]], bufs
    listed = documented("info")
    for path in ("io", "io.inputs[].name", "io.inputs[].bytes", "io.inputs[].format", "io.inputs[].shape[]",
                 "io.outputs[].name", "io.input_bytes", "io.output_bytes", "io_reason"):
        assert path in listed, path

    # several tensors: the output record copied over the output table's terminator, its three REL entries
    # moved with it (nothing else is relocated between them), the input table left empty
    fresh()
    v, ro = bytearray(d), st.ro
    out_t, in_t = st.table(20)[1], st.table(21)[1]
    assert out_t == 0 and in_t == 112 and not any(d[ro + 56:ro + 112]), (out_t, in_t)
    rel_off = u32(d, 36) & OFF
    for k, e in enumerate(st.rel):
        if e >> 28 == 4 and 44 < (e & OFF) < 112:
            raise AssertionError("a REL entry between the records: %x" % e)
        if e in (0x40000000 | 112, 0x40000000 | 140, 0x40000000 | 156):
            struct.pack_into("<I", v, rel_off + 4 * k, e - 56)
    v[ro + 56:ro + 112] = d[ro + 112:ro + 168]
    v[ro + 112:ro + 116] = bytes(4)
    two = write("two_outputs.bin", v)
    j = info_json(two)
    want2 = {"inputs": [], "outputs": want["outputs"] + want["inputs"], "input_bytes": 0,
             "output_bytes": 26880 + 196608}
    assert j["io"] == want2 and j["io_reason"] is None, j["io"]
    text = info(two)
    assert line(text, "inputs") == "inputs:        0 tensors, 0 bytes", text
    assert line(text, "outputs") == "outputs:       2 tensors, 223488 bytes: Transpose_579_out_0: float32 " \
        "1x5x1344 (26880 B); Input_3_out_0: uint8 1x256x256x3 (196608 B)", text


def case_a_cpu_model_shows_the_input_and_output_bytes_it_was_built_with():
    need_gcc()
    fresh()
    gen = p("gen")
    for m in ("dense", "conv"):
        subprocess.run([PY, os.path.join(SRC, "tests", "models", "gen_weights.py"), m, gen], check=True,
                       capture_output=True)
    models = [(build("iosize", model_source("iosize", 3072, 77, 48)), 3072, 77),
              (build("odd", model_source("odd", 1, 65537, 8)), 1, 65537),
              (build("dense", os.path.join(SRC, "tests", "models", "dense.c"), os.path.join(gen, "dense_weights.c")),
               64, 10)]
    mota("build-model", "--split", p("conv_params.bin"), "-o", p("conv.bin"),
         os.path.join(SRC, "tests", "models", "conv.c"), os.path.join(gen, "conv_weights.c"))
    models.append((p("conv.bin"), 144, 4))
    for path, n_in, n_out in models:
        text = info(path)
        assert line(text, "inputs") == "inputs:        1 tensor, %d bytes" % n_in, text
        assert line(text, "outputs") == "outputs:       1 tensor, %d bytes" % n_out, text
        j = info_json(path)
        t = {"name": None, "format": None, "shape": None}
        assert j["io"] == {"inputs": [dict(t, bytes=n_in)], "outputs": [dict(t, bytes=n_out)],
                           "input_bytes": n_in, "output_bytes": n_out}, j["io"]
        assert j["io_reason"] is None and j["runtime_desc"].startswith("mota-cpu-abi-1 "), j


def case_a_legacy_model_says_its_report_gives_them_when_it_runs():
    paths = []
    if os.path.exists(LEGACY):
        paths.append(LEGACY)
    if shutil.which("arm-none-eabi-gcc") is not None:
        fresh()
        gen = p("gen")
        subprocess.run([PY, os.path.join(SRC, "tests", "models", "gen_weights.py"), "dense", gen], check=True,
                       capture_output=True)
        paths.append(build("legacy", os.path.join(SRC, "tests", "models", "dense.c"),
                           os.path.join(gen, "dense_weights.c"), family="legacy"))
    if not paths:
        raise Skip("neither %s nor arm-none-eabi-gcc (for build-model --family legacy)" % LEGACY)
    for path in paths:
        text = info(path)
        assert line(text, "inputs") == "inputs:        " + RUN_TIME, text
        assert line(text, "outputs") == "outputs:       " + RUN_TIME, text
        j = info_json(path)
        assert j["family"] == "legacy" and "io" in j and j["io"] is None and j["io_reason"] is None, j


def case_a_model_whose_file_describes_no_tensors_says_so():
    fresh()
    # no buffer-info tables (every getter returns NULL) and another runtime than mota's CPU ABI
    subprocess.run([PY, os.path.join(SRC, "tests", "tools", "synth_nbin.py"), p("s_rel.bin"), p("s_params.bin"),
                    "3000"], check=True)
    text = info(p("s_rel.bin"))
    none = "not in the file: no buffer-info tables, and not a mota CPU-ABI model"
    assert line(text, "inputs") == "inputs:        " + none and line(text, "outputs") == "outputs:       " + none
    j = info_json(p("s_rel.bin"))
    assert j["io"] is None and j["io_reason"] is None and j["runtime_desc"] == "synthetic (RELOC.GCC)", j


def n6_corruptions(d):
    """Variants of the fixture that validate but whose buffer-info tables mota must refuse: (name, bytes,
    reason)."""
    st = St(d)
    ro, (got_s, _) = st.ro, st.got
    slot, table = st.table(21)
    rec = ro + table
    out = []

    def variant(name, reason, *patches):
        v = bytearray(d)
        for off, fmt, val in patches:
            struct.pack_into(fmt, v, off, val)
        out.append((name, v, reason))

    variant("end_before_start", "MOTA_ERR_NBIN_EPOCH_BUFFER", (rec + 8, "<I", 0x40000))
    variant("nine_dims", "MOTA_ERR_NBIN_EPOCH_BUFFER", (rec + 32, "<H", 9))
    variant("huge", "MOTA_ERR_NBIN_SIZE_LIMIT", (rec + 12, "<I", 0xF0000000))
    variant("struct_size", "MOTA_ERR_NBIN_EPOCH_BUFFER", (ro + (u32(d, 92) & OFF) + 56, "<I", 0x3040))
    getter = (u32(d, 4 * 21) & OFF) - 1
    variant("getter_shape", "MOTA_ERR_NBIN_EPOCH_GETTER", (getter, "<H", 0xBF00))  # nop: not a getter
    # the table starts one word later: its "name" is the record's addr_base, which no REL entry names
    variant("unrelocated", "MOTA_ERR_NBIN_EPOCH_POINTER", (ro + slot, "<I", 0x40000000 | (table + 4)))
    # a table whose first name is not NULL and whose record runs into the GOT
    last = [o for o in range(got_s - 52, got_s, 4) if u32(d, ro + o)]
    assert last, "no non-zero word before the GOT"
    variant("unterminated", "MOTA_ERR_NBIN_EPOCH_UNTERMINATED", (ro + slot, "<I", 0x40000000 | last[-1]))
    return out


def cpu_corruptions(path):
    """Variants of a CPU model that validate but whose struct mota_model_info mota must refuse."""
    d = open(path, "rb").read()
    ro, ctx = u32(d, 16) & OFF, u32(d, 92) & OFF
    itf = u32(d, ro + ctx + 64)
    info_at = ro + (itf & OFF)
    rw = u32(d, 24) & OFF
    out = []
    for name, off, val, reason in (
            ("itf_at_rt_ctx", ro + ctx + 64, 0x40000000 | ctx, "MOTA_ERR_NBIN_RTCTX"),  # its first word: no name
            ("itf_in_bss", ro + ctx + 64, 0x40000000 | (rw - 4), "MOTA_ERR_NBIN_RTCTX"),
            ("other_activations", info_at + 12, u32(d, info_at + 12) + 1, "MOTA_ERR_NBIN_RTCTX"),
            ("huge_input", info_at + 4, 0x7FFFFFFF, "MOTA_ERR_NBIN_SIZE_LIMIT")):
        v = bytearray(d)
        struct.pack_into("<I", v, off, val)
        out.append((name, v, reason))
    return out


def case_corrupt_or_truncated_models_give_a_reason_and_never_crash():
    have_n6, have_gcc = os.path.exists(N6), shutil.which("arm-none-eabi-gcc") is not None
    if not have_n6 and not have_gcc:
        raise Skip("neither %s nor arm-none-eabi-gcc (for build-model)" % N6)
    fresh()
    if have_n6:
        d = open(N6, "rb").read()
        for name, v, reason in n6_corruptions(d):
            reason_kept_the_rest(write(name + ".bin", v), reason, "the buffer-info tables (entries 20, 21)")
        for n in (0, 3, 100, 4096, len(d) // 2, len(d) - 1):  # cut: refused by validation, with its reason
            j = never_crashes(write("cut.bin", d[:n]), rcs=(1,))
            assert j["status"].startswith("MOTA_ERR_NBIN_"), j
            r = mota("info", p("cut.bin"), rc=1)
            assert r.stdout == "" and r.stderr.startswith("mota: error: MOTA_ERR_NBIN_"), r.stderr
    if have_gcc:
        cpu = build("iosize", model_source("iosize", 3072, 77, 48))
        for name, v, reason in cpu_corruptions(cpu):
            reason_kept_the_rest(write(name + ".bin", v), reason, "the CPU-ABI interface (rt_ctx itf_network)")
        # every byte of the data image and the REL table, and every 16th elsewhere, flipped in turn
        d = open(cpu, "rb").read()
        ro = u32(d, 16) & OFF
        seen = set()
        for i in range(len(d)):
            if i < ro and i % 16:
                continue
            v = bytearray(d)
            v[i] ^= 0xFF
            j = never_crashes(write("flip.bin", v))
            seen.add(j["io_reason"] if j["status"] == "MOTA_OK" else j["status"])
        assert "MOTA_ERR_NBIN_RTCTX" in seen and None in seen, seen


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
