#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The epoch report of Neural-ART models (mota info/inspect --epochs), the baseline and the pack policy.

usage: test_epochs.py MOTA WORK FIXTURES CASE

Variants of the real yolov8n fixture stand for the header and runtime variants mota reads (24/26-word
header, LL_ATON 1.1.0/1.1.1/1.1.3, with and without debug info); each is a valid NBIN (mota's validator
accepts it), and the C report is compared, field by field, with tests/oracle/epochs_oracle.py, a decoder
written from ST's headers. Corrupt tables must give their reason codes.
"""
import json
import os
import re
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "link"))
from harness import Env, Skip, run_case  # noqa: E402

MOTA, WORK, FIXTURES, CASE = sys.argv[1:5]
FIXTURE = os.path.join(FIXTURES, "st-n6", "yolov8n_network_rel.bin")
ORACLE = os.path.join(HERE, "..", "oracle", "epochs_oracle.py")

# Fixture facts (docs/model-abi.md, "Epoch blocks"; st-reloc-format.md section 8)
RO = 274088          # file offset of the RW data image
CTX = RO + 0x13C4    # rt_ctx (header word 23)
TABLE = 277616       # first epoch record
GOT_TABLE = RO + 0x1458  # the GOT word entry 19 loads
DATA_END = 0x1458    # .data proper (header word 3) ends with the pool records


def fixture():
    if not os.path.exists(FIXTURE):
        raise Skip("fixture %s not found (../shared/fixtures)" % FIXTURE)
    return bytearray(open(FIXTURE, "rb").read())


def u32(b, off):
    return struct.unpack_from("<I", b, off)[0]


def put32(b, off, v):
    struct.pack_into("<I", b, off, v)


def rel_entries(b):
    s, e = u32(b, 36) & 0x0FFFFFFF, u32(b, 40) & 0x0FFFFFFF
    return s, (e - s) // 4


def set_rel(b, offsets_in_range, lo, hi):
    """Replace the RAM REL entries whose RW offset is in [lo, hi) with offsets_in_range (same count)."""
    s, n = rel_entries(b)
    old = [i for i in range(n) if u32(b, s + 4 * i) >> 28 == 4 and lo <= u32(b, s + 4 * i) & 0x0FFFFFFF < hi]
    assert len(old) == len(offsets_in_range)
    for i, off in zip(old, sorted(offsets_in_range)):
        put32(b, s + 4 * i, 0x40000000 | off)


def no_debug_info(b):
    """Rebuilt without LL_ATON_EB_DBG_INFO: 20-byte records, flags bit 21 clear, struct sizes 0x1438."""
    t = TABLE
    recs = [bytes(b[t + 48 * i:t + 48 * i + 18]) + b"\0\0" for i in range(31)]
    old_len = 31 * 48
    b[t:t + old_len] = b"".join(recs) + bytes(old_len - 31 * 20)
    put32(b, 4, u32(b, 4) & ~(1 << 21))
    put32(b, CTX + 56, 0x1438)
    ptrs = [t - RO + 20 * i + k for i in range(31) for k in (0, 4, 8) if u32(b, t + 20 * i + k)]
    set_rel(b, ptrs, t - RO, t - RO + old_len)
    return b


def ll_aton_1_1_0(b):
    """The 16-word rt_ctx of LL_ATON 1.1.0: no rt_c_struct_sizes (word 14), the pool records one word earlier."""
    lo, hi = CTX - RO + 56, DATA_END  # RW offsets: word 14 up to the end of .data proper
    b[RO + lo:RO + hi] = b[RO + lo + 4:RO + hi] + b"\0\0\0\0"
    put32(b, CTX + 40, 0x01010000)
    put32(b, 44, u32(b, 44) - 4)  # params_start: the pool records moved
    s, n = rel_entries(b)
    for i in range(n):
        e = u32(b, s + 4 * i)
        if e >> 28 == 4 and lo + 4 <= e & 0x0FFFFFFF < hi:
            put32(b, s + 4 * i, e - 4)
    got_s, got_e = u32(b, 28) & 0x0FFFFFFF, u32(b, 32) & 0x0FFFFFFF
    for off in range(got_s, got_e, 4):  # GOT words that point into the moved words
        v = u32(b, RO + off)
        if v >> 28 == 4 and lo + 4 <= v & 0x0FFFFFFF < hi:
            put32(b, RO + off, v - 4)
    return b


def header_26_words(b):
    """The 26-word header of LL_ATON 1.1.3: words 23, 24 are functions, 25 the rt_ctx; entries kept past it."""
    ctx = u32(b, 92)
    for w in (15, 16, 23, 24):
        put32(b, 4 * w, 0x20000069)
    put32(b, 100, ctx)
    return b


def ll_aton_1_1_3(b):
    """LL_ATON 1.1.3, with the DMA_DepthToSpace stub reading slot 21 (Async_Memcpy, new in 1.1.3) instead."""
    put32(b, CTX + 40, 0x01010300)
    struct.pack_into("<H", b, 0x4A5C, 0x6D64)  # ldr r4,[r4,#84]
    return b


def flags(b, i, f):
    struct.pack_into("<H", b, TABLE + 48 * i + 16, f)


def two_block_epoch(b):
    """Blocks 1 and 2 (two hybrid blocks) made one epoch: 1 starts it, 2 ends it, both epoch 65."""
    flags(b, 1, 0x41)
    flags(b, 2, 0x42)
    struct.pack_into("<hh", b, TABLE + 48 * 2 + 18, 65, 65)
    return b


def same_named_operations(b):
    """The DMA_DepthToSpace stub made to call the library's Softmax (slot 9): a kernel and an operation
    of one name."""
    struct.pack_into("<H", b, 0x4A5C, 0x6A64)  # ldr r4,[r4,#36]
    return b


def sw_node(b, node):
    """The Softmax kernel's NodeType store (movs r2,#9 in block 22's function) made another node type."""
    struct.pack_into("<H", b, 0x99C, 0x2200 | node)
    return b


def write(env, name, b):
    p = env.p(name)
    open(p, "wb").write(b)
    return p


def c_report(env, path, *extra):
    r = env.run("info", "--epochs", "--json", *extra, path, check=False)
    assert r.returncode == 0, (path, r.stdout, r.stderr)
    return json.loads(r.stdout)


def oracle(path):
    r = subprocess.run(["/usr/bin/python3", ORACLE, path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def compare(c, o, path=""):
    """Every field of the oracle's report equals the C report's; the C report adds only buffers_known."""
    if isinstance(o, dict):
        assert isinstance(c, dict), path
        extra = set(c) - set(o) - ({"buffers_known"} if path == "" else set())
        assert not extra, "%s: C prints %s, the oracle does not" % (path, extra)
        for k in o:
            assert k in c, "%s.%s missing from the C report" % (path, k)
            compare(c[k], o[k], path + "." + k)
    elif isinstance(o, list):
        assert isinstance(c, list) and len(c) == len(o), (path, len(c), len(o))
        if path.endswith(".operations"):  # the same counts; the C report orders them by count
            c, o = sorted(c, key=lambda x: (x["name"], x["via"])), sorted(o, key=lambda x: (x["name"], x["via"]))
        for i, (x, y) in enumerate(zip(c, o)):
            compare(x, y, "%s[%d]" % (path, i))
    else:
        assert c == o, "%s: C %r, oracle %r" % (path, c, o)


def case_fixture_report_matches_an_independent_decoder_in_every_variant():
    env = Env(MOTA, WORK)
    d = fixture()
    variants = {"fixture": d, "no_debug_info": no_debug_info(bytearray(d)), "ll_aton_1_1_0": ll_aton_1_1_0(bytearray(d)),
                "ll_aton_1_1_0_no_debug_info": ll_aton_1_1_0(no_debug_info(bytearray(d))),
                "header_26_words": header_26_words(bytearray(d)), "ll_aton_1_1_3": ll_aton_1_1_3(bytearray(d)),
                "two_block_epoch": two_block_epoch(bytearray(d)), "same_named_operations": same_named_operations(bytearray(d))}
    # software kernel names at the ends and around the ranges ST's order puts where a guess would not
    # (SIGMOID..SINH, REDUCESUM..REDUCEPROD), and GELU (83) from 1.1.3 on
    for node in (0, 9, 19, 20, 21, 22, 23, 26, 31, 32, 42, 62, 63, 64, 65, 66, 67, 81, 82, 83):
        variants["sw_node_%d" % node] = sw_node(bytearray(d), node)
    variants["sw_node_83_ll_aton_1_1_3"] = sw_node(ll_aton_1_1_3(bytearray(d)), 83)
    for name, b in variants.items():
        p = write(env, name + ".bin", b)
        c = c_report(env, p)
        compare(c["epochs"], oracle(p))
        if not name.startswith("sw_node_"):
            print("ok  %-28s %d blocks, %s epochs, cpu %s" % (
                name, len(c["epochs"]["blocks"]), c["epochs"]["summary"]["epochs"],
                ", ".join("%s/%s x%d" % (o["name"], o["via"], o["count"]) for o in c["epochs"]["summary"]["operations"])))
    names = [c_report(env, env.p("sw_node_%d.bin" % n))["epochs"]["blocks"][22]["cpu"] for n in (20, 22, 64, 83)]
    assert [x[0]["name"] if x else None for x in names] == ["Sigmoid", "Atanh", "Reducemin", None], names
    print("ok  %-28s the NodeType names agree with the oracle" % "sw_node_*")
    c = c_report(env, env.p("fixture.bin"))["epochs"]
    s = c["summary"]
    assert (s["blocks"], s["blob_blocks"], s["hybrid_blocks"], s["sw_blocks"], s["epochs"], s["cpu_epochs"]) == \
        (30, 13, 15, 2, 154, 17), s
    assert c["blocks"][22]["cpu"] == [{"via": "sw_kernel", "node_type": 9, "name": "Softmax"}]
    t = c_report(env, env.p("two_block_epoch.bin"))["epochs"]["summary"]
    assert (t["blocks"], t["epochs"], t["hybrid_epochs"], t["cpu_epochs"]) == (30, 153, 14, 16), t
    o = c_report(env, env.p("same_named_operations.bin"))["epochs"]["summary"]["operations"]
    assert {"name": "Softmax", "via": "callback", "count": 2} in o and {"name": "Softmax", "via": "sw_kernel", "count": 1} in o
    n = c_report(env, env.p("no_debug_info.bin"))["epochs"]
    assert n["summary"]["epochs"] is None and n["summary"]["cpu_epochs"] == 17 and n["record_size"] == 20
    assert c_report(env, env.p("ll_aton_1_1_3.bin"))["epochs"]["blocks"][1]["cpu"][0]["name"] == "Async_Memcpy"
    text = env.run("info", "--epochs", env.p("fixture.bin")).stdout
    for want in ("154 epochs: 137 on the NPU alone, 15 hybrid (NPU and CPU), 2 on the CPU alone",
                 "Softmax (software kernel, LL_SW node type 9)", "DMA_DepthToSpace (runtime library, callback 13)",
                 "not in the file: why the compiler kept an operator off the NPU", "stneuralart_operator_support.html",
                 "Input_3_out_0", "Blocks and epochs are counted apart"):
        assert want in text, want
    env.close()


CORRUPT = [  # (what, edit, reason)
    ("table pointer past the data", lambda b: put32(b, GOT_TABLE, 0x40001460), "MOTA_ERR_NBIN_EPOCH_POINTER"),
    ("table running into the GOT", lambda b: put32(b, GOT_TABLE, 0x40001454), "MOTA_ERR_NBIN_EPOCH_UNTERMINATED"),
    ("function without its Thumb bit", lambda b: put32(b, TABLE, u32(b, TABLE) & ~1), "MOTA_ERR_NBIN_EPOCH_POINTER"),
    ("pointer the loader would not relocate", lambda b: put32(b, TABLE + 48, 0x20000B59), "MOTA_ERR_NBIN_EPOCH_POINTER"),
    ("blob address at the end of the code", lambda b: put32(b, TABLE + 29 * 48 + 8, 0x20000000 | RO),
     "MOTA_ERR_NBIN_EPOCH_POINTER"),
    ("record size other than the debug-info flag's", lambda b: put32(b, CTX + 56, 0x1438), "MOTA_ERR_NBIN_EPOCH_RECORD_SIZE"),
    ("flags with an unknown bit", lambda b: struct.pack_into("<H", b, TABLE + 16, 0x217), "MOTA_ERR_NBIN_EPOCH_FLAGS"),
    ("flags of two kinds", lambda b: struct.pack_into("<H", b, TABLE + 16, 0x37), "MOTA_ERR_NBIN_EPOCH_FLAGS"),
    ("blob flag without a blob", lambda b: put32(b, TABLE + 8, 0), "MOTA_ERR_NBIN_EPOCH_FLAGS"),
    ("terminator with other fields", lambda b: put32(b, TABLE + 30 * 48 + 12, 1), "MOTA_ERR_NBIN_EPOCH_FLAGS"),
    ("epoch that never ends", lambda b: struct.pack_into("<H", b, TABLE + 16, 0x15), "MOTA_ERR_NBIN_EPOCH_FLAGS"),
    ("epochs out of order", lambda b: struct.pack_into("<h", b, TABLE + 48 + 18, 10), "MOTA_ERR_NBIN_EPOCH_NUMBERS"),
    ("getter of another shape", lambda b: struct.pack_into("<H", b, 0x6C, 0x2001), "MOTA_ERR_NBIN_EPOCH_GETTER"),
    ("blob sharing its epoch with a CPU block", lambda b: (flags(b, 0, 0x15), flags(b, 1, 0x42),
                                                          struct.pack_into("<hh", b, TABLE + 48 + 18, 64, 64)),
     "MOTA_ERR_NBIN_EPOCH_FLAGS"),
    ("hardware block calling a library operation", lambda b: flags(b, 2, 0x13), "MOTA_ERR_NBIN_EPOCH_FLAGS"),
    ("buffer with nine dimensions", lambda b: struct.pack_into("<B", b, RO + 39, 9), "MOTA_ERR_NBIN_EPOCH_BUFFER"),
]


def case_corrupt_epoch_tables_get_their_reason_codes():
    env = Env(MOTA, WORK)
    d = fixture()
    for what, edit, reason in CORRUPT:
        b = bytearray(d)
        edit(b)
        p = write(env, "bad.bin", b)
        r = env.run("info", "--epochs", p, check=False)
        assert r.returncode == 1 and reason + ":" in r.stderr, (what, r.returncode, r.stderr)
        j = json.loads(env.run("info", "--epochs", "--json", p, check=False).stdout)
        assert j["status"] == reason and j["valid"] is False, (what, j)
        # the table is the NPU runtime's, not the loader's: pack signs the model without a summary and
        # says why, but refuses to apply a policy it cannot measure
        r = pack(env, "bad.mota", p, check=False)
        i = json.loads(env.run("inspect", "--json", env.p("bad.mota")).stdout)
        os.unlink(env.p("bad.mota"))
        if reason == "MOTA_ERR_NBIN_EPOCH_BUFFER":  # the summary needs the blocks only
            assert r.returncode == 0 and not r.stderr and i["compat"]["npu_epochs"]["blocks"] == 30, (what, r.stderr)
            print("ok  %-46s %s (pack: the summary does not need the buffers)" % (what, reason))
            continue
        assert r.returncode == 0 and "mota: warning:" in r.stderr and reason in r.stderr, (what, r.stderr)
        assert i["compat"]["npu_epochs"] is None, i["compat"]
        r = pack(env, "bad.mota", p, "--max-cpu-epochs", "100", check=False)
        assert r.returncode == 1 and reason in r.stderr and not os.path.exists(env.p("bad.mota")), (what, r.stderr)
        print("ok  %-46s %s" % (what, reason))
    # a blob flagged encrypted: valid from LL_ATON 1.1.1 on, an unknown bit in 1.1.0
    b = bytearray(d)
    struct.pack_into("<H", b, TABLE + 16, 0x117)
    assert c_report(env, write(env, "enc.bin", b))["epochs"]["blocks"][0]["flag_names"][-1] == "blob_encrypted"
    b = ll_aton_1_1_0(bytearray(d))
    struct.pack_into("<H", b, TABLE + 16, 0x117)
    r = env.run("info", "--epochs", write(env, "enc110.bin", b), check=False)
    assert r.returncode == 1 and "MOTA_ERR_NBIN_EPOCH_FLAGS" in r.stderr, r.stderr
    env.close()


def regression(d):
    """The same model with one Concat epoch moved from the NPU's hybrid path to a CPU kernel."""
    b = bytearray(d)
    struct.pack_into("<H", b, TABLE + 2 * 48 + 16, 0x23)
    return b


def pack(env, out, model, *extra, check=True):
    return env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", "n6", "--seq", "1",
                   "-o", env.p(out), *extra, model, check=check)


def case_baseline_and_pack_policy_catch_work_moved_to_the_cpu():
    env = Env(MOTA, WORK)
    d = fixture()
    old, new = write(env, "old.bin", d), write(env, "new.bin", regression(d))
    # what moved, model against model
    j = c_report(env, new, "--baseline", old)
    base = j["baseline"]
    assert base["moved_to_cpu"] is True and base["moved_to_npu"] is False, base
    assert base["summary"]["sw_epochs"] == 2 and j["epochs"]["summary"]["sw_epochs"] == 3, base
    ops = {(o["name"], o["via"]): (o["before"], o["after"]) for o in base["operations"]}
    assert ops[("Concat", "callback")] == (8, 7) and ops[("unknown", "sw_kernel")] == (0, 1), ops
    text = env.run("info", "--epochs", "--baseline", old, new).stdout
    assert "verdict:       WORSE: the update moves work from the NPU to the CPU" in text, text
    assert "epochs on the CPU alone         2 -> 3      +1" in text, text
    back = c_report(env, old, "--baseline", new)["baseline"]
    assert back["moved_to_npu"] is True and back["moved_to_cpu"] is False, back
    same = env.run("info", "--epochs", "--baseline", old, old).stdout
    assert "no work moved to the CPU" in same and "CPU work moved: none" in same, same
    assert j["baseline"]["comparable"] is True, j["baseline"]
    # the buffers table says what its columns are: the runtime's memory layout, not the summary's shape
    assert re.search(r"\n  kind +name +type +memory layout +first epoch\n  input ", same), same
    # an unrelated model (ST's legacy U585 one, a Cortex-M33 CPU model) is no baseline: not comparable
    legacy = os.path.join(FIXTURES, "st-legacy", "u585_network_rel.bin")
    if os.path.exists(legacy):
        text = env.run("info", "--epochs", "--baseline", legacy, old).stdout
        assert "verdict:       not comparable: the baseline is a legacy model for CPU part 0xd21" in text, text
        assert "better" not in text, text
        assert c_report(env, old, "--baseline", legacy)["baseline"]["comparable"] is False
    other = write(env, "other.bin", sw_node(bytearray(d), 0))  # the Softmax kernel became a Conv
    j = c_report(env, other, "--baseline", old)["baseline"]
    assert (j["moved_to_cpu"], j["moved_to_npu"], j["cpu_work_changed"]) == (False, False, True), j
    assert "verdict:       CHANGED: as many epochs use the CPU, but it runs other operations" in \
        env.run("info", "--epochs", "--baseline", old, other).stdout
    # the policy: the old model passes, the new one is refused and nothing is written
    pack(env, "old.mota", old, "--max-sw-epochs", "2", "--max-cpu-epochs", "17")
    r = pack(env, "new.mota", new, "--max-sw-epochs", "2", check=False)
    assert r.returncode == 1 and "MOTA_ERR_NBIN_EPOCH_POLICY" in r.stderr and "3 epochs run on the CPU alone" in r.stderr
    assert not os.path.exists(env.p("new.mota"))
    r = pack(env, "new.mota", new, "--max-cpu-epochs", "16", check=False)
    assert r.returncode == 1 and "18 epochs use the CPU" not in r.stderr and "17 epochs use the CPU" in r.stderr, r.stderr
    r = pack(env, "x.mota", old, "--max-sw-epochs", "-1", check=False)
    assert r.returncode == 2, r.stderr
    pack(env, "new.mota", new)  # without a policy it is packed, with its summary
    # the summary is signed into the manifest: inspect shows it, and compares containers
    i = json.loads(env.run("inspect", "--json", env.p("old.mota")).stdout)
    assert i["compat"]["npu_epochs"] == {"blocks": 30, "epochs": 154, "blob_blocks": 13, "hw_blocks": 0,
                                         "hybrid_blocks": 15, "sw_blocks": 2, "npu_epochs": 137, "hybrid_epochs": 15,
                                         "sw_epochs": 2, "cpu_epochs": 17}, i["compat"]
    assert "npu epochs:      30 blocks (13 blob, 0 hw, 15 hybrid, 2 sw)" in env.run("inspect", env.p("old.mota")).stdout
    i = json.loads(env.run("inspect", "--json", "--epochs", "--baseline", env.p("old.mota"), env.p("new.mota")).stdout)
    assert i["epochs"]["summary"]["sw_epochs"] == 3 and i["baseline"]["moved_to_cpu"] is True, i["baseline"]
    assert i["epochs"] == c_report(env, new)["epochs"]
    # a baseline of either kind, container or model
    assert c_report(env, new, "--baseline", env.p("old.mota"))["baseline"]["moved_to_cpu"] is True
    env.close()


def case_status_shows_where_the_installed_models_work_runs():
    env = Env(MOTA, WORK)
    d = fixture()
    model = write(env, "y.bin", d)
    pack(env, "y.mota", model)
    port_file = env.p("port")
    sim = subprocess.Popen([MOTA, "sim", "--like", model, "--tcp", "127.0.0.1:0", "--port-file", port_file, "--key",
                            env.p("k.pub.pem"), "--class", "n6", "--flash-size", str(16 << 20)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(port_file):
                break
            time.sleep(0.1)
        port = open(port_file).read().strip()
        env.run("push", port, env.p("y.mota"))
        st = json.loads(env.run("status", "--json", port).stdout)
        got = st["models"][0]["active"]["npu_epochs"]
        want = c_report(env, model)["epochs"]["summary"]
        want.pop("operations")
        assert got == want, (got, want)
        text = env.run("status", port).stdout
        assert "npu epochs: 30 blocks (13 blob, 0 hw, 15 hybrid, 2 sw); 154 epochs: 137 NPU only, 15 hybrid, 2 CPU only" in text
    finally:
        sim.terminate()
        sim.wait()
    env.close()


def case_models_without_an_epoch_table_say_so():
    env = Env(MOTA, WORK)
    rel, params = env.model("m", 3000)
    j = json.loads(env.run("info", "--epochs", "--json", rel).stdout)
    assert j["status"] == "MOTA_OK" and j["epochs"] is None, j
    text = env.run("info", "--epochs", rel).stdout
    assert "get_epoch_items returns NULL, the model has no epoch table and runs" in text, text
    r = env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", "c", "--seq", "1", "--params",
                params, "--max-sw-epochs", "0", "-o", env.p("m.mota"), rel, check=False)
    assert r.returncode == 1 and "MOTA_ERR_NBIN_EPOCH_NONE" in r.stderr and not os.path.exists(env.p("m.mota"))
    v1 = env.pack("v1.mota", rel, params, seq=1)
    assert json.loads(env.run("inspect", "--json", v1).stdout)["compat"]["npu_epochs"] is None
    r = env.run("info", "--baseline", rel, rel, check=False)
    assert r.returncode == 2 and "needs --epochs" in r.stderr, r.stderr
    if os.path.exists(FIXTURE):
        j = json.loads(env.run("info", "--epochs", "--json", "--baseline", rel, FIXTURE).stdout)
        assert j["baseline"]["summary"] is None and j["baseline"]["moved_to_npu"] is True, j["baseline"]
    env.close()


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
