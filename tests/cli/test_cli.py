#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the `mota` command line, one case per invocation.

usage: test_cli.py MOTA FIXTURES_DIR SOURCE_DIR CASE
Exit 0 pass, 1 fail, 77 skipped (a fixture is absent: prints SKIPPED).
"""
import hashlib
import json
import os
import resource
import signal
import struct
import subprocess
import sys
import shutil
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "link"))
from harness import Skip, run_case  # noqa: E402

MOTA, FIX, SRC, CASE = sys.argv[1:5]
ORACLE = os.path.join(SRC, "tests", "oracle", "check_container.py")
YOLO = os.path.join(FIX, "st-n6", "yolov8n_network_rel.bin")
EX0 = os.path.join(FIX, "suit", "example0.suit")
EX0_KEY = os.path.join(FIX, "suit", "example0_public.pem")
W = tempfile.mkdtemp(prefix="mota-cli-")


def need(*paths):
    for p in paths:
        if not os.path.exists(p):
            raise Skip("%s is absent" % p)


def run(*args, rc=0, env=None, preexec_fn=None):
    r = subprocess.run([MOTA, *args], capture_output=True, text=True, env=env, errors="replace",
                       preexec_fn=preexec_fn)
    if rc is not None and r.returncode != rc:
        raise AssertionError("mota %s: exit %d, want %d\nstdout: %s\nstderr: %s"
                             % (" ".join(map(str, args)), r.returncode, rc, r.stdout, r.stderr))
    return r


def reason(r):
    assert r.stderr.startswith("mota: error: "), r.stderr
    return r.stderr.split(":")[2].strip()


def p(name):
    return os.path.join(W, name)


def keys():
    run("keygen", p("k.pem"))
    return p("k.pem"), p("k.pub.pem")


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def oracle(*args):
    r = subprocess.run(["/usr/bin/python3", ORACLE, *args], capture_output=True, text=True)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr


def split_yolo():
    """The fixture as a split build: image up to params_offset, blob apart."""
    data = open(YOLO, "rb").read()
    off = struct.unpack_from("<I", data, 48)[0]
    img = bytearray(data[:off])
    struct.pack_into("<I", img, 48, 0)
    open(p("split_rel.bin"), "wb").write(img)
    open(p("split_params.bin"), "wb").write(data[off:])
    return p("split_rel.bin"), p("split_params.bin")


def files_in_workdir():
    return sorted(f for f in os.listdir(W))


# ---------------------------------------------------------------- cases

def case_example0_verifies_and_its_bit_flips_do_not():
    need(EX0, EX0_KEY)
    run("verify", "--key", EX0_KEY, EX0)
    data = open(EX0, "rb").read()

    def flip(bit):
        b = bytearray(data)
        b[bit // 8] ^= 1 << (bit % 8)
        path = p("flip%d.suit" % bit)
        open(path, "wb").write(b)
        # the first verify above runs with the leak checker; 1,896 more would only double the test's time
        r = run("verify", "--quiet", "--key", EX0_KEY, path, rc=None,
                env=dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"))
        os.unlink(path)
        if r.returncode != 1 or not reason(r).startswith("MOTA_ERR_"):
            return "bit %d: exit %d %s" % (bit, r.returncode, r.stderr.strip())
        return reason(r)

    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        results = list(ex.map(flip, range(len(data) * 8)))
    bad = [r for r in results if not r.startswith("MOTA_ERR_")]
    assert not bad, bad[:5]
    print("mota verify rejected all %d single-bit flips of example0.suit, with %d distinct reasons"
          % (len(results), len(set(results))))


def case_pack_output_checks_out_with_an_independent_verifier():
    need(YOLO)
    openssl("ecparam", "-genkey", "-name", "prime256v1", "-out", p("ossl.pem"))
    openssl("ec", "-in", p("ossl.pem"), "-pubout", "-out", p("ossl.pub.pem"))
    run("pack", "-k", p("ossl.pem"), "--vendor", "example.com", "--class", "stm32n6-dk", "--seq", "12345",
        "--version", "3.1.4", "-o", p("y.mota"), YOLO)
    oracle(p("y.mota"), p("ossl.pub.pem"), YOLO, "--vendor", "example.com", "--class", "stm32n6-dk",
           "--seq", "12345")
    run("verify", "--key", p("ossl.pub.pem"), p("y.mota"))


def case_split_model_with_selftest_checks_out_with_an_independent_verifier():
    need(YOLO)
    priv, pub = keys()
    rel, params = split_yolo()
    open(p("in.bin"), "wb").write(bytes(range(256)) * 4)
    open(p("out.bin"), "wb").write(b"\x07" * 84)
    run("pack", "-k", priv, "--vendor", "example.com", "--class", "b", "--seq", "9", "--params", params,
        "--install-mode", "copy", "--selftest-input", p("in.bin"), "--selftest-output", p("out.bin"),
        "--selftest-max-latency-us", "25000", "-o", p("s.mota"), rel)
    oracle(p("s.mota"), pub, rel, "--params", params, "--vendor", "example.com", "--class", "b", "--seq", "9",
           "--mode", "copy", "--selftest-input", p("in.bin"), "--selftest-output", p("out.bin"),
           "--selftest-max-latency-us", "25000")
    run("verify", "--key", pub, p("s.mota"))


def case_compressed_containers_check_out_with_an_independent_verifier_and_a_damaged_frame_is_named():
    need(YOLO)
    priv, pub = keys()
    rel, params = split_yolo()
    open(p("in.bin"), "wb").write(bytes(range(256)) * 4)
    open(p("out.bin"), "wb").write(b"\x07" * 84)
    r = run("pack", "-k", priv, "--vendor", "example.com", "--class", "b", "--seq", "9", "--params", params,
            "--selftest-input", p("in.bin"), "--selftest-output", p("out.bin"), "--selftest-max-latency-us", "25000",
            "--compress", "-o", p("z.mota"), rel)
    assert "compressed params: " in r.stdout and "compressed code: " in r.stdout, r.stdout
    oracle(p("z.mota"), pub, rel, "--params", params, "--vendor", "example.com", "--class", "b", "--seq", "9",
           "--selftest-input", p("in.bin"), "--selftest-output", p("out.bin"), "--selftest-max-latency-us", "25000",
           "--compressed")
    run("verify", "--key", pub, p("z.mota"))
    r = run("pack", "-k", priv, "--vendor", "example.com", "--class", "b", "--seq", "9", "--params", params,
            "--compress=lz4", "-o", p("z4.mota"), rel)
    assert "lz4, 4096-byte blocks" in r.stdout, r.stdout
    oracle(p("z4.mota"), pub, rel, "--params", params, "--vendor", "example.com", "--class", "b", "--seq", "9",
           "--compressed")
    run("verify", "--key", pub, p("z4.mota"))
    r = run("pack", "-k", priv, "--vendor", "example.com", "--class", "b", "--seq", "9", "--params", params,
            "--compress=lzma", "-o", p("zx.mota"), rel)
    assert "lzma, 262144-byte blocks" in r.stdout, r.stdout
    oracle(p("zx.mota"), pub, rel, "--params", params, "--vendor", "example.com", "--class", "b", "--seq", "9",
           "--compressed")
    run("verify", "--key", pub, p("zx.mota"))
    r = run("pack", "-k", priv, "--vendor", "example.com", "--class", "b", "--seq", "9", "--compress=zstd",
            "-o", p("zz.mota"), rel, rc=2)
    assert "deflate, lzma and lz4" in r.stderr and not os.path.exists(p("zz.mota")), r.stderr
    # the code's epoch report reads through the frame
    ep = json.loads(run("inspect", "--epochs", "--json", p("z.mota")).stdout)["epochs"]
    assert ep["summary"]["blocks"] == 30, ep["summary"]
    # one byte of the params frame changed: its transport digest names it
    z = bytearray(open(p("z.mota"), "rb").read())
    comps = json.loads(run("inspect", "--json", p("z.mota")).stdout)["components"]
    zsize = [c for c in comps if c["role"] == "params"][0]["compression"]["size"]
    sel = [c for c in comps if c["role"] == "selftest"][0]
    sel_wire = (sel["compression"] or {"size": sel["size"]})["size"]
    at = len(z) - (sel_wire + 13) - zsize // 2  # inside the params frame (the self-test payload follows it)
    z[at] ^= 0x20
    open(p("zbad.mota"), "wb").write(z)
    r = run("verify", "--key", pub, p("zbad.mota"), rc=1)
    assert reason(r) == "MOTA_ERR_PAYLOAD_DIGEST", r.stderr
    print("yolov8n split: code and params sent deflated and as LZ4 frames; independent decoders give back both "
          "files; a flipped bit in the params payload is MOTA_ERR_PAYLOAD_DIGEST")


def case_inspect_round_trips_every_compatibility_field():
    need(YOLO)
    priv, pub = keys()
    run("pack", "-k", priv, "--vendor", "example.com", "--class", "b", "--seq", "1", "-o", p("y.mota"), YOLO)
    c = json.loads(run("inspect", "--json", p("y.mota")).stdout)["compat"]
    i = json.loads(run("info", "--json", YOLO).stdout)
    rt = i["rt_version"]
    want = {
        "reloc_major": i["reloc_major"], "reloc_minor": i["reloc_minor"], "cpu_part": i["cpu_part"], "cpu": i["cpu"],
        "fpu": i["fpu"], "float_abi": i["float_abi"], "secure": i["secure"], "dbg_info": i["dbg_info"],
        "async": i["async"], "toolchain": i["toolchain"],
        "ll_aton_version": "%d.%d.%d" % (rt >> 24, rt >> 16 & 255, rt >> 8 & 255),
        "runtime_desc": i["runtime_desc"], "c_name": i["c_name"], "activations_size": i["activations_size"],
        "params_size": i["params_size"], "ext_ram_size": i["ext_ram_size"], "exec_ram_xip": i["exec_ram_xip"],
        "exec_ram_copy": i["exec_ram_copy"], "install_mode": "xip", "struct_sizes": 0x3038, "selftest": None,
        "npu_epochs": {k: v for k, v in json.loads(run("info", "--json", "--epochs", YOLO).stdout)["epochs"]["summary"].items()
                       if k != "operations"},
    }
    assert set(c) == set(want), set(c) ^ set(want)
    for k, v in want.items():
        assert c[k] == v, "%s: %r != %r" % (k, c[k], v)
    # the documented values of the fixture (st-reloc-format.md section 8)
    assert (c["cpu_part"], c["exec_ram_xip"], c["exec_ram_copy"], c["activations_size"]) == \
        (0xD22, 249640, 523728, 475136)
    print("all %d compatibility fields round-trip" % len(want))


def case_pack_is_reproducible():
    need(YOLO)
    priv, _ = keys()
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
    for out in ("a.mota", "b.mota"):
        run("pack", "-k", priv, "--vendor", "v.example", "--class", "c", "--seq", "5", "-o", p(out), YOLO, env=env)
    a, b = open(p("a.mota"), "rb").read(), open(p("b.mota"), "rb").read()
    assert a == b, "two packs of the same inputs differ"
    assert b"2023-11-14T22:13:20Z" in a


def case_pack_refuses_bad_inputs_and_leaves_no_file():
    need(YOLO)
    priv, _ = keys()
    rel, params = split_yolo()
    open(p("notnbin.bin"), "wb").write(b"ELF\x7f" + bytes(200))
    bad = bytearray(open(params, "rb").read())
    bad[1000] ^= 0xFF
    open(p("badcrc.bin"), "wb").write(bad)
    open(p("short.bin"), "wb").write(bytes(open(params, "rb").read()[:-8]))
    before = files_in_workdir()
    base = ["pack", "-k", priv, "--vendor", "v", "--class", "c", "--seq", "1", "-o", p("out.mota")]
    cases = [
        ([p("notnbin.bin")], "MOTA_ERR_NBIN_MAGIC"),
        ([rel], "MOTA_ERR_NBIN_SPLIT"),                                   # split model, no params
        (["--params", params, YOLO], "MOTA_ERR_NBIN_SPLIT"),              # params for a non-split model
        (["--params", p("badcrc.bin"), rel], "MOTA_ERR_NBIN_PARAMS_CRC"),
        (["--params", p("short.bin"), rel], "MOTA_ERR_NBIN_PARAMS_SIZE"),
    ]
    for extra, want in cases:
        r = run(*base, *extra, rc=1)
        assert reason(r) == want, (extra, r.stderr)
        print("refused %s: %s" % (" ".join(os.path.basename(x) for x in extra), want))
    r = run(*base[:1], "-k", p("notnbin.bin"), "--vendor", "v", "--class", "c", "--seq", "1", "-o", p("out.mota"), YOLO,
            rc=3)
    assert reason(r) == "MOTA_ERR_KEY_INVALID", r.stderr
    r = run("pack", "-k", priv, "--vendor", "v", "--class", "c", "--seq", "1", "-o", "/nonexistent-dir/x.mota", YOLO,
            rc=3)
    assert reason(r) == "MOTA_ERR_IO"
    assert files_in_workdir() == before, "left behind: %s" % (set(files_in_workdir()) - set(before))


def case_openssl_and_der_keys_are_accepted():
    need(YOLO)
    openssl("ecparam", "-genkey", "-name", "prime256v1", "-out", p("sec1.pem"))  # with EC PARAMETERS block
    openssl("pkcs8", "-topk8", "-nocrypt", "-in", p("sec1.pem"), "-out", p("p8.pem"))
    openssl("ec", "-in", p("sec1.pem"), "-outform", "DER", "-out", p("sec1.der"))
    openssl("ec", "-in", p("sec1.pem"), "-pubout", "-out", p("pub.pem"))
    openssl("ec", "-in", p("sec1.pem"), "-pubout", "-outform", "DER", "-out", p("pub.der"))
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
    for k in ("sec1.pem", "p8.pem", "sec1.der"):
        run("pack", "-k", p(k), "--vendor", "v", "--class", "c", "--seq", "1", "-o", p(k + ".mota"), YOLO, env=env)
        for pub in ("pub.pem", "pub.der", "sec1.pem"):
            run("verify", "-q", "--key", p(pub), p(k + ".mota"))
    # one key in three encodings signs identically (RFC 6979)
    blobs = {open(p(k + ".mota"), "rb").read() for k in ("sec1.pem", "p8.pem", "sec1.der")}
    assert len(blobs) == 1, "the same key in different files gave different containers"
    # a DER key that happens to contain '-' bytes is still DER, not PEM
    for _ in range(50):
        openssl("ecparam", "-genkey", "-name", "prime256v1", "-out", p("d.pem"))
        openssl("ec", "-in", p("d.pem"), "-pubout", "-outform", "DER", "-out", p("d.der"))
        if b"-" in open(p("d.der"), "rb").read():
            break
    assert b"-" in open(p("d.der"), "rb").read()
    run("pack", "-k", p("d.pem"), "--vendor", "v", "--class", "c", "--seq", "1", "-o", p("d.mota"), YOLO)
    run("verify", "-q", "--key", p("d.der"), p("d.mota"))
    openssl("ecparam", "-genkey", "-name", "secp384r1", "-out", p("p384.pem"))
    r = run("verify", "--key", p("p384.pem"), p("p8.pem.mota"), rc=3)
    assert reason(r) == "MOTA_ERR_KEY_INVALID"


def case_verify_names_the_key_problem():
    need(YOLO)
    priv, pub = keys()
    run("keygen", p("other.pem"))
    run("pack", "-k", priv, "--vendor", "v", "--class", "c", "--seq", "1", "-o", p("y.mota"), YOLO)
    r = run("verify", "--key", p("other.pub.pem"), p("y.mota"), rc=1)
    assert reason(r) == "MOTA_ERR_KEY_UNKNOWN"
    # which key signed it, and which are trusted: the ids getpub --lang id prints for the key files
    signer, other = (run("getpub", "--lang", "id", k).stdout.strip() for k in (pub, p("other.pub.pem")))
    ids = "signed with key id %s; trusted here: %s" % (signer, other)
    assert r.stderr.rstrip().endswith(ids), r.stderr
    run("verify", "--key", p("other.pub.pem"), "--key", pub, "-q", p("y.mota"))
    j = json.loads(run("verify", "--json", "--key", p("other.pub.pem"), p("y.mota"), rc=1).stdout)
    assert j == {"schema": 1, "command": "verify", "status": "MOTA_ERR_KEY_UNKNOWN", "code": -217,
                 "message": "signed by a key that is not trusted here", "container": p("y.mota"), "detail": ids,
                 "verified": True, "valid": False}, j
    # a file that is not a container: nothing was checked (docs/json.md: verified, "signature and payload
    # digests were checked"), whatever keys were given
    with open(p("img.png"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + bytes(100))
    j = json.loads(run("verify", "--json", "--key", pub, p("img.png"), rc=1).stdout)
    assert j["status"] == "MOTA_ERR_ENV_TAG" and j["verified"] is False and j["valid"] is False, j
    r = run("verify", p("y.mota"), rc=2)
    r = run("verify", "--key", p("missing.pem"), p("y.mota"), rc=3)
    assert reason(r) == "MOTA_ERR_IO"


def case_every_subcommand_has_help():
    out = run("--help").stdout
    for cmd in ("keygen", "pack", "sign", "getpub", "inspect", "verify", "info", "errors", "ports"):
        assert cmd in out
        h = run(cmd, "--help").stdout
        assert h.startswith("usage: mota " + cmd), h
    run("frobnicate", rc=2)
    run(rc=2)


def case_reason_code_doc_matches_the_table():
    doc = open(os.path.join(SRC, "docs", "reason-codes.md")).read()
    table = run("errors", "--markdown").stdout
    begin, end = "<!-- BEGIN mota errors --markdown -->\n", "<!-- END mota errors --markdown -->"
    assert begin in doc and end in doc, "markers missing in docs/reason-codes.md"
    got = doc.split(begin)[1].split(end)[0]
    assert got == table, "docs/reason-codes.md is stale: regenerate with `mota errors --markdown`"


def case_container_walkthrough_in_docs_is_current():
    r = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "tools", "walkthrough.py"), MOTA,
                        p("wt")], capture_output=True, text=True, check=True)
    doc = open(os.path.join(SRC, "docs", "container-format.md")).read()
    got = doc.split("<!-- BEGIN walkthrough -->\n")[1].split("<!-- END walkthrough -->")[0]
    assert got == "```\n" + r.stdout + "```\n", "docs/container-format.md walk-through is stale: scripts/update-docs.sh"
    # and the walked container is a valid one
    blob = os.path.join(p("wt"), "demo.mota")
    pub = os.path.join(p("wt"), "pub.pem")
    subprocess.run(["openssl", "pkey", "-in", os.path.join(p("wt"), "rfc6979.pem"), "-pubout", "-out", pub],
                   check=True, capture_output=True)
    run("verify", "-q", "--key", pub, blob)


def case_build_model_refuses_what_cannot_be_relocated():
    model = os.path.join(SRC, "tests", "models", "dense.c")
    gen = p("gen")
    subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "models", "gen_weights.py"), "dense", gen],
                   check=True)
    run("build-model", "-o", p("ok.bin"), model, os.path.join(gen, "dense_weights.c"))
    info = json.loads(run("info", "--json", p("ok.bin")).stdout)
    assert info["c_name"] == "dense" and info["rel_entries"] >= 3 and info["got_entries"] >= 6, info
    assert info["cpu_part"] == 0xD22 and info["fpu"] and info["float_abi"] == "hard" and not info["split"]
    # an absolute address in read-only data: not patchable in XIP mode
    open(p("abs_ro.c"), "w").write('#include "mota_model.h"\nint32_t x;\n'
                                    '__attribute__((section(".rodata.p"))) int32_t *const px = &x;\n'
                                    'static int32_t i(void) { int32_t *const *pp = &px; __asm__("" : "+r"(pp)); '
                                    'return **pp; }\n'
                                    'static int32_t r(const int8_t *a, int8_t *b) { (void)a; (void)b; return 0; }\n'
                                    'MOTA_MODEL("abs", i, r, 1, 1, 0);\n')
    r = run("build-model", "-o", p("bad.bin"), p("abs_ro.c"), rc=1)
    assert "R_ARM_ABS32" in r.stderr and "read-only" in r.stderr, r.stderr
    # a MOVW/MOVT absolute address pair: not position independent
    open(p("movw.c"), "w").write('#include "mota_model.h"\nint32_t y;\n'
                                  'static int32_t i(void) { int32_t *q; __asm__("movw %0, #:lower16:y\\n\\t'
                                  'movt %0, #:upper16:y" : "=r"(q)); return *q; }\n'
                                  'static int32_t r(const int8_t *a, int8_t *b) { (void)a; (void)b; return 0; }\n'
                                  'MOTA_MODEL("movw", i, r, 1, 1, 0);\n')
    r = run("build-model", "-o", p("bad.bin"), p("movw.c"), rc=1)
    assert "R_ARM_THM_MOVW_ABS_NC" in r.stderr, r.stderr
    assert not os.path.exists(p("bad.bin"))
    # a compile error is the sources refused (1), not an I/O error
    open(p("broken.c"), "w").write("this is not C\n")
    r = run("build-model", "-o", p("bad.bin"), p("broken.c"), rc=1)
    last = r.stderr.splitlines()[-1]  # after the compiler's own messages
    assert last.startswith("mota: error: MOTA_ERR_BUILD: ") and "exited with status 1" in last, r.stderr
    r = run("build-model", "--cc", p("no-such-compiler"), "-o", p("bad.bin"), model, rc=3)
    assert reason(r) == "MOTA_ERR_IO" and "No such file or directory" in r.stderr, r.stderr


def case_build_model_legacy_family_has_st_layout():
    """--family legacy: ST's reloc v2.0 layout, decoded here independently of the C reader."""
    import struct
    gen = p("gen")
    subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "models", "gen_weights.py"), "dense", gen],
                   check=True)
    srcs = [os.path.join(SRC, "tests", "models", "dense.c"), os.path.join(gen, "dense_weights.c")]
    weights = os.path.getsize(os.path.join(gen, "dense_weights.c"))  # only to check it exists
    assert weights > 0
    run("build-model", "--family", "legacy", "--cpu", "cortex-m33", "-o", p("app.bin"), *srcs)
    run("build-model", "--family", "legacy", "--cpu", "cortex-m33", "--split", p("w.bin"), "-o", p("split.bin"),
        *srcs)
    for name, split in (("app.bin", False), ("split.bin", True)):
        d = open(p(name), "rb").read()
        h = struct.unpack_from("<25I", d)
        assert h[0] == 0x4E49424E and h[1] == 0x20085D21, hex(h[1])  # v2.0, GCC, hard, FPU, Cortex-M33
        off = lambda v: v & 0x0FFFFFFF  # noqa: E731
        assert h[2] == 0x80000000 and h[24] >> 28 == 8  # RAM tag 8, ctx in RAM
        assert all(h[i] >> 28 == 2 and h[i] & 1 for i in range(13, 24))  # Thumb entries in flash
        ro, rel_s, rel_e = off(h[4]), off(h[9]), off(h[10])
        data_copy = off(h[5])  # data and GOT, up to bss_start
        assert rel_s == ro + data_copy and (rel_e - rel_s) % 4 == 0  # no padding between the parts
        ctx = ro + off(h[24])
        c_name = struct.unpack_from("<I", d, ctx + 20)[0]
        assert d[off(c_name):off(c_name) + 6] == b"dense\0"
        act, wsz = struct.unpack_from("<2I", d, ctx + 24)
        assert act == 32 and wsz > 0
        if split:
            assert h[11] == 0 and h[12] == 0 and len(d) == rel_e
            assert os.path.getsize(p("w.bin")) == wsz
        else:
            assert off(h[11]) == rel_e and off(h[12]) == rel_e + wsz and len(d) == off(h[12])
        # no word of the data image points at the weights: they are bound at init
        got = d[ro + off(h[7]) - off(h[2]):ro + off(h[8]) - off(h[2])]
        for (v,) in struct.iter_unpack("<I", got):
            assert v == 0 or v >> 28 in (2, 8), hex(v)
        info = json.loads(run("info", "--json", p(name)).stdout)
        assert info["family"] == "legacy" and info["cpu_part"] == 0xD21 and info["split"] == split, info
    # at -O2 GCC aligns .bss beyond the GOT: the file stops at the GOT, the gap is zeroed with .bss
    for opt in ("-O2", "-O3"):
        run("build-model", "--family", "legacy", "--cpu", "cortex-m33", "--opt", opt, "-o", p("o.bin"), *srcs)
        info = json.loads(run("info", "--json", p("o.bin")).stdout)
        assert info["valid"] and info["status"] == "MOTA_OK", (opt, info)
    # the wrong family name is a usage error
    run("build-model", "--family", "npu6", "-o", p("bad.bin"), *srcs, rc=2)


def case_keygen_refuses_to_overwrite():
    run("keygen", p("k.pem"))
    first = open(p("k.pem")).read()
    r = run("keygen", p("k.pem"), rc=3)
    assert reason(r) == "MOTA_ERR_FILE_EXISTS" and p("k.pem") in r.stderr, r.stderr
    assert open(p("k.pem")).read() == first
    assert oct(os.stat(p("k.pem")).st_mode & 0o777) == "0o600"
    run("keygen", "--force", p("k.pem"))
    assert open(p("k.pem")).read() != first


def pack_args(priv, *extra):
    return ["pack", "-k", priv, "--vendor", "example.com", "--class", "c", "--seq", "1", *extra]


def case_pack_refuses_text_that_verify_would_reject():
    need(YOLO)
    priv, pub = keys()
    before = files_in_workdir()
    # every text option: the option and the offset of the first bad byte are named
    for opt, val, off in (("--description", b"ok \xc3(", 3), ("--name", b"\xff", 0),
                          ("--version", b"1.0.0-\xe2\x82", 6), ("--vendor", b"ex\xedample.com", 2)):
        r = run(*pack_args(priv, opt, val, "-o", p("t.mota"), YOLO), rc=2)
        assert reason(r) == "MOTA_ERR_ARG_UTF8", r.stderr
        assert "%s: byte %d " % (opt, off) in r.stderr, r.stderr
    r = run("pack", "-k", priv, "--vendor", "", "--class", "c", "--seq", "1", "-o", p("t.mota"), YOLO, rc=2)
    assert reason(r) == "MOTA_ERR_ARG" and "--vendor is empty" in r.stderr, r.stderr
    r = run("pack", "-k", priv, "--vendor", "example.com", "--class", "", "--seq", "1", "-o", p("t.mota"), YOLO, rc=2)
    assert reason(r) == "MOTA_ERR_ARG" and "--class is empty" in r.stderr, r.stderr
    # the class as the other texts: at most 256 bytes, UTF-8; refused alike by id, provision and sim, which
    # make the identity the containers name (before: packed, then refused by verify, inspect and push)
    pack = ["pack", "-k", priv, "--vendor", "example.com", "--seq", "1", "-o", p("t.mota"), YOLO]
    for cmd in (pack, ["id", "--vendor", "example.com"],
                ["provision", "--target", "an547", "--hex", p("t.hex"), "--key", pub],
                ["sim", "--key", pub, "--tcp", "127.0.0.1:0"],
                ["sim", "--target", "an547", "--key", pub, "--tcp", "127.0.0.1:0"]):
        r = run(cmd[0], "--class", "x" * 257, *cmd[1:], rc=2)
        assert "--class is limited to 256 bytes" in r.stderr, (cmd[0], r.stderr)
        r = run(cmd[0], "--class", b"bad\xff", *cmd[1:], rc=2)
        assert reason(r) == "MOTA_ERR_ARG_UTF8" and "--class: byte 3 " in r.stderr, (cmd[0], r.stderr)
    run("pack", "-k", priv, "--vendor", "example.com", "--class", "x" * 256, "--seq", "1", "-o", p("c256.mota"), YOLO)
    j = json.loads(run("verify", "--json", "--key", pub, p("c256.mota")).stdout)
    assert j["valid"], j
    os.unlink(p("c256.mota"))
    # semver.org 2.0.0: its own examples of valid and invalid versions
    for bad, off in (("1.2", 3), ("1.2.3.4", 5), ("01.2.3", 0), ("1.02.3", 2), ("v1.2.3", 0), ("1.2.3-", 6),
                     ("1.2.3+", 6), ("1.2.3-rc..1", 9), ("1.2.3-01", 6), ("1.2.3-rc_1", 8), ("", 0),
                     ("1.2.3 ", 5), ("1.2.3+b+c", 7)):
        r = run(*pack_args(priv, "--version", bad, "-o", p("t.mota"), YOLO), rc=2)
        assert reason(r) == "MOTA_ERR_ARG_SEMVER" and "at byte %d:" % off in r.stderr, (bad, r.stderr)
    assert files_in_workdir() == before, "left behind: %s" % (set(files_in_workdir()) - set(before))
    # what pack accepts, verify accepts: multi-byte UTF-8 and the full semver grammar
    for i, version in enumerate(("1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0-x.7.z.92",
                                 "1.0.0-x-y-z.--", "1.0.0-alpha+001", "1.0.0+20130313144700",
                                 "1.0.0-beta+exp.sha.5114f85", "1.0.0+21AF26D3----117B344092BD", "0.0.0")):
        out = p("ok%d.mota" % i)
        run(*pack_args(priv, "--version", version, "--name", "modèle ✓", "--description", "Größe 1 µs",
                       "--vendor", "exämple.com", "-o", out, YOLO))
        j = json.loads(run("verify", "--json", "--key", pub, out).stdout)
        assert j["valid"] and j["text"]["version"] == version and j["text"]["model_name"] == "modèle ✓", j


def case_inspect_escapes_the_control_characters_of_a_containers_texts():
    """A signer's text reaches a terminal through inspect and verify: control characters (an escape
    sequence, a tab, a newline that would forge a line) and DEL are shown as \\xNN, a backslash as \\\\; the JSON
    keeps the text as it is."""
    need(YOLO)
    priv, pub = keys()
    name, desc = "x\x1b[31mRED\ty", "line\nforged: yes\x7f back\\slash"
    run(*pack_args(priv, "--name", name, "--description", desc, "-o", p("e.mota"), YOLO))
    for cmd in (["inspect"], ["verify", "--key", pub]):
        out = run(*cmd, p("e.mota")).stdout
        assert "model:       x\\x1b[31mRED\\x09y\n" in out, out
        assert "description: line\\x0aforged: yes\\x7f back\\\\slash\n" in out, out
        assert "\x1b" not in out and "\nforged" not in out and "\t" not in out, out
    j = json.loads(run("inspect", "--json", p("e.mota")).stdout)
    assert j["text"]["model_name"] == name and j["text"]["description"] == desc, j["text"]


def case_outputs_keep_a_private_key_or_a_provisioning_record_unless_force():
    """getpub -o, pack -o and provision --image/--hex never replace a file that holds a private key (PEM, a
    private JWK), a secret one (a KEK) or a provisioning record (raw or Intel HEX) without --force, as keygen does: exit 3,
    MOTA_ERR_FILE_EXISTS naming the file and what it holds, the file as it was; other files are replaced."""
    need(YOLO)
    priv, pub = keys()
    run("keygen", p("other.pem"))
    run("keygen", "--kek", p("kek.jwk"))
    secret = open(p("other.pem"), "rb").read()
    r = run("getpub", "--lang", "pem", "-o", p("other.pem"), pub, rc=3)
    assert reason(r) == "MOTA_ERR_FILE_EXISTS" and "other.pem holds a private key" in r.stderr, r.stderr
    r = run(*pack_args(priv, "-o", p("other.pem"), YOLO), rc=3)
    assert "other.pem holds a private key" in r.stderr, r.stderr
    r = run(*pack_args(priv, "-o", p("kek.jwk"), YOLO), rc=3)
    assert "kek.jwk holds a secret key" in r.stderr, r.stderr
    assert open(p("other.pem"), "rb").read() == secret
    run("provision", "--target", "an547", "--image", p("r.bin"), "--hex", p("r.hex"), "--key", pub)
    rec = open(p("r.bin"), "rb").read(), open(p("r.hex"), "rb").read()
    for out in ("--image", "--hex"):
        f = p("r.bin") if out == "--image" else p("r.hex")
        r = run("provision", "--target", "an547", out, f, "--key", pub, rc=3)
        assert "%s holds a provisioning record" % f in r.stderr, r.stderr
        r = run("getpub", "--lang", "pem", "-o", f, pub, rc=3)
    assert (open(p("r.bin"), "rb").read(), open(p("r.hex"), "rb").read()) == rec
    # with --force, and over a file that holds neither
    run("getpub", "--lang", "pem", "-o", p("other.pem"), "--force", pub)
    assert open(p("other.pem")).read().startswith("-----BEGIN PUBLIC KEY-----")
    run("provision", "--target", "an547", "--image", p("r.bin"), "--key", pub, "--force")
    assert open(p("r.bin"), "rb").read() != rec[0]
    run("getpub", "--lang", "pem", "-o", p("plain.txt"), pub)
    run("getpub", "--lang", "id", "-o", p("plain.txt"), pub)


def case_usage_mistakes_are_named_with_the_way_out():
    """A mistyped command gets the nearest one; `mota help CMD` is that command's help; --port, --compress lz4,
    an empty key path, a source that is missing or not a source, a trial-boot count out of range: each a
    specific answer naming what to do, with the command's own exit code."""
    need(YOLO)
    priv, pub = keys()
    r = run("pusj", "f.mota", rc=2)
    assert "unknown command 'pusj': did you mean 'push'?" in r.stderr, r.stderr
    r = run("zzzzzz", rc=2)
    assert "did you mean" not in r.stderr, r.stderr
    assert run("help", "push").stdout.startswith("usage: mota push ")
    assert run("help", "pack").stdout == run("pack", "--help").stdout
    r = run("help", "pakc", rc=2)
    assert "did you mean 'pack'?" in r.stderr, r.stderr
    r = run("push", "--port", "/dev/ttyACM0", "f.mota", rc=2)
    assert "unknown option --port: PORT is given without an option" in r.stderr, r.stderr
    r = run(*pack_args(priv, "--compress", "lz4", "-o", p("z.mota"), YOLO), rc=2)
    assert "'lz4' is not a model file: the algorithm goes with '=', --compress=lz4" in r.stderr, r.stderr
    assert not os.path.exists(p("z.mota"))
    r = run("keygen", "", rc=2)
    assert "keygen: a key file's path is empty" in r.stderr, r.stderr
    r = run("build-model", "-o", p("m.bin"), p("missing.c"), rc=3)
    assert reason(r) == "MOTA_ERR_IO" and p("missing.c") + ": No such file" in r.stderr, r.stderr
    with open(p("pic.png"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + bytes(64))
    r = run("build-model", "-o", p("m.bin"), p("pic.png"), rc=2)
    assert "pic.png is not a C or assembly source" in r.stderr and "obj0" not in r.stderr, r.stderr
    r = run("provision", "--trial-boots", "0", "--target", "an547", "--hex", p("t.hex"), "--key", pub, rc=2)
    assert r.stderr.startswith("mota: error: provision: --trial-boots '0': 1 to 255 (see mota provision --help)"), \
        r.stderr
    # one spelling each, the other habit accepted: --output beside -o/--out (pack, sign, build-model, getpub),
    # --out beside --output (invoke, reference), imgtool's getpub -k; inspect -q refused (verify's)
    run(*pack_args(priv, "--output", p("o1.mota"), YOLO))
    assert run("getpub", "--lang", "id", "-k", pub).stdout == run("getpub", "--lang", "id", pub).stdout
    run("getpub", "--lang", "id", "--output", p("id.txt"), pub)
    assert open(p("id.txt")).read() == run("getpub", "--lang", "id", pub).stdout
    r = run("getpub", "-k", pub, pub, rc=2)
    assert "takes one key file" in r.stderr, r.stderr
    r = run("inspect", "-q", p("o1.mota"), rc=2)
    assert "-q is verify's" in r.stderr, r.stderr
    for cmd in ("invoke", "reference"):
        assert "unknown option --out" not in run(cmd, "--out", p("x.bin"), rc=None).stderr
    # one signer: a second --key is refused, not silently the only one used
    run("keygen", p("second.pem"))
    r = run(*pack_args(priv, "--key", p("second.pem"), "-o", p("z.mota"), YOLO), rc=2)
    assert "--key given twice" in r.stderr and not os.path.exists(p("z.mota")), r.stderr
    # a self-test larger than any device's buffer: packed, with a warning that says what will happen
    with open(p("big.in"), "wb") as f:
        f.write(bytes(200 * 1024))
    with open(p("small.out"), "wb") as f:
        f.write(bytes(16))
    r = run(*pack_args(priv, "--selftest-input", p("big.in"), "--selftest-output", p("small.out"), "-o",
                       p("z.mota"), YOLO))
    assert "warning: the self-test input (204800 bytes)" in r.stderr and "MOTA_ERR_SELFTEST_RUN" in r.stderr, r.stderr
    # the simulator's documented ranges, as provision's: refused before it starts
    for bad in ("0", "256", "99999"):
        r = run("sim", "--trial-boots", bad, "--tcp", "127.0.0.1:0", rc=2)
        assert "sim: --trial-boots '%s': 1 to 255" % bad in r.stderr, r.stderr
    r = run("sim", "--flash-size", "0", "--tcp", "127.0.0.1:0", rc=2)
    assert "--flash-size '0': 1 to 4294967295 bytes" in r.stderr, r.stderr
    r = run("sim", "--flash", "/dev/zero", "--key", pub, "--tcp", "127.0.0.1:0", rc=3)
    assert reason(r) == "MOTA_ERR_NOT_REGULAR" and "--flash /dev/zero: not a regular file" in r.stderr, r.stderr


def case_mender_artifact_signs_with_the_key_it_is_given():
    """mota mender-artifact -k PRIVATE.pem: the artifact is signed (mender-artifact read --key verifies it),
    as mender-artifact's own -k; without it, unsigned as before; a key that cannot be read is named (exit 3)."""
    need(YOLO)
    if shutil.which("mender-artifact") is None:
        print("SKIPPED: no mender-artifact (Debian's package)")
        sys.exit(77)
    priv, pub = keys()
    run(*pack_args(priv, "--version", "1.0.0", "-o", p("a.mota"), YOLO))
    run("mender-artifact", "-o", p("signed.mender"), "-t", "gw", "-k", priv, p("a.mota"))
    run("mender-artifact", "-o", p("plain.mender"), "-t", "gw", p("a.mota"))
    signed = subprocess.run(["mender-artifact", "read", "--key", pub, p("signed.mender")], capture_output=True,
                            text=True)
    assert "Signature: signed and verified correctly" in signed.stdout + signed.stderr, signed.stdout
    plain = subprocess.run(["mender-artifact", "read", p("plain.mender")], capture_output=True, text=True)
    assert "Signature: no signature" in plain.stdout + plain.stderr, plain.stdout
    r = run("mender-artifact", "-o", p("x.mender"), "-t", "gw", "-k", p("missing.pem"), p("a.mota"), rc=3)
    assert reason(r) == "MOTA_ERR_IO" and "-k " + p("missing.pem") + ": No such file" in r.stderr, r.stderr
    assert not os.path.exists(p("x.mender"))


def case_keygen_never_loses_a_key():
    os.mkdir(p("sub"))
    # one path twice, or two spellings of one file: the public key would replace the private one
    for priv, pub in ((p("x.pem"), p("x.pem")), (p("x.pem"), os.path.join(W, ".", "x.pem")),
                      (p("x.pem"), os.path.join(W, "sub", "..", "x.pem"))):
        r = run("keygen", priv, pub, rc=3)
        assert reason(r) == "MOTA_ERR_SAME_FILE", r.stderr
        assert not os.path.exists(p("x.pem"))
    # an existing file named differently (a hard link): same device and inode
    run("keygen", p("a.pem"))
    os.link(p("a.pem"), p("b.pem"))
    first = open(p("a.pem")).read()
    r = run("keygen", "--force", p("a.pem"), p("b.pem"), rc=3)
    assert reason(r) == "MOTA_ERR_SAME_FILE", r.stderr
    assert open(p("a.pem")).read() == first
    # an existing public key: refused before the private key is written
    open(p("c.pub.pem"), "w").write("mine\n")
    r = run("keygen", p("c.pem"), rc=3)
    assert reason(r) == "MOTA_ERR_FILE_EXISTS" and p("c.pub.pem") in r.stderr, r.stderr
    assert not os.path.exists(p("c.pem")) and open(p("c.pub.pem")).read() == "mine\n"
    assert sorted(files_in_workdir()) == ["a.pem", "a.pub.pem", "b.pem", "c.pub.pem", "sub"], files_in_workdir()


def case_outputs_never_replace_an_input_or_a_non_regular_file():
    need(YOLO)
    priv, pub = keys()
    data = open(YOLO, "rb").read()
    open(p("s.bin"), "wb").write(data)
    os.link(p("s.bin"), p("hard.bin"))
    os.symlink(p("s.bin"), p("sym.bin"))
    open(p("in.bin"), "wb").write(b"\x01" * 64)
    open(p("out.bin"), "wb").write(b"\x02" * 8)
    st = ["--selftest-input", p("in.bin"), "--selftest-output", p("out.bin"), "--selftest-max-latency-us", "9"]
    for out, model in ((p("s.bin"), p("s.bin")), (os.path.join(W, ".", "s.bin"), p("s.bin")),
                       (p("hard.bin"), p("s.bin")), (p("sym.bin"), p("s.bin")), (priv, p("s.bin")),
                       (p("in.bin"), p("s.bin")), (p("out.bin"), p("s.bin"))):
        r = run(*pack_args(priv, *st, "-o", out, model), rc=3)
        assert reason(r) == "MOTA_ERR_SAME_FILE", (out, r.stderr)
    assert open(p("s.bin"), "rb").read() == data and open(p("in.bin"), "rb").read() == b"\x01" * 64
    # a rename would replace a FIFO or a device node instead of writing to it (a FIFO stands for both:
    # a device here would be replaced for real if this regressed while the tests run as root)
    os.mkfifo(p("fifo"))
    os.mkdir(p("dir"))
    for out, kind in ((p("fifo"), "a FIFO"), (p("dir"), "a directory")):
        r = run(*pack_args(priv, "-o", out, YOLO), rc=3)
        assert reason(r) == "MOTA_ERR_NOT_REGULAR" and kind in r.stderr, r.stderr
        r = run("keygen", "--force", p("kk.pem"), out, rc=3)
        assert reason(r) == "MOTA_ERR_NOT_REGULAR", r.stderr
        r = run("sim-output", "--input", p("in.bin"), "16", out, rc=3)
        assert reason(r) == "MOTA_ERR_NOT_REGULAR", r.stderr
    import stat
    assert stat.S_ISFIFO(os.stat(p("fifo")).st_mode) and stat.S_ISDIR(os.stat(p("dir")).st_mode)
    # the other writers: sim-output, build-model
    r = run("sim-output", "--input", p("in.bin"), "16", os.path.join(W, ".", "in.bin"), rc=3)
    assert reason(r) == "MOTA_ERR_SAME_FILE", r.stderr
    src = p("m.c")
    open(src, "w").write("int x;\n")
    for args in (["-o", os.path.join(W, ".", "m.c"), src], ["-o", p("m.bin"), "--split", p("m.bin"), src],
                 ["-o", p("m.bin"), "--split", os.path.join(W, "dir", "..", "m.c"), src]):
        r = run("build-model", *args, rc=3)
        assert reason(r) == "MOTA_ERR_SAME_FILE", (args, r.stderr)
    assert open(src).read() == "int x;\n"
    assert not os.path.exists(p("kk.pem")) and not os.path.exists(p("m.bin"))
    assert not [f for f in files_in_workdir() if f.startswith(".")], files_in_workdir()


def case_an_empty_key_file_is_named_as_such():
    need(YOLO)
    _, pub = keys()
    open(p("empty.pem"), "wb").close()
    for args in (("verify", "--key", p("empty.pem"), YOLO), ("pack", "-k", p("empty.pem"), "--vendor", "v",
                                                            "--class", "c", "--seq", "1", "-o", p("y.mota"), YOLO)):
        r = run(*args, rc=3)
        assert reason(r) == "MOTA_ERR_KEY_INVALID", r.stderr
        assert "%s is empty" % p("empty.pem") in r.stderr and "PEM" in r.stderr and "DER" in r.stderr, r.stderr
    open(p("junk.pem"), "w").write("not a key\n")
    r = run("verify", "--key", p("junk.pem"), YOLO, rc=3)
    assert reason(r) == "MOTA_ERR_KEY_INVALID" and p("junk.pem") in r.stderr and "PEM" in r.stderr, r.stderr


def file_size_limit(n):
    """A child whose files may not grow past n bytes: writes fail with EFBIG as on a full disk."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
    return limit


def case_write_errors_say_why_with_the_path():
    need(YOLO)
    priv, _ = keys()
    before = files_in_workdir()
    # buffered, failing when flushed at commit
    r = run("keygen", p("n.pem"), rc=3, preexec_fn=file_size_limit(100))
    assert reason(r) == "MOTA_ERR_IO" and "%s: File too large" % p("n.pem") in r.stderr, r.stderr
    # pack's payload writer (a thread, pwrite)
    r = run(*pack_args(priv, "-o", p("y.mota"), YOLO), rc=3, preexec_fn=file_size_limit(65536))
    assert reason(r) == "MOTA_ERR_IO" and "%s: writing: File too large" % p("y.mota") in r.stderr, r.stderr
    assert files_in_workdir() == before, "left behind: %s" % (set(files_in_workdir()) - set(before))
    # an unwritable directory: the cause, with the path
    r = run(*pack_args(priv, "-o", "/proc/y.mota", YOLO), rc=3)
    assert reason(r) == "MOTA_ERR_IO" and "/proc/y.mota" in r.stderr and r.stderr.rstrip().split(": ")[-1] in \
        (os.strerror(13), os.strerror(2), os.strerror(30)), r.stderr


def case_inspect_refuses_a_malformed_container():
    need(YOLO)
    priv, pub = keys()
    run(*pack_args(priv, "-o", p("y.mota"), YOLO))
    data = open(p("y.mota"), "rb").read()
    run("inspect", p("y.mota"))
    bad = {
        "truncated.mota": (data[:len(data) // 2], "MOTA_ERR_CBOR_TRUNCATED"),
        "trailing.mota": (data + b"\x00", "MOTA_ERR_CBOR_TRAILING"),
        "head-only.mota": (data[:len(data) - len(open(YOLO, "rb").read()) - 8], "MOTA_ERR_CBOR_TRUNCATED"),
        "not-a-suit-envelope.mota": (bytes(16), "MOTA_ERR_ENV_TAG"),
    }
    for name, (blob, want) in bad.items():
        open(p(name), "wb").write(blob)
        for args in (("inspect",), ("inspect", "--json"), ("verify", "--key", pub)):
            r = run(*args, p(name), rc=1)
            assert reason(r) == want, (name, args, r.stderr)
        j = json.loads(run("inspect", "--json", p(name), rc=1).stdout)
        assert j["valid"] is False and j["status"] == want and j["command"] == "inspect", j
    run("inspect", p("missing.mota"), rc=3)
    run("inspect", rc=2)
    run("inspect", "--frobnicate", p("y.mota"), rc=2)


def case_every_command_exits_with_its_documented_code():
    need(YOLO)
    priv, pub = keys()
    run(*pack_args(priv, "-o", p("y.mota"), YOLO))
    missing = p("missing")
    # 2: a bad command line, for every command
    for args in (("keygen",), ("keygen", "--frob", "x"), ("pack", YOLO), ("pack", "--seq", "x", YOLO),
                 ("inspect",), ("verify", p("y.mota")), ("info",), ("info", "--frob", YOLO), ("errors", "x"),
                 ("errors", "--markdown", "x"), ("build-model", "x.c"), ("sim-output", "x"), ("frobnicate",), ()):
        r = run(*args, rc=2)
        assert r.stderr or args[0] == "sim-output", args  # sim-output prints its usage on stdout
    # 3: a file that cannot be read
    for args in (("pack", "-k", missing, "--vendor", "v", "--class", "c", "--seq", "1", "-o", p("o"), YOLO),
                 ("pack", "-k", priv, "--vendor", "v", "--class", "c", "--seq", "1", "-o", p("o"), missing),
                 ("inspect", missing), ("verify", "--key", pub, missing), ("verify", "--key", missing, p("y.mota")),
                 ("info", missing), ("sim-output", "--input", missing, "8", p("o"))):
        r = run(*args, rc=3)
        assert reason(r) == "MOTA_ERR_IO", (args, r.stderr)
    # 1: the input examined and refused
    for args in (("info", p("y.mota")),
                 ("pack", "-k", priv, "--vendor", "v", "--class", "c", "--seq", "1", "-o", p("o"), pub)):
        r = run(*args, rc=1)
        assert reason(r).startswith("MOTA_ERR_NBIN_"), (args, r.stderr)
    # 0
    for args in (("inspect", p("y.mota")), ("verify", "-q", "--key", pub, p("y.mota")), ("info", YOLO),
                 ("errors",), ("--help",), ("--version",)):
        run(*args)
    assert not os.path.exists(p("o"))


def inspect_seq(path):
    return json.loads(run("inspect", "--json", path).stdout)["seq"]


def case_pack_needs_an_explicit_seq_and_from_version_orders_as_semver_does():
    need(YOLO)
    priv, _ = keys()
    base = ["pack", "-k", priv, "--vendor", "v", "--class", "c", "-o", p("s.mota")]
    # no clock default: a container stamped with the time would make every later small --seq a rollback
    r = run(*base, YOLO, rc=2)
    assert r.stderr.startswith("mota: error: pack: --seq is required") and r.stderr.count("\n") == 1, r.stderr
    r = run(*base, "--seq", "from-version", YOLO, rc=2)
    assert "--seq from-version needs --version" in r.stderr, r.stderr
    r = run(*base, "--seq", "soon", YOLO, rc=2)
    assert "neither an unsigned integer nor from-version" in r.stderr, r.stderr
    for odd in ("+5", " 5", "-1", "5 ", "0x"):  # a sign, blanks, no digits: not the number a user meant
        run(*base, "--seq", odd, YOLO, rc=2)
    run(*base, "--seq", "010", "--version", "1.0.0", YOLO)  # decimal, never octal
    assert inspect_seq(p("s.mota")) == 10
    os.unlink(p("s.mota"))
    r = run(*base, "--seq", "from-version", "--version", "4194304.0.0", YOLO, rc=2)
    assert "out of range" in r.stderr, r.stderr
    assert not os.path.exists(p("s.mota"))
    ordered = ["0.0.1", "0.9.9", "0.10.0", "1.0.0-alpha", "1.0.0", "1.0.1-rc.1", "1.0.1+build.7", "1.2.0",
               "1.10.0", "2.0.0", "4194303.1048575.1048575"]
    seqs = []
    for i, v in enumerate(ordered):
        run(*base[:-1], p("v%d.mota" % i), "--seq", "from-version", "--version", v, YOLO)
        seqs.append(inspect_seq(p("v%d.mota" % i)))
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), list(zip(ordered, seqs))
    assert seqs[ordered.index("1.2.0")] == ((1 << 20 | 2) << 20) * 2 + 1, seqs
    # build metadata does not order (semver 2.0.0 section 10): one number for both builds
    run(*base[:-1], p("b.mota"), "--seq", "from-version", "--version", "1.0.1+build.8", YOLO)
    assert inspect_seq(p("b.mota")) == seqs[ordered.index("1.0.1+build.7")]
    h = run("pack", "--help").stdout
    for said in ("--seq N", "--seq from-version", "semantic versioning 2.0.0", "all three or none", "--unsigned"):
        assert said in h, (said, h)
    r = run(*base, "--seq", "1", "--selftest-input", YOLO, YOLO, rc=2)
    assert "all three" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def case_unsigned_then_signed_equals_the_directly_signed_container():
    need(YOLO)
    priv, pub = keys()
    run("keygen", p("other.pem"))
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
    common = ["--vendor", "example.com", "--class", "b", "--seq", "42", "--version", "1.2.0"]
    run("pack", "-k", priv, *common, "-o", p("direct.mota"), YOLO, env=env)
    run("pack", "--unsigned", "--pub", pub, *common, "-o", p("u.mota"), YOLO, env=env)
    kid = run("getpub", "--lang", "id", priv).stdout.strip()
    run("pack", "--unsigned", "--key-id", kid, *common, "-o", p("u2.mota"), YOLO, env=env)
    assert open(p("u.mota"), "rb").read() == open(p("u2.mota"), "rb").read(), "--pub and --key-id differ"
    # unsigned: well formed (inspect), never valid (verify), with its own reason
    assert "UNSIGNED" in run("inspect", p("u.mota")).stdout
    assert [s["signed"] for s in json.loads(run("inspect", "--json", p("u.mota")).stdout)["signatures"]] == [False]
    r = run("verify", "--key", pub, p("u.mota"), rc=1)
    assert reason(r) == "MOTA_ERR_UNSIGNED", r.stderr
    j = json.loads(run("verify", "--json", "--key", pub, p("u.mota"), rc=1).stdout)
    assert j["valid"] is False and j["status"] == "MOTA_ERR_UNSIGNED", j
    out = run("sign", "--key", priv, "-o", p("signed.mota"), p("u.mota")).stdout
    assert "signed, seq 42, key id " + kid in out, out
    assert open(p("signed.mota"), "rb").read() == open(p("direct.mota"), "rb").read(), \
        "pack --unsigned + sign differs from pack --key"
    oracle(p("signed.mota"), pub, YOLO, "--vendor", "example.com", "--class", "b", "--seq", "42")
    # refused: another key than the one named, a container already signed, an unsigned one made from it
    r = run("sign", "--key", p("other.pem"), "-o", p("x.mota"), p("u.mota"), rc=1)
    assert reason(r) == "MOTA_ERR_KEY_MISMATCH" and kid in r.stderr, r.stderr
    r = run("sign", "--key", priv, "-o", p("x.mota"), p("signed.mota"), rc=1)
    assert reason(r) == "MOTA_ERR_ALREADY_SIGNED", r.stderr
    tampered = bytearray(open(p("u.mota"), "rb").read())
    tampered[-1] ^= 1
    open(p("t.mota"), "wb").write(tampered)
    r = run("sign", "--key", priv, "-o", p("x.mota"), p("t.mota"), rc=1)
    assert reason(r) == "MOTA_ERR_PAYLOAD_DIGEST", r.stderr
    r = run("sign", "--key", priv, "-o", p("u.mota"), p("u.mota"), rc=3)
    assert reason(r) == "MOTA_ERR_SAME_FILE", r.stderr
    assert not os.path.exists(p("x.mota"))
    # the command line: one way to sign, and pack's key options that do not go together
    for args in (("sign", "-o", p("x.mota"), p("u.mota")),
                 ("sign", "--key", priv, "--signer", "true", "-o", p("x.mota"), p("u.mota")),
                 ("sign", "--signer", "true", "-o", p("x.mota"), p("u.mota")),
                 ("sign", "--key", priv, "--signer-format", "raw", "-o", p("x.mota"), p("u.mota")),
                 ("sign", "--key", priv, p("u.mota")),
                 ("pack", "--unsigned", "-k", priv, *common, "-o", p("x.mota"), YOLO),
                 ("pack", "--unsigned", *common, "-o", p("x.mota"), YOLO),
                 ("pack", "--unsigned", "--pub", pub, "--key-id", kid, *common, "-o", p("x.mota"), YOLO),
                 ("pack", "--unsigned", "--key-id", kid[:-2], *common, "-o", p("x.mota"), YOLO),
                 ("pack", "-k", priv, "--pub", pub, *common, "-o", p("x.mota"), YOLO)):
        r = run(*args, rc=2)
        assert r.stderr.startswith("mota: error: %s: " % args[0]) and r.stderr.count("\n") == 1, (args, r.stderr)
    assert not os.path.exists(p("x.mota"))


SIGNER = r"""
import hashlib, os, sys
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
key_path, mode = sys.argv[1], sys.argv[2]
tbs = sys.stdin.buffer.read()
# what the signer is told is what it is given
assert os.environ["MOTA_SIGN_DIGEST"] == hashlib.sha256(tbs).hexdigest(), "digest"
assert len(os.environ["MOTA_SIGN_KEY_ID"]) == 32
key = serialization.load_pem_private_key(open(key_path, "rb").read(), None)
der = key.sign(tbs, ec.ECDSA(hashes.SHA256()))
r, s = decode_dss_signature(der)
out = {"der": der, "raw": r.to_bytes(32, "big") + s.to_bytes(32, "big"), "short": der[:-1],
       "garbage": b"signature: ok\n", "huge": der * 100, "fail": b""}[mode]
if mode == "fail":
    sys.stderr.write("signer: the HSM is locked\n")
    sys.exit(1)
sys.stdout.buffer.write(out)
"""


def case_sign_through_an_external_signer_and_refuse_a_bad_one():
    need(YOLO)
    priv, pub = keys()
    run("keygen", p("other.pem"))
    open(p("signer.py"), "w").write(SIGNER)
    common = ["--vendor", "example.com", "--class", "b", "--seq", "7"]
    run("pack", "--unsigned", "--pub", pub, *common, "-o", p("u.mota"), YOLO)

    def signer(key, mode):
        return "/usr/bin/python3 %s %s %s" % (p("signer.py"), key, mode)

    for mode, fmt in (("der", []), ("raw", ["--signer-format", "raw"])):
        out = p("s-%s.mota" % mode)
        run("sign", "--signer", signer(priv, mode), *fmt, "--pub", pub, "-o", out, p("u.mota"))
        run("verify", "-q", "--key", pub, out)
        oracle(out, pub, YOLO, "--vendor", "example.com", "--class", "b", "--seq", "7")
    # openssl as the signer: its DER output as it comes
    run("sign", "--signer", "openssl dgst -sha256 -sign %s" % priv, "--pub", pub, "-o", p("s-ossl.mota"), p("u.mota"))
    run("verify", "-q", "--key", pub, p("s-ossl.mota"))
    before = files_in_workdir()
    for cmd, fmt, want, said in (
            (signer(priv, "fail"), [], "MOTA_ERR_SIGNER", "exited with status 1"),  # says why on stderr
            ("/nonexistent/signer", [], "MOTA_ERR_SIGNER", "status 127"),
            ("kill -9 $$", [], "MOTA_ERR_SIGNER", "killed by signal 9"),
            (signer(priv, "garbage"), [], "MOTA_ERR_SIGNER_OUTPUT", "no DER ECDSA-Sig-Value"),
            (signer(priv, "short"), [], "MOTA_ERR_SIGNER_OUTPUT", "no DER ECDSA-Sig-Value"),
            (signer(priv, "huge"), [], "MOTA_ERR_SIGNER_OUTPUT", "more than"),
            ("cat >/dev/null; yes", [], "MOTA_ERR_SIGNER_OUTPUT", "was stopped"),  # it would never end
            (signer(priv, "der"), ["--signer-format", "raw"], "MOTA_ERR_SIGNER_OUTPUT", "raw is 64 bytes"),
            # one that never answers: stopped at its time limit, with what it started
            ("sleep 1000", ["--signer-timeout", "1"], "MOTA_ERR_SIGNER", "did not finish within 1 s"),
            (signer(p("other.pem"), "der"), [], "MOTA_ERR_SIGNER_KEY", "does not verify with " + pub)):
        r = run("sign", "--signer", cmd, *fmt, "--pub", pub, "-o", p("bad.mota"), p("u.mota"), rc=3)
        last = r.stderr.splitlines()[-1]  # the signer's own messages come first
        assert last.split(":")[2].strip() == want and said in last, (cmd, r.stderr)
        print("refused %s: %s" % (cmd.split()[-1], want))
    assert files_in_workdir() == before, "left behind: %s" % (set(files_in_workdir()) - set(before))
    assert subprocess.run(["pgrep", "-f", "^sleep 1000$"], capture_output=True).returncode == 1, "the signer's child left"
    r = run("sign", "--signer", "true", "--signer-timeout", "0", "--pub", pub, "-o", p("bad.mota"), p("u.mota"), rc=2)
    assert "--signer-timeout '0': 1 to 3600 seconds" in r.stderr, r.stderr
    # a signer with another key's public half: refused before it is run (the container names the key)
    r = run("sign", "--signer", "false", "--pub", p("other.pub.pem"), "-o", p("bad.mota"), p("u.mota"), rc=1)
    assert reason(r) == "MOTA_ERR_KEY_MISMATCH", r.stderr


VERIFY_PROGRAM = r"""
#include "mota/agent.h"
#include "mota/container.h"
#include "mota/err.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct mota_agent_key release_key;
extern const uint8_t release_key_id[MOTA_KEY_ID_LEN];

int main(int argc, char **argv)
{
    static uint8_t buf[1 << 24];
    struct mota_agent_config cfg;
    struct mota_trusted_key tk;
    static struct mota_verify_result res;
    FILE *f = fopen(argv[1], "rb");
    size_t n = fread(buf, 1, sizeof(buf), f);
    (void)argc;
    memset(&cfg, 0, sizeof(cfg));
    cfg.keys[cfg.n_keys++] = release_key;  /* as the generated file says the agent takes it */
    mota_trusted_key_set(&tk, cfg.keys[0].pub);
    if (memcmp(tk.kid, release_key_id, MOTA_KEY_ID_LEN) != 0 || cfg.keys[0].index != 3) {
        puts("key id or index differs");
        return 2;
    }
    int ret = mota_container_verify(buf, n, &tk, 1, &res);
    puts(ret == MOTA_OK ? "MOTA_OK" : mota_err_name(ret));
    return ret == MOTA_OK ? 0 : 1;
}
"""


def case_getpub_c_source_builds_into_firmware_that_verifies_that_keys_containers():
    need(YOLO)
    cc = shutil.which("cc")
    if cc is None:
        raise Skip("no C compiler")
    priv, pub = keys()
    run("keygen", p("other.pem"))
    common = ["--vendor", "example.com", "--class", "b", "--seq", "1"]
    run("pack", "-k", priv, *common, "-o", p("mine.mota"), YOLO)
    run("pack", "-k", p("other.pem"), *common, "-o", p("theirs.mota"), YOLO)
    # from the private key or its public half: the same source
    run("getpub", "--lang", "c", "--name", "release_key", "--index", "3", "-o", p("key.c"), priv)
    src = open(p("key.c")).read()
    assert run("getpub", "--name", "release_key", "--index", "3", pub).stdout == src.replace(priv, pub)
    assert "const struct mota_agent_key release_key = {" in src and "const uint8_t release_key_id[" in src, src
    open(p("prog.c"), "w").write(VERIFY_PROGRAM)
    build = os.path.dirname(os.path.dirname(os.path.abspath(MOTA)))
    inc = ["-I" + os.path.join(SRC, d, "include") for d in ("agent", "container", "decompress", "crypto", "hal",
                                                                  "loader", "base")]
    libs = [os.path.join(build, d) for d in ("container/libmota_container.a", "loader/libmota_loader.a",
                                               "decompress/libmota_decompress.a", "crypto/libmota_crypto.a",
                                               "base/libmota_base.a")]
    extra = os.environ.get("MOTA_TEST_LDFLAGS", "").split()  # the sanitizer build's libraries need its runtime
    r = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", *inc, *extra, "-o", p("prog"), p("prog.c"),
                        p("key.c"), *libs, "-lcbor", "-lmbedcrypto", "-lcrypto"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([p("prog"), p("mine.mota")], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "MOTA_OK\n", (r.returncode, r.stdout)
    r = subprocess.run([p("prog"), p("theirs.mota")], capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == "MOTA_ERR_KEY_UNKNOWN\n", (r.returncode, r.stdout)
    # the other forms agree with keygen's files and its key id
    assert run("getpub", "--lang", "pem", priv).stdout == open(pub).read()
    printed = run("keygen", p("k2.pem")).stdout.split("key id:")[1].strip()
    assert run("getpub", "--lang", "id", p("k2.pem")).stdout == printed + "\n"
    assert run("getpub", "--lang", "id", p("k2.pub.pem")).stdout == printed + "\n"
    for args in (("getpub",), ("getpub", "--lang", "rust", priv), ("getpub", "--name", "1x", priv),
                 ("getpub", "--index", "0", priv)):
        r = run(*args, rc=2)
        assert r.stderr.startswith("mota: error: getpub: "), r.stderr


def fake_machine(root, extra_acm=False):
    """A sysfs and /dev tree as Linux lays them out: an ST-LINK's VCP (cdc_acm), an FTDI adapter
    (usb-serial, one level further down), a PNP UART, a platform UART with no hardware, a virtual console."""
    sys_, dev = os.path.join(root, "sys"), os.path.join(root, "dev")

    def usb_device(path, vid, pid, manufacturer, product, serial):
        os.makedirs(path)
        for name, value in (("idVendor", vid), ("idProduct", pid), ("manufacturer", manufacturer),
                            ("product", product), ("serial", serial)):
            open(os.path.join(path, name), "w").write(value + "\n")

    def bound(path, bus, driver):
        os.makedirs(path, exist_ok=True)
        os.makedirs(os.path.join(sys_, "bus", bus, "drivers", driver), exist_ok=True)
        os.symlink(os.path.relpath(os.path.join(sys_, "bus", bus), path), os.path.join(path, "subsystem"))
        os.symlink(os.path.relpath(os.path.join(sys_, "bus", bus, "drivers", driver), path),
                   os.path.join(path, "driver"))

    def tty(name, device):
        d = os.path.join(sys_, "class", "tty", name)
        os.makedirs(d)
        if device:
            os.symlink(os.path.relpath(device, d), os.path.join(d, "device"))
        open(os.path.join(dev, name), "w").close()  # stands for the device node

    os.makedirs(os.path.join(dev, "serial", "by-id"))
    usb = os.path.join(sys_, "devices", "pci0000:00", "0000:00:14.0", "usb1")
    usb_device(os.path.join(usb, "1-2"), "0483", "374b", "STMicroelectronics", "STM32 STLink", "066DFF3732")
    bound(os.path.join(usb, "1-2", "1-2:1.2"), "usb", "cdc_acm")
    tty("ttyACM0", os.path.join(usb, "1-2", "1-2:1.2"))
    usb_device(os.path.join(usb, "1-3"), "0403", "6001", "FTDI", "FT232R USB UART", "A50285BI")
    bound(os.path.join(usb, "1-3", "1-3:1.0", "ttyUSB0"), "usb-serial", "ftdi_sio")
    tty("ttyUSB0", os.path.join(usb, "1-3", "1-3:1.0", "ttyUSB0"))
    bound(os.path.join(sys_, "devices", "pnp0", "00:05"), "pnp", "serial")
    tty("ttyS0", os.path.join(sys_, "devices", "pnp0", "00:05"))
    bound(os.path.join(sys_, "devices", "platform", "serial8250"), "platform", "serial8250")
    tty("ttyS1", os.path.join(sys_, "devices", "platform", "serial8250"))
    tty("tty0", None)
    if extra_acm:
        usb_device(os.path.join(usb, "1-4"), "2fe3", "0100", "ZEPHYR", "USB-DEV", "1")
        bound(os.path.join(usb, "1-4", "1-4:1.0"), "usb", "cdc_acm")
        tty("ttyACM1", os.path.join(usb, "1-4", "1-4:1.0"))
    by_id = os.path.join(dev, "serial", "by-id")
    os.symlink("../../ttyACM0", os.path.join(by_id, "usb-STMicroelectronics_STM32_STLink_066DFF3732-if02"))
    os.symlink("../../ttyUSB0", os.path.join(by_id, "usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0"))
    return dict(os.environ, MOTA_SYSFS_ROOT=sys_, MOTA_DEV_ROOT=dev)


def case_ports_lists_serial_ports_and_points_at_the_one_device():
    env = fake_machine(p("m1"))
    dev = os.path.join(p("m1"), "dev")
    stlink_id = os.path.join(dev, "serial", "by-id", "usb-STMicroelectronics_STM32_STLink_066DFF3732-if02")
    j = json.loads(run("ports", "--json", env=env).stdout)
    assert j["schema"] == 1, j
    ports = {os.path.basename(x["port"]): x for x in j["ports"]}
    # a platform UART with no hardware and a virtual console are no ports to push to
    assert sorted(ports) == ["ttyACM0", "ttyS0", "ttyUSB0"], sorted(ports)
    acm = ports["ttyACM0"]
    assert acm["port"] == os.path.join(dev, "ttyACM0") and acm["by_id"] == [stlink_id], acm
    assert acm["usb"] == {"vendor_id": "0483", "product_id": "374b", "manufacturer": "STMicroelectronics",
                          "product": "STM32 STLink", "serial": "066DFF3732"}, acm
    assert acm["driver"] == "cdc_acm" and acm["looks_like_device"] and "ST-LINK" in acm["kind"], acm
    ftdi = ports["ttyUSB0"]
    assert ftdi["usb"]["vendor_id"] == "0403" and ftdi["usb"]["serial"] == "A50285BI", ftdi
    assert ftdi["driver"] == "ftdi_sio" and not ftdi["looks_like_device"] and ftdi["kind"] is None, ftdi
    assert ports["ttyS0"]["usb"] is None and ports["ttyS0"]["subsystem"] == "pnp", ports["ttyS0"]
    assert j["hint"] == stlink_id, j["hint"]
    text = run("ports", env=env).stdout
    assert "0483:374b STMicroelectronics STM32 STLink, serial 066DFF3732 (cdc_acm)" in text, text
    assert "one port looks like a device: mota push %s model.mota" % stlink_id in text, text
    # two candidates: no guess
    env2 = fake_machine(p("m2"), extra_acm=True)
    j = json.loads(run("ports", "--json", env=env2).stdout)
    assert j["hint"] is None and sum(x["looks_like_device"] for x in j["ports"]) == 2, j
    assert "2 ports look like devices" in run("ports", env=env2).stdout
    # nothing plugged in
    os.makedirs(p("m3/sys/class/tty"))
    empty = dict(os.environ, MOTA_SYSFS_ROOT=p("m3/sys"), MOTA_DEV_ROOT=p("m3/dev"))
    assert run("ports", env=empty).stdout == "no serial ports\n"
    assert json.loads(run("ports", "--json", env=empty).stdout) == {"schema": 1, "command": "ports", "status": "MOTA_OK", "code": 0, "message": "success", "ports": [], "hint": None}
    for args in (("ports", "x"), ("ports", "--frob")):
        r = run(*args, rc=2)
        assert r.stderr.startswith("mota: error: ports: "), r.stderr


# ---------------------------------------------------------------- encrypted payloads (issue 32)
# Every case packs a small synthetic split model (tests/tools/synth_nbin.py): no fixture needed, a second or
# two each. An encrypted pack is not reproducible (a random content key and IVs, fresh ephemeral keys):
# pack_is_reproducible packs plain containers only.

def enc_inputs():
    """A split model (params of 20 KB that compress as weights do), a self-test, a signing key, two KEK
    files (kid-1 and a default kid) and a device key pair."""
    sys.path.insert(0, os.path.join(SRC, "tests", "oracle"))
    subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "tools", "synth_nbin.py"), p("e_rel.bin"),
                    p("e_params.bin"), "20000", "5", "weights"], check=True, capture_output=True)
    open(p("in.bin"), "wb").write(bytes(range(256)) * 2)
    open(p("out.bin"), "wb").write(b"\x07" * 40)
    priv, pub = keys()
    run("keygen", "--kek", p("kek1.jwk"), "--kid", "kid-1")
    run("keygen", "--kek", p("kek2.jwk"))
    run("keygen", p("dev.pem"))
    return priv, pub


def enc_pack(out, *extra, env=None):
    """pack the enc_inputs() model, params and self-test (signed with k.pem unless --unsigned) into out."""
    signing = [] if "--unsigned" in extra else ["-k", p("k.pem")]
    return run("pack", *signing, "--vendor", "example.com", "--class", "b", "--seq", "9", "--params",
               p("e_params.bin"), "--selftest-input", p("in.bin"), "--selftest-output", p("out.bin"),
               "--selftest-max-latency-us", "25000", *extra, "-o", p(out), p("e_rel.bin"), env=env)


def enc_oracle(path, *extra):
    oracle(path, p("k.pub.pem"), p("e_rel.bin"), "--params", p("e_params.bin"), "--vendor", "example.com",
           "--class", "b", "--seq", "9", "--selftest-input", p("in.bin"), "--selftest-output", p("out.bin"),
           "--selftest-max-latency-us", "25000", *extra)


def case_keygen_kek_writes_a_private_jwk_and_never_prints_it():
    import base64
    r = run("keygen", "--kek", p("a.jwk"))
    jwk = json.load(open(p("a.jwk")))
    assert set(jwk) == {"kty", "alg", "kid", "k"} and jwk["kty"] == "oct" and jwk["alg"] == "A128KW", jwk
    k = base64.urlsafe_b64decode(jwk["k"] + "==")
    assert len(k) == 16 and len(jwk["k"]) == 22, jwk["k"]
    assert len(jwk["kid"]) == 16 and int(jwk["kid"], 16) >= 0, jwk["kid"]  # 8 random bytes in hex
    assert oct(os.stat(p("a.jwk")).st_mode & 0o777) == "0o600"
    assert p("a.jwk") in r.stdout and jwk["kid"] in r.stdout, r.stdout
    for secret in (jwk["k"], k.hex(), base64.b64encode(k).decode().rstrip("=")):
        assert secret not in r.stdout + r.stderr, r.stdout
    # never overwritten without --force; with it, a new key
    before = open(p("a.jwk")).read()
    r = run("keygen", "--kek", p("a.jwk"), "--kid", "kid-1", rc=3)
    assert reason(r) == "MOTA_ERR_FILE_EXISTS" and open(p("a.jwk")).read() == before, r.stderr
    out = run("keygen", "--kek", p("a.jwk"), "--kid", "kid-1", "--force").stdout
    again = json.load(open(p("a.jwk")))
    assert again["kid"] == "kid-1" and again["k"] != jwk["k"] and "kid-1" in out and again["k"] not in out
    assert oct(os.stat(p("a.jwk")).st_mode & 0o777) == "0o600"
    # a kid the file format cannot hold, --kid alone, a second file: usage errors, nothing written
    for args in (("--kek", p("b.jwk"), "--kid", "x" * 33), ("--kek", p("b.jwk"), "--kid", 'a"b'),
                 ("--kek", p("b.jwk"), "--kid", ""), ("--kid", "kid-1", p("b.pem")), ("--kek", p("b.jwk"), p("c"))):
        run("keygen", *args, rc=2)
    assert not os.path.exists(p("b.jwk")) and not os.path.exists(p("b.pem"))
    print("keygen --kek: a JWK of mode 0600 with a random 16-byte k; kid and path printed, never the key")


def case_encrypted_containers_check_out_with_an_independent_verifier():
    enc_inputs()
    dev_id = run("getpub", "--lang", "id", p("dev.pub.pem")).stdout.strip()
    kek_id = json.load(open(p("kek2.jwk")))["kid"]
    variants = [  # (name, pack options, oracle options)
        ("kw-gcm", ["--encrypt-kek", p("kek1.jwk")], ["--encrypted", "A128GCM", "--kek", p("kek1.jwk")]),
        ("dh-ctr", ["--encrypt-to", p("dev.pub.pem"), "--cipher", "a128ctr"],
         ["--encrypted", "A128CTR", "--device-key", p("dev.pem")]),
        ("both-gcm-deflate", ["--compress", "--encrypt-kek", p("kek1.jwk"), "--encrypt-to", p("dev.pub.pem")],
         ["--compressed", "--encrypted", "A128GCM", "--kek", p("kek1.jwk"), "--device-key", p("dev.pem")]),
        ("three-ctr-lz4", ["--compress=lz4", "--cipher", "a128ctr", "--encrypt-kek", p("kek1.jwk"),
                           "--encrypt-to", p("dev.pub.pem"), "--encrypt-kek", p("kek2.jwk")],
         ["--compressed", "--encrypted", "A128CTR", "--kek", p("kek1.jwk"), "--kek", p("kek2.jwk"),
          "--device-key", p("dev.pem")]),
    ]
    for name, opts, check in variants:
        out = enc_pack(name + ".mota", *opts).stdout
        enc_oracle(p(name + ".mota"), *check)
        keys_given = [a for k in check if k.endswith((".jwk", "dev.pem"))
                      for a in ("--kek" if k.endswith(".jwk") else "--device-key", k)]
        run("verify", "--key", p("k.pub.pem"), *keys_given, p(name + ".mota"))
        print(name + ": " + out.strip().splitlines()[-1])
    out = enc_pack("summary.mota", "--encrypt-kek", p("kek1.jwk"), "--encrypt-to", p("dev.pub.pem"),
                   "--encrypt-kek", p("kek2.jwk")).stdout
    want = "encrypted params: A128GCM, 3 recipients (A128KW kid 'kid-1'; ECDH-ES+A128KW to device key %s; " \
           "A128KW kid '%s')" % (dev_id, kek_id)
    assert want in out, out
    # not reproducible, by design: a new content key, IVs and ephemeral keys each time; both rebuild
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
    for n in ("r1", "r2"):
        enc_pack(n + ".mota", "--encrypt-kek", p("kek1.jwk"), "--encrypt-to", p("dev.pub.pem"), env=env)
        run("verify", "--key", p("k.pub.pem"), "--kek", p("kek1.jwk"), p(n + ".mota"))
    a, b = (open(p(n + ".mota"), "rb").read() for n in ("r1", "r2"))
    assert a != b and len(a) == len(b), "two encrypted packs of the same inputs are identical"
    print("KEK and device recipients, GCM and CTR, with and without compression: an independent decryptor "
          "(python cryptography) gives back every file; two packs differ in keys and IVs, both verify")


def secrets_of(*keyfiles):
    """Every form a key of these files could be printed in: the KEK's k (base64url, hex, base64) and a
    device key's private scalar (hex, base64)."""
    import base64
    from cryptography.hazmat.primitives import serialization
    out = []
    for f in keyfiles:
        if f.endswith(".jwk"):
            k = base64.urlsafe_b64decode(json.load(open(f))["k"] + "==")
            out += [json.load(open(f))["k"]]
        else:
            d = serialization.load_pem_private_key(open(f, "rb").read(), None).private_numbers().private_value
            k = d.to_bytes(32, "big")
        out += [k.hex(), k.hex().upper(), base64.b64encode(k).decode().rstrip("="),
                base64.urlsafe_b64encode(k).decode().rstrip("=")]
    return out


def case_inspect_shows_who_can_decrypt_and_never_a_key():
    import cbor2
    enc_inputs()
    import suitlib as S  # the oracle's decryptor (enc_inputs() put tests/oracle on the path)
    dev_id = run("getpub", "--lang", "id", p("dev.pub.pem")).stdout.strip()
    outs = [enc_pack("e.mota", "--compress", "--encrypt-kek", p("kek1.jwk"), "--encrypt-to", p("dev.pub.pem"))]
    outs += [run("inspect", p("e.mota")), run("inspect", "--json", p("e.mota")),
             run("verify", "--key", p("k.pub.pem"), "--kek", p("kek1.jwk"), p("e.mota")),
             run("verify", "--json", "--key", p("k.pub.pem"), "--device-key", p("dev.pem"), p("e.mota"))]
    text, doc = outs[1].stdout, json.loads(outs[2].stdout)
    assert "encrypted: A128GCM, iv " in text and "recipient: A128KW, kid 'kid-1'" in text, text
    assert "recipient: ECDH-ES+A128KW, kid %s, ephemeral key id " % dev_id in text, text
    for c in doc["components"]:
        e = c["encryption"]
        assert e["algorithm"] == "A128GCM" and len(e["iv"]) == 24 and c["compression"] is not None, c
        kw, dh = e["recipients"]
        assert kw == {"algorithm": "A128KW", "kid": b"kid-1".hex(), "kid_text": "kid-1", "ephemeral_key": None,
                      "ephemeral_key_id": None}, kw
        assert dh["algorithm"] == "ECDH-ES+A128KW" and dh["kid"] == dev_id and dh["kid_text"] is None, dh
        assert dh["ephemeral_key"].startswith("04") and len(dh["ephemeral_key"]) == 130, dh
        assert hashlib.sha256(bytes.fromhex(dh["ephemeral_key"])).hexdigest()[:32] == dh["ephemeral_key_id"]
    # the content key too: unwrapped here by the oracle's own code, then looked for in every output
    env = cbor2.loads(open(p("e.mota"), "rb").read()).value
    install = cbor2.loads(cbor2.loads(env[3])[20])
    info = cbor2.loads([x for x in install if isinstance(x, dict) and 19 in x][0][19])
    cek = S.recipient_ceks(info, dict([S.read_kek(p("kek1.jwk"))]), [])[0][1]
    secrets = secrets_of(p("kek1.jwk"), p("dev.pem")) + [cek.hex(), cek.hex().upper()]
    for r in outs:
        for secret in secrets:
            assert secret not in r.stdout + r.stderr, "a key in the output of %s" % r.args
    enc_pack("p.mota")
    assert all(c["encryption"] is None for c in json.loads(run("inspect", "--json", p("p.mota")).stdout)["components"])
    print("inspect: cipher, IV and recipients (A128KW kid 'kid-1', ECDH-ES+A128KW to %s with its ephemeral key); "
          "no KEK, device key or content key in any output" % dev_id)


def tamper_and_sign(src, dst, role):
    """A copy of the unsigned container src with one byte of role's ciphertext flipped, its transport digest
    and the manifest digest made to match, signed by mota sign: only a decryption can tell."""
    import cbor2
    data = open(src, "rb").read()
    env = cbor2.loads(data).value
    wire, man = env["#" + role], env[3]
    mid = len(wire) // 2
    new_wire = wire[:mid] + bytes([wire[mid] ^ 1]) + wire[mid + 1:]
    new_man = man.replace(hashlib.sha256(wire).digest(), hashlib.sha256(new_wire).digest())
    assert new_man != man and data.count(wire) == 1
    data = data.replace(wire, new_wire).replace(man, new_man)
    data = data.replace(hashlib.sha256(cbor2.dumps(man)).digest(), hashlib.sha256(cbor2.dumps(new_man)).digest())
    open(p("t.mota"), "wb").write(data)
    run("sign", "--key", p("k.pem"), "-o", dst, p("t.mota"))


def case_verify_with_the_key_checks_the_images_and_names_a_wrong_key():
    enc_inputs()
    enc_pack("e.mota", "--encrypt-kek", p("kek1.jwk"), "--encrypt-to", p("dev.pub.pem"))
    pub = p("k.pub.pem")
    # no key: the signature and the transport digests checked, the images said not to be
    r = run("verify", "--key", pub, p("e.mota"))
    assert "verification: OK\nimage digests not checked: encrypted (3 payloads" in r.stdout, r.stdout
    j = json.loads(run("verify", "--json", "--key", pub, p("e.mota")).stdout)
    assert j["valid"] is True and j["images_checked"] is False, j
    # a key of either recipient: every image decrypted and checked
    for opt, key in (("--kek", p("kek1.jwk")), ("--device-key", p("dev.pem"))):
        assert "image digests checked: 3 encrypted payloads" in run("verify", "--key", pub, opt, key,
                                                                   p("e.mota")).stdout
        j = json.loads(run("verify", "--json", "--key", pub, opt, key, p("e.mota")).stdout)
        assert j["valid"] is True and j["images_checked"] is True, j
    assert json.loads(run("inspect", "--json", p("e.mota")).stdout)["images_checked"] is False
    # kid-1 with another key: the unwrap fails; a key no recipient names: none
    open(p("wrong.jwk"), "w").write('{"kty":"oct","alg":"A128KW","kid":"kid-1","k":"QkJCQkJCQkJCQkJCQkJCQg"}')
    run("keygen", p("dev2.pem"))
    for opt, key, want in (("--kek", p("wrong.jwk"), "MOTA_ERR_ENC_UNWRAP"),
                           ("--kek", p("kek2.jwk"), "MOTA_ERR_ENC_NO_KEY"),
                           ("--device-key", p("dev2.pem"), "MOTA_ERR_ENC_NO_KEY")):
        r = run("verify", "--key", pub, opt, key, p("e.mota"), rc=1)
        assert reason(r) == want and "the code payload" in r.stderr and "A128KW kid 'kid-1'" in r.stderr, r.stderr
        j = json.loads(run("verify", "--json", "--key", pub, opt, key, p("e.mota"), rc=1).stdout)
        assert j["status"] == want and j["valid"] is False and "kid 'kid-1'" in j["detail"], j
    # a ciphertext altered under valid digests and a valid signature: GCM's tag, CTR's image digest
    for cipher, want in (("a128gcm", "MOTA_ERR_DECRYPT_TAG"), ("a128ctr", "MOTA_ERR_DECRYPT_IMAGE_DIGEST")):
        enc_pack("u.mota", "--unsigned", "--pub", pub, "--cipher", cipher, "--encrypt-kek", p("kek1.jwk"))
        tamper_and_sign(p("u.mota"), p("bad.mota"), "params")
        run("verify", "--key", pub, p("bad.mota"))  # nothing to see without the key
        r = run("verify", "--key", pub, "--kek", p("kek1.jwk"), p("bad.mota"), rc=1)
        assert reason(r) == want and "the params payload" in r.stderr, r.stderr
    # key files that are not keys
    open(p("bad.jwk"), "w").write('{"kty":"oct","alg":"A128KW","kid":"kid-1","k":"QkJC"}')
    r = run("verify", "--key", pub, "--kek", p("bad.jwk"), p("e.mota"), rc=3)
    assert reason(r) == "MOTA_ERR_KEK_INVALID" and "--kek " + p("bad.jwk") in r.stderr, r.stderr
    r = run("verify", "--key", pub, "--device-key", p("dev.pub.pem"), p("e.mota"), rc=3)
    assert reason(r) == "MOTA_ERR_KEY_INVALID" and "private key" in r.stderr, r.stderr
    print("verify: without a key the images are said unchecked; with either recipient's key all three are "
          "decrypted and checked; a wrong KEK is MOTA_ERR_ENC_UNWRAP, a key of no recipient MOTA_ERR_ENC_NO_KEY, "
          "an altered ciphertext MOTA_ERR_DECRYPT_TAG (GCM) or MOTA_ERR_DECRYPT_IMAGE_DIGEST (CTR)")


def case_encrypted_unsigned_then_signed_keeps_its_manifest_and_payloads():
    import cbor2
    enc_inputs()
    # not compared with a direct pack: each encrypted pack has its own content key and IVs
    enc_pack("u.mota", "--unsigned", "--pub", p("k.pub.pem"), "--compress", "--encrypt-kek", p("kek1.jwk"),
             "--encrypt-to", p("dev.pub.pem"))
    r = run("verify", "--key", p("k.pub.pem"), "--kek", p("kek1.jwk"), p("u.mota"), rc=1)
    assert reason(r) == "MOTA_ERR_UNSIGNED", r.stderr
    run("sign", "--key", p("k.pem"), "-o", p("s.mota"), p("u.mota"))
    u, s_ = (cbor2.loads(open(p(n), "rb").read()).value for n in ("u.mota", "s.mota"))
    assert u[3] == s_[3], "signing changed the manifest (and the COSE_Encrypt in it)"
    assert all(u[k] == s_[k] for k in u if isinstance(k, str)) and set(u) == set(s_), "signing changed a payload"
    run("verify", "--key", p("k.pub.pem"), "--kek", p("kek1.jwk"), p("s.mota"))
    run("verify", "--key", p("k.pub.pem"), "--device-key", p("dev.pem"), p("s.mota"))
    enc_oracle(p("s.mota"), "--compressed", "--encrypted", "A128GCM", "--kek", p("kek1.jwk"), "--device-key",
               p("dev.pem"))
    print("pack --unsigned with encryption, then sign: the manifest and the encrypted payloads unchanged, "
          "the result verifies and decrypts")


def case_pack_refuses_bad_encryption_inputs_and_leaves_no_file():
    enc_inputs()
    open(p("notkey.jwk"), "w").write('{"kty":"oct","alg":"A256KW","kid":"k","k":"QkJCQkJCQkJCQkJCQkJCQg"}')
    open(p("short.jwk"), "w").write('{"kty":"oct","alg":"A128KW","kid":"k","k":"QkJC"}')
    open(p("empty.jwk"), "w").write("")
    open(p("notpem.pem"), "w").write("hello\n")
    before = files_in_workdir()
    kek = ["--encrypt-kek", p("kek1.jwk")]
    for extra, rc, want in (
            (["--encrypt-kek", p("notkey.jwk")], 3, "MOTA_ERR_KEK_INVALID"),
            (["--encrypt-kek", p("short.jwk")], 3, "MOTA_ERR_KEK_INVALID"),
            (["--encrypt-kek", p("empty.jwk")], 3, "MOTA_ERR_KEK_INVALID"),
            (kek + ["--encrypt-kek", p("missing.jwk")], 3, "MOTA_ERR_IO"),
            (["--encrypt-to", p("notpem.pem")], 3, "MOTA_ERR_KEY_INVALID"),
            (kek * 3 + ["--encrypt-to", p("dev.pub.pem"), "--encrypt-to", p("dev.pub.pem")], 2, None),  # 5
            (["--cipher", "a128gcm"], 2, None),
            (kek + ["--cipher", "a256gcm"], 2, None)):
        r = run("pack", "-k", p("k.pem"), "--vendor", "v", "--class", "c", "--seq", "1", "--params",
                p("e_params.bin"), *extra, "-o", p("x.mota"), p("e_rel.bin"), rc=rc)
        if want:
            assert reason(r) == want, (extra, r.stderr)
        else:
            assert r.stderr.startswith("mota: error: pack: "), r.stderr
        print("refused %s: %s" % (" ".join(os.path.basename(x) for x in extra[-2:]), want or "usage"))
    r = run("pack", "-k", p("k.pem"), "--vendor", "v", "--class", "c", "--seq", "1", "--params", p("e_params.bin"),
            *kek, "-o", p("kek1.jwk"), p("e_rel.bin"), rc=3)
    assert reason(r) == "MOTA_ERR_SAME_FILE", r.stderr
    assert files_in_workdir() == before, "left behind: %s" % (set(files_in_workdir()) - set(before))
    # four recipients are the most a device reads: taken
    enc_pack("four.mota", *(kek * 3), "--encrypt-to", p("dev.pub.pem"))


def case_host_commands_that_read_an_encrypted_model_need_its_key():
    enc_inputs()
    enc_pack("e.mota", "--encrypt-kek", p("kek1.jwk"))
    r = run("inspect", "--epochs", p("e.mota"), rc=1)
    assert reason(r) == "MOTA_ERR_ENC_NO_KEY" and "its model is encrypted" in r.stderr, r.stderr
    r = run("info", "--epochs", "--baseline", p("e.mota"), p("e_rel.bin"), rc=1)
    assert reason(r) == "MOTA_ERR_ENC_NO_KEY" and "its model is encrypted" in r.stderr, r.stderr
    out = run("inspect", "--epochs", "--key", p("k.pub.pem"), "--kek", p("kek1.jwk"), p("e.mota")).stdout
    assert "epochs:" in out, out
    r = run("inspect", "--kek", p("kek1.jwk"), p("e.mota"), rc=2)  # keys decrypt in the full verification
    print("inspect --epochs and info --baseline refuse an encrypted model without its key "
          "(MOTA_ERR_ENC_NO_KEY), and read it with --key and --kek")


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE, cleanup=lambda: shutil.rmtree(W, ignore_errors=True)))
