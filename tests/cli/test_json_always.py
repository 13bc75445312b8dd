#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""--json always gives a document (issue 29): an unusable input file, a refused or interrupted push, a
non-UTF-8 path, a --model the device does not have each end in valid JSON with the failure's reason.

usage: test_json_always.py MOTA WORK DOCS_JSON_MD CASE
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "link"))
from harness import Env, run_case  # noqa: E402

MOTA, WORK, DOC, CASE = sys.argv[1:5]


def result_fields():
    """The top-level fields docs/json.md lists for push's result event."""
    text = open(DOC, encoding="utf-8").read()
    block = re.search(r"```fields push:result\n(.*?)```", text, re.S).group(1)
    return {line.split()[0].split(".")[0] for line in block.splitlines() if line.strip()}


def lines_json(out):
    """Every line of a --json output parsed (each must be JSON): the documents."""
    raw = out.encode("utf-8", "surrogateescape") if isinstance(out, str) else out
    raw.decode("utf-8")  # strictly UTF-8: raises on a raw byte
    return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]


def one_doc(out):
    """A one-document command's stdout: exactly one JSON document, strictly UTF-8."""
    raw = out if isinstance(out, bytes) else out.encode()
    docs, text, dec, i = [], raw.decode("utf-8"), json.JSONDecoder(), 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        d, i = dec.raw_decode(text, i)
        docs.append(d)
    assert len(docs) == 1, docs
    return docs[0]


def run(*args):
    return subprocess.run([MOTA, *args], capture_output=True)


def check_result(events, fields):
    assert events and events[-1]["event"] == "result", events[-3:]
    missing = fields - set(events[-1])
    assert not missing, ("result event without", missing, events[-1])
    assert all(e["event"] != "result" for e in events[:-1]), events


def case_an_unreadable_input_still_gives_one_document_with_the_reason():
    env = Env(MOTA, WORK)
    try:
        missing, folder = env.p("missing.mota"), env.p("folder")
        os.makedirs(folder)
        fields = result_fields()
        for path, why in ((missing, "No such file or directory"), (folder, "is a directory")):
            for args, cmd in ((("inspect", "--json", path), "inspect"),
                              (("verify", "--json", "--key", env.p("k.pub.pem"), path), "verify"),
                              (("info", "--json", path), "info"),
                              (("invoke", "--json", "--input", path, "--output-size", "4", "tcp:127.0.0.1:1"),
                               "invoke")):
                r = run(*args)
                assert r.returncode == 3, (args, r.returncode, r.stderr)
                d = one_doc(r.stdout)
                assert d["command"] == cmd and d["status"] == "MOTA_ERR_IO" and d["code"] == -3, (args, d)
                assert why in d["detail"] and path in d["detail"], (args, d)
            r = run("push", "--json", "tcp:127.0.0.1:1", path)
            assert r.returncode == 3, r
            events = lines_json(r.stdout)
            check_result(events, fields)
            assert events[-1]["status"] == "MOTA_ERR_IO" and why in events[-1]["detail"], events[-1]
            assert events[-1]["container"] is None and events[-1]["sent"] is False, events[-1]
        r = run("verify", "--json", "--key", missing, env.p("k.pub.pem"))  # the key file unreadable
        d = one_doc(r.stdout)
        assert r.returncode == 3 and d["status"] == "MOTA_ERR_IO" and "--key " + missing in d["detail"], d
        for inputs, why in ((missing, "No such file or directory"), (env.p("k.pem"), "Not a directory"),
                            (folder, "holds no input files")):
            r = run("validate", "--json", "--inputs", inputs, "--outputs", folder, "tcp:127.0.0.1:1")
            assert r.returncode == 3, r
            d = one_doc(r.stdout)
            assert d["status"] == "MOTA_ERR_IO" and why in d["detail"], d
            assert why.encode() in r.stderr, r.stderr
    finally:
        env.close()


def case_every_push_result_has_every_documented_field():
    env = Env(MOTA, WORK)
    try:
        fields = result_fields()
        rel, params = env.model("m", 3000)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        open(env.p("cut.mota"), "wb").write(open(v1, "rb").read()[:-10])
        sim, port = env.sim()
        tcp = "tcp:" + port
        outcomes = {}
        for name, args in (("installed", (tcp, v1)), ("again", (tcp, v1)), ("local", (tcp, env.p("cut.mota"))),
                           ("transport", ("tcp:127.0.0.1:1", v1))):
            r = run("push", "--json", *args)
            events = lines_json(r.stdout)
            check_result(events, fields)
            outcomes[name] = events[-1]
        assert outcomes["installed"]["status"] == "MOTA_OK", outcomes["installed"]
        assert outcomes["again"]["status"] == "MOTA_OK" and outcomes["again"]["already_active"] is True
        local = outcomes["local"]
        assert local["status"] == "MOTA_ERR_CBOR_TRUNCATED" and local["sent"] is False, local
        assert local["container"]["seq"] == 1 and local["acked"] is None and local["already_active"] is None, local
        transport = outcomes["transport"]
        assert transport["status"] == "MOTA_ERR_TRANSPORT" and transport["container"]["seq"] == 1, transport
        assert transport["confirmed"] is False and transport["status_checked"] is False, transport
        # busy: another client holds the simulator
        import socket
        host, p = port.rsplit(":", 1)
        holder = socket.create_connection((host, int(p)))
        time.sleep(0.3)
        r = run("push", "--json", "--timeout", "2", tcp, v1)
        holder.close()
        events = lines_json(r.stdout)
        check_result(events, fields)
        assert events[-1]["status"] == "MOTA_ERR_BUSY" and r.returncode == 5, (r.returncode, events[-1])
        # refused by the device: another container while v1 is on trial
        v2 = env.pack("v2.mota", rel, params, seq=2, version="2.0.0")
        r = run("push", "--json", tcp, v2)
        events = lines_json(r.stdout)
        check_result(events, fields)
        assert events[-1]["status"] == "MOTA_ERR_TRIAL_PENDING" and r.returncode == 1, events[-1]
        assert events[-1]["already_active"] is False and events[-1]["acked"] is not None, events[-1]
    finally:
        env.close()


def case_an_interrupted_push_ends_with_a_result_and_resumes_at_once():
    env = Env(MOTA, WORK)
    try:
        fields = result_fields()
        rel, params = env.model("m", 200000)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        sim, port = env.sim("--baud", "400000")
        for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
            p = subprocess.Popen([MOTA, "push", "--json", "tcp:" + port, v1], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
            lines = []
            for line in p.stdout:
                lines.append(line)
                if b'"progress"' in line and json.loads(line)["offset"] > 20000:
                    break
            t = time.time()
            p.send_signal(sig)
            rest, err = p.communicate(timeout=30)
            took = time.time() - t
            events = lines_json(b"".join(lines) + rest)
            check_result(events, fields)
            res = events[-1]
            assert p.returncode == code, (p.returncode, err)
            assert res["status"] == "MOTA_ERR_TRANSPORT" and res["installed"] is False, res
            assert "interrupted by " + sig.name in res["detail"] and res["sent"] is True, res
            assert took < 2.0, took
        t = time.time()
        rc, events, result, err = env.push(port, v1)
        assert rc == 0 and result["status"] == "MOTA_OK", (rc, result, err)
        resume = [e["offset"] for e in events if e["event"] == "resume"]
        assert resume, events[:3]
        assert time.time() - t < 8, time.time() - t
        # the head alone before the jump: no window of frames past it sent only to be refused (on a slow line
        # they held the jump back for seconds); the head again, the rest once, and at most one window resent
        rest = os.path.getsize(v1) - resume[0]
        assert result["data_bytes_sent"] <= rest + 4096 + 2048, (result["data_bytes_sent"], rest)  # head < 4 KiB
    finally:
        env.close()


def case_a_device_lost_mid_transfer_is_told_in_the_result():
    """The device killed mid-transfer, push --json --timeout 3: the result's detail has the facts stderr has
    (the link's reason, the bytes acknowledged), and wire_bytes_out counts every connection's bytes (before: an
    empty detail, and 0 beside the data bytes sent)."""
    env = Env(MOTA, WORK)
    try:
        fields = result_fields()
        rel, params = env.model("m", 200000)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        sim, port = env.sim("--baud", "400000")
        p = subprocess.Popen([MOTA, "push", "--json", "--timeout", "3", "tcp:" + port, v1], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        lines = []
        for line in p.stdout:
            lines.append(line)
            if b'"progress"' in line and json.loads(line)["offset"] > 20000:
                break
        sim.kill()
        rest, err = p.communicate(timeout=60)
        events = lines_json(b"".join(lines) + rest)
        check_result(events, fields)
        res = events[-1]
        assert p.returncode != 0 and res["installed"] is False and res["sent"] is True, (p.returncode, res)
        assert res["detail"] and "the device acknowledged" in res["detail"] or "no answer" in res["detail"], res
        assert res["wire_bytes_out"] >= res["data_bytes_sent"] > 20000, res
    finally:
        env.close()


def case_a_resumed_push_rates_only_what_it_sent():
    """A push that resumes an upload an interrupted one left: its rate counts the bytes it sent, not the ones
    the device kept (before: 2905 KiB/s on a 460800-baud link)."""
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 200000)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        sim, port = env.sim("--baud", "400000")
        p = subprocess.Popen([MOTA, "push", "--json", "tcp:" + port, v1], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        for line in p.stdout:
            if b'"progress"' in line and json.loads(line)["offset"] > 150000:
                break
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)
        r = subprocess.run([MOTA, "push", "tcp:" + port, v1], capture_output=True, text=True, timeout=120)
        m = re.search(r"installed: \S+ seq 1 in ([\d.]+) s \(([\d.]+) KiB/s", r.stdout)
        assert r.returncode == 0 and m and "resuming" in r.stderr, (r.stdout, r.stderr)
        assert float(m.group(2)) < 400000 / 10 / 1024 * 1.25, m.group(0)  # at most the line's rate
    finally:
        env.close()


def case_a_usage_error_is_one_document_too():
    """--json with an option out of range, swapped arguments or a port that is not one: exit 2, and the
    document (push: its result event, every documented field) with MOTA_ERR_ARG and stderr's message."""
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 3000)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        fields = result_fields()
        for args, said in ((("push", "--json", "tcp:127.0.0.1:99999", v1), "'99999' is no TCP port number"),
                           (("push", "--json", v1, "tcp:127.0.0.1:1"), "arguments swapped"),
                           (("push", "--json", "--timeout", "0", "tcp:127.0.0.1:1", v1), "--timeout 0"),
                           (("push", "--json", "--bogus", "tcp:127.0.0.1:1", v1), "unknown option --bogus")):
            r = run(*args)
            events = lines_json(r.stdout)
            assert r.returncode == 2 and len(events) == 1, (args, r.returncode, r.stdout, r.stderr)
            check_result(events, fields)
            e = events[0]
            assert e["status"] == "MOTA_ERR_ARG" and said in e["detail"] and e["sent"] is False, e
            assert e["detail"] in r.stderr.decode(), (e["detail"], r.stderr)
        for args, said in ((("status", "--json", "tcp:127.0.0.1:99999"), "'99999' is no TCP port number"),
                           (("reboot", "--json", "--bogus", "tcp:127.0.0.1:1"), "unknown option --bogus"),
                           (("inspect", "--json", "-q", v1), "-q is verify's")):
            r = run(*args)
            d = one_doc(r.stdout)
            assert r.returncode == 2 and d["command"] == args[0] and d["status"] == "MOTA_ERR_ARG", (args, d)
            assert said in d["detail"], d
        print("usage errors of --json runs: one document each, push's a complete result event")
    finally:
        env.close()


def case_a_non_utf8_path_is_valid_json():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 3000)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        odd = os.path.join(os.fsencode(WORK), b"caf\xe9-\xff\xfe.mota")
        with open(odd, "wb") as f:
            f.write(open(v1, "rb").read())
        missing = os.path.join(os.fsencode(WORK), b"\xc3(\xed\xa0\x80 missing")
        for path, cmd in ((odd, "inspect"), (missing, "inspect"), (missing, "info")):
            r = subprocess.run([os.fsencode(MOTA), cmd.encode(), b"--json", path], capture_output=True)
            d = one_doc(r.stdout)  # strictly UTF-8 and JSON
            name = d.get("container", d.get("file"))
            assert "\ufffd" in name and name.startswith(WORK), d
        assert "caf\ufffd-\ufffd\ufffd.mota" in one_doc(
            subprocess.run([os.fsencode(MOTA), b"inspect", b"--json", odd], capture_output=True).stdout)["container"]
        r = subprocess.run([os.fsencode(MOTA), b"push", b"--json", b"tcp:127.0.0.1:1", missing], capture_output=True)
        events = lines_json(r.stdout)
        assert events[-1]["event"] == "result" and "\ufffd" in events[-1]["detail"], events
        ok = "vérifié-✓"  # well-formed UTF-8 stays as it is
        os.rename(odd, os.path.join(os.fsencode(WORK), ok.encode()))
        d = one_doc(run("inspect", "--json", os.path.join(WORK, ok)).stdout)
        assert d["container"].endswith(ok), d
    finally:
        env.close()


def case_a_model_the_device_does_not_have_is_refused_with_its_names():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 3000)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        sim, port = env.sim()
        tcp = "tcp:" + port
        inp = env.p("v1.mota.in")
        # the model's slot holds nothing yet: said first, whatever else the command line lacks
        r = run("invoke", "--json", "--input", inp, tcp)
        d = one_doc(r.stdout)
        assert r.returncode == 1 and d["status"] == "MOTA_ERR_NO_MODEL" and "nothing installed" in d["detail"], d
        env.push(port, v1)
        r = run("invoke", "--json", "--model", "nope", "--input", inp, "--output-size", "10", tcp)
        assert r.returncode == 1, (r.returncode, r.stderr)
        d = one_doc(r.stdout)
        assert d["status"] == "MOTA_ERR_NO_SLOT" and d["model"] is None, d
        assert "nope" in d["detail"] and "network" in d["detail"], d
        assert b"network" in r.stderr, r.stderr
        vdir = env.p("vectors")
        os.makedirs(vdir)
        open(os.path.join(vdir, "a.bin"), "wb").write(bytes(range(10)))
        r = run("validate", "--json", "--model", "nope", "--inputs", vdir, "--outputs", vdir, tcp)
        d = one_doc(r.stdout)
        assert r.returncode == 1 and d["status"] == "MOTA_ERR_NO_SLOT" and "network" in d["detail"], (r, d)
        r = run("invoke", "--json", "--input", inp, "--output-size", "10", tcp)  # the model it has still runs
        d = one_doc(r.stdout)
        assert r.returncode == 0 and d["model"] == "network" and d["output_size"] == 10, d
    finally:
        env.close()


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
