#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`mota reference`: a board self-test's expected output made on the QEMU board itself, through `mota` only.
The reference a model gives on an input is the host reference's (tests/models/gen_weights.py), packed as a
self-test it passes when pushed to a fresh board, and a corrupted one fails there with its reason; a legacy
model's (with its split weights) on the an505 and on the an386 the same; command lines and files it cannot use are refused
before any board starts; --json prints one document; an interrupted run stops its board and leaves nothing
behind. Every run's private directory goes to the case's own TMPDIR, which must be empty after it.
One case per run; the board cases need the board's firmware and arm-none-eabi-gcc (exit 77 without them).

usage: test_reference.py MOTA SOURCE_DIR WORKDIR CASE
"""
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "link"))
from harness import Env, Skip, run_case  # noqa: E402

MOTA, SRC, WORK, CASE = os.path.abspath(sys.argv[1]), sys.argv[2], os.path.abspath(sys.argv[3]), sys.argv[4]
env = Env(MOTA, WORK)
GEN, TMP = env.p("gen"), env.p("tmp")
CPUS = {"an547": ("cortex-m55", 0xD22), "an505": ("cortex-m33", 0xD21), "an386": ("cortex-m4", 0xC24),
        "an500": ("cortex-m7", 0xC27)}
os.makedirs(TMP)


def reference(*args, timeout=60):
    """`mota reference ARGS` with the case's TMPDIR: the completed process."""
    return subprocess.run([MOTA, "reference", *args], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, TMPDIR=TMP))


def on_board(r):
    """A run that reached the board: Skip when this build has no firmware for it."""
    if r.returncode != 0 and "firmware was not found" in r.stderr:
        raise Skip("no firmware for the board in this build")
    return r


def left_behind():
    """What runs left in TMPDIR (their private directories): nothing, after each."""
    return os.listdir(TMP)


def one_error(r):
    lines = [line for line in r.stderr.splitlines() if line.startswith("mota: error: ")]
    assert len(lines) == 1, r.stderr
    return lines[0]


def vec(kind, i):
    return os.path.join(GEN, "dense_%s_%d.bin" % (kind, i))


def dense(target, *extra, legacy=False):
    """The dense test model for the target's CPU, built by mota build-model (its vectors beside it)."""
    if shutil.which("arm-none-eabi-gcc") is None:
        raise Skip("build-model needs arm-none-eabi-gcc")
    subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "models", "gen_weights.py"), "dense", GEN],
                   check=True, stdout=subprocess.DEVNULL)
    cpu, part = CPUS[target]
    out = env.p("dense_%s%s.bin" % (target, "_legacy" if legacy else ""))
    args = ["--family", "legacy"] if legacy else ["-D", "MOTA_MODEL_CPU_PART=0x%Xu" % part]
    env.run("build-model", "--cpu", cpu, *args, "-o", out, *extra, os.path.join(SRC, "tests", "models", "dense.c"),
            os.path.join(GEN, "dense_weights.c"))
    return out


def pack(out, rel, seq, target, expect, *extra):
    env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", "mota-" + target, "--seq", str(seq),
            "--selftest-input", vec("in", 0), "--selftest-output", expect, "-o", env.p(out), *extra, rel)
    return env.p(out)


def board(target):
    """A fresh board of the target that trusts the case's key, its model slot dense: (launcher, tcp port)."""
    proc, port = env.board(env.p(target + ".flash"), "--key", env.p("k.pub.pem"), "--model", "dense",
                           target=target)
    assert env.wait_status(port, 30) is not None, open(env.p(target + ".flash.log")).read()[-2000:]
    return proc, port


def reference_of(target, rel, out, *extra):
    """The reference of rel on input 0, made on the target: it equals the host reference's output."""
    r = on_board(reference("--target", target, "--input", vec("in", 0), "--output-size", "10", "-o", out, *extra,
                           rel))
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert re.fullmatch(r"reference: %s, 10 bytes \(%s on %s, \d+ us\)\n" % (re.escape(out), re.escape(rel), target),
                        r.stdout), r.stdout
    assert open(out, "rb").read() == open(vec("out", 0), "rb").read(), open(out, "rb").read().hex()
    assert "PRIVATE KEY" not in r.stdout + r.stderr and "BEGIN" not in r.stdout + r.stderr, r.stderr
    assert left_behind() == [], left_behind()
    return r


def case_made_on_an547_passes_as_a_self_test_and_a_corrupted_one_fails_with_the_reason():
    """The reference made on the an547 is the model's real output (the host reference's); packed as the
    self-test's expected output it passes on a fresh an547 (installed); one byte changed, the self-test fails
    there with MOTA_ERR_SELFTEST_OUTPUT, the digests of what the board produced and what was expected."""
    rel = dense("an547")
    t0 = time.time()
    ref = env.p("ref.bin")
    reference_of("an547", rel, ref)
    took = time.time() - t0
    proc, port = board("an547")
    rc, _, res, err = env.push(port, pack("v1.mota", rel, 1, "an547", ref), "--confirm")
    assert rc == 0 and res["status"] == "MOTA_OK" and res["installed"], (rc, res, err)
    bad = bytearray(open(ref, "rb").read())
    bad[3] ^= 0x40
    open(env.p("bad.bin"), "wb").write(bad)
    rc, _, res, _ = env.push(port, pack("v2.mota", rel, 2, "an547", env.p("bad.bin")))
    env.stop(proc)
    assert rc == 1 and res["status"] == "MOTA_ERR_SELFTEST_OUTPUT" and not res["installed"], (rc, res)
    digest = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()[:16]  # noqa: E731
    assert res["detail"] == "output_sha256: device %s, model %s" % (digest(ref), digest(env.p("bad.bin"))), res
    print("reference on the an547 in %.1f s equals the host reference; its self-test passes there, a corrupted "
          "one is refused (%s)" % (took, res["detail"]))


def legacy_made_on(target):
    """A legacy X-CUBE-AI model with its weights in their own file (--params), referenced on the target: the
    host reference's output, and a self-test that passes there."""
    rel = dense(target, "--split", env.p("weights.bin"), legacy=True)
    ref = env.p("legacy.ref.bin")
    reference_of(target, rel, ref, "--params", env.p("weights.bin"))
    proc, port = board(target)
    c = pack("l1.mota", rel, 1, target, ref, "--params", env.p("weights.bin"), "--install-mode", "copy")
    rc, _, res, err = env.push(port, c)
    env.stop(proc)
    assert rc == 0 and res["status"] == "MOTA_OK" and res["installed"], (rc, res, err)
    print("a legacy model with split weights: its reference on the %s (%s) passes as its self-test there"
          % (target, CPUS[target][0]))


def case_of_a_legacy_model_made_on_an505_passes_as_its_self_test():
    """On the an505, a Cortex-M33 (an STM32U5's core)."""
    legacy_made_on("an505")


def case_of_a_legacy_model_made_on_an386_passes_as_its_self_test():
    """On the an386, a Cortex-M4 (an STM32F4's core: X-CUBE-AI's default series for relocatable models)."""
    legacy_made_on("an386")


def case_usage_and_file_errors_are_refused_before_any_board_starts():
    """A command line it cannot use is a usage error (exit 2, one line naming what is missing or wrong); a
    model, params file or input it cannot read is MOTA_ERR_IO (exit 3) with the path and the system's reason,
    a file that is no model is refused by its reason (exit 1), an output that is an input or not a regular
    file is refused (exit 3): each at once, before a board starts (no private directory was made), nothing
    written."""
    rel, _ = env.model("m", 2000)  # a synthetic split model: never packed here
    inp = env.p("in.bin")
    open(inp, "wb").write(bytes(range(64)))
    good = ["--target", "an547", "--input", inp, "--output-size", "10"]
    usage = [
        (["--target", "an547", "--output-size", "10", rel], "needs --input FILE"),
        (["--target", "an999", "--input", inp, "--output-size", "10", rel],
         "--target 'an999': an547, an505, an386, an500"),  # the QEMU boards of ports/boards.txt
        (["--input", inp, "--output-size", "10", rel], "needs --target an547|an505|an386|an500"),
        (good[:5] + ["0", rel], "--output-size '0'"),
        (good + ["--timeout", "soon", rel], "--timeout 'soon'"),
        (good, "needs the model file"),
        (good + [rel, rel], "unexpected argument"),
        (good + ["--frobnicate", rel], "unknown option --frobnicate"),
        (good + ["-o"], "option -o needs a value"),
    ]
    for args, what in usage:
        t0 = time.time()
        r = reference("--json", *args)  # the line on stderr, and with --json one document (docs/json.md)
        line = one_error(r)
        assert r.returncode == 2 and line.startswith("mota: error: reference: ") and what in line, (args, line)
        assert line.endswith("(see mota reference --help)") and time.time() - t0 < 5, (args, r)
        doc = json.loads(r.stdout)
        assert doc["command"] == "reference" and doc["status"] == "MOTA_ERR_ARG" and what in doc["detail"], doc
    missing = env.p("missing.bin")
    files = [
        (good + [missing], 3, "MOTA_ERR_IO", missing + ": No such file or directory"),
        (good[:3] + [missing] + good[4:] + [rel], 3, "MOTA_ERR_IO", missing + ": No such file or directory"),
        (good + ["--params", missing, rel], 3, "MOTA_ERR_IO", missing + ": No such file or directory"),
        (good + [inp], 1, "MOTA_ERR_NBIN_MAGIC", inp + ": not a model pack takes"),
        (good + ["-o", rel, rel], 3, "MOTA_ERR_SAME_FILE", rel),
        (good + ["-o", inp, rel], 3, "MOTA_ERR_SAME_FILE", inp),
        (good + ["-o", "/dev/null", rel], 3, "MOTA_ERR_NOT_REGULAR", "/dev/null is a character device"),
        (good + ["-o", env.p("no-such-dir/out.bin"), rel], 3, "MOTA_ERR_IO", "No such file or directory"),
    ]
    for args, rc, reason, what in files:
        t0 = time.time()
        r = reference(*args)
        line = one_error(r)
        assert r.returncode == rc and line.startswith("mota: error: %s: " % reason) and what in line, (args, line)
        assert "reference: starting" not in r.stderr and time.time() - t0 < 5, (args, r.stderr)
        assert left_behind() == [] and r.stdout == "", (args, left_behind(), r.stdout)
    assert not [n for n in os.listdir(env.work) if "ref" in n], os.listdir(env.work)
    print("%d command lines refused as usage errors, %d unusable files before any board" % (len(usage), len(files)))


def documented():
    """The fields docs/json.md lists for reference."""
    text = open(os.path.join(SRC, "docs", "json.md"), encoding="utf-8").read()
    block = re.search(r"```fields reference\n(.*?)```", text, re.S)
    assert block, "docs/json.md has no reference section"
    return {line.split()[0] for line in block.group(1).splitlines() if line.strip()}


def one_doc(out):
    docs, dec, i = [], json.JSONDecoder(), 0
    while True:
        while i < len(out) and out[i].isspace():
            i += 1
        if i >= len(out):
            break
        d, i = dec.raw_decode(out, i)
        docs.append(d)
    assert len(docs) == 1, out
    return docs[0]


def case_json_prints_one_document_on_success_and_on_a_refusal():
    """--json prints exactly one document with every documented field: on success (the output's size the one
    the board says of the model, written to the default output beside the input: in.bin gives in.ref.bin), on
    the board's refusal to run the model with another output or input size (MOTA_ERR_SELFTEST_RUN, exit 1, the
    sizes given and the model's as the board says them; nothing written) and on an unreadable input (exit 3)."""
    rel = dense("an547")
    fields = documented()
    r = on_board(reference("--json", "--target", "an547", "--input", vec("in", 1), rel))
    d = one_doc(r.stdout)
    out = vec("in", 1)[:-len(".bin")] + ".ref.bin"
    assert r.returncode == 0 and set(d) == fields, (r.returncode, set(d) ^ fields, r.stderr)
    assert d["status"] == "MOTA_OK" and d["code"] == 0 and d["detail"] == "" and d["step"] is None, d
    assert d["output_file"] == out and d["output_size"] == 10 and d["duration_us"] >= 0, d
    assert d["target"] == "an547" and d["model"] == rel and d["c_name"] == "dense" and d["input"] == vec("in", 1), d
    assert open(out, "rb").read() == open(vec("out", 1), "rb").read()

    r = reference("--json", "--target", "an547", "--input", vec("in", 1), "--output-size", "12", "-o",
                  env.p("wrong.bin"), rel)
    d = one_doc(r.stdout)
    assert r.returncode == 1 and set(d) == fields and d["status"] == "MOTA_ERR_SELFTEST_RUN", (r.returncode, d)
    assert d["detail"].endswith("an input of 64 bytes with an output of 12 bytes (--output-size); the board says "
                                "model dense takes 64 bytes and gives 10"), d
    assert d["step"] == "invoke" and d["output_file"] is None and d["output_size"] is None, d
    assert d["detail"] in one_error(r), r.stderr
    assert not [n for n in os.listdir(env.work) if "wrong" in n], os.listdir(env.work)
    open(env.p("short.bin"), "wb").write(open(vec("in", 1), "rb").read()[:50])
    r = reference("--json", "--target", "an547", "--input", env.p("short.bin"), rel)
    d = one_doc(r.stdout)
    assert r.returncode == 1 and d["status"] == "MOTA_ERR_SELFTEST_RUN" and d["output_file"] is None, d
    assert "an input of 50 bytes with an output of 10 bytes; the board says model dense takes 64" in d["detail"], d
    assert not os.path.exists(env.p("short.ref.bin")), os.listdir(env.work)

    r = reference("--json", "--target", "an547", "--input", env.p("missing.bin"), "--output-size", "10", rel)
    d = one_doc(r.stdout)
    assert r.returncode == 3 and set(d) == fields and d["status"] == "MOTA_ERR_IO" and d["step"] == "files", d
    assert d["detail"] == "--input %s: No such file or directory" % env.p("missing.bin"), d
    assert left_behind() == [], left_behind()
    print("one document with the %d documented fields: written, refused (%s), input unreadable" %
          (len(fields), d["status"]))


def processes_in(path):
    """The live processes whose command line names path (a board's launcher or QEMU on its flash)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read()
        except OSError:
            continue
        if path.encode() in cmd:
            found.append((pid, cmd.replace(b"\0", b" ")))
    return found


def case_interrupt_stops_the_board_and_removes_the_private_directory():
    """SIGINT or SIGTERM to mota reference alone (not its process group) while its board runs: the board is
    stopped (no launcher or QEMU left), the private directory (the key, the flash) removed, no output or
    temporary output file left; one JSON document saying so (MOTA_ERR_TRANSPORT, as an interrupted push
    reports), exit 128 + the signal."""
    rel = dense("an547")
    for sig, at in ((signal.SIGINT, "starting a fresh an547 board"), (signal.SIGTERM, "pushing ")):
        out = env.p("int.bin")
        p = subprocess.Popen([MOTA, "reference", "--json", "--target", "an547", "--input", vec("in", 0),
                              "--output-size", "10", "-o", out, rel], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=dict(os.environ, TMPDIR=TMP),
                             start_new_session=True)
        env.procs.append(p)
        seen = ""
        while at not in seen:  # then at once: the board is booting, or the push under way
            line = p.stderr.readline()
            assert line, (p.wait(), seen)
            seen += line
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=30)
        if p.returncode != 128 + sig and "firmware was not found" in seen + stderr:
            raise Skip("no an547 firmware in this build")
        d = one_doc(stdout)
        assert p.returncode == 128 + sig and d["status"] == "MOTA_ERR_TRANSPORT", (p.returncode, d, stderr)
        assert d["step"] in ("board", "push", "invoke") and "interrupted by %s" % sig.name in d["detail"], d
        assert d["output_file"] is None, d
        assert left_behind() == [] and processes_in(TMP) == [], (left_behind(), processes_in(TMP))
        assert not [n for n in os.listdir(env.work) if "int.bin" in n], os.listdir(env.work)
        print("%s at step %s: exit %d, board stopped, nothing left" % (sig.name, d["step"], p.returncode))


if __name__ == "__main__":
    try:
        rc = run_case(globals(), CASE)
    finally:
        env.close()
    sys.exit(rc)
