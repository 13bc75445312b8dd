#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the update link through `mota sim`, one case per run.

usage: test_link.py MOTA WORKDIR CASE
"""
import hashlib
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Env  # noqa: E402

MOTA, WORK, CASE = sys.argv[1:4]
env = Env(MOTA, os.path.join(WORK, CASE))


def digest_of(container):
    """The manifest digest: sha256 of the bstr-wrapped manifest, as the device reports it."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
    import cbor2
    env_ = cbor2.loads(open(container, "rb").read())
    return hashlib.sha256(cbor2.dumps(env_.value[3])).hexdigest()


def case_pack_push_install_confirm_end_to_end():
    rel, params = env.model("m", 48 * 1024)
    v1 = env.pack("v1.mota", rel, params, seq=1, version="1.0.0")
    v2 = env.pack("v2.mota", rel, params, seq=2, version="2.0.0", selftest="fail")
    sim, port = env.sim()
    rc, events, res, err = env.push(port, v1, "--confirm")
    assert rc == 0 and res["status"] == "MOTA_OK" and res["confirmed"], (rc, res, err)
    st = env.status(port)
    assert st["active"] and st["active"]["seq"] == 1 and st["active"]["version"] == "1.0.0" and st["active"]["state"] == "confirmed", st
    assert st["active"]["digest"] == digest_of(v1)
    # v2's self-test fails on the device: refused, v1 stays, the reason is kept
    rc, events, res, err = env.push(port, v2)
    assert rc == 1 and res["status"] == "MOTA_ERR_SELFTEST_OUTPUT" and res["installed"] is False, (rc, res, err)
    st = env.status(port)
    assert st["active"]["seq"] == 1 and st["last_error"]["code"] == -807 and st["active"]["digest"] == digest_of(v1), st
    # a later client still reads why: the device's recent errors outlive the connection
    errs = json.loads(env.run("status", "--json", "tcp:" + port).stdout)["recent_errors"]
    assert [(e["status"], e["model"]) for e in errs] == [("MOTA_ERR_SELFTEST_OUTPUT", "network")], errs
    text = env.run("status", "tcp:" + port).stdout
    assert "recent errors" in text and "MOTA_ERR_SELFTEST_OUTPUT (-807) model network" in text, text
    # a model on trial, then a confirm and a reboot
    v3 = env.pack("v3.mota", rel, params, seq=3, version="3.0.0")
    rc, events, res, err = env.push(port, v3)
    assert rc == 0 and env.status(port)["active"]["state"] == "trial"
    env.run("confirm", "tcp:" + port)
    env.run("reboot", "tcp:" + port)
    time.sleep(0.3)
    st = env.status(port)
    assert st["active"]["seq"] == 3 and st["active"]["state"] == "confirmed" and st["committed_seq"] == 3, st
    assert json.loads(env.run("status", "--json", "tcp:" + port).stdout)["recent_errors"] == []  # a reboot clears them
    # invoke runs the (simulated) model
    inp = env.p("invoke.in")
    open(inp, "wb").write(b"hello")
    out = json.loads(env.run("invoke", "--json", "--input", inp, "--output-size", "16", "tcp:" + port).stdout)
    want = hashlib.sha256(b"mota-sim" + b"hello" + struct.pack("<I", 0)).hexdigest()[:32]
    assert out["output"] == want, out
    # no device at all: still a result line for CI, the link exit code, and the cause at once
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    dead_port = dead.getsockname()[1]
    dead.close()
    t = time.time()
    rc, events, res, err = env.push("127.0.0.1:%d" % dead_port, v1, "--timeout", "20")
    assert rc == 3 and res["status"] == "MOTA_ERR_TRANSPORT" and res["installed"] is False, (rc, res, err)
    assert "Connection refused" in err and time.time() - t < 5, (err, time.time() - t)
    for port, cause, code in (("nosuchhost.invalid:1", "cannot resolve host 'nosuchhost.invalid'", 3),  # no route
                              (":5", "no host before :PORT", 2)):  # not a port at all: a usage error
        rc, events, res, err = env.push(port, v1, "--timeout", "20")
        assert rc == code and cause in err, (port, rc, err)
    for cmd, bad in (("push", ["--timeout", "0"]), ("status", ["--baud", "0"]), ("invoke", ["--output-size", "x"])):
        r = env.run(cmd, *bad, "tcp:127.0.0.1:1", *([v1] if cmd == "push" else []), check=False)
        assert r.returncode == 2 and r.stderr.startswith("mota: error: %s: %s " % (cmd, bad[0])) \
            and r.stderr.endswith("(see mota %s --help)\n" % cmd) and r.stderr.count("\n") == 1, (cmd, r.stderr)
    print("pushed v1 (confirmed), v2 refused by its self-test, v3 trial then confirmed across a reboot")


def case_link_faults_never_corrupt_a_slot():
    rel, params = env.model("m", 96 * 1024)
    v1 = env.pack("v1.mota", rel, params, seq=1)
    sim, port = env.sim()
    runs = [("flips", ["--flip", "0.05"]), ("drops", ["--drop", "0.05"]), ("duplicates", ["--dup", "0.1"]),
            ("reordering", ["--reorder", "0.1"]), ("stalls", ["--stall-every", "20", "--stall-ms", "4000"]),
            ("everything", ["--flip", "0.03", "--drop", "0.03", "--dup", "0.05", "--reorder", "0.05",
                            "--faults-both-ways"])]
    seq = 1
    for name, faults in runs:
        emu, eport = env.emu(port, *faults, "--seed", str(seq))
        c = env.pack("c%d.mota" % seq, rel, params, seq=seq, version="%d.0.0" % seq)
        rc, events, res, err = env.push(eport, c, "--confirm", timeout=180)
        counters = env.stop(emu)
        st = env.status(port)
        if rc == 0:
            assert st["active"]["seq"] == seq and st["active"]["digest"] == digest_of(c) and st["active"]["state"] == "confirmed", (name, st)
        else:
            # failed with a reason: the device still runs a verified model
            assert res.get("status", "").startswith("MOTA_ERR"), (name, rc, res, err)
            assert st["active"], (name, st)
        print("%-11s rc %d %s; emulator %s" % (name, rc, res.get("status"), counters.strip()))
        assert rc == 0, "%s: the transfer did not complete: %s" % (name, err)
        seq += 1
    # the device side corrupts bytes itself too
    env.stop(sim)
    sim, port = env.sim("--corrupt-rate", "0.0005", "--seed", "7")
    c = env.pack("dev.mota", rel, params, seq=seq)
    rc, events, res, err = env.push(port, c, "--confirm", timeout=180)
    assert rc == 0 and env.status(port)["active"]["seq"] == seq, (rc, res, err)
    print("device-side corruption: rc %d" % rc)


def case_lost_answers_to_begin_and_confirm_are_retried_not_fatal():
    """Answers lost at chosen points: every answer to BEGIN on the first connection (the push
    reconnects), then the first four answers to CONFIRM (the model is in: the push retries)."""
    rel, params = env.model("m", 64 * 1024)
    sim, port = env.sim()
    c1 = env.pack("c1.mota", rel, params, seq=1)
    rc, events, res, err = env.push(port, c1, "--confirm")
    assert rc == 0, (rc, res, err)
    max_payload = [e for e in events if e["event"] == "hello"][0]["max_payload"]
    c2 = env.pack("c2.mota", rel, params, seq=2, version="2.0.0")
    n_data = -(-os.path.getsize(c2) // (max_payload - 4))
    # answers: 1 HELLO, 2-4 BEGIN and its two retries (lost); after the reconnect 5 HELLO, 6 BEGIN,
    # n_data DATA, 1 STATUS, then CONFIRM and its retries
    confirm = 7 + n_data + 1
    drops = [2, 3, 4] + list(range(confirm, confirm + 4))
    emu, eport = env.emu(port, "--drop-answers", ",".join(map(str, drops)))
    rc, events, res, err = env.push(eport, c2, "--confirm", "--timeout", "30")
    counters = json.loads(env.stop(emu))
    assert counters["dropped"] == 7, counters
    assert rc == 0 and res["status"] == "MOTA_OK" and res["confirmed"] and res["reconnects"] == 1, (rc, res, err)
    st = env.status(port)
    assert st["active"]["seq"] == 2 and st["active"]["digest"] == digest_of(c2) and st["active"]["state"] == "confirmed", st
    print("7 answers lost (3 BEGIN, 4 CONFIRM): reconnected once, confirmed; %s" % json.dumps(counters))


def push_through_a_power_cut(c, fraction):
    """Push c to a simulator through a 300 KB/s link, kill the simulator once `fraction` of c is acknowledged,
    start it again on the same flash: (push's exit code, its events, its result, stderr, bytes acknowledged
    before the cut, the link emulator, the simulator's port)."""
    size = os.path.getsize(c)
    sim, port = env.sim()
    sport = int(port.rsplit(":", 1)[1])
    emu, eport = env.emu(port, "--baud", "3000000")  # ~300 KB/s: time to pull the plug
    push = subprocess.Popen([MOTA, "push", "--json", "--timeout", "60", "tcp:" + eport, c],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    acked = 0
    while acked < size * fraction:
        line = push.stdout.readline()
        if not line:
            break
        e = json.loads(line)
        if e.get("event") == "progress":
            acked = e["offset"]
    sim.kill()  # power off, mid-transfer
    sim.wait()
    time.sleep(0.5)
    env.sim(port=sport)
    out, err = push.communicate(timeout=120)
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    res = [e for e in events if e.get("event") == "result"][-1]
    return push.returncode, events, res, err, acked, emu, port


def case_simulator_restart_resumes_from_the_persisted_offset():
    rel, params = env.model("m", 1024 * 1024)
    c = env.pack("big.mota", rel, params, seq=1)
    size = os.path.getsize(c)
    rc, events, res, err, cut_at, emu, port = push_through_a_power_cut(c, 0.5)
    resumes = [e for e in events if e.get("event") == "resume"]
    assert rc == 0 and res["status"] == "MOTA_OK", (rc, res, err)
    assert resumes and resumes[-1]["offset"] > size * 0.3, (resumes, cut_at)
    counters = json.loads(env.stop(emu).strip().splitlines()[-1])
    assert counters["bytes_to_device"] < size * 1.6, counters
    st = env.status(port)
    assert st["active"]["seq"] == 1 and st["active"]["digest"] == digest_of(c)
    print("killed the simulator after %d of %d bytes; it resumed at %d; %d bytes crossed the link in all"
          % (cut_at, size, resumes[-1]["offset"], counters["bytes_to_device"]))


def case_a_compressed_container_resumes_inside_its_payload_after_a_simulator_restart():
    """pack --compress: killed mid-payload, the simulator resumes at a journaled block boundary of the LZ4 frame
    (the transported hash's state restored), and the image checked from flash is the signed one."""
    rel, params = env.p("w_rel.bin"), env.p("w_params.bin")
    subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                                                      "synth_nbin.py"), rel, params, str(1536 * 1024), "4", "weights"],
                   check=True)
    c = env.pack("wz.mota", rel, params, seq=1, compress=True)
    insp = json.loads(env.run("inspect", "--json", c).stdout)
    pz = [x for x in insp["components"] if x["role"] == "params"][0]
    assert pz["compression"] and pz["compression"]["size"] < pz["size"] * 0.8, pz
    size = os.path.getsize(c)
    rc, events, res, err, acked, emu, port = push_through_a_power_cut(c, 0.6)  # inside the compressed params
    resumes = [e["offset"] for e in events if e.get("event") == "resume"]
    assert rc == 0 and res["status"] == "MOTA_OK", (rc, res, err)
    params_start = size - pz["compression"]["size"] - 64  # the selftest payload is small: after params
    assert resumes and resumes[-1] > size * 0.3 and resumes[-1] > insp["components"][0]["size"], (resumes, size)
    env.stop(emu)
    st = env.status(port)
    assert st["active"]["seq"] == 1 and st["active"]["digest"] == digest_of(c)
    print("compressed params %d -> %d bytes; killed after %d of %d container bytes, resumed at %d (inside the "
          "frame, which starts near %d); installed the signed image" % (pz["size"], pz["compression"]["size"], acked,
                                                                         size, resumes[-1], params_start))


def case_a_resume_under_another_signature_keeps_the_model_described():
    """The same manifest signed by another key resumes the interrupted upload (a resume matches the manifest's
    digest); the installed model is still described in full (version, exec RAM), although the slot keeps the
    first head."""
    os.environ["SOURCE_DATE_EPOCH"] = "1767225600"  # the same manifest twice, creation time included
    env.run("keygen", "--force", env.p("k2.pem"))
    rel, params = env.model("m", 1024 * 1024)
    c1 = env.pack("c1.mota", rel, params, seq=3, version="3.0.0")
    c2 = env.pack("c2.mota", rel, params, seq=3, version="3.0.0", key="k2.pem")
    assert digest_of(c1) == digest_of(c2) and open(c1, "rb").read() != open(c2, "rb").read()
    two_keys = ("--key", env.p("k2.pub.pem"))
    sim, port = env.sim(*two_keys, "--cut-at-op", "2000")
    rc, events, res, err = env.push(port, c1, "--timeout", "5")  # not a minute of reconnecting to a sim that is gone
    assert sim.wait(timeout=60) == 4 and rc != 0, (sim.returncode, rc, res)  # the power went mid-upload
    sim, port = env.sim(*two_keys, port=int(port.rsplit(":", 1)[1]))
    rc, events, res, err = env.push(port, c2)
    resumes = [e for e in events if e.get("event") == "resume"]
    assert rc == 0 and res["status"] == "MOTA_OK" and resumes, (rc, res, err)
    st = env.status(port)
    assert st["active"]["seq"] == 3 and st["active"]["version"] == "3.0.0", st
    assert st["active"]["exec_ram_used"] > 0, st
    print("resumed at %d under the second key; status: v%s, exec RAM %d"
          % (resumes[-1]["offset"], st["active"]["version"], st["active"]["exec_ram_used"]))


def frame(cmd, payload, seq=1, kind=1, corrupt=False):
    body = struct.pack("<BBHBBH", 1, kind, seq, cmd, 0, len(payload)) + payload
    crc = zlib.crc32(body) ^ (1 if corrupt else 0)
    raw = body + struct.pack("<I", crc)
    out, i = bytearray(), 0
    blocks = raw.split(b"\x00")
    for bi, blk in enumerate(blocks):
        while len(blk) >= 254:
            out += b"\xff" + blk[:254]
            blk = blk[254:]
        out += bytes([len(blk) + 1]) + blk
    return bytes(out) + b"\x00"


def case_malformed_frames_and_floods_do_not_hurt_the_device():
    rel, params = env.model("m", 8 * 1024)
    sim, port = env.sim()
    host, p = port.rsplit(":", 1)
    rnd = random.Random(3)
    s = socket.create_connection((host, int(p)))
    s.settimeout(5)
    junk = [bytes(rnd.randrange(256) for _ in range(4096)) for _ in range(64)]  # 256 KiB of noise
    for j in junk:
        s.sendall(j)
    s.sendall(b"\x01" * 300000)                     # one endless frame
    s.sendall(b"\x00")
    s.sendall(frame(1, b"\x01\x00\x08", corrupt=True))  # bad CRC
    s.sendall(frame(3, b"\x00\x00\x00\x00abcd"))    # DATA before BEGIN
    s.sendall(frame(99, b""))                       # unknown command
    s.sendall(frame(2, b"short"))                   # BEGIN of the wrong size
    s.sendall(frame(11, b"\x00"))                   # INVOKE too short
    s.sendall(frame(1, b"\x07\x00\x08"))            # HELLO, protocol version 7
    for i in range(2000):                           # a flood of requests
        s.sendall(frame(4, b"", seq=i))
    s.sendall(frame(1, b"\x01\x00\x08", seq=4242))  # and finally a proper HELLO
    data = b""
    deadline = time.time() + 30
    while b"" in [b""] and time.time() < deadline:
        try:
            chunk = s.recv(1 << 16)
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
        if struct.pack("<H", 4242) in data and data.endswith(b"\x00") and len(data) > 100000:
            break
    s.close()
    assert sim.poll() is None, "the simulator died"
    st = env.status(port)  # it still answers
    assert "active" in st
    c = env.pack("ok.mota", rel, params, seq=1)
    rc, events, res, err = env.push(port, c)
    assert rc == 0, (res, err)
    print("device alive after 256 KiB of noise, a 300 KB frame, bad frames and 2000 requests; push still works")


def case_push_over_a_pty_like_a_serial_port():
    rel, params = env.model("m", 32 * 1024)
    v1 = env.pack("v1.mota", rel, params, seq=1, version="1.0.0")
    link = env.p("ttyMOTA")
    args = [MOTA, "sim", "--pty", "--pty-link", link, "--key", env.p("k.pub.pem"), "--flash", env.p("sim.flash"),
            "--model", "network", "--dbg-info", "--async"]
    sim, path = env.start(args, r"pty (\S+)")
    assert os.path.realpath(link) == path, (link, path)
    # the pty is opened as a serial device would be: raw mode at the given baud
    r = env.run("push", "--json", "--baud", "921600", "--confirm", link, v1, check=False, timeout=120)
    events = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    res = [e for e in events if e.get("event") == "result"][-1]
    assert r.returncode == 0 and res["status"] == "MOTA_OK" and res["confirmed"], (r.returncode, res, r.stderr)
    assert any(e.get("event") == "progress" for e in events), events
    st = json.loads(env.run("status", "--json", link).stdout)["models"][0]
    assert st["active"]["seq"] == 1 and st["active"]["digest"] == digest_of(v1) and st["active"]["state"] == "confirmed", st
    # a second client on the same pty after the first closed it: the device keeps serving
    inp = env.p("invoke.in")
    open(inp, "wb").write(b"pty")
    out = json.loads(env.run("invoke", "--json", "--input", inp, "--output-size", "16", link).stdout)
    want = hashlib.sha256(b"mota-sim" + b"pty" + struct.pack("<I", 0)).hexdigest()[:32]
    assert out["output"] == want, out
    # one host at a time, as on TCP: a second client while one holds the line is told busy at once
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               "fd = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(30)", link],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    t0 = time.time()
    r = env.run("status", "--json", link, check=False)
    holder.kill()
    holder.wait()
    busy = json.loads(r.stdout)
    assert r.returncode == 5 and busy["status"] == "MOTA_ERR_BUSY" and time.time() - t0 < 2, (r.returncode, busy)
    # a file where the port belongs (a container, /dev/null) is refused at once and left as it was
    v1_bytes = open(v1, "rb").read()
    for wrong in (v1, "/dev/null"):
        r = env.run("push", "--timeout", "5", wrong, v1, check=False)
        assert r.returncode == 3 and "not a serial port or pty" in r.stderr, (wrong, r.returncode, r.stderr)
    assert open(v1, "rb").read() == v1_bytes
    print("pushed and confirmed over %s, then status and invoke on the same pty; a second host is told busy, "
          "a file as the port is refused untouched" % path)


def case_power_cut_over_a_pty_resumes_like_a_usb_device_reset():
    rel, params = env.model("m", 1024 * 1024)
    c = env.pack("big.mota", rel, params, seq=1)
    size = os.path.getsize(c)
    link = env.p("ttyMOTA")
    args = [MOTA, "sim", "--pty", "--pty-link", link, "--key", env.p("k.pub.pem"), "--flash", env.p("sim.flash"),
            "--model", "network", "--dbg-info", "--async"]
    # the device loses power half way through programming the slot
    sim, path1 = env.start(args + ["--cut-at-op", "2200"], r"pty (\S+)")
    import subprocess
    push = subprocess.Popen([MOTA, "push", "--json", "--timeout", "60", link, c],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert sim.wait(timeout=60) == 4, "the simulator did not lose power"
    time.sleep(0.5)  # the port is gone for a while, as a re-enumerating USB device's is
    sim, path2 = env.start(args, r"pty (\S+)")
    out, err = push.communicate(timeout=120)
    events = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    res = [e for e in events if e.get("event") == "result"][-1]
    resumes = [e for e in events if e.get("event") == "resume"]
    assert push.returncode == 0 and res["status"] == "MOTA_OK", (push.returncode, res, err)
    assert resumes and resumes[-1]["offset"] > size * 0.3, resumes
    st = json.loads(env.run("status", "--json", link).stdout)["models"][0]
    assert st["active"]["seq"] == 1 and st["active"]["digest"] == digest_of(c), st
    print("power cut at flash op 2200 on %s; the push reopened %s (now %s) and resumed at %d of %d"
          % (path1, link, path2, resumes[-1]["offset"], size))


def unframe(raw, kinds=(2,)):
    """Responses in a byte stream: [(seq, cmd, status, body)], frames with a bad CRC left out (and, with
    kinds=(2, 3), events too: [(seq, cmd, kind, payload)])."""
    out = []
    for enc in raw.split(b"\x00")[:-1]:
        dec, i = bytearray(), 0
        while i < len(enc):
            code = enc[i]
            dec += enc[i + 1:i + code]
            i += code
            if code < 0xff and i < len(enc):
                dec += b"\x00"
        if len(dec) < 14 or zlib.crc32(dec[:-4]) != struct.unpack("<I", dec[-4:])[0]:
            continue
        _, kind, seq, cmd, _, n = struct.unpack("<BBHBBH", dec[:8])
        if kind not in kinds:
            continue
        if kinds == (2,):
            out.append((seq, cmd, struct.unpack("<h", dec[8:10])[0], bytes(dec[10:8 + n])))
        else:
            out.append((seq, cmd, kind, bytes(dec[8:8 + n])))
    return out


def raw_link(port):
    """A raw connection to the device: (socket, call(cmd, payload, seq) -> the first answer)."""
    host, p = port.rsplit(":", 1)
    s = socket.create_connection((host, int(p)))
    s.settimeout(5)

    def call(cmd, payload, seq):
        s.sendall(frame(cmd, payload, seq=seq))
        data = b""
        while not unframe(data):
            data += s.recv(1 << 16)
        return unframe(data)[0]

    return s, call


def case_a_retried_request_is_answered_again_not_run_twice():
    rel, params = env.model("m", 8 * 1024)
    sim, port = env.sim()
    rc, events, res, err = env.push(port, env.pack("v1.mota", rel, params, seq=1))
    assert rc == 0 and env.status(port)["active"]["state"] == "trial"  # on trial
    s, call = raw_link(port)

    call(1, b"\x01\x00\x08", 1)                      # HELLO
    first = call(7, b"\x00", 2)                        # CONFIRM model 0: its answer "lost"
    again = call(7, b"\x00", 2)                        # the host's retry, same seq
    assert first[2] == 0 and again == first, (first, again)
    other = call(7, b"\x01", 2)                        # same seq, other payload: a new request
    assert other[2] != 0, other
    fresh = call(7, b"\x00", 3)                        # a new CONFIRM: nothing on trial any more
    assert fresh[2] == -811 and b"no model on trial" in fresh[3], fresh
    st = call(4, b"", 4)
    s.close()
    import cbor2
    counters = cbor2.loads(st[3])[2]
    assert counters[5] == 1, counters                 # one answer replayed
    st = env.status(port)
    assert st["active"]["seq"] == 1 and st["active"]["state"] == "confirmed", st
    print("a retried CONFIRM got the first answer again; a new one was refused with MOTA_ERR_NOT_TESTING")


def case_a_head_larger_than_the_device_takes_is_refused_before_anything_is_sent():
    rel, params = env.model("m", 8 * 1024)
    v1 = env.pack("v1.mota", rel, params, seq=1, version="1.0.0")
    head = len(cbor2_head(v1))
    sim, port = env.sim("--head-buffer", str(head - 1))
    # mota push reads the device's head buffer in HELLO and sends nothing
    rc, events, res, err = env.push(port, v1)
    assert rc == 1 and res["status"] == "MOTA_ERR_ENV_TOO_LARGE", (res, err)
    assert "container head of %d bytes; the device takes at most %d" % (head, head - 1) in res["detail"], res
    st = env.status(port)
    assert st["active"] is None and st["upload"] is None, st  # no model, no upload begun
    # a host that sends it anyway: the device refuses it at its head, before any erase
    s, call = raw_link(port)
    data = open(v1, "rb").read()

    call(1, b"\x01\x00\x04", 1)
    digest = bytes.fromhex(digest_of(v1))
    assert call(2, struct.pack("<I", len(data)) + digest, 2)[2] == 0
    answers = [call(3, struct.pack("<I", off) + data[off:off + 512], 3 + i)
               for i, off in enumerate(range(0, head + 512, 512))]
    assert answers[-1][2] == -204, answers            # MOTA_ERR_ENV_TOO_LARGE
    s.close()
    st = env.status(port)
    assert st["active"] is None and st["last_error"] is None and st["upload"] is None, st
    sim_log = env.stop(sim)
    # and the same device with one byte more takes it
    sim, port = env.sim("--head-buffer", str(head), flash="sim2.flash")
    rc, events, res, err = env.push(port, v1)
    assert rc == 0 and res["status"] == "MOTA_OK", (res, err, sim_log)
    print("a %d-byte head was refused by a device with a %d-byte head buffer (by push, and by the device "
          "when sent anyway); one byte more and it installs" % (head, head - 1))


def key_id(pub_pem):
    """A key's id, computed here: the first 16 bytes of SHA-256 of its uncompressed public point."""
    from cryptography.hazmat.primitives import serialization
    key = serialization.load_pem_public_key(open(env.p(pub_pem), "rb").read())
    point = key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return hashlib.sha256(point).hexdigest()[:32]


def ids(vendor, cls):
    """The device's vendor and class ids: UUIDv5 of the vendor's domain, and of the class under it."""
    import uuid
    v = uuid.uuid5(uuid.NAMESPACE_DNS, vendor)
    return str(v), str(uuid.uuid5(v, cls))


def case_refusals_name_the_facts_a_user_needs():
    rel, params = env.model("m", 8 * 1024)
    env.run("keygen", env.p("k2.pem"))
    trusted, stranger = key_id("k.pub.pem"), key_id("k2.pub.pem")
    vendor, cls = ids("example.com", "mota-sim")
    sim, port = env.sim()
    # each refusal's detail says what the device has and what the container says
    rc, _, res, err = env.push(port, env.pack("v.mota", rel, params, vendor="example.org"))
    assert rc == 1 and res["status"] == "MOTA_ERR_VENDOR_MISMATCH", (rc, res, err)
    # the device's ids, with the names beside them that it and the container keep
    assert res["detail"] == "vendor: device example.com (id %s), container example.org (id %s); pack --vendor " \
        "example.com" % (vendor, ids("example.org", "mota-sim")[0]), res
    rc, _, res, err = env.push(port, env.pack("c.mota", rel, params, cls="other-board"))
    assert res["status"] == "MOTA_ERR_CLASS_MISMATCH", (rc, res, err)
    assert res["detail"] == "class: device mota-sim (id %s), container other-board (id %s); pack --class " \
        "mota-sim" % (cls, ids("example.com", "other-board")[1]), res
    rc, _, res, err = env.push(port, env.pack("k.mota", rel, params, key="k2.pem"))
    assert res["status"] == "MOTA_ERR_KEY_UNKNOWN", (rc, res, err)
    assert res["detail"] == "key_id: device %s, model %s" % (trusted, stranger), res
    # the self-test: its output (the manifest holds only the expected output's digest: its first 8 bytes)
    bad = env.pack("bad.mota", rel, params, seq=3, selftest="fail")
    rc, _, res, err = env.push(port, bad)
    expected = open(bad + ".out", "rb").read()
    produced = bytes([expected[0] ^ 0xFF]) + expected[1:]
    assert res["status"] == "MOTA_ERR_SELFTEST_OUTPUT", (rc, res, err)
    assert res["detail"] == "output_sha256: device %s, model %s" % (
        hashlib.sha256(produced).hexdigest()[:16], hashlib.sha256(expected).hexdigest()[:16]), res
    # the last error says when: in this boot, at most the uptime STATUS reports
    full = json.loads(env.run("status", "--json", "tcp:" + port).stdout)
    e = full["models"][0]["last_error"]
    assert e["code"] == -807 and e["this_boot"] is True and 0 < e["at_ms"] <= full["device"]["uptime_ms"], full
    # anti-rollback: the committed number and the offered one
    rc, _, res, err = env.push(port, env.pack("v5.mota", rel, params, seq=5), "--confirm")
    assert rc == 0 and res["confirmed"], (rc, res, err)
    m = env.status(port)
    assert m["last_error"] is None, m  # a later install and confirm: nothing stale
    rc, _, res, err = env.push(port, env.pack("v4.mota", rel, params, seq=4))
    assert res["status"] == "MOTA_ERR_ROLLBACK" and res["detail"] == "seq: device 5, model 4", (rc, res, err)
    # latency over its budget, as the device measured it
    env.stop(sim)
    sim, port = env.sim("--selftest", "slow")
    rc, _, res, err = env.push(port, env.pack("v6.mota", rel, params, seq=6))
    assert res["status"] == "MOTA_ERR_SELFTEST_SLOW", (rc, res, err)
    assert res["detail"] == "latency_us: device 10000000, model 100000", res
    # an error read back from the journal is of an earlier boot: no time
    env.run("reboot", "tcp:" + port)
    time.sleep(0.3)
    m = env.status(port)
    assert m["last_error"]["code"] == -808 and m["last_error"]["this_boot"] is False, m
    assert m["last_error"]["at_ms"] is None, m
    print("vendor, class, key, self-test output, anti-rollback and latency refusals name both sides; "
          "the last error says when, and a later install clears it")


def case_rollback_removes_a_first_model_on_trial_and_status_names_the_previous_one():
    rel, params = env.model("m", 8 * 1024)
    v1 = env.pack("v1.mota", rel, params, seq=1, version="1.0.0")
    sim, port = env.sim()
    rc, _, res, err = env.push(port, v1)
    assert rc == 0 and env.status(port)["active"]["state"] == "trial", (rc, res, err)
    # the first model on trial has nothing before it: a rollback removes it, as its trial's expiry would
    r = env.run("rollback", "tcp:" + port, check=False)
    assert r.returncode == 0, (r.returncode, r.stderr)
    m = env.status(port)
    assert m["active"] is None and m["last_error"] is None and m["previous"] is None, m
    rc, _, res, err = env.push(port, v1, "--confirm")
    assert rc == 0, (rc, res, err)
    # a confirmed first model is all there is
    r = env.run("rollback", "tcp:" + port, check=False)
    assert r.returncode == 1 and "MOTA_ERR_NOT_TESTING" in r.stderr, (r.returncode, r.stderr)
    # with v2 on trial, v1 in the other slot is what a rollback brings back (key 15), in HELLO and STATUS
    v2 = env.pack("v2.mota", rel, params, seq=2, version="2.0.0")
    rc, _, res, err = env.push(port, v2)
    assert rc == 0, (rc, res, err)
    full = json.loads(env.run("status", "--json", "tcp:" + port).stdout)
    m = full["models"][0]
    assert m["previous"] == {"seq": 1, "version": "1.0.0", "digest": digest_of(v1), "slot": 1 - m["active"]["slot"]}, m
    assert m["active"]["seq"] == 2 and m["active"]["state"] == "trial", m
    assert "previous:  seq 1 v1.0.0" in env.run("status", "tcp:" + port).stdout
    # an update erases that slot: the device no longer offers it
    env.run("confirm", "tcp:" + port)
    assert env.status(port)["previous"]["seq"] == 1
    rc, _, res, err = env.push(port, env.pack("v3.mota", rel, params, seq=3, selftest="fail"))
    assert rc == 1, (rc, res, err)
    m = env.status(port)
    assert m["previous"] is None and m["active"]["seq"] == 2, m
    print("rollback removed a first model on trial; status named v1 as what a rollback of v2 brings back, "
          "and stopped naming it once an update had erased its slot")


def case_validate_compares_every_output_with_its_reference_and_times_the_runs():
    rel, params = env.model("m", 8 * 1024)
    sim, port = env.sim()
    rc, _, res, err = env.push(port, env.pack("v1.mota", rel, params, seq=1), "--confirm")
    assert rc == 0, (rc, res, err)
    ins, refs = env.p("in"), env.p("ref")
    os.makedirs(ins)
    os.makedirs(refs)
    rnd = random.Random(3)
    for i in range(12):  # outputs of 3000 bytes: larger than a frame, through the I/O buffer
        name = "sample%02d.bin" % i
        open(os.path.join(ins, name), "wb").write(bytes(rnd.randrange(256) for _ in range(100 + i)))
        env.run("sim-output", "--input", os.path.join(ins, name), "3000", os.path.join(refs, name))
    tcp = "tcp:" + port
    j = json.loads(env.run("validate", "--json", "--inputs", ins, "--outputs", refs, tcp).stdout)
    assert j["status"] == "MOTA_OK" and j["samples"] == 12 and j["errors"]["exact"] == 12, j
    assert j["errors"]["max_abs"] == 0 and j["errors"]["cosine"] == 1 and j["errors"]["top1_agree"] == 12, j
    lat = j["latency_us"]
    assert 0 < lat["min"] <= lat["median"] <= lat["max"], lat
    assert j["errors"]["worst"] is None, j  # nothing is off
    # strict JSON whatever the numbers: a NaN in a float32 reference is null, never a bare nan; 1e-9 stays 1e-9
    strict = lambda text: json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))  # noqa: E731
    nan_refs = env.p("ref_nan")
    os.makedirs(nan_refs)
    for name in os.listdir(refs):
        b = bytearray(open(os.path.join(refs, name), "rb").read())
        if name == "sample03.bin":
            b[0:4] = struct.pack("<f", float("nan"))
        open(os.path.join(nan_refs, name), "wb").write(b)
    r = env.run("validate", "--json", "--dtype", "float32", "--tolerance", "1e-9", "--inputs", ins, "--outputs",
                nan_refs, tcp, check=False)
    j = strict(r.stdout)
    assert r.returncode == 1 and j["errors"]["max_abs"] is None and j["tolerance"] == 1e-9, j
    # nothing measured (the device not reached): no metric, rather than a perfect one
    r = env.run("validate", "--json", "--inputs", ins, "--outputs", refs, "tcp:127.0.0.1:1", check=False)
    j = strict(r.stdout)
    assert r.returncode == 3 and j["samples"] == 0 and j["errors"]["cosine"] is None and j["errors"]["rmse"] is None \
        and j["latency_us"]["min"] is None, j
    # one reference off by 3 in one int8 element: refused at tolerance 0, named, and accepted at 3
    p = os.path.join(refs, "sample07.bin")
    b = bytearray(open(p, "rb").read())
    b[100] = (b[100] + 3) & 0xFF if b[100] < 0x7D or b[100] >= 0x80 else b[100] - 3
    open(p, "wb").write(b)
    r = env.run("validate", "--json", "--inputs", ins, "--outputs", refs, tcp, check=False)
    j = json.loads(r.stdout)
    assert r.returncode == 1 and j["status"] == "MOTA_ERR_VALIDATE_MISMATCH", (r.returncode, j)
    assert j["errors"]["max_abs"] == 3 and j["errors"]["exact"] == 11 and j["errors"]["worst"] == "sample07.bin", j
    assert "sample07.bin, off by 3" in r.stderr, r.stderr
    text = env.run("validate", "--tolerance", "3", "--inputs", ins, "--outputs", refs, tcp).stdout
    assert "max |e| 3" in text and "11 exact" in text and "latency: min" in text, text
    # a missing reference and a reference of no whole element are the user's mistakes
    os.unlink(os.path.join(refs, "sample11.bin"))
    assert env.run("validate", "--inputs", ins, "--outputs", refs, tcp, check=False).returncode == 3
    print("validate: 12 outputs of 3000 bytes equal to their references; one off by 3 is named and refused at "
          "tolerance 0, accepted at 3; latency min/median/max %d/%d/%d us" % (lat["min"], lat["median"], lat["max"]))


def case_invoke_moves_inputs_and_outputs_larger_than_a_frame():
    rel, params = env.model("m", 8 * 1024)
    sim, port = env.sim()
    rc, _, res, err = env.push(port, env.pack("v1.mota", rel, params, seq=1), "--confirm")
    assert rc == 0, (rc, res, err)
    inp = env.p("big.in")
    data = bytes(random.Random(5).randrange(256) for _ in range(5000))
    open(inp, "wb").write(data)
    out = json.loads(env.run("invoke", "--json", "--input", inp, "--output-size", "65536", "-o", env.p("big.out"),
                             "tcp:" + port).stdout)
    want = b"".join(hashlib.sha256(b"mota-sim" + data + struct.pack("<I", i)).digest() for i in range(2048))
    assert bytes.fromhex(out["output"]) == want and open(env.p("big.out"), "rb").read() == want
    # larger than the device's I/O buffer (HELLO key 12): refused, with the sizes
    io = json.loads(env.run("status", "--json", "tcp:" + port).stdout)["device"]["io_buffer"]
    r = env.run("invoke", "--input", inp, "--output-size", str(io), "tcp:" + port, check=False)
    assert r.returncode == 1 and "MOTA_ERR_PROTO_IO_SIZE" in r.stderr and str(io) in r.stderr, r.stderr
    # the commands themselves: a window before any run, a gap in the input
    s, call = raw_link(port)
    call(1, b"\x01\x00\x04", 1)
    assert call(14, struct.pack("<IH", 0, 64), 2)[2] == -908      # OUTPUT: nothing held
    assert call(12, struct.pack("<I", 0) + data[:1000], 3)[2] == 0
    gap = call(12, struct.pack("<I", 2000) + data[:10], 4)          # INPUT past what is held
    assert gap[2] == -805 and gap[3] == struct.pack("<II", 1000, 2000), gap
    run = call(13, b"\x00" + struct.pack("<I", 100), 5)
    assert run[2] == 0 and struct.unpack("<I", run[3][4:8])[0] == 100, run
    window = call(14, struct.pack("<IH", 96, 64), 6)                 # the last 4 bytes
    expect = b"".join(hashlib.sha256(b"mota-sim" + data[:1000] + struct.pack("<I", i)).digest() for i in range(4))
    assert window[2] == 0 and window[3] == expect[96:100], window
    s.close()
    print("invoke: a 5000-byte input and a 65536-byte output through the I/O buffer match the simulation; "
          "beyond the buffer it is refused with the sizes")


def case_the_device_announces_each_step_after_the_last_byte():
    rel, params = env.model("m", 16 * 1024)
    c = env.pack("v1.mota", rel, params, seq=1)
    sim, port = env.sim()
    data = open(c, "rb").read()
    host, p = port.rsplit(":", 1)
    s = socket.create_connection((host, int(p)))
    s.settimeout(10)
    s.sendall(frame(1, b"\x01\x00\x04", seq=1))
    s.sendall(frame(2, struct.pack("<I", len(data)) + bytes.fromhex(digest_of(c)), seq=2))
    seq, frames = 3, []
    for off in range(0, len(data), 1000):
        s.sendall(frame(3, struct.pack("<I", off) + data[off:off + 1000], seq=seq))
        seq += 1
    last = seq - 1
    raw = b""
    while not any(f[0] == last and f[2] == 2 for f in frames):
        raw += s.recv(1 << 16)
        frames = unframe(raw, kinds=(2, 3))
    s.close()
    events = [f for f in frames if f[2] == 3]
    # about the last DATA request, before its answer: verify, install, self-test, commit
    assert [(f[0], f[1]) for f in events] == [(last, 3)] * 4, events
    assert [struct.unpack("<BII", f[3]) for f in events] == [(ph, len(data), 0) for ph in (1, 2, 3, 4)], events
    answer = [f for f in frames if f[2] == 2 and f[0] == last][0]
    assert frames.index(answer) > frames.index(events[-1]) and answer[3][2:6] == struct.pack("<I", len(data))
    # and mota push, which matches answers by seq, takes them in its stride
    env.run("confirm", "tcp:" + port)
    rc, ev, res, err = env.push(port, env.pack("v2.mota", rel, params, seq=2))
    assert rc == 0 and res["status"] == "MOTA_OK", (rc, res, err)
    # its events say 100% once, before the first phase: the device has every byte when it names one
    kinds = [e.get("event") if e.get("event") != "progress" or e["offset"] < e["total"] else "100%" for e in ev]
    assert kinds.count("100%") == 1 and kinds.index("100%") < kinds.index("phase"), kinds
    env.run("confirm", "tcp:" + port)
    r = env.run("push", "tcp:" + port, env.pack("v3.mota", rel, params, seq=3))  # lines, not a terminal
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith(("progress:", "device:"))]
    assert lines[-4:] == ["device: " + ph for ph in ("verify", "install", "selftest", "commit")], lines
    assert sum("(100%)" in ln for ln in lines) == 1 and "(100%)" in lines[-5], lines
    print("the last DATA frame got 4 events (verify, install, self-test, commit) before its answer; push says "
          "100%% once, then the phases")


def cbor2_head(container):
    """The container's head: everything up to the end of the manifest."""
    import cbor2
    data = open(container, "rb").read()
    env_ = cbor2.loads(data).value
    return data[:data.index(env_[3]) + len(env_[3])]


def main():
    try:
        globals()["case_" + CASE]()
    finally:
        env.close()
    print("PASS " + CASE)


if __name__ == "__main__":
    main()
