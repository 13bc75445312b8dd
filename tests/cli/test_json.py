#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every command's JSON follows docs/json.md: the fields it prints are the documented ones.

usage: test_json.py MOTA WORK DOCS_JSON_MD CASE
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "link"))
from harness import Env, run_case  # noqa: E402

MOTA, WORK, DOC, CASE = sys.argv[1:5]
FIXTURE = os.path.join(os.path.dirname(DOC), "..", "..", "shared", "fixtures", "st-n6", "yolov8n_network_rel.bin")


def documented():
    """{section: {path: line}} from the doc's ```fields SECTION blocks."""
    out, cur = {}, None
    for line in open(DOC, encoding="utf-8"):
        m = re.match(r"```fields (\S+)", line)
        if m:
            cur = out.setdefault(m.group(1), {})
        elif line.startswith("```"):
            cur = None
        elif cur is not None and line.strip():
            cur[line.split()[0]] = line.rstrip()
    for sec in out.values():  # "as in status", "as in info": that section's subtree
        for path, line in list(sec.items()):
            m = re.search(r"as in (status|info)\b", line)
            if m:
                sec.update({q: v for q, v in out[m.group(1)].items() if q.startswith(path)})
    return out


def docs(text):
    """Every JSON document in a command's stdout (one per line, or one indented)."""
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        o, i = dec.raw_decode(text, i)
        out.append(o)


def paths(o, prefix=""):
    if isinstance(o, dict):
        for k, v in o.items():
            p = prefix + ("." if prefix else "") + k
            yield p
            yield from paths(v, p)
    elif isinstance(o, list):
        yield prefix + "[]"
        for v in o:
            yield from paths(v, prefix + "[]")


def section(d):
    cmd = d["command"]
    if cmd == "push":
        return "push:" + d["event"]
    return "inspect" if cmd == "verify" else cmd


def case_every_json_field_is_documented():
    doc = documented()
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 3000)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        v2 = env.pack("v2.mota", rel, params, seq=2, version="2.0.0")
        bad = env.pack("bad.mota", rel, params, seq=3, selftest="fail")
        env.run("keygen", env.p("other.pem"))
        open(env.p("cut.mota"), "wb").write(open(v1, "rb").read()[:500])
        vdir = env.p("vectors")  # inputs as their own references: an output that differs, so validate refuses
        os.makedirs(vdir)
        open(os.path.join(vdir, "a.bin"), "wb").write(bytes(range(10)))
        sim, port = env.sim()
        tcp = "tcp:" + port
        dg1 = json.loads(env.run("inspect", "--json", v1).stdout)["digest"]
        runs = [("push", "--json", tcp, v1), ("status", "--json", tcp), ("confirm", "--json", tcp),
                ("confirm", "--json", "--expect-digest", dg1, tcp),  # confirmed already: "done": false
                ("rollback", "--json", "--expect-digest", "00" * 32, tcp),  # runs nowhere: nothing to do
                ("push", "--json", tcp, v2), ("rollback", "--json", tcp), ("push", "--json", tcp, bad),
                ("push", "--json", tcp, env.p("cut.mota")), ("push", "--json", "tcp:127.0.0.1:1", v1),
                ("status", "--json", tcp), ("reboot", "--json", tcp), ("inspect", "--json", v1),
                ("verify", "--json", "--key", env.p("k.pub.pem"), v1),
                ("verify", "--json", "--key", env.p("other.pub.pem"), v1),
                ("inspect", "--json", env.p("cut.mota")), ("info", "--json", rel), ("info", "--json", v1), ("ports", "--json"),
                ("invoke", "--json", "--input", env.p("v1.mota.in"), "--output-size", "10", tcp),
                ("validate", "--json", "--inputs", vdir, "--outputs", vdir, tcp),
                ("info", "--json", "--epochs", "--baseline", rel, rel),
                ("inspect", "--json", "--epochs", "--baseline", v1, v1)]
        if os.path.exists(FIXTURE):  # a Neural-ART model: every field of the epoch report
            runs += [("info", "--json", "--epochs", "--baseline", FIXTURE, FIXTURE)]
        seen, n_docs = {}, 0
        for args in runs:
            r = env.run(*args, check=False)
            out = docs(r.stdout)
            assert out, (args, r.returncode, r.stdout, r.stderr)
            n_docs += len(out)
            for d in out:
                assert d["schema"] == 1 and isinstance(d["command"], str), (args, d)
                assert re.fullmatch(r"MOTA_(OK|ERR_[A-Z0-9_]+)", d.get("status", "")) or \
                    d.get("event") in ("hello", "progress", "resume", "reconnect", "phase"), (args, d)
                if "status" in d:
                    assert isinstance(d["code"], int) and isinstance(d["message"], str), (args, d)
                    assert (d["status"] == "MOTA_OK") == (d["code"] == 0), (args, d)
                sec = section(d)
                assert sec in doc, "%s: no section %s in docs/json.md" % (args, sec)
                listed = doc[sec]
                wild = [q[:-1] for q in listed if q.endswith(".*")]  # a map: any key at that level
                undocumented = [p for p in paths(d) if p not in listed and
                                not any(q.startswith(p + ".") or q.startswith(p + "[]") for q in listed) and
                                not any(p.startswith(w) and "." not in p[len(w):] for w in wild)]
                assert not undocumented, "%s prints fields docs/json.md does not list under %s: %s" % (
                    " ".join(args[:1]), sec, undocumented)
                seen.setdefault(sec, set()).update(paths(d))
            if args[0] != "push" and r.returncode == 0:
                assert len(out) == 1 and out[0]["status"] == "MOTA_OK", (args, out)
        # and the doc lists nothing the commands no longer print (top-level fields of what was seen)
        for sec, got in seen.items():
            stale = [p for p in doc[sec] if "." not in p and "[]" not in p and p not in got]
            optional = {"push:result": {"acked", "wire_bytes_out"}, "status": set(), "inspect": set()}
            stale = [p for p in stale if p not in optional.get(sec, set())]
            assert not stale, "docs/json.md lists %s under %s, but no output had them" % (stale, sec)
        print("%d documents of %d kinds match docs/json.md" % (n_docs, len(seen)))
    finally:
        env.close()


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
