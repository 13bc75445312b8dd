#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mota sim as a stand-in for real boards, and as a shared CI service.

usage: test_sim.py MOTA WORK FIXTURES_DIR SOURCE_DIR CASE
Exit 0 pass, 1 fail, 77 skipped (a fixture or the cross compiler is absent: prints SKIPPED).
"""
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Env, PY, Skip, cobs_encode, run_case  # noqa: E402

MOTA, WORK, FIXTURES, SRC, CASE = sys.argv[1:6]
YOLO = os.path.join(FIXTURES, "st-n6", "yolov8n_network_rel.bin")


def sim(env, *args, flash="sim.flash"):
    """mota sim with exactly these profile options; stderr kept for client_gone()."""
    if os.path.exists(env.p(flash)):
        os.unlink(env.p(flash))
    a = [env.mota, "sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem"), "--flash", env.p(flash), *args]
    return env.start(a, r"listening on tcp:(\S+)")


def frame(cmd, seq, payload=b""):
    """A request frame as docs/protocol.md lays it out."""
    import struct
    import zlib
    body = struct.pack("<BBHBBH", 1, 1, seq, cmd, 0, len(payload)) + payload
    return cobs_encode(body + struct.pack("<I", zlib.crc32(body))) + b"\0"


def stop_and_log(proc):
    """Stop a sim; its stderr."""
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err


def flash_used(log):
    """Erases and programs the sim made while each client was connected."""
    return [(int(e), int(p)) for e, p in re.findall(r"client gone; flash while it was connected: (\d+) erases, "
                                                      r"(\d+) programs", log)]


def need(path):
    if not os.path.exists(path):
        raise Skip("%s is absent" % path)


def case_real_n6_model_installs_on_its_board_profile_and_is_refused_one_field_at_a_time():
    need(YOLO)
    env = Env(MOTA, WORK)
    try:
        c = env.pack("y.mota", YOLO, seq=7, selftest=None)
        proc, port = sim(env, "--profile", "stm32n6570-dk")
        rc, _, res, err = env.push(port, c, "--confirm")
        assert rc == 0 and res["status"] == "MOTA_OK" and res["installed"] and res["confirmed"], (rc, res, err)
        st = json.loads(env.run("status", "--json", "tcp:" + port).stdout)
        prof = st["profile"]
        assert prof["name"] == "stm32n6570-dk" and prof["cpu_part"] == 0xD22 and prof["ll_aton_version"] == "1.1.1", prof
        assert prof["dbg_info"] and prof["async"] and prof["secure"] and prof["families"] == ["npu"], prof
        m = st["models"][0]
        assert m["active"] and m["active"]["seq"] == 7 and m["active"]["state"] == "confirmed", m  # installed, confirmed
        assert m["memory"] == {"exec_ram": 1 << 20, "ext_ram": 32 << 20}, m  # the board's exec and external RAM
        text = env.run("status", "tcp:" + port).stdout
        assert "profile stm32n6570-dk: Cortex-M55 (0xD22)" in text and "LL_ATON 1.1.1" in text, text
        stop_and_log(proc)

        # one field at a time: refused at the head, before any erase, with both values
        cases = [
            (["--cpu", "0xC27"], "MOTA_ERR_COMPAT_CPU", "cpu_part: device 0xc27, model 0xd22"),
            (["--no-fpu"], "MOTA_ERR_COMPAT_FPU", "fpu: device 0x0, model 0x1"),
            (["--float-abi", "soft"], "MOTA_ERR_COMPAT_FLOAT_ABI", "float_abi: device 0x0, model 0x2"),
            (["--non-secure"], "MOTA_ERR_COMPAT_SECURE", "secure: device 0x0, model 0x1"),
            (["--ll-aton", "1.1.0"], "MOTA_ERR_COMPAT_LL_ATON", "ll_aton_version: device 0x10100, model 0x10101"),
            (["--no-dbg-info"], "MOTA_ERR_COMPAT_DBG_INFO", "dbg_info: device 0x0, model 0x1"),
            (["--no-async"], "MOTA_ERR_COMPAT_ASYNC", "async: device 0x0, model 0x1"),
            (["--struct-sizes", "0x3030"], "MOTA_ERR_COMPAT_STRUCT_SIZES", "struct_sizes: device 0x3030, model 0x3038"),
            (["--ext-ram", "3011680"], "MOTA_ERR_COMPAT_EXT_RAM", "ext_ram: device 0x2df460, model 0x2df468"),
            (["--exec-ram", "249632"], "MOTA_ERR_COMPAT_EXEC_RAM", "exec_ram: device 0x3cf20, model 0x3cf28"),
            (["--family", "legacy"], "MOTA_ERR_COMPAT_FAMILY", "reloc_families: device 0x4, model 0x100"),
        ]
        for extra, reason, detail in cases:
            proc, port = sim(env, "--profile", "stm32n6570-dk", *extra)
            rc, _, res, err = env.push(port, c, "--timeout", "20")
            log = stop_and_log(proc)
            assert rc == 1 and res["status"] == reason and not res["installed"], (extra, rc, res, err)
            assert res["detail"] == detail, (extra, res["detail"])
            used = flash_used(log)
            assert used and used[0][0] == 0, (extra, "erased before refusing", log)

        # --like: a profile made from the model accepts it
        proc, port = sim(env, "--like", YOLO)
        rc, _, res, err = env.push(port, c)
        assert rc == 0 and res["installed"], (rc, res, err)
        stop_and_log(proc)
        # a model whose activation pool sits where the simulated external RAM would: the external RAM moves
        import struct
        d = bytearray(open(YOLO, "rb").read())
        at = d.find(struct.pack("<III", 0x03020200, 0, 0x34200000))
        assert at > 0 and d.count(struct.pack("<III", 0x03020200, 0, 0x34200000)) == 1
        struct.pack_into("<I", d, at + 8, 0x90000000)
        moved = env.p("moved_rel.bin")
        open(moved, "wb").write(d)
        proc, port = sim(env, "--like", moved)
        c2 = env.pack("moved.mota", moved, seq=8, selftest=None)
        rc, _, res, err = env.push(port, c2)
        assert rc == 0 and res["installed"], (rc, res, err)
        stop_and_log(proc)
    finally:
        env.close()


def build_legacy(env):
    if shutil.which("arm-none-eabi-gcc") is None:
        raise Skip("arm-none-eabi-gcc is absent")
    gen = env.p("gen")
    subprocess.run([PY, os.path.join(SRC, "tests", "models", "gen_weights.py"), "dense", gen], check=True)
    srcs = [os.path.join(SRC, "tests", "models", "dense.c"), os.path.join(gen, "dense_weights.c")]
    rel = env.p("legacy_m33.bin")
    env.run("build-model", "--family", "legacy", "--cpu", "cortex-m33", "-o", rel, *srcs)
    return rel


def case_a_legacy_model_goes_through_a_legacy_profile_and_not_an_npu_one():
    env = Env(MOTA, WORK)
    try:
        rel = build_legacy(env)
        c = env.pack("l.mota", rel, seq=3)  # with a self-test the simulated inference passes
        proc, port = sim(env, "--profile", "b-u585i-iot02a", "--model", "dense")
        rc, _, res, err = env.push(port, c, "--confirm")
        assert rc == 0 and res["installed"] and res["confirmed"], (rc, res, err)
        st = json.loads(env.run("status", "--json", "tcp:" + port).stdout)
        assert st["profile"]["name"] == "b-u585i-iot02a" and "legacy" in st["profile"]["families"], st["profile"]
        assert not st["profile"]["secure"] and st["profile"]["ll_aton_version"] is None, st["profile"]
        stop_and_log(proc)
        # a Cortex-M33 model on the N6 board: no legacy runtime there
        proc, port = sim(env, "--profile", "stm32n6570-dk", "--model", "dense")
        rc, _, res, err = env.push(port, c)
        stop_and_log(proc)
        assert rc == 1 and res["status"] == "MOTA_ERR_COMPAT_FAMILY", (rc, res, err)
        assert res["detail"] == "reloc_families: device 0x100, model 0x4", res
        # on the Cortex-M7 board: the CPU differs
        proc, port = sim(env, "--profile", "stm32h747i-disco", "--model", "dense")
        rc, _, res, err = env.push(port, c)
        stop_and_log(proc)
        assert rc == 1 and res["status"] == "MOTA_ERR_COMPAT_CPU", (rc, res, err)
        # --like, and the legacy family turned off by an explicit option over the profile
        proc, port = sim(env, "--like", rel, "--model", "dense")
        rc, _, res, err = env.push(port, c)
        stop_and_log(proc)
        assert rc == 0 and res["installed"], (rc, res, err)
        proc, port = sim(env, "--profile", "b-u585i-iot02a", "--family", "npu", "--model", "dense")
        rc, _, res, err = env.push(port, c)
        stop_and_log(proc)
        assert rc == 1 and res["status"] == "MOTA_ERR_COMPAT_FAMILY", (rc, res, err)
    finally:
        env.close()


def case_profiles_are_listed_and_bad_profile_options_are_usage_errors():
    env = Env(MOTA, WORK)
    try:
        r = env.run("sim", "--list-profiles")
        for name in ("stm32n6570-dk", "stm32h747i-disco", "b-u585i-iot02a", "nucleo-f401re", "an547", "an505", "an386",
                     "an500"):
            assert re.search(r"^%s " % name, r.stdout, re.M), (name, r.stdout)
        base = ["sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem"), "--flash", env.p("x.flash")]
        for bad in (["--profile", "stm32n6570"], ["--family", "npu6"], ["--float-abi", "hardish"],
                    ["--ll-aton", "1.1"], ["--profile", "an547", "--like", env.p("k.pem")], ["--params", "x"]):
            r = env.run(*base, *bad, check=False, timeout=10)
            assert r.returncode == 2 and "mota: error:" in r.stderr, (bad, r.returncode, r.stderr)
        r = env.run(*base, "--like", env.p("k.pem"), check=False, timeout=10)
        assert r.returncode == 1 and "MOTA_ERR_NBIN_MAGIC" in r.stderr, r.stderr
    finally:
        env.close()


def case_an_idle_client_is_dropped_and_a_second_one_is_told_busy():
    env = Env(MOTA, WORK)
    try:
        proc, port = sim(env, "--idle-timeout", "3")
        host, p = port.rsplit(":", 1)
        idle = socket.create_connection((host, int(p)))
        connected = time.time()
        time.sleep(0.3)
        for cmd in (["status"], ["push", "--json"]):
            args = ["--timeout", "10", "tcp:" + port] + ([env.pack("b.mota", *env.model("b", 4096))]
                                                           if cmd[0] == "push" else [])
            t = time.time()
            r = env.run(*cmd, *args, check=False, timeout=30)
            took = time.time() - t
            assert r.returncode == 5 and "MOTA_ERR_BUSY" in r.stderr + r.stdout, (cmd, r.returncode, r.stderr)
            assert took < 2.5, (cmd, "busy took", took)
        # the silent client loses the device after the idle timeout; the next one gets it
        idle.settimeout(10)
        assert idle.recv(1) == b"", "the idle client was not dropped"
        assert 2.5 < time.time() - connected < 8, time.time() - connected
        r = env.run("status", "--timeout", "10", "tcp:" + port, check=False, timeout=30)
        assert r.returncode == 0, r.stderr
        # clients that take turns never see each other as busy (a push reconnecting after its link broke)
        for i in range(40):
            r = env.run("status", "--timeout", "10", "tcp:" + port, check=False, timeout=30)
            assert r.returncode == 0, (i, r.returncode, r.stderr)
        # a client that sends requests and never reads its answers: dropped once the answers stall
        hog = socket.create_connection((host, int(p)))
        status_req = frame(4, 7)
        hog.setblocking(False)
        t = time.time()
        while time.time() - t < 8:
            try:
                hog.send(status_req * 64)
            except (BlockingIOError, OSError):
                time.sleep(0.05)
        r = env.run("status", "--timeout", "10", "tcp:" + port, check=False, timeout=30)
        hog.close()
        assert r.returncode == 0, ("a client that never reads wedged the simulator", r.returncode, r.stderr)
        log = stop_and_log(proc)
        assert "dropping a client silent for 3 s" in log and "answered MOTA_ERR_BUSY" in log, log
    finally:
        env.close()


def case_a_push_while_a_model_is_on_trial_names_it_and_says_what_to_do():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 4096)
        v1 = env.pack("v1.mota", rel, params, seq=1, version="1.0.0")
        v2 = env.pack("v2.mota", rel, params, seq=2, version="2.0.0")
        proc, port = sim(env, "--dbg-info", "--async")
        rc, _, res, err = env.push(port, v1)
        assert rc == 0 and res["installed"] and not res["confirmed"], (rc, res, err)
        rc, _, res, err = env.push(port, v2)
        assert rc == 1 and res["status"] == "MOTA_ERR_TRIAL_PENDING", (rc, res, err)
        want = "model network seq 1 v1.0.0 is on trial: confirm it (mota confirm) or roll it back (mota rollback) first"
        assert res["detail"] == want and want in err, (res, err)
        assert env.run("confirm", "tcp:" + port).returncode == 0
        rc, _, res, err = env.push(port, v2)
        assert rc == 0 and res["installed"], (rc, res, err)
        log = stop_and_log(proc)
        assert flash_used(log)[1][0] == 0, ("the refused push erased", log)
    finally:
        env.close()


def serve(listener, behaviour, stop):
    """A fake device: 'silent' accepts and never answers."""
    conns = []
    listener.settimeout(0.2)
    while not stop.is_set():
        try:
            c, _ = listener.accept()
            conns.append(c)
        except socket.timeout:
            pass
    for c in conns:
        c.close()


def proxy(listener, target, up_limit, down_limit, stop):
    """Forwards one client to target: host-to-device bytes up to up_limit, device-to-host bytes while fewer
    than down_limit bytes went up. A device that falls silent in the middle of an upload, or at its verdict."""
    listener.settimeout(5)
    c, _ = listener.accept()
    d = socket.create_connection(target)
    up = 0
    c.settimeout(0.05)
    d.settimeout(0.05)
    while not stop.is_set():
        for a, b, is_up in ((c, d, True), (d, c, False)):
            try:
                data = a.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                c.close()
                d.close()
                return
            if is_up and up < up_limit:
                b.sendall(data)
            elif not is_up and up < down_limit:
                b.sendall(data)
            if is_up:
                up += len(data)
    c.close()
    d.close()


def timed_push(env, port, container, timeout_s):
    t = time.time()
    rc, _, res, err = env.push(port, container, "--timeout", str(timeout_s), timeout=60)
    return rc, res, err, time.time() - t


def case_push_timeout_bounds_connect_handshake_each_window_and_the_verdict():
    env = Env(MOTA, WORK)
    stop = threading.Event()
    socks = []
    try:
        c = env.pack("t.mota", *env.model("t", 256 * 1024))
        # connect: a listener whose backlog is full (it accepts nobody)
        full = socket.socket()
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        addr = full.getsockname()
        for _ in range(3):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(addr)
            socks.append(s)
        time.sleep(0.2)
        rc, res, err, took = timed_push(env, "%s:%d" % addr, c, 3)
        assert rc == 6 and res["status"] == "MOTA_ERR_TIMEOUT", (rc, res, err)
        assert took < 6, ("connect", took)
        # handshake: a device that accepts and never answers
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        threading.Thread(target=serve, args=(silent, "silent", stop), daemon=True).start()
        rc, res, err, took = timed_push(env, "127.0.0.1:%d" % silent.getsockname()[1], c, 3)
        assert rc == 6 and res["status"] == "MOTA_ERR_TIMEOUT" and "no answer" in err, (rc, res, err)
        assert took < 6, ("hello", took)
        # a window: the device hears nothing after 64 KiB of the upload; the verdict: the device hears
        # everything and its answers stop once the whole container went its way (each on a fresh device)
        for what, up_limit, down_limit in (("window", 64 * 1024, 1 << 40),
                                           ("verdict", 1 << 40, os.path.getsize(c))):
            proc, port = sim(env, "--dbg-info", "--async")
            host, p = port.rsplit(":", 1)
            mid = socket.socket()
            mid.bind(("127.0.0.1", 0))
            mid.listen(1)
            threading.Thread(target=proxy, args=(mid, (host, int(p)), up_limit, down_limit, stop),
                             daemon=True).start()
            rc, res, err, took = timed_push(env, "127.0.0.1:%d" % mid.getsockname()[1], c, 3)
            assert rc == 6 and res["status"] == "MOTA_ERR_TIMEOUT" and "acknowledged" in err, (what, rc, res, err)
            assert took < 7, (what, took)
            mid.close()
            stop_and_log(proc)
    finally:
        stop.set()
        for s in socks:
            s.close()
        env.close()


def case_an_unsigned_container_is_refused_by_the_device_before_any_erase():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("u", 4096)
        args = ["pack", "--unsigned", "--pub", env.p("k.pub.pem"), "--vendor", "example.com", "--class", "mota-sim",
                "--seq", "3", "--version", "1.0.0", "--params", params, "-o", env.p("u.mota"), rel]
        env.run(*args)
        proc, port = sim(env, "--like", rel, "--params", params)
        rc, _, res, err = env.push(port, env.p("u.mota"), "--timeout", "20")
        assert rc == 1 and res["status"] == "MOTA_ERR_UNSIGNED" and not res["installed"], (rc, res, err)
        assert "not signed" in res["message"], res
        # signed, the same container goes in
        env.run("sign", "--key", env.p("k.pem"), "-o", env.p("s.mota"), env.p("u.mota"))
        rc, _, res, err = env.push(port, env.p("s.mota"), "--timeout", "20")
        assert rc == 0 and res["installed"], (rc, res, err)
        log = stop_and_log(proc)
        used = flash_used(log)
        assert used and used[0][0] == 0, ("erased before refusing the unsigned container", log)
    finally:
        env.close()


def wait_file(path, proc, timeout=10):
    """The contents of path once it exists (the simulator writes it atomically: absent or whole)."""
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path):
            return open(path).read()
        assert proc.poll() is None, ("the simulator ended", proc.stderr.read() if proc.stderr else "")
        time.sleep(0.05)
    raise AssertionError("%s never appeared" % path)


def case_port_file_and_a_throw_away_flash_need_no_cleanup():
    env = Env(MOTA, WORK)
    try:
        pf = env.p("port")
        open(pf, "w").write("tcp:127.0.0.1:1\n")  # a stale one, from a run that was killed
        proc = subprocess.Popen([MOTA, "sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem"),
                                 "--port-file", pf, "--dbg-info", "--async"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        env.procs.append(proc)
        listening = proc.stdout.readline()
        port = wait_file(pf, proc)
        assert port.endswith("\n") and port.strip() in listening and port != "tcp:127.0.0.1:1\n", (port, listening)
        flash_line = proc.stderr.readline()
        m = re.match(r"mota-sim: throw-away flash (\S+), removed at exit", flash_line)
        assert m and os.path.isfile(m.group(1)), flash_line
        flash = m.group(1)
        c = env.pack("v1.mota", *env.model("v1", 2048), seq=1)
        rc, _, res, err = env.push(port.strip()[4:], c, "--confirm")
        assert rc == 0 and res["installed"] and res["confirmed"], (rc, res, err)
        proc.terminate()
        proc.communicate(timeout=10)
        assert not os.path.exists(flash) and not os.path.exists(os.path.dirname(flash)), flash
        assert not os.path.exists(pf), "the port file outlived the simulator"
        # a pty: the port file holds its path, which push and status take as they are
        proc = subprocess.Popen([MOTA, "sim", "--pty", "--key", env.p("k.pub.pem"), "--port-file", pf,
                                 "--flash", env.p("kept.flash")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        env.procs.append(proc)
        path = wait_file(pf, proc).strip()
        assert path.startswith("/dev/pts/"), path
        r = env.run("status", "--json", "--timeout", "10", path, timeout=30)
        assert json.loads(r.stdout)["models"], r.stdout  # its one model slot, through the pty
        proc.terminate()
        _, err = proc.communicate(timeout=10)
        assert "throw-away" not in err and os.path.exists(env.p("kept.flash")), err
        # its output's reader gone (mota sim ... | head -1): it serves on, and its exit still removes the
        # throw-away flash (before: killed by SIGPIPE, the flash left behind)
        proc = subprocess.Popen([MOTA, "sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem"), "--dbg-info",
                                 "--async"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        env.procs.append(proc)
        listening = proc.stdout.readline()
        flash = re.match(r"mota-sim: throw-away flash (\S+), removed at exit", proc.stderr.readline()).group(1)
        proc.stdout.close()  # what head does after its line
        rc, _, res, err = env.push(listening.split("tcp:")[1].split()[0], c, "--confirm")  # it writes more
        assert rc == 0 and proc.poll() is None, (rc, res, err, proc.poll())
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
        assert proc.returncode == 0 and not os.path.exists(flash), (proc.returncode, flash)
    finally:
        env.close()


def case_transports_are_exclusive_and_misplaced_transport_options_are_usage_errors():
    env = Env(MOTA, WORK)
    try:
        k = ["--key", env.p("k.pub.pem"), "--flash", env.p("x.flash")]
        for args in (["--tcp", "127.0.0.1:0", "--pty"], ["--pty", "--tcp", "127.0.0.1:0"],
                     ["--tcp", "127.0.0.1:0", "--stdio"], ["--pty", "--stdio"],
                     ["--tcp", "127.0.0.1:0", "--tcp", "127.0.0.1:0"], ["--tcp", "127.0.0.1:0", "--pty-link", "x"],
                     ["--stdio", "--port-file", env.p("pf")], ["--tcp", "127.0.0.1:0", "--baud", "fast"],
                     ["--tcp", "127.0.0.1:0", "--baud", "0"],
                     ["--target", "an547", "--pty"], ["--target", "an505", "--stdio"],
                     ["--target", "an386", "--pty"], ["--target", "an500", "--stdio"], ["--target", "an999"],
                     ["--target", "an547", "--tcp", "127.0.0.1:0", "--tcp", "127.0.0.1:0"]):
            r = env.run("sim", *args, *k, check=False, timeout=10)
            assert r.returncode == 2 and r.stderr.startswith("mota: error: sim: ") and r.stderr.count("\n") == 1, \
                (args, r.returncode, r.stderr)
        assert not os.path.exists(env.p("x.flash")) and not os.path.exists(env.p("pf"))
    finally:
        env.close()


def case_baud_paces_a_push_like_a_serial_line():
    env = Env(MOTA, WORK)
    try:
        c = env.pack("v1.mota", *env.model("v1", 30000), seq=1)
        size = os.path.getsize(c)
        baud = 115200
        line_s = size * 10 / baud  # 8N1: ten bits a byte
        took = {}
        for name, extra in (("unlimited", []), ("paced", ["--baud", str(baud)])):
            proc, port = env.sim(*extra, flash=name + ".flash")
            t = time.time()
            rc, events, res, err = env.push(port, c)
            took[name] = time.time() - t
            assert rc == 0 and res["installed"], (name, rc, res, err)
            progress = [e for e in events if e.get("event") == "progress"]
            env.stop(proc)
            if name == "paced":
                assert len(progress) >= 3, ("a progress bar needs steps", len(progress))
        print("%d bytes: unlimited %.2f s, %d baud %.2f s (the line alone: %.2f s)"
              % (size, took["unlimited"], baud, took["paced"], line_s))
        assert took["paced"] >= 0.95 * line_s, took
        assert took["paced"] < 3 * line_s + 5, took
        assert took["unlimited"] < line_s / 2, took
        # a slow line (9600 baud: a 2 KiB frame takes 2 s): bytes on the wire are not silence, so nothing is
        # sent twice, progress only rises, and no phase is named before the device has every byte
        small = env.pack("slow.mota", *env.model("slow", 2000), seq=1)
        proc, port = env.sim("--baud", "9600", flash="slow.flash")
        rc, events, res, err = env.push(port, small)
        env.stop(proc)
        assert rc == 0 and res["installed"], (rc, res, err)
        kinds = [(e["event"], e.get("offset", e.get("phase"))) for e in events if e["event"] in ("progress", "phase")]
        offsets = [o for k, o in kinds if k == "progress"]
        assert offsets == sorted(set(offsets)) and offsets[-1] == os.path.getsize(small), kinds
        first_phase = [i for i, (k, _) in enumerate(kinds) if k == "phase"][0]
        assert kinds[first_phase - 1] == ("progress", os.path.getsize(small)), kinds
        assert res["wire_bytes_out"] < 1.2 * os.path.getsize(small), (res["wire_bytes_out"], os.path.getsize(small))
    finally:
        env.close()


FAKE_QEMU = """#!/bin/sh
# stands in for qemu-system-arm: the board's console says it is ready, then the board runs
echo "mota-an547: ready" >&2
exec sleep 60
"""


# stands in for qemu-system-arm and records its command line: the board named in its semihosting arguments
# (arg=mota-BOARD) says it is ready, then runs
RECORDING_QEMU = """#!/bin/sh
printf '%s\\n' "$@" > "$MOTA_TEST_QEMU_ARGS"
tag=$(printf '%s\\n' "$@" | sed -n 's/^enable=on,target=native,arg=\\(mota-[a-z0-9]*\\),.*/\\1/p')
echo "$tag: ready" >&2
exec sleep 60
"""


def case_board_launcher_starts_each_target_on_its_own_qemu_machine():
    """mota sim --target BOARD for each QEMU board: QEMU is given the board's machine (-M) and no -cpu (each of
    these machines implies its CPU: an386 a Cortex-M4, an500 a Cortex-M7), the firmware, and the board's name
    in its semihosting arguments; the launcher serves once the board says it is ready."""
    env = Env(MOTA, WORK)
    try:
        qemu = env.p("fake-qemu")
        open(qemu, "w").write(RECORDING_QEMU)
        os.chmod(qemu, 0o755)
        machines = {"an547": "mps3-an547", "an505": "mps2-an505", "an386": "mps2-an386", "an500": "mps2-an500"}
        for target, machine in machines.items():
            pf, args = env.p(target + ".port"), env.p(target + ".args")
            proc = subprocess.Popen([MOTA, "sim", "--target", target, "--flash", env.p(target + ".flash"), "--qemu",
                                     qemu, "--firmware", qemu, "--port-file", pf],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    env=dict(os.environ, MOTA_TEST_QEMU_ARGS=args))
            env.procs.append(proc)
            wait_file(pf, proc)
            argv = open(args).read().splitlines()
            proc.terminate()
            proc.communicate(timeout=10)
            assert argv[argv.index("-M") + 1] == machine and "-cpu" not in argv, (target, argv)
            assert argv[argv.index("-kernel") + 1] == qemu and "-no-reboot" in argv, (target, argv)
            semi = argv[argv.index("-semihosting-config") + 1]
            assert ",arg=mota-%s,arg=flash=%s," % (target, os.path.realpath(env.p(target + ".flash"))) in semi, semi
        print("each board on its machine, without -cpu: %s" % ", ".join("%s -M %s" % tm for tm in machines.items()))
    finally:
        env.close()


def case_armv7m_board_profiles_lay_out_power_of_two_slots_aligned_to_their_size():
    """--profile an386 and an500 (Armv7-M: no Secure state) lay out the slots as those boards' firmware does,
    each a power of two aligned to its size (one PMSAv7 MPU region): 4 MiB with one model, 2 MiB with two,
    from the first such boundary after the journal; the exec RAM a power of two per model too. A container
    installs there. The an505's slots stay equal shares in whole sectors."""
    env = Env(MOTA, WORK)
    try:
        layouts = (("an386", ["network"], "0x400000 0x800000 (4096 KiB each)", 2 << 20),
                   ("an500", ["network", "other"], "0x200000 0x400000 0x600000 0x800000 (2048 KiB each)", 1 << 20),
                   ("an386", ["network", "a", "b"], "0x200000 0x400000 0x600000 0x800000 0xA00000 0xC00000 "
                                                    "(2048 KiB each)", 512 << 10))
        c = env.pack("v1.mota", *env.model("v1", 20000), seq=1)
        for profile, models, slots, exec_ram in layouts:
            # the synthetic model's compatibility over the profile's, which leaves its memories as they are
            proc, port = sim(env, "--profile", profile, *[a for m in models for a in ("--model", m)], *SYNTH_COMPAT)
            st = json.loads(env.run("status", "--json", "tcp:" + port).stdout)
            assert [(m["max_container"], m["memory"]["exec_ram"]) for m in st["models"]] == \
                [(int(slots.split("(")[1].split()[0]) * 1024, exec_ram)] * len(models), (profile, st["models"])
            rc, _, res, err = env.push(port, c, "--confirm")
            log = stop_and_log(proc)
            assert rc == 0 and res["installed"], (profile, rc, res, err)
            assert "journal at 0x0, slots at %s" % slots in log, (profile, log)
        proc, port = sim(env, "--profile", "an386")
        st = json.loads(env.run("status", "--json", "tcp:" + port).stdout)
        stop_and_log(proc)
        p = st["profile"]
        assert (p["cpu_part"], p["fpu"], p["float_abi"], p["secure"]) == (0xC24, True, "hard", False), p
        proc, port = sim(env, "--profile", "an505")
        log = stop_and_log(proc)
        assert "journal at 0x0, slots at 0x2000 0x800000 (8184 KiB each)" in log, log
        print("an386 and an500 profiles: slots of 4 MiB (one model) and 2 MiB (two, three) aligned to their size, "
              "exec RAM a power of two per model; a container installed; the an505's unchanged")
    finally:
        env.close()


def case_board_launcher_writes_its_port_file_once_the_board_is_ready():
    env = Env(MOTA, WORK)
    try:
        qemu = env.p("fake-qemu")
        open(qemu, "w").write(FAKE_QEMU)
        os.chmod(qemu, 0o755)
        pf = env.p("port")
        proc = subprocess.Popen([MOTA, "sim", "--target", "an547", "--flash", env.p("b.flash"), "--qemu", qemu,
                                 "--firmware", qemu, "--port-file", pf],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        env.procs.append(proc)
        listening = proc.stdout.readline()
        port = wait_file(pf, proc).strip()
        assert re.match(r"tcp:127\.0\.0\.1:\d+$", port) and port in listening, (port, listening)
        host, p = port[4:].rsplit(":", 1)
        socket.create_connection((host, int(p)), timeout=5).close()
        proc.terminate()
        proc.communicate(timeout=10)
        assert not os.path.exists(pf), "the port file outlived the launcher"
    finally:
        env.close()


# the synthetic model's compatibility over a profile: what these cases measure is the profile's flash
SYNTH_COMPAT = ["--cpu", "0xD22", "--fpu", "--float-abi", "hard", "--secure", "--family", "npu", "--ll-aton", "1.1.1",
                "--dbg-info", "--async", "--struct-sizes", "0"]


def result_of(events):
    return [e for e in events if e.get("event") == "result"][0]


def case_f401_profile_installs_and_rolls_back_across_its_16_64_and_128_kib_sectors():
    """The F401's one flash of 16, 64 and 128 KiB sectors, single bank, at its typical times and 921,600 baud:
    the journal on two 16 KiB sectors, the slots on 128 KiB ones; the link sends one frame at a time (the
    CPU stalls while the flash works: nothing may arrive then), and no byte is lost or sent twice."""
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 60000)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        v2 = env.pack("v2.mota", *env.model("m2", 70000, seed=2), seq=2)
        proc, port = sim(env, "--profile", "nucleo-f401re", *SYNTH_COMPAT, "--flash-timing", "typ", "--baud", "921600")
        rc, ev, res, err = env.push(port, v1, "--confirm")
        assert rc == 0 and res["installed"] and res["confirmed"], (rc, res, err)
        hello = [e for e in ev if e.get("event") == "hello"][0]
        assert hello["window"] == 1, hello
        assert res["data_bytes_sent"] == os.path.getsize(v1) and res["flash_holds"] >= 1, res
        rc, ev, res, err = env.push(port, v2)
        assert rc == 0 and res["installed"] and res["data_bytes_sent"] == os.path.getsize(v2), (rc, res, err)
        r = env.run("rollback", "--json", "tcp:" + port)
        st = json.loads(env.run("status", "--json", "tcp:" + port).stdout)
        m = st["models"][0]
        assert m["active"]["seq"] == 1 and m["active"]["state"] == "confirmed", (m, r.stdout)
        log = stop_and_log(proc)
        assert "flash 512 KiB: 4 x 16 KiB, 1 x 64 KiB, 3 x 128 KiB sectors, 4-byte units (NOR), single bank" in log, log
        assert "journal at 0x4000, slots at 0x20000 0x40000 (128 KiB each)" in log, log
        assert "bytes lost by the receiver" not in log, log
        # each update erased one 128 KiB sector, as it reached it
        assert re.findall(r"upload over: (\d+) erases", log) == ["1", "1"], log
        print("nucleo-f401re: journal on 16 KiB sectors, A/B on 128 KiB ones; installed, updated, rolled back; "
              "one frame in flight, no byte lost or sent twice")
    finally:
        env.close()


def case_push_at_max_flash_timing_on_the_h747_profile_completes_with_default_options():
    """A 4 s sector erase (the H747's longest) with mota push's defaults: the device announces it, the host
    holds without resending and without timing out, and the 64 KiB RX ring takes what arrives meanwhile."""
    env = Env(MOTA, WORK)
    try:
        c = env.pack("v1.mota", *env.model("m", 80000), seq=1)
        proc, port = sim(env, "--profile", "stm32h747i-disco", *SYNTH_COMPAT, "--flash-timing", "max",
                         "--baud", "921600")
        rc, ev, res, err = env.push(port, c)
        assert rc == 0 and res["installed"], (rc, res, err)
        assert res["data_bytes_sent"] == os.path.getsize(c), res  # not a byte twice
        assert res["flash_holds"] == 1 and res["flash_hold_ms"] == 4000, res
        assert res["transfer_seconds"] >= 4.0, res  # the erase took the part's time
        log = stop_and_log(proc)
        assert "(ECC)" in log and "timing max" in log and "bytes lost by the receiver" not in log, log
        print("stm32h747i-disco at max: %.2f s for %d bytes (a 4 s erase), no resend" % (
            res["transfer_seconds"], os.path.getsize(c)))
    finally:
        env.close()


def case_a_ring_smaller_than_the_window_loses_bytes_and_the_link_recovers():
    """A host that ignores the announced window while the device erases overflows the RX ring: the
    simulator loses the bytes, says so, and a push afterwards resumes and completes."""
    import hashlib
    import struct
    env = Env(MOTA, WORK)
    try:
        c = env.pack("v1.mota", *env.model("m", 120000), seq=1)
        data = open(c, "rb").read()
        proc, port = sim(env, "--profile", "stm32h747i-disco", *SYNTH_COMPAT, "--flash-timing", "typ",
                         "--rx-ring", "8192")
        sys.path.insert(0, os.path.join(SRC, "tests", "oracle"))
        import cbor2
        digest = hashlib.sha256(cbor2.dumps(cbor2.loads(data).value[3])).digest()
        host, p = port.rsplit(":", 1)
        s = socket.create_connection((host, int(p)))
        s.sendall(frame(1, 1, b"\x01\x00\x08") + frame(2, 2, struct.pack("<I", len(data)) + digest))
        # everything at once: the head, then 100 KB more while the device erases its first sector
        s.sendall(b"".join(frame(3, 3 + i, struct.pack("<I", off) + data[off:off + 2000])
                           for i, off in enumerate(range(0, 100000, 2000))))
        time.sleep(2.5)
        s.close()
        rc, ev, res, err = env.push(port, c)
        assert rc == 0 and res["installed"], (rc, res, err)
        log = stop_and_log(proc)
        lost = re.findall(r"bytes lost by the receiver: (\d+) \(ring full\)", log)
        assert lost and int(lost[0]) > 0, log
        print("a host past the window: %s bytes lost in the 8 KiB ring; the push that followed installed" % lost[0])
    finally:
        env.close()


def case_lzma_and_delta_containers_install_and_a_delta_for_another_model_is_refused_before_any_erase():
    """pack --compress=lzma and --delta-from: the simulator decodes LZMA with its slot as the dictionary, and a
    delta (1% of the params' bytes moved) against the model it runs; the delta rolls back to its source. A
    device that runs another model, or none, refuses the delta before erasing anything and push says to send
    the full container."""
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 60000)
        v1 = env.pack("v1.mota", rel, params, seq=1, compress="lzma")
        assert "lzma, 262144-byte blocks" in env.last_pack, env.last_pack
        rel2, params2 = env.p("m2_rel.bin"), env.p("m2_params.bin")
        subprocess.run([PY, os.path.join(SRC, "tests", "tools", "model_variant.py"), rel, rel2, "bytes", "--percent",
                        "1", "--params", params, params2], check=True, capture_output=True)
        v2 = env.pack("v2.mota", rel2, params2, seq=2, version="2.0.0", extra=("--delta-from", v1))
        assert re.search(r"delta params: \d+ -> \d+ bytes", env.last_pack), env.last_pack
        full = env.pack("v2full.mota", rel2, params2, seq=2, version="2.0.0", compress="lzma")
        assert os.path.getsize(v2) * 20 < os.path.getsize(full), (os.path.getsize(v2), os.path.getsize(full))
        orel, oparams = env.model("o", 60000, seed=2)
        other = env.pack("other.mota", orel, oparams, seq=1)
        proc, port = sim(env, "--dbg-info", "--async", "--model", "network")
        rc, _, res, err = env.push(port, v2)  # no model yet
        assert rc != 0 and res["status"] == "MOTA_ERR_DELTA_SOURCE" and "no model" in res["detail"], (rc, res, err)
        rc, _, res, err = env.push(port, other, "--confirm")
        assert rc == 0 and res["installed"], (rc, res, err)
        rc, _, res, err = env.push(port, v2)
        assert rc != 0 and res["status"] == "MOTA_ERR_DELTA_SOURCE", (rc, res, err)
        assert "push the full container" in res["detail"], res
        assert env.status(port)["active"]["seq"] == 1
        log = stop_and_log(proc)
        assert flash_used(log)[-1][0] == 0, flash_used(log)  # the delta erased nothing
        proc, port = sim(env, "--dbg-info", "--async", "--model", "network", flash="sim2.flash")
        rc, _, res, err = env.push(port, v1, "--confirm")
        assert rc == 0 and res["installed"], (rc, res, err)
        rc, _, res, err = env.push(port, v2)
        assert rc == 0 and res["installed"], (rc, res, err)
        st = env.status(port)
        assert st["active"]["seq"] == 2 and st["active"]["state"] == "trial", st
        inp = env.p("invoke.in")  # it runs: the simulated model answers for its input
        open(inp, "wb").write(b"hello")
        out = json.loads(env.run("invoke", "--json", "--input", inp, "--output-size", "16", "tcp:" + port).stdout)
        assert out["output"] == hashlib.sha256(b"mota-sim" + b"hello" + struct.pack("<I", 0)).hexdigest()[:32], out
        assert env.run("rollback", "tcp:" + port).returncode == 0
        assert env.status(port)["active"]["seq"] == 1
        stop_and_log(proc)
        print("lzma v1 %d bytes; the delta v2 %d bytes (the full one %d): installed from v1, rolled back to it; "
              "refused before any erase where v1 does not run" % (os.path.getsize(v1), os.path.getsize(v2),
                                                                 os.path.getsize(full)))
    finally:
        env.close()


def case_the_running_container_pushed_again_installs_nothing():
    """A host that retries a push that made it (a gateway that rebooted mid-deployment): the device says the
    container runs already, before erasing anything; no second install, no new trial, no error recorded."""
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 20000)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        v2 = env.pack("v2.mota", rel, params, seq=2, version="2.0.0")
        proc, port = sim(env, "--dbg-info", "--async")
        rc, _, res, err = env.push(port, v1, "--confirm")
        assert rc == 0 and res["installed"] and not res["already_active"], (rc, res, err)
        rc, _, res, err = env.push(port, v1)
        assert rc == 0 and res["installed"] and res["already_active"] and res["confirmed"], (rc, res, err)
        # on trial: pushed again, still the same trial, and --confirm confirms it
        rc, _, res, err = env.push(port, v2)
        assert rc == 0 and not res["already_active"] and not res["confirmed"], (rc, res, err)
        before = json.loads(env.run("status", "--json", "tcp:" + port).stdout)["models"][0]
        rc, _, res, err = env.push(port, v2)
        assert rc == 0 and res["already_active"] and not res["confirmed"], (rc, res, err)
        after = json.loads(env.run("status", "--json", "tcp:" + port).stdout)["models"][0]
        assert after["active"] == before["active"] and after["active"]["state"] == "trial", (before, after)
        assert not after.get("last_error"), after
        rc, _, res, err = env.push(port, v2, "--confirm")
        assert rc == 0 and res["already_active"] and res["confirmed"], (rc, res, err)
        text = env.run("push", "tcp:" + port, v2).stdout
        assert "already active: network seq 2, nothing installed, confirmed" in text, text
        log = stop_and_log(proc)
        # clients: push v1, push v1 again, push v2, status, push v2 again, status, with --confirm, push v2 again:
        # the repeats erased and programmed nothing (the confirm journals its record)
        used = flash_used(log)
        assert len(used) == 8 and used[1] == used[4] == used[7] == (0, 0) and used[6][0] == 0, used
        print("the running container pushed again: already active, nothing installed, the trial kept")
    finally:
        env.close()


def case_reinstall_puts_the_running_container_on_trial_again_in_the_other_slot():
    """push --reinstall: the container the device runs is written again into the other slot and put on
    trial (its previous model is the same container, so a rollback brings it back); without the flag the
    same push installs nothing."""
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 20000)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        proc, port = sim(env, "--dbg-info", "--async")
        rc, _, res, err = env.push(port, v1, "--confirm")
        assert rc == 0 and res["installed"] and not res["already_active"], (rc, res, err)
        first = env.status(port)
        rc, _, res, err = env.push(port, v1, "--reinstall")
        assert rc == 0 and res["installed"] and not res["already_active"] and not res["confirmed"], (rc, res, err)
        again = env.status(port)
        assert again["active"]["state"] == "trial" and again["active"]["slot"] != first["active"]["slot"], again
        assert again["active"]["digest"] == first["active"]["digest"], (first, again)
        assert again["previous"]["digest"] == first["active"]["digest"], again
        assert again["rollback_possible"] is True, again
        # on trial: a second --reinstall is the trial's to decide first
        rc, _, res, err = env.push(port, v1, "--reinstall")
        assert rc == 1 and res["status"] == "MOTA_ERR_TRIAL_PENDING", (rc, res, err)
        rc = env.run("rollback", "tcp:" + port, check=False).returncode
        back = env.status(port)
        assert rc == 0 and back["active"]["state"] == "confirmed" and back["active"]["slot"] == first["active"]["slot"], back
        # confirmed and sound, with a previous model kept: status says no rollback is possible, and none is
        rc, _, res, err = env.push(port, v1, "--reinstall", "--confirm")
        kept = env.status(port)
        assert rc == 0 and kept["previous"] is not None and kept["rollback_possible"] is False, (rc, kept, err)
        text = env.run("status", "tcp:" + port).stdout
        assert "(kept; `mota rollback` returns to it while the active model is on trial, or once it faulted" in text, text
        # the active container's manifest digest, as confirm/rollback --expect-digest take it
        assert "\n  digest:    %s\n" % kept["active"]["digest"] in text, text
        r = env.run("rollback", "tcp:" + port, check=False)
        assert r.returncode == 1 and "MOTA_ERR_NOT_TESTING" in r.stderr, (r.returncode, r.stderr)
        log = stop_and_log(proc)
        used = flash_used(log)
        assert used[2][1] > 0 and used[3] == (0, 0), used  # the reinstall programmed; the refused one did not
        # an interrupted reinstall is resumed by another reinstall only: a plain push of the container is
        # "already active" at once, no resume announced, no 100% claimed
        big_rel, big_params = env.model("big", 80000)
        big = env.pack("big.mota", big_rel, big_params, seq=1)
        proc, port = sim(env, "--dbg-info", "--async", "--baud", "230400", flash="big.flash")
        rc, _, res, err = env.push(port, big, "--confirm")
        assert rc == 0 and res["confirmed"], (rc, res, err)
        p = subprocess.Popen([MOTA, "push", "--json", "--reinstall", "tcp:" + port, big], stdout=subprocess.PIPE)
        for line in p.stdout:
            if b'"progress"' in line and json.loads(line)["offset"] > 20000:
                break
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)
        assert env.status(port)["upload"] is not None, env.status(port)
        rc, events, res, err = env.push(port, big)
        assert rc == 0 and res["already_active"], (rc, res, err)
        assert not [e for e in events if e["event"] == "resume" or (e["event"] == "progress" and
                                                                     e["offset"] == e["total"])], events
        rc, events, res, err = env.push(port, big, "--reinstall")
        assert rc == 0 and res["installed"] and not res["already_active"], (rc, res, err)
        assert [e for e in events if e["event"] == "resume"], events[:4]
        stop_and_log(proc)
        print("--reinstall: the running container on trial again in slot %d; rolled back to slot %d; an "
              "interrupted reinstall resumed by another only" % (again["active"]["slot"], back["active"]["slot"]))
    finally:
        env.close()


def case_four_models_span_several_answers_at_a_boards_frame_size():
    """HELLO and STATUS of a device with 4 models, each with a 206-byte version text, in 512-byte frames:
    the answers span frames (models-from), each within the negotiated payload, and mota status and push
    see every model whole; a host that asks the old way (no model index) still gets one answer."""
    import struct
    sys.path.insert(0, os.path.join(SRC, "tests", "oracle"))
    import cbor2
    from harness import RawLink
    env = Env(MOTA, WORK)
    try:
        names = ["m0", "m1", "m2", "m3"]
        version = "1.0.0-" + "x" * 200
        proc, port = sim(env, "--dbg-info", "--async", "--max-payload", "512",
                         *[a for n in names for a in ("--model", n)])
        for i, n in enumerate(names):
            rel, params = env.p(n + "_rel.bin"), env.p(n + "_params.bin")
            subprocess.run([PY, os.path.join(SRC, "tests", "tools", "synth_nbin.py"), rel, params, "3000",
                            str(i + 1), "random", n], check=True)
            c = env.pack(n + ".mota", rel, params, seq=1, version=version)
            rc, _, res, err = env.push(port, c)
            assert rc == 0 and res["installed"], (n, rc, res, err)
        # a refusal of the third model's container is the third model's, in its state and the errors ring
        rel, params = env.p("m2_rel.bin"), env.p("m2_params.bin")
        rc, _, res, err = env.push(port, env.pack("m2x.mota", rel, params, seq=2, cls="another-board"))
        assert rc == 1 and res["status"] == "MOTA_ERR_CLASS_MISMATCH", (rc, res)
        st = json.loads(env.run("status", "--json", "tcp:" + port).stdout)
        assert st["recent_errors"][-1]["model"] == "m2", st["recent_errors"]
        assert [m["name"] for m in st["models"]] == names, st["models"]
        assert all(m["active"]["version"] == version for m in st["models"]), st["models"]
        text = env.run("status", "tcp:" + port).stdout
        assert all(("model %s:" % n) in text for n in names) and text.count(version) == 4, text
        raw = RawLink(port)
        st_, body = raw.request(1, struct.pack("<BHB", 1, 512, 0))  # HELLO, from model 0
        info = cbor2.loads(body)
        assert st_ == 0 and len(body) + 2 <= 512 and 16 in info and info[16][1] == 4, (len(body), info.get(16))
        got, first = len(info[7]), 0
        while first + got < 4:  # the rest, from where the last answer stopped
            first += got
            st_, body = raw.request(4, bytes([first]))
            part = cbor2.loads(body)
            assert st_ == 0 and len(body) + 2 <= 512 and part[6] == [first, 4], (len(body), part.get(6))
            got = len(part[1])
        st_, body = raw.request(4, bytes([4]))  # past the last model
        assert st_ == -3 or st_ < 0, st_
        st_, body = raw.request(4)  # the old way: every model in one answer, versions cut to fit
        old = cbor2.loads(body)
        assert st_ == 0 and len(body) + 2 <= 512 and len(old[1]) == 4 and 6 not in old, (len(body), old.keys())
        assert all(len(m.get(9, "")) < len(version) for m in old[1]), old[1]
        stop_and_log(proc)
        print("4 models with 206-byte versions: HELLO and STATUS in 512-byte answers, %d model(s) in the "
              "first; an older host's STATUS %d bytes" % (len(info[7]), len(body)))
    finally:
        env.close()


def case_names_are_shown_beside_the_vendor_and_class_ids():
    """The device says the names its vendor and class ids are made from (HELLO key 15): mota status shows
    them beside the ids; a container for another vendor or class is refused with both names and ids."""
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 5000)
        other_vendor = env.pack("ov.mota", rel, params, vendor="other.example")
        other_class = env.pack("oc.mota", rel, params, cls="board-rev-b")
        proc, port = sim(env, "--dbg-info", "--async", "--class", "board-rev-a")
        dev = json.loads(env.run("status", "--json", "tcp:" + port).stdout)["device"]
        assert dev["vendor"] == "example.com" and dev["class"] == "board-rev-a", dev
        text = env.run("status", "tcp:" + port).stdout
        assert "identity: vendor example.com (id %s), class board-rev-a (id %s)" % (dev["vendor_id"],
                                                                                  dev["class_id"]) in text, text
        rc, _, res, err = env.push(port, other_vendor)
        assert rc == 1 and res["status"] == "MOTA_ERR_VENDOR_MISMATCH", (rc, res)
        assert "device example.com (id %s), container other.example (id " % dev["vendor_id"] in res["detail"], res
        rc, _, res, err = env.push(port, other_class)
        assert rc == 1 and res["status"] == "MOTA_ERR_CLASS_MISMATCH", (rc, res)
        assert "device board-rev-a (id %s), container board-rev-b (id " % dev["class_id"] in res["detail"], res
        assert "pack --class board-rev-a" in res["detail"], res
        shown = json.loads(env.run("inspect", "--json", other_class).stdout)["text"]
        assert shown["class_name"] == "board-rev-b" and shown["vendor_name"] == "example.com", shown
        stop_and_log(proc)
        # a name of 254 bytes is shown whole; one that would write to the terminal is not shown at all (its
        # control characters replaced, it no longer makes its id): the id alone
        long_vendor = "v" * 250 + ".com"
        proc, port = sim(env, "--vendor", long_vendor, "--class", "c\nfake line\x1b[31m", flash="odd.flash")
        dev = json.loads(env.run("status", "--json", "tcp:" + port).stdout)["device"]
        assert dev["vendor"] == long_vendor and dev["class"] is None, dev
        text = env.run("status", "tcp:" + port).stdout
        assert "vendor %s (id " % long_vendor in text and "class id %s" % dev["class_id"] in text, text
        assert "\nfake line" not in text and "\x1b" not in text, text
        stop_and_log(proc)
        print("names beside ids: %s" % res["detail"])
    finally:
        env.close()


def case_confirm_and_rollback_about_one_container_can_run_again():
    """--expect-digest D: confirm and rollback about one container, so that a state run again (a gateway
    rebooted mid-deployment) does no harm: confirmed already is done, a rollback of what no longer runs
    (or never ran) is done, a confirm of what no longer runs is refused; nothing else changes."""
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 20000)
        cs = [env.pack("v%d.mota" % i, rel, params, seq=i, version="%d.0.0" % i) for i in (1, 2, 3, 4)]
        dg = [json.loads(env.run("inspect", "--json", c).stdout)["digest"] for c in cs]
        proc, port = sim(env, "--dbg-info", "--async")
        tcp = "tcp:" + port

        def active():
            return json.loads(env.run("status", "--json", tcp).stdout)["models"][0]["active"]

        assert env.push(port, cs[0], "--confirm")[0] == 0 and env.push(port, cs[1])[0] == 0
        r = env.run("confirm", "--json", "--expect-digest", dg[0], tcp, check=False)  # v1 no longer runs
        assert r.returncode == 1 and json.loads(r.stdout)["status"] == "MOTA_ERR_NOT_ACTIVE", (r.stdout, r.stderr)
        assert active()["seq"] == 2 and active()["state"] == "trial"
        for n in range(2):  # confirmed, then confirmed already: said so ("done": false)
            r = env.run("confirm", "--json", "--expect-digest", dg[1], tcp, check=False)
            j = json.loads(r.stdout)
            assert r.returncode == 0 and j["status"] == "MOTA_OK" and j["done"] is (n == 0), (r.stdout, r.stderr)
            assert active()["seq"] == 2 and active()["state"] == "confirmed"
        assert env.push(port, cs[2])[0] == 0
        for n in range(2):  # rolled back, then nothing to roll back: v2 stays, and the answer says so
            r = env.run("rollback", "--expect-digest", dg[2], tcp, check=False)
            assert r.returncode == 0, (r.stdout, r.stderr)
            assert r.stdout.startswith("rollback: done\n" if n == 0 else "rollback: nothing to do: no model runs it"), \
                r.stdout
            assert active()["seq"] == 2 and active()["state"] == "confirmed", active()
        r = env.run("rollback", "--json", "--expect-digest", dg[3], tcp, check=False)  # never installed
        j = json.loads(r.stdout)
        assert r.returncode == 0 and j["done"] is False and "no model runs it" in j["detail"], (r.stdout, r.stderr)
        assert active()["seq"] == 2, active()
        r = env.run("confirm", "--expect-digest", "00" * 31, tcp, check=False)
        assert r.returncode == 2 and "64 hex digits" in r.stderr, r.stderr
        stop_and_log(proc)
        print("confirm and rollback --expect-digest: each ran twice; a confirm of what no longer runs refused")
    finally:
        env.close()


def device_id(env, port, *extra):
    """The device id `mota status --json` reports, after checking its form: lowercase hex."""
    st = json.loads(env.run("status", "--json", *extra, "tcp:" + port).stdout)
    did = st["device"]["device_id"]
    assert did is None or re.fullmatch(r"([0-9a-f]{2}){1,16}", did), did
    return did


def case_each_device_has_its_own_id_and_keeps_it_across_restarts():
    """HELLO's device id (key 14) in `mota status`: a simulator's is its flash file's (two files, two ids; a
    restart on one keeps it), --device-id sets it, a throw-away flash gets a random one."""
    env = Env(MOTA, WORK)
    try:
        ids = {}
        for name in ("a.flash", "b.flash"):
            proc, port = env.sim(flash=name)
            ids[name] = device_id(env, port)
            text = env.run("status", "tcp:" + port).stdout
            assert re.search(r"^device id %s$" % ids[name], text, re.M), text
            env.stop(proc)
        assert all(len(i) == 24 for i in ids.values()) and ids["a.flash"] != ids["b.flash"], ids
        for name in ("a.flash", "b.flash"):  # restarted on the same flash file, named another way
            other = os.path.join(env.work, "..", os.path.basename(env.work), ".", name)
            proc, port = env.start([MOTA, "sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem"), "--flash",
                                    other], r"listening on tcp:(\S+)")
            assert device_id(env, port) == ids[name], name
            env.stop(proc)
        for given in ("00112233445566778899aabbccddeeff", "AB", "0123456789abcdef01234567"):
            proc, port = env.sim("--device-id", given, flash="a.flash")
            assert device_id(env, port) == given.lower(), given
            env.stop(proc)
        randoms = set()
        for _ in range(2):  # a throw-away flash: a device of its own each run
            proc, port = env.start([MOTA, "sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem")],
                                   r"listening on tcp:(\S+)")
            randoms.add(device_id(env, port))
            env.stop(proc)
        assert len(randoms) == 2 and all(len(i) == 24 for i in randoms) and not randoms & set(ids.values()), randoms
        for bad in ("", "a", "abc", "zz", "00" * 17, "0x12"):
            r = env.run("sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem"), "--flash", env.p("c.flash"),
                        "--device-id", bad, check=False, timeout=10)
            assert r.returncode == 2 and r.stderr.startswith("mota: error: sim: --device-id"), (bad, r.returncode,
                                                                                                r.stderr)
        assert not os.path.exists(env.p("c.flash"))
        print("device ids: %s (two flash files, kept across restarts), %s (throw-away flashes)" %
              (", ".join(sorted(ids.values())), ", ".join(sorted(randoms))))
    finally:
        env.close()


def free_port():
    """A TCP port nobody listens on now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def timed_status(env, *args, timeout=60):
    t = time.time()
    r = env.run("status", *args, check=False, timeout=timeout)
    return r, time.time() - t


def case_status_wait_reaches_a_device_that_starts_late_and_gives_up_with_its_exit_code():
    """status --wait S: a device not listening yet is reached once it is, as soon as it answers; a wait
    that runs out ends with the last attempt's exit code (3 unreachable, 5 busy); without --wait the
    first failure is reported at once, as before."""
    env = Env(MOTA, WORK)
    try:
        port = free_port()
        tcp = "tcp:127.0.0.1:%d" % port
        r, took = timed_status(env, tcp)
        assert r.returncode == 3 and "Connection refused" in r.stderr and took < 1.5, (r.returncode, r.stderr, took)
        t = time.time()
        waiting = subprocess.Popen([MOTA, "status", "--wait", "20", "--json", tcp], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        env.procs.append(waiting)
        time.sleep(2)
        assert waiting.poll() is None, "status gave up before the device started"
        proc, _ = env.sim(port=port)
        started = time.time()
        out, err = waiting.communicate(timeout=30)
        took, after = time.time() - t, time.time() - started
        st = json.loads(out)
        assert waiting.returncode == 0 and st["status"] == "MOTA_OK" and st["models"], (waiting.returncode, out, err)
        assert re.fullmatch(r"[0-9a-f]{24}", st["device"]["device_id"]), st["device"]
        assert 2 <= took < 10 and after < 3, (took, after)
        # another client holds the device: busy for the whole wait, then exit 5; once it lets go, heard at once
        holder = socket.create_connection(("127.0.0.1", port))
        time.sleep(0.3)
        r, took = timed_status(env, "--wait", "2", tcp)
        assert r.returncode == 5 and "MOTA_ERR_BUSY" in r.stderr and 1.8 <= took < 4.5, (r.returncode, r.stderr, took)
        threading.Timer(1.5, holder.close).start()
        r, took = timed_status(env, "--wait", "10", "--json", tcp)
        assert r.returncode == 0 and 1.3 <= took < 4, (r.returncode, r.stderr, took)
        env.stop(proc)
        # nobody listening for the whole wait: the port's failure, exit 3, once the wait is over
        r, took = timed_status(env, "--wait", "2", "--json", tcp)
        assert r.returncode in (3, 6) and 1.8 <= took < 4.5, (r.returncode, r.stderr, took)
        assert json.loads(r.stdout)["status"] in ("MOTA_ERR_TRANSPORT", "MOTA_ERR_TIMEOUT"), r.stdout
        for bad in ("0", "x", "86401"):
            r = env.run("status", "--wait", bad, tcp, check=False)
            assert r.returncode == 2 and "--wait" in r.stderr, (bad, r.returncode, r.stderr)
        r = env.run("confirm", "--wait", "2", tcp, check=False)  # status's alone
        assert r.returncode == 2 and "unknown option --wait" in r.stderr, r.stderr
        print("status --wait: reached a device that started 2 s late; busy for 2 s: exit 5; nobody for 2 s: exit 3")
    finally:
        env.close()


def write_kek(path, kid, k):
    """A key-encryption key file as `mota keygen --kek` writes it (common/kek.h): a JWK, mode 0600."""
    import base64
    with open(path, "w") as f:
        f.write(json.dumps({"kty": "oct", "alg": "A128KW", "kid": kid,
                            "k": base64.urlsafe_b64encode(k).rstrip(b"=").decode()}) + "\n")
    os.chmod(path, 0o600)
    return path


def secrets_absent(texts, secrets):
    """No secret in any text, as hex (either case) or base64url."""
    import base64
    for secret in secrets:
        forms = (secret.hex(), secret.hex().upper(), base64.urlsafe_b64encode(secret).rstrip(b"=").decode())
        for t in texts:
            assert not any(f in t for f in forms), ("a key in the output", t[:300])


def case_sim_keks_and_device_key_are_shown_by_id_never_by_key_and_getpub_exports_the_point():
    """mota sim --kek (at most 2) and the sim's own device key, made with its flash and kept beside it
    (FLASH.device-key, 0600, the same across restarts): `mota status` shows the KEK ids, the device key's
    id and point and "decrypt" among the features, in text and JSON; `mota getpub --device` writes the point
    as PEM; no KEK's k and not the device's d appear in any output."""
    from cryptography.hazmat.primitives import serialization
    import hashlib
    env = Env(MOTA, WORK)
    try:
        ka, kb = bytes([0x5A]) * 16, bytes(range(16))
        a, b = write_kek(env.p("a.jwk"), "kek-a", ka), write_kek(env.p("b.jwk"), "kek-b", kb)
        proc, port = env.sim("--kek", a, "--kek", b, flash="k.flash")
        tcp = "tcp:" + port
        text = env.run("status", tcp).stdout
        dev = json.loads(env.run("status", "--json", tcp).stdout)["device"]
        assert "decrypt" in dev["features"] and dev["kek_ids"] == ["kek-a", "kek-b"], dev
        point = bytes.fromhex(dev["device_key"])
        assert len(point) == 65 and point[0] == 4 and dev["device_key_id"] == hashlib.sha256(point).hexdigest()[:32]
        assert "  key-encryption keys: kek-a, kek-b\n" in text, text
        assert "  device key: id %s, point %s\n" % (dev["device_key_id"], dev["device_key"]) in text, text
        assert re.search(r"built with: .* decrypt lzma delta details errors resume pages history retire$", text, re.M), text
        out = env.p("dev.pem")
        env.run("getpub", "--device", tcp, "-o", out)
        pub = serialization.load_pem_public_key(open(out, "rb").read())
        assert pub.public_bytes(serialization.Encoding.X962,
                                serialization.PublicFormat.UncompressedPoint) == point
        assert env.run("getpub", "--device", tcp, "--lang", "id").stdout.strip() == dev["device_key_id"]
        log = stop_and_log(proc)
        keyfile = env.p("k.flash.device-key")
        assert os.stat(keyfile).st_mode & 0o077 == 0, oct(os.stat(keyfile).st_mode)
        d = serialization.load_pem_private_key(open(keyfile, "rb").read(), None).private_numbers().private_value
        secrets_absent([text, json.dumps(dev), log, open(out).read()], [ka, kb, d.to_bytes(32, "big")])
        assert "device key id %s; key-encryption keys kek-a, kek-b" % dev["device_key_id"] in log, log
        proc, port = env.start([MOTA, "sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem"), "--flash",
                                env.p("k.flash")], r"listening on tcp:(\S+)")  # restarted, no --kek
        again = json.loads(env.run("status", "--json", "tcp:" + port).stdout)["device"]
        assert again["device_key"] == dev["device_key"] and again["kek_ids"] == [], again
        env.stop(proc)
        r = env.run("sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem"), "--kek", a, "--kek", b, "--kek", a,
                    check=False, timeout=10)
        assert r.returncode == 2 and "at most 2 --kek" in r.stderr, (r.returncode, r.stderr)
        print("sim: KEKs kek-a, kek-b and device key %s shown by id, kept across a restart; getpub --device "
              "wrote its point; no key in any output" % dev["device_key_id"])
    finally:
        env.close()


def case_push_refuses_a_container_for_keys_the_device_lacks_before_sending_anything():
    """An encrypted container whose recipients all name keys the device does not hold (HELLO key 18) is
    refused by mota push before BEGIN, MOTA_ERR_ENC_NO_KEY with both sides' kids; one for its KEK or its
    device key goes to the device."""
    env = Env(MOTA, WORK)
    try:
        if "--encrypt-kek" not in env.run("pack", "--help", check=False).stdout:
            raise Skip("mota pack has no --encrypt-kek yet")
        a = write_kek(env.p("a.jwk"), "kek-a", bytes([0x11]) * 16)
        c = write_kek(env.p("c.jwk"), "kek-c", bytes([0x33]) * 16)
        proc, port = env.sim("--kek", a, flash="p.flash")
        rel, params = env.model("m", 3000)
        env.run("getpub", "--device", "tcp:" + port, "-o", env.p("dev.pem"))
        made = {}
        for name, how in (("c", ["--encrypt-kek", c]), ("a", ["--encrypt-kek", a]), ("d", ["--encrypt-to",
                                                                                          env.p("dev.pem")])):
            made[name] = env.p(name + ".mota")
            env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", "mota-sim", "--seq", "1",
                    "--params", params, *how, "-o", made[name], rel)
        rc, _, res, err = env.push(port, made["c"])
        assert rc == 1 and res["status"] == "MOTA_ERR_ENC_NO_KEY" and not res["sent"], (rc, res, err)
        assert res["detail"].startswith("kid: device kek-a 0x") and "container kek-c" in res["detail"], res
        assert "not sent" in err, err
        for name in ("a", "d"):  # the device holds these keys: sent (its verdict is the agent's)
            rc, _, res, err = env.push(port, made[name])
            assert res["sent"] and res["status"] != "MOTA_ERR_ENC_NO_KEY", (name, rc, res, err)
        env.stop(proc)
        print("push: a container for kek-c refused before BEGIN (%s); for kek-a and the device key sent" %
              "MOTA_ERR_ENC_NO_KEY")
    finally:
        env.close()


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
