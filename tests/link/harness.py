# SPDX-License-Identifier: Apache-2.0
"""Shared by the link tests and benchmark: build containers, run mota sim and
the link emulator, run mota push."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"


class Skip(Exception):
    """A case that cannot run here (a fixture or a tool is absent): it prints SKIPPED and exits 77."""


def run_case(namespace, case, cleanup=None):
    """Run case_CASE of a test script: exit 0 PASS, 1 fail (the traceback), 2 no such case, 77 skipped.
    cleanup runs after a pass or a skip; a failed case keeps its files to look at."""
    fn = namespace.get("case_" + case)
    if fn is None:
        print("no such case: " + case)
        return 2
    try:
        fn()
    except Skip as e:
        print("SKIPPED: %s" % e)
        if cleanup:
            cleanup()
        return 77
    print("PASS " + case)
    if cleanup:
        cleanup()
    return 0


class Env:
    def __init__(self, mota, work):
        self.mota, self.work = mota, work
        shutil.rmtree(work, ignore_errors=True)  # a flash file from an earlier run would hold a newer model
        os.makedirs(work)
        self.procs = []
        self.run("keygen", "--force", self.p("k.pem"))

    def p(self, name):
        return os.path.join(self.work, name)

    def run(self, *args, check=True, **kw):
        r = subprocess.run([self.mota, *args], capture_output=True, text=True, **kw)
        if check and r.returncode != 0:
            raise AssertionError("mota %s: exit %d\n%s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
        return r

    def model(self, name, params_bytes, seed=1):
        """A synthetic split model (valid NBIN) with a params file of the given size."""
        rel, params = self.p(name + "_rel.bin"), self.p(name + "_params.bin")
        subprocess.run([PY, os.path.join(HERE, "..", "tools", "synth_nbin.py"), rel, params, str(params_bytes),
                        str(seed)], check=True)
        return rel, params

    def pack(self, out, rel, params=None, seq=1, version="1.0.0", selftest="pass", cls="mota-sim",
             vendor="example.com", key="k.pem", compress=False, encrypt=(), extra=()):
        args = ["pack", "-k", self.p(key), "--vendor", vendor, "--class", cls, "--seq", str(seq),
                "--version", version, "-o", self.p(out), *encrypt, *extra]  # encrypt: --encrypt-kek FILE, ...
        if compress:  # True: pack's default algorithm, or its name
            args.append("--compress" if compress is True else "--compress=" + compress)
        if params:
            args += ["--params", params]
        if selftest:
            inp = self.p(out + ".in")
            with open(inp, "wb") as f:
                f.write(bytes((i * 7 + seq) & 0xFF for i in range(64)))
            exp = self.p(out + ".out")
            self.run("sim-output", "--input", inp, "10", exp)
            if selftest == "fail":
                with open(exp, "r+b") as f:
                    b = f.read(1)
                    f.seek(0)
                    f.write(bytes([b[0] ^ 0xFF]))
            args += ["--selftest-input", inp, "--selftest-output", exp, "--selftest-max-latency-us", "100000"]
        self.last_pack = self.run(*args, rel).stdout
        return self.p(out)

    def start(self, args, pattern):
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        line = proc.stdout.readline()
        m = re.search(pattern, line)
        if not m:
            raise AssertionError("%s did not start: %r %s" % (args[0], line, proc.stderr.read() if proc.poll() else ""))
        return proc, m.group(1)

    def sim(self, *extra, port=0, flash="sim.flash"):
        args = [self.mota, "sim", "--tcp", "127.0.0.1:%d" % port, "--key", self.p("k.pub.pem"), "--flash",
                self.p(flash), "--model", "network", "--dbg-info", "--async", *extra]
        return self.start(args, r"listening on tcp:(\S+)")

    def emu(self, target, *extra):
        args = [PY, os.path.join(HERE, "linkemu.py"), "--target", target, *extra]
        proc, addr = self.start(args, r"listening on (\S+)")
        return proc, addr

    def board(self, flash, *args, target="an547"):
        """`mota sim --target TARGET` (a QEMU board) on a flash file: (launcher, HOST:PORT). Its stderr (the
        board console) goes to a file: a pipe nobody reads would fill."""
        err = self.p("launcher.err")
        proc = subprocess.Popen([self.mota, "sim", "--target", target, "--flash", flash, *args],
                                stdout=subprocess.PIPE, text=True, stderr=open(err, "a"))
        self.procs.append(proc)
        line = proc.stdout.readline()
        m = re.search(r"listening on tcp:(\S+)", line)
        assert m, ("launcher did not start", line, open(err).read()[-2000:])
        return proc, m.group(1)

    def wait_status(self, port, timeout, per_try=2):
        """`mota status --json` once the device answers, or None after timeout seconds."""
        end = time.time() + timeout
        while time.time() < end:
            r = self.run("status", "--json", "--timeout", str(per_try), "tcp:" + port, check=False)
            if r.returncode == 0:
                return json.loads(r.stdout)
            time.sleep(0.2)
        return None

    def push(self, port, container, *extra, timeout=120):
        r = self.run("push", "--json", *extra, "tcp:" + port, container, check=False, timeout=timeout)
        events = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
        result = [e for e in events if e.get("event") == "result"]
        return r.returncode, events, (result[-1] if result else {}), r.stderr

    def status(self, port):
        r = self.run("status", "--json", "tcp:" + port)
        return json.loads(r.stdout)["models"][0]

    def stop(self, proc, sig=signal.SIGTERM):
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                out, _ = proc.communicate(timeout=5)
                return out
            except subprocess.TimeoutExpired:
                proc.kill()
        return ""

    def close(self):
        """SIGTERM first: a simulator removes its own temporary files when it ends cleanly."""
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def cobs_encode(data):
    """Consistent overhead byte stuffing, as proto does it."""
    out, code_at, code = bytearray(b"\0"), 0, 1
    for b in data:
        if b == 0:
            out[code_at], code_at, code = code, len(out), 1
            out.append(0)
            continue
        out.append(b)
        code += 1
        if code == 0xFF:
            out[code_at], code_at, code = code, len(out), 1
            out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_decode(data):
    out, i = bytearray(), 0
    while i < len(data):
        code = data[i]
        if code == 0 or i + code > len(data) + (0 if code > 1 else 1):
            raise ValueError("bad COBS")
        out += data[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


class RawLink:
    """A host that speaks docs/protocol.md itself, without mota push's checks: to show what the device
    decides on its own."""
    def __init__(self, port, timeout=10):
        import socket
        host, p = port.rsplit(":", 1)
        self.s = socket.create_connection((host, int(p)), timeout=timeout)
        self.seq, self.buf = 0, b""

    def request(self, cmd, payload=b""):
        """Send a request, return (status, body) of its answer; unsolicited event frames are skipped."""
        import struct
        import zlib
        self.seq = (self.seq + 1) & 0xFFFF
        hdr = struct.pack("<BBHBBH", 1, 1, self.seq, cmd, 0, len(payload)) + payload
        self.s.sendall(cobs_encode(hdr + struct.pack("<I", zlib.crc32(hdr))) + b"\0")
        while True:
            while b"\0" not in self.buf:
                chunk = self.s.recv(65536)
                if not chunk:
                    raise AssertionError("the device closed the link")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            if not raw:
                continue
            f = cobs_decode(raw)
            ver, kind, seq, rcmd, _, n = struct.unpack("<BBHBBH", f[:8])
            if kind != 2 or seq != self.seq or rcmd != cmd:
                continue
            body = f[8:8 + n]
            return struct.unpack("<h", body[:2])[0], body[2:]

    def upload(self, container, declared_len, digest):
        """HELLO, BEGIN with declared_len, then every byte of container in order: the device's last answer."""
        import struct
        st, _ = self.request(1, struct.pack("<BH", 1, 1024))
        assert st == 0, st
        st, body = self.request(2, struct.pack("<I", declared_len) + digest)
        if st != 0:
            return st, body
        chunk = struct.unpack("<H", body[4:6])[0] - 4  # BEGIN's answer: [u32 kept, u16 payload size, u8 window]
        off, status = 0, 0
        while off < len(container):
            n = min(chunk, len(container) - off)
            status, body = self.request(3, struct.pack("<I", off) + container[off:off + n])
            if status != 0:
                return status, body
            off += n
        return status, body

    def close(self):
        self.s.close()
