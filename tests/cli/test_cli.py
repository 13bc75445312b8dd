#!/usr/bin/python3
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

MOTA, FIX, SRC, CASE = sys.argv[1:5]
ORACLE = os.path.join(SRC, "tests", "oracle", "check_container.py")
YOLO = os.path.join(FIX, "st-n6", "yolov8n_network_rel.bin")
EX0 = os.path.join(FIX, "suit", "example0.suit")
EX0_KEY = os.path.join(FIX, "suit", "example0_public.pem")
W = tempfile.mkdtemp(prefix="mota-cli-")


class Skip(Exception):
    pass


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
        r = run("verify", "--quiet", "--key", EX0_KEY, path, rc=None)
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


def case_inspect_round_trips_every_compatibility_field():
    need(YOLO)
    priv, pub = keys()
    run("pack", "-k", priv, "--vendor", "example.com", "--class", "b", "-o", p("y.mota"), YOLO)
    c = json.loads(run("inspect", "--json", p("y.mota")).stdout)["compat"]
    i = json.loads(run("info", "--json", YOLO).stdout)
    rt = i["rt_version"]
    want = {
        "reloc_major": i["reloc_major"], "reloc_minor": i["reloc_minor"], "cpu_part": i["cpu_part"],
        "fpu": i["fpu"], "float_abi": i["float_abi"], "secure": i["secure"], "dbg_info": i["dbg_info"],
        "async": i["async"], "toolchain": i["toolchain"],
        "ll_aton_version": "%d.%d.%d" % (rt >> 24, rt >> 16 & 255, rt >> 8 & 255),
        "runtime_desc": i["runtime_desc"], "c_name": i["c_name"], "activations_size": i["activations_size"],
        "params_size": i["params_size"], "ext_ram_size": i["ext_ram_size"], "exec_ram_xip": i["exec_ram_xip"],
        "exec_ram_copy": i["exec_ram_copy"], "install_mode": "xip", "struct_sizes": 0x3038, "selftest": None,
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
    base = ["pack", "-k", priv, "--vendor", "v", "--class", "c", "-o", p("out.mota")]
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
    r = run(*base[:1], "-k", p("notnbin.bin"), "--vendor", "v", "--class", "c", "-o", p("out.mota"), YOLO, rc=3)
    assert reason(r) == "MOTA_ERR_KEY_INVALID", r.stderr
    r = run("pack", "-k", priv, "--vendor", "v", "--class", "c", "-o", "/nonexistent-dir/x.mota", YOLO, rc=3)
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
    run("pack", "-k", p("d.pem"), "--vendor", "v", "--class", "c", "-o", p("d.mota"), YOLO)
    run("verify", "-q", "--key", p("d.der"), p("d.mota"))
    openssl("ecparam", "-genkey", "-name", "secp384r1", "-out", p("p384.pem"))
    r = run("verify", "--key", p("p384.pem"), p("p8.pem.mota"), rc=3)
    assert reason(r) == "MOTA_ERR_KEY_INVALID"


def case_verify_names_the_key_problem():
    need(YOLO)
    priv, pub = keys()
    run("keygen", p("other.pem"))
    run("pack", "-k", priv, "--vendor", "v", "--class", "c", "-o", p("y.mota"), YOLO)
    r = run("verify", "--key", p("other.pub.pem"), p("y.mota"), rc=1)
    assert reason(r) == "MOTA_ERR_KEY_UNKNOWN"
    run("verify", "--key", p("other.pub.pem"), "--key", pub, "-q", p("y.mota"))
    j = json.loads(run("verify", "--json", "--key", p("other.pub.pem"), p("y.mota"), rc=1).stdout)
    assert j == {"container": p("y.mota"), "valid": False, "reason": "MOTA_ERR_KEY_UNKNOWN",
                 "message": "signed by a key that is not trusted here"}, j
    r = run("verify", p("y.mota"), rc=2)
    r = run("verify", "--key", p("missing.pem"), p("y.mota"), rc=3)
    assert reason(r) == "MOTA_ERR_IO"


def case_every_subcommand_has_help():
    out = run("--help").stdout
    for cmd in ("keygen", "pack", "inspect", "verify", "info", "errors"):
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
    assert info["cpu_part"] == 0xD22 and info["fpu"] and info["float_abi"] == 2 and not info["split"]
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
        assert info["verdict"] == "valid", (opt, info)
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
    r = run("pack", "-k", priv, "--vendor", "", "--class", "c", "-o", p("t.mota"), YOLO, rc=2)
    assert reason(r) == "MOTA_ERR_ARG" and "--vendor is empty" in r.stderr, r.stderr
    r = run("pack", "-k", priv, "--vendor", "example.com", "--class", "", "-o", p("t.mota"), YOLO, rc=2)
    assert reason(r) == "MOTA_ERR_ARG" and "--class is empty" in r.stderr, r.stderr
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
                                                            "--class", "c", "-o", p("y.mota"), YOLO)):
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
        assert j["valid"] is False and j["reason"] == want, j
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
    for args in (("pack", "-k", missing, "--vendor", "v", "--class", "c", "-o", p("o"), YOLO),
                 ("pack", "-k", priv, "--vendor", "v", "--class", "c", "-o", p("o"), missing),
                 ("inspect", missing), ("verify", "--key", pub, missing), ("verify", "--key", missing, p("y.mota")),
                 ("info", missing), ("sim-output", "--input", missing, "8", p("o"))):
        r = run(*args, rc=3)
        assert reason(r) == "MOTA_ERR_IO", (args, r.stderr)
    # 1: the input examined and refused
    for args in (("info", p("y.mota")), ("pack", "-k", priv, "--vendor", "v", "--class", "c", "-o", p("o"), pub)):
        r = run(*args, rc=1)
        assert reason(r).startswith("MOTA_ERR_NBIN_"), (args, r.stderr)
    # 0
    for args in (("inspect", p("y.mota")), ("verify", "-q", "--key", pub, p("y.mota")), ("info", YOLO),
                 ("errors",), ("--help",), ("--version",)):
        run(*args)
    assert not os.path.exists(p("o"))


def main():
    fn = globals().get("case_" + CASE)
    if fn is None:
        print("no such case: " + CASE)
        return 2
    try:
        fn()
    except Skip as e:
        print("SKIPPED: %s" % e)
        shutil.rmtree(W, ignore_errors=True)
        return 77
    print("PASS " + CASE)
    shutil.rmtree(W, ignore_errors=True)  # kept when the case fails, to look at
    return 0


if __name__ == "__main__":
    sys.exit(main())
