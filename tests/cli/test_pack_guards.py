#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""What `mota pack` refuses so that no device is left unable to take a later container (issue 29), and
`mota id`, which turns --vendor/--class names into the UUIDs devices print. One case per invocation.

usage: test_pack_guards.py MOTA WORK SOURCE_DIR CASE
Exit 0 pass, 1 fail.
"""
import json
import os
import re
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "link"))
from harness import PY, Env, run_case  # noqa: E402

MOTA, WORK, SRC, CASE = sys.argv[1:5]
env = Env(MOTA, os.path.join(WORK, CASE))
CEILING = (1 << 63) - 1  # the largest --seq pack takes without --force-seq
NONE_US = (1 << 32) - 1  # what --selftest-max-latency-us none writes


def mota(*args, rc=0, **kw):
    r = env.run(*args, check=False, **kw)
    assert r.returncode == rc, "mota %s: exit %d, want %d\n%s%s" % (" ".join(args), r.returncode, rc, r.stdout,
                                                                      r.stderr)
    return r


def one_error(r):
    """The reason (or the command, for a usage error) of the one error line on stderr."""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mota: error: "), r.stderr
    return lines[0].split(":")[2].strip()


def model(name="m", c_name="network"):
    rel, params = env.p(name + "_rel.bin"), env.p(name + "_params.bin")
    subprocess.run([PY, os.path.join(HERE, "..", "tools", "synth_nbin.py"), rel, params, "4096", "1", "random",
                    c_name], check=True)
    return rel, params


def pack(out, rel, params, *extra, rc=0, seq="1", **kw):
    return mota("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", "mota-sim", "--seq", seq,
                "--params", params, "-o", env.p(out), *extra, rel, rc=rc, **kw)


def inspect(path):
    return json.loads(mota("inspect", "--json", path).stdout)


def selftest_files(name):
    """A self-test input and the output the simulated device computes for it."""
    inp, exp = env.p(name + ".in"), env.p(name + ".out")
    open(inp, "wb").write(bytes(range(64)))
    mota("sim-output", "--input", inp, "10", exp)
    return inp, exp


def documented_fields(section):
    """The field paths docs/json.md lists under ```fields SECTION."""
    out, cur = [], False
    for line in open(os.path.join(SRC, "docs", "json.md"), encoding="utf-8"):
        if line.startswith("```"):
            cur = line.strip() == "```fields " + section
        elif cur and line.strip():
            out.append(line.split()[0])
    return out


# ---------------------------------------------------------------- cases

def case_pack_refuses_a_seq_that_leaves_a_device_no_room_above_it_unless_forced():
    rel, params = model()
    # 2^64-1 confirmed on a device: every later container is a rollback, for good
    for seq in (str((1 << 64) - 1), str(CEILING + 1), "0x8000000000000000"):
        r = pack("s.mota", rel, params, seq=seq, rc=2)
        assert one_error(r) == "pack" and "2^63-1" in r.stderr and "--force-seq" in r.stderr, r.stderr
        assert not os.path.exists(env.p("s.mota"))
    r = pack("s.mota", rel, params, seq=str((1 << 64) - 1), rc=2)
    assert "locked for good" in r.stderr, r.stderr
    # the ceiling itself is taken, silently
    r = pack("c.mota", rel, params, seq=str(CEILING))
    assert r.stderr == "" and inspect(env.p("c.mota"))["seq"] == CEILING, r.stderr
    # the largest version from-version accepts stays within the ceiling: no --force-seq for any version
    r = pack("v.mota", rel, params, "--version", "4194303.1048575.1048575", seq="from-version")
    assert r.stderr == "" and inspect(env.p("v.mota"))["seq"] <= CEILING, r.stderr
    # --force-seq: packed, with a warning on stderr that says what it costs
    r = pack("f.mota", rel, params, "--force-seq", seq=str((1 << 64) - 1))
    assert r.stderr.startswith("mota: warning: --seq 18446744073709551615") and "locked for good" in r.stderr, \
        r.stderr
    assert inspect(env.p("f.mota"))["seq"] == (1 << 64) - 1
    h = mota("pack", "--help").stdout
    assert "--force-seq" in h and str(CEILING) in h, h


def case_a_selftest_needs_no_latency_limit_and_none_is_the_default():
    rel, params = model()
    inp, exp = selftest_files("st")
    st = ["--selftest-input", inp, "--selftest-output", exp]
    same = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")  # byte-for-byte comparable outputs
    pack("omitted.mota", rel, params, *st, env=same)
    pack("none.mota", rel, params, *st, "--selftest-max-latency-us", "none", env=same)
    assert open(env.p("omitted.mota"), "rb").read() == open(env.p("none.mota"), "rb").read()
    sel = inspect(env.p("none.mota"))["compat"]["selftest"]
    assert sel["max_latency_us"] == NONE_US, sel
    pack("n.mota", rel, params, *st, "--selftest-max-latency-us", "25000")
    assert inspect(env.p("n.mota"))["compat"]["selftest"]["max_latency_us"] == 25000
    # 0 fails every self-test: refused, pointing at none; words are refused; a limit alone is no self-test
    r = pack("z.mota", rel, params, *st, "--selftest-max-latency-us", "0", rc=2)
    assert one_error(r) == "pack" and "none" in r.stderr, r.stderr
    r = pack("z.mota", rel, params, *st, "--selftest-max-latency-us", "never", rc=2)
    assert "neither a positive integer nor none" in r.stderr, r.stderr
    # a limit whose deadline (now + limit) would wrap on a guarding board: refused above none's value
    r = pack("z.mota", rel, params, *st, "--selftest-max-latency-us", "18446744073709551615", rc=2)
    assert "at most 4294967295 (71 minutes); none for no limit" in r.stderr, r.stderr
    pack("m.mota", rel, params, *st, "--selftest-max-latency-us", "4294967295")
    r = pack("z.mota", rel, params, "--selftest-max-latency-us", "none", rc=2)
    assert "--selftest-input and --selftest-output" in r.stderr, r.stderr
    r = pack("z.mota", rel, params, "--selftest-input", inp, rc=2)
    assert "--selftest-output" in r.stderr, r.stderr
    assert not os.path.exists(env.p("z.mota"))
    h = mota("pack", "--help").stdout
    assert "--selftest-max-latency-us N|none" in h and "none (the default): no limit" in h, h
    # the device takes "none" as no limit: a self-test that takes 10 s passes with it, and fails a limit
    pack("slow_none.mota", rel, params, *st, seq="2")
    pack("slow_limit.mota", rel, params, *st, "--selftest-max-latency-us", "100000", seq="3")
    sim, port = env.sim("--selftest", "slow")
    try:
        rc, _, res, err = env.push(port, env.p("slow_limit.mota"))
        assert rc == 1 and res["status"] == "MOTA_ERR_SELFTEST_SLOW", (rc, res, err)
        rc, _, res, err = env.push(port, env.p("slow_none.mota"), "--confirm")
        assert rc == 0 and res["installed"] and res["confirmed"], (rc, res, err)
    finally:
        env.close()


def case_pack_refuses_a_name_that_would_pass_for_another_models_c_name():
    rel, params = model("d", c_name="dense")
    assert "c_name:        dense" in mota("info", rel).stdout
    # --name network does not make a model called dense into one called network: a device picks the model
    # by the header's c_name, so the container would only say so
    r = pack("n.mota", rel, params, "--name", "network", rc=2)
    assert one_error(r) == "MOTA_ERR_ARG" and "--name network" in r.stderr and "dense" in r.stderr, r.stderr
    assert not os.path.exists(env.p("n.mota"))
    for other in ("dense2", "Dense", "_dense"):  # any other C name: what a c_name looks like
        r = pack("n.mota", rel, params, "--name", other, rc=2)
        assert one_error(r) == "MOTA_ERR_ARG", r.stderr
    pack("d.mota", rel, params, "--name", "dense")
    pack("o.mota", rel, params)
    for out in ("d.mota", "o.mota"):
        j = inspect(env.p(out))
        assert j["text"]["model_name"] == "dense" and j["compat"]["c_name"] == "dense", j
    # a label no c_name can be is taken as a label; the device still sees dense
    pack("l.mota", rel, params, "--name", "Dense v2 (int8)")
    j = inspect(env.p("l.mota"))
    assert j["text"]["model_name"] == "Dense v2 (int8)" and j["compat"]["c_name"] == "dense", j


def case_id_prints_the_uuids_pack_and_sim_derive_from_the_names():
    vendor_id = uuid.uuid5(uuid.NAMESPACE_DNS, "example.com")  # RFC 4122 v5, independently
    class_id = uuid.uuid5(vendor_id, "mota-sim")
    r = mota("id", "--vendor", "example.com", "--class", "mota-sim")
    assert r.stdout == "vendor example.com: %s\nclass mota-sim: %s\n" % (vendor_id, class_id), r.stdout
    assert mota("id", "--vendor", "example.com").stdout == "vendor example.com: %s\n" % vendor_id
    j = json.loads(mota("id", "--json", "--vendor", "example.com", "--class", "mota-sim").stdout)
    assert j == {"schema": 1, "command": "id", "status": "MOTA_OK", "code": 0, "message": "success",
                 "vendor": "example.com", "vendor_id": str(vendor_id), "class": "mota-sim",
                 "class_id": str(class_id)}, j
    assert sorted(j) == sorted(documented_fields("id")), documented_fields("id")
    # the ids pack signs in, and the ones a simulated device of those names reports
    rel, params = model()
    pack("p.mota", rel, params)
    comp = inspect(env.p("p.mota"))["components"][0]
    assert (comp["vendor_id"], comp["class_id"]) == (str(vendor_id), str(class_id)), comp
    sim, port = env.sim("--vendor", "example.com", "--class", "mota-sim")
    try:
        dev = json.loads(mota("status", "--json", "tcp:" + port).stdout)["device"]
        assert (dev["vendor_id"], dev["class_id"]) == (str(vendor_id), str(class_id)), dev
    finally:
        env.close()
    # the names pack refuses, refused alike
    r = mota("id", "--vendor", "", "--class", "c", rc=2)
    assert one_error(r) == "MOTA_ERR_ARG" and r.stdout == "", (r.stdout, r.stderr)
    j = json.loads(mota("id", "--json", "--vendor", "example.com", "--class", "", rc=2).stdout)
    assert j["status"] == "MOTA_ERR_ARG" and j["class_id"] is None, j
    r = mota("id", "--class", "mota-sim", rc=2)
    assert one_error(r) == "id" and "--vendor is required" in r.stderr, r.stderr
    mota("id", "--vendor", "example.com", "extra", rc=2)
    assert mota("id", "--help").stdout.startswith("usage: mota id")
    assert re.search(r"^  id +", mota("--help").stdout, re.M), mota("--help").stdout


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
