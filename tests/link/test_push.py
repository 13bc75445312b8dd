#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mota push never reports an update it did not make: a container cut or padded anywhere is refused.

usage: test_push.py MOTA WORK CASE
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Env, RawLink, run_case  # noqa: E402

MOTA, WORK, CASE = sys.argv[1:4]


def cbor_head(buf, i):
    """(major type, argument, offset after the head) of the CBOR item at i (RFC 8949 §3)."""
    major, ai = buf[i] >> 5, buf[i] & 31
    if ai < 24:
        return major, ai, i + 1
    n = {24: 1, 25: 2, 26: 4, 27: 8}[ai]
    return major, int.from_bytes(buf[i + 1:i + 1 + n], "big"), i + 1 + n


def boundaries(c):
    """Every structural boundary of a container, read independently of the C decoder: after the tag and
    the envelope's map head, the start of every key and value, the start of every byte string's content,
    its middle, and one byte before the end."""
    cuts = {0, 1}
    major, tag, i = cbor_head(c, 0)
    assert major == 6 and tag == 107, (major, tag)
    cuts.add(i)
    major, n, i = cbor_head(c, i)
    assert major == 5, major
    cuts.add(i)
    for _ in range(2 * n):
        cuts.add(i)
        major, arg, j = cbor_head(c, i)
        if major in (2, 3):  # byte or text string: its content follows
            cuts.update((j, j + arg // 2))
            j += arg
        else:
            assert major in (0, 1), major  # keys are ints or text; values are byte strings
        i = j
    assert i == len(c), (i, len(c))
    cuts.add(len(c) - 1)
    return sorted(x for x in cuts if x < len(c))


def setup():
    env = Env(MOTA, WORK)
    rel, params = env.model("m", 6000)
    c = env.pack("v1.mota", rel, params, seq=1)  # code, params and a self-test input: three payloads
    return env, c, open(c, "rb").read()


def case_a_file_cut_or_padded_anywhere_is_refused_before_anything_is_sent():
    env, path, c = setup()
    sim, port = env.sim()
    try:
        cuts = boundaries(c)
        assert len(cuts) >= 12, cuts
        bad = [("cut at %d" % n, c[:n], ("MOTA_ERR_CBOR_TRUNCATED", "MOTA_ERR_PAYLOAD_MISSING")) for n in cuts]
        bad += [("%d byte(s) appended" % len(x), c + x, ("MOTA_ERR_CBOR_TRAILING",))
                for x in (b"\0", os.urandom(1000), c)]
        for name, blob, want in bad:
            f = env.p("bad.mota")
            open(f, "wb").write(blob)
            rc, events, res, err = env.push(port, f)
            assert rc == 1 and res["status"] in want and res["installed"] is False, (name, rc, res, err)
            assert res["sent"] is False and not [e for e in events if e["event"] == "hello"], (name, events)
            assert res["schema"] == 1 and res["command"] == "push" and res["code"] < 0, res
            if len(blob) > len(c):
                assert "declares %d: %d extra byte(s)" % (len(c), len(blob) - len(c)) in res["detail"], res
            elif "ends inside" not in res["detail"]:
                assert "holds %d bytes, its envelope declares %d" % (len(blob), len(c)) in res["detail"], res
            assert "nothing was sent" in err, err
        st = env.status(port)
        assert st["active"] is None and st["upload"] is None, st  # the device never heard of them
        # the intact file goes through, so the refusals above were about the cuts
        rc, events, res, err = env.push(port, path)
        assert rc == 0 and res["installed"] and res["status_checked"], (rc, res, err)
        assert env.status(port)["active"]["seq"] == 1
        print("%d cuts and 3 paddings refused before connecting; the intact container installed" % len(cuts))
    finally:
        env.close()


def case_the_device_refuses_a_cut_or_padded_container_sent_anyway():
    env, path, c = setup()
    digest = bytes.fromhex(json.loads(env.run("inspect", "--json", path).stdout)["digest"])
    sim, port = env.sim()
    try:
        cuts = boundaries(c)
        head = json.loads(env.run("inspect", "--json", path).stdout)
        # a host without push's check: announces the cut length, sends it all; the device wants more
        for n in [x for x in cuts if x > 64][::3] + [len(c) - 1]:
            link = RawLink(port)
            status, body = link.upload(c[:n], n, digest)
            link.close()
            assert status in (-820, -100), (n, status, body)  # UPLOAD_TRUNCATED, or CBOR_TRUNCATED in the head
            st = env.status(port)
            assert st["active"] is None and st["upload"] is None, (n, st)
        # announced with bytes after the container: refused once the container is complete
        link = RawLink(port)
        status, body = link.upload(c + b"\0" * 10, len(c) + 10, digest)
        link.close()
        assert status == -806, status  # MOTA_ERR_UPLOAD_TOO_LONG
        st = env.status(port)
        assert st["active"] is None and st["upload"] is None, st
        # the whole container, through the same raw host: installed, which shows the refusals were the cuts'
        link = RawLink(port)
        status, body = link.upload(c, len(c), digest)
        link.close()
        assert status == 0 and int.from_bytes(body[:4], "little") == len(c), (status, body)
        st = env.status(port)
        assert st["active"]["seq"] == 1 and st["active"]["digest"] == head["digest"], st
        print("the device refused every cut (UPLOAD_TRUNCATED) and the padding (UPLOAD_TOO_LONG) on its own")
    finally:
        env.close()


def case_the_progress_bar_fits_the_terminal_and_shows_the_device_phases():
    """push on a terminal 60 columns wide, over a line paced like a UART: the bar never wraps, counts bytes,
    and after the last byte shows what the device is doing until its verdict."""
    import fcntl
    import pty
    import struct
    import subprocess
    import termios
    env, path, c = setup()
    sim, port = env.sim("--baud", "230400")
    try:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 60, 0, 0))
        proc = subprocess.Popen([MOTA, "push", "tcp:" + port, path], stdin=slave, stdout=subprocess.PIPE,
                                stderr=slave)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the other side closed: push ended
                break
            if not chunk:
                break
            seen += chunk
        out, _ = proc.communicate(timeout=60)
        os.close(master)
        assert proc.returncode == 0 and b"installed: " in out, (proc.returncode, out, seen)
        # the device's line replaces "connecting to ..." on the terminal (before: run onto the same line)
        assert re.search(rb"connecting to tcp:\S+ \.\.\.\r\x1b\[K\S+ on tcp:", seen), seen[:300]
        frames = [f for line in seen.split(b"\n") for f in line.split(b"\r")]
        bars = [f.replace(b"\x1b[K", b"") for f in frames if f.startswith(b"[")]
        assert bars and all(len(b) <= 59 for b in bars), [len(b) for b in bars]
        assert any(re.search(rb"\d+(\.\d)? KiB of \d+(\.\d)? KiB", b) for b in bars), bars
        phases = [b for b in bars if b"device: " in b]
        assert any(b"device: verify" in b for b in phases) and any(b"device: install" in b for b in phases), phases
        assert any(b"device: selftest" in b for b in phases), phases
        print("a 60-column terminal: %d bar updates, none wider than 59 columns, then the device's phases %s"
              % (len(bars), sorted({re.search(rb"device: (\w+)", b).group(1).decode() for b in phases})))
    finally:
        env.close()


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
