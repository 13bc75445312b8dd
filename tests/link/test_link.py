#!/usr/bin/python3
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
    assert st["6"] and st["7"] == 1 and st["9"] == "1.0.0" and st["10"][2] is False, st
    assert st["8"] == digest_of(v1)
    # v2's self-test fails on the device: refused, v1 stays, the reason is kept
    rc, events, res, err = env.push(port, v2)
    assert rc == 1 and res["status"] == "MOTA_ERR_SELFTEST_OUTPUT" and res["installed"] is False, (rc, res, err)
    st = env.status(port)
    assert st["7"] == 1 and st["4"] == -807 and st["8"] == digest_of(v1), st
    # a later client still reads why: the device's recent errors outlive the connection
    errs = json.loads(env.run("status", "--json", "tcp:" + port).stdout)["errors"]
    assert [(e["name"], e["model"]) for e in errs] == [("MOTA_ERR_SELFTEST_OUTPUT", "network")], errs
    text = env.run("status", "tcp:" + port).stdout
    assert "recent errors" in text and "MOTA_ERR_SELFTEST_OUTPUT (-807) model network" in text, text
    # a model on trial, then a confirm and a reboot
    v3 = env.pack("v3.mota", rel, params, seq=3, version="3.0.0")
    rc, events, res, err = env.push(port, v3)
    assert rc == 0 and env.status(port)["10"][2] is True
    env.run("confirm", "tcp:" + port)
    env.run("reboot", "tcp:" + port)
    time.sleep(0.3)
    st = env.status(port)
    assert st["7"] == 3 and st["10"][2] is False and st["3"] == 3, st
    assert json.loads(env.run("status", "--json", "tcp:" + port).stdout)["errors"] == []  # a reboot clears them
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
            assert st["7"] == seq and st["8"] == digest_of(c) and st["10"][2] is False, (name, st)
        else:
            # failed with a reason: the device still runs a verified model
            assert res.get("status", "").startswith("MOTA_ERR"), (name, rc, res, err)
            assert st["6"], (name, st)
        print("%-11s rc %d %s; emulator %s" % (name, rc, res.get("status"), counters.strip()))
        assert rc == 0, "%s: the transfer did not complete: %s" % (name, err)
        seq += 1
    # the device side corrupts bytes itself too
    env.stop(sim)
    sim, port = env.sim("--corrupt-rate", "0.0005", "--seed", "7")
    c = env.pack("dev.mota", rel, params, seq=seq)
    rc, events, res, err = env.push(port, c, "--confirm", timeout=180)
    assert rc == 0 and env.status(port)["7"] == seq, (rc, res, err)
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
    assert st["7"] == 2 and st["8"] == digest_of(c2) and st["10"][2] is False, st
    print("7 answers lost (3 BEGIN, 4 CONFIRM): reconnected once, confirmed; %s" % json.dumps(counters))


def case_simulator_restart_resumes_from_the_persisted_offset():
    rel, params = env.model("m", 1024 * 1024)
    c = env.pack("big.mota", rel, params, seq=1)
    size = os.path.getsize(c)
    sim, port = env.sim()
    sport = int(port.rsplit(":", 1)[1])
    emu, eport = env.emu(port, "--baud", "3000000")  # ~300 KB/s: time to pull the plug
    import subprocess
    push = subprocess.Popen([MOTA, "push", "--json", "--timeout", "60", "tcp:" + eport, c],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    acked = 0
    while acked < size * 0.5:
        line = push.stdout.readline()
        if not line:
            break
        e = json.loads(line)
        if e.get("event") == "progress":
            acked = e["offset"]
    sim.kill()  # power off, mid-transfer
    sim.wait()
    cut_at = acked
    time.sleep(0.5)
    sim, _ = env.sim(port=sport)
    out, err = push.communicate(timeout=120)
    events = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    res = [e for e in events if e.get("event") == "result"][-1]
    resumes = [e for e in events if e.get("event") == "resume"]
    assert push.returncode == 0 and res["status"] == "MOTA_OK", (push.returncode, res, err)
    assert resumes and resumes[-1]["offset"] > size * 0.3, (resumes, cut_at)
    counters = json.loads(env.stop(emu).strip().splitlines()[-1])
    assert counters["bytes_to_device"] < size * 1.6, counters
    st = env.status(port)
    assert st["7"] == 1 and st["8"] == digest_of(c)
    print("killed the simulator after %d of %d bytes; it resumed at %d; %d bytes crossed the link in all"
          % (cut_at, size, resumes[-1]["offset"], counters["bytes_to_device"]))


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
    assert "6" in st
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
    st = json.loads(env.run("status", "--json", link).stdout)["status"]["1"][0]
    assert st["7"] == 1 and st["8"] == digest_of(v1) and st["10"][2] is False, st
    # a second client on the same pty after the first closed it: the device keeps serving
    inp = env.p("invoke.in")
    open(inp, "wb").write(b"pty")
    out = json.loads(env.run("invoke", "--json", "--input", inp, "--output-size", "16", link).stdout)
    want = hashlib.sha256(b"mota-sim" + b"pty" + struct.pack("<I", 0)).hexdigest()[:32]
    assert out["output"] == want, out
    print("pushed and confirmed over %s, then status and invoke on the same pty" % path)


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
    st = json.loads(env.run("status", "--json", link).stdout)["status"]["1"][0]
    assert st["7"] == 1 and st["8"] == digest_of(c), st
    print("power cut at flash op 2200 on %s; the push reopened %s (now %s) and resumed at %d of %d"
          % (path1, link, path2, resumes[-1]["offset"], size))


def unframe(raw):
    """Responses in a byte stream: [(seq, cmd, status, body)], frames with a bad CRC left out."""
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
        out.append((seq, cmd, struct.unpack("<h", dec[8:10])[0], bytes(dec[10:8 + n])))
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
    assert rc == 0 and env.status(port)["10"][2] is True  # on trial
    s, call = raw_link(port)

    call(1, b"\x01\x00\x08", 1)                      # HELLO
    first = call(7, b"\x00", 2)                        # CONFIRM model 0: its answer "lost"
    again = call(7, b"\x00", 2)                        # the host's retry, same seq
    assert first[2] == 0 and again == first, (first, again)
    other = call(7, b"\x01", 2)                        # same seq, other payload: a new request
    assert other[2] != 0, other
    fresh = call(7, b"\x00", 3)                        # a new CONFIRM: nothing on trial any more
    assert fresh[2] == -811 and b"nothing to confirm" in fresh[3], fresh
    st = call(4, b"", 4)
    s.close()
    import cbor2
    counters = cbor2.loads(st[3])[2]
    assert counters[5] == 1, counters                 # one answer replayed
    st = env.status(port)
    assert st["7"] == 1 and st["10"][2] is False, st
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
    assert st["6"] is False and st["5"][0] == 0, st   # no model, no upload begun
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
    assert st["6"] is False and st["4"] == 0 and st["5"][0] == 0, st
    sim_log = env.stop(sim)
    # and the same device with one byte more takes it
    sim, port = env.sim("--head-buffer", str(head), flash="sim2.flash")
    rc, events, res, err = env.push(port, v1)
    assert rc == 0 and res["status"] == "MOTA_OK", (res, err, sim_log)
    print("a %d-byte head was refused by a device with a %d-byte head buffer (by push, and by the device "
          "when sent anyway); one byte more and it installs" % (head, head - 1))


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
