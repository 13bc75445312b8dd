#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mota as a Mender Update Module on a Linux gateway: Debian's mender client (standalone mode, as root)
installs, commits and rolls back Mender artifacts made by `mota mender-artifact`, and the module pushes
each container to the MCUs of the gateway configuration that it fits. Behind one gateway: two `mota sim`
devices (class mota-sim, models network and dense) and, where this build has its firmware, a QEMU an547
board (class mota-an547, the same model names): a container goes to the MCUs of its class only.

The module's wrapper (/usr/share/mender/modules/v3/mota), the inventory script's and
/etc/mender/artifact_info are global: each case holds a lock while it runs and puts back what it found.

usage: test_mender.py MOTA WORK SOURCE_DIR AN547_FIRMWARE_DIR CASE
Exit 0 pass, 1 fail, 77 skipped (mender or mender-artifact absent, not root, or the board's firmware absent:
prints SKIPPED).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "link"))
from harness import PY, Skip, run_case  # noqa: E402
from gateway_lib import BASE, DEVICE_TYPE, SIMS, Gateway, module_lines  # noqa: E402

MOTA, WORK, SRC, FIRMWARE, CASE = sys.argv[1:6]


def gateway():
    return Gateway(MOTA, os.path.join(WORK, CASE), FIRMWARE)


def flash_since(log, start):
    """(erases, programs) of each client connection that ended after offset start of a simulator's stderr."""
    return [(int(e), int(p)) for e, p in re.findall(r"client gone; flash while it was connected: (\d+) erases, "
                                                      r"(\d+) programs", log[start:])]


def board_model_container(env, seq):
    """The dense model built for the an547's Cortex-M55 with its host-reference self-test, packed for its class."""
    if shutil.which("arm-none-eabi-gcc") is None:
        raise Skip("arm-none-eabi-gcc is absent: no model for the board")
    gen = env.p("gen")
    subprocess.run([PY, os.path.join(SRC, "tests", "models", "gen_weights.py"), "dense", gen], check=True,
                   stdout=subprocess.DEVNULL)
    rel = env.p("dense_m55_rel.bin")
    env.run("build-model", "--cpu", "cortex-m55", "-D", "MOTA_MODEL_CPU_PART=0xD22u", "-o", rel,
            os.path.join(SRC, "tests", "models", "dense.c"), os.path.join(gen, "dense_weights.c"))
    out = env.p("dense_v%d.mota" % seq)
    env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", "mota-an547", "--seq", str(seq),
            "--version", "%d.0.0" % seq, "--selftest-input", os.path.join(gen, "dense_in_0.bin"),
            "--selftest-output", os.path.join(gen, "dense_out_0.bin"), "--selftest-max-latency-us", "500000",
            "-o", out, rel)
    return out


def case_install_and_commit_updates_every_matching_mcu_and_leaves_the_others_untouched():
    g = gateway()
    try:
        g.standard()
        v1, v2 = g.sim_containers(1, 2)
        g.baseline(v1)
        board_before = g.snapshot("board") if g.board_port else None
        a2 = g.artifact("sims-v2", v2)
        r = subprocess.run(["mender-artifact", "read", a2], capture_output=True, text=True)
        assert r.returncode == 0 and re.search(r"Type:\s+mota\b", r.stdout), r.stdout
        # a software name per model (its c_name), the container's version
        assert re.search(r"(rootfs-image|mota)\.network\.version: 2\.0\.0", r.stdout), r.stdout

        rc, out = g.mender("install", a2)
        assert rc == 0, out
        for s in SIMS:
            assert g.active(s) == (2, "trial"), (s, g.models(s)["network"], out)
            assert g.models(s)["dense"]["active"] is None, g.models(s)["dense"]
        lines = module_lines(out)
        for n in g.mcus:
            assert [ln for ln in lines if n in ln], ("no line about", n, lines)
        if board_before:
            assert g.snapshot("board") == board_before, ("the board got a container of another class", out)
        assert g.artifact_name() == BASE  # not committed yet

        rc, out = g.mender("commit")
        assert rc == 0, out
        for s in SIMS:
            m = g.models(s)["network"]
            assert (m["active"]["seq"], m["active"]["state"]) == (2, "confirmed") and m["committed_seq"] == 2, (s, m)
        assert g.artifact_name() == "sims-v2"
        rc, out = g.mender("show-provides")
        assert rc == 0 and re.search(r"^(rootfs-image|mota)\.network\.version=2\.0\.0$", out, re.M), out
        assert g.mender("commit")[0] == 2  # nothing pending any more

        inv = g.inventory()
        for s in SIMS:
            assert inv.get("mota.%s.network.version" % s) == "2.0.0", (s, inv)
            assert inv.get("mota.%s.network.seq" % s) == "2", (s, inv)
            assert inv.get("mota.%s.network.state" % s) == "confirmed", (s, inv)
            assert inv.get("mota.%s.reachable" % s) == "yes", (s, inv)
            assert re.fullmatch(r"[0-9a-f]+", inv.get("mota.%s.device_id" % s, "")), (s, inv)
        if not g.board_port:
            raise Skip("the an547 firmware is absent: the board part did not run (the simulators' part passed)")
        assert inv.get("mota.board.network.state") == "none" and inv.get("mota.board.reachable") == "yes", inv
        assert g.snapshot("board") == board_before, "the board changed after the simulators' commit"

        # the board's own artifact: the board only
        sims_before = {s: g.snapshot(s) for s in SIMS}
        ab = g.artifact("board-v1", board_model_container(g.env, 1))
        rc, out = g.mender("install", ab)
        assert rc == 0, (out, open(g.p("board.flash.log")).read()[-1500:])
        assert g.active("board", "dense") == (1, "trial"), g.models("board")
        assert g.active("board", "network") is None
        rc, out = g.mender("commit")
        assert rc == 0, out
        assert g.active("board", "dense") == (1, "confirmed"), g.models("board")
        for s in SIMS:
            assert g.snapshot(s) == sims_before[s], (s, "a simulator got the board's container")
        assert g.artifact_name() == "board-v1"
        inv = g.inventory()
        assert inv.get("mota.board.dense.version") == "1.0.0" and inv.get("mota.board.dense.state") == "confirmed", inv
        assert inv.get("mota.sim1.network.version") == "2.0.0", inv
        print("sims-v2 installed and committed on sim1 and sim2, the board untouched; board-v1 on the board only")
    finally:
        g.close()


def case_a_container_refused_by_its_self_test_fails_the_deployment_and_changes_nothing():
    g = gateway()
    try:
        g.standard()
        v1, = g.sim_containers(1)
        rel, params = g.env.model("net", 2048)
        bad = g.env.pack("bad_v2.mota", rel, params, seq=2, version="2.0.0", selftest="fail")
        g.baseline(v1)
        g.keep_board()
        a = g.artifact("sims-bad", bad)
        rc, out = g.mender("install", a)
        assert rc == 1, (rc, out)
        assert g.artifact_name() == BASE
        refused = 0
        for s in SIMS:
            m = g.models(s)["network"]
            assert (m["active"]["seq"], m["active"]["state"]) == (1, "confirmed") and m["committed_seq"] == 1, (s, m)
            refused += bool(m["last_error"] and "SELFTEST" in json.dumps(m["last_error"]))
        assert refused >= 1, ("no device ran the self-test: the container never reached one", out)
        assert "MOTA_ERR_SELFTEST" in out, ("the device's reason is not in mender's log", out)
        g.assert_board_kept()
        assert g.mender("commit")[0] == 2 and g.mender("rollback")[0] == 2  # nothing left pending
    finally:
        g.close()


def case_mender_rollback_after_install_brings_every_mcu_back():
    g = gateway()
    try:
        g.standard()
        v1, v2 = g.sim_containers(1, 2)
        g.baseline(v1)
        g.keep_board()
        rc, out = g.mender("install", g.artifact("sims-v2", v2))
        assert rc == 0, out
        assert [g.active(s) for s in SIMS] == [(2, "trial")] * 2
        rc, out = g.mender("rollback")
        assert rc == 0, out
        for s in SIMS:
            m = g.models(s)["network"]
            assert (m["active"]["seq"], m["active"]["state"]) == (1, "confirmed") and m["committed_seq"] == 1, (s, m)
        assert g.artifact_name() == BASE
        assert g.mender("rollback")[0] == 2 and g.mender("commit")[0] == 2
        g.assert_board_kept()
        # the same artifact installs again after its rollback
        rc, out = g.mender("install", g.p("sims-v2.mender"))
        assert rc == 0, out
        assert g.mender("commit")[0] == 0 and [g.active(s) for s in SIMS] == [(2, "confirmed")] * 2
        assert g.artifact_name() == "sims-v2"
    finally:
        g.close()


def case_an_older_container_is_refused_and_nothing_changes():
    g = gateway()
    try:
        g.standard()
        v1, v2 = g.sim_containers(1, 2)
        g.baseline(v1)
        g.baseline(v2)
        g.keep_board()
        kept = ("active", "previous", "upload", "committed_seq")
        before = {s: {f: g.models(s)["network"][f] for f in kept} for s in SIMS}
        rc, out = g.mender("install", g.artifact("sims-v1", v1))
        assert rc == 1, (rc, out)
        assert "MOTA_ERR_ROLLBACK" in out, ("the device's reason is not in mender's log", out)
        for s in SIMS:
            m = g.models(s)["network"]
            assert (m["active"]["seq"], m["active"]["state"]) == (2, "confirmed") and m["previous"]["seq"] == 1, (s, m)
            assert {f: m[f] for f in kept} == before[s], (s, m, before[s])
        assert g.artifact_name() == BASE
        g.assert_board_kept()
    finally:
        g.close()


def case_an_mcu_that_reverts_itself_before_commit_fails_the_commit_and_the_others_roll_back():
    g = gateway()
    try:
        g.sim("sim1", "--trial-boots", "1")
        g.sim("sim2")
        g.board()
        g.write_conf()
        v1, v2 = g.sim_containers(1, 2)
        g.baseline(v1)
        rc, out = g.mender("install", g.artifact("sims-v2", v2))
        assert rc == 0, out
        assert [g.active(s) for s in SIMS] == [(2, "trial")] * 2
        for _ in range(5):  # sim1 reboots until its trial runs out and it returns to v1 by itself
            g.env.run("reboot", "--timeout", "10", "tcp:" + g.mcus["sim1"], timeout=60)
            st = g.env.wait_status(g.mcus["sim1"], 20)
            assert st is not None, "sim1 did not come back"
            if g.active("sim1") == (1, "confirmed"):
                break
        assert g.active("sim1") == (1, "confirmed"), g.models("sim1")["network"]
        rc, out = g.mender("commit")
        assert rc == 1, (rc, out)
        assert g.active("sim2") == (1, "confirmed"), ("sim2 was not rolled back", g.models("sim2")["network"], out)
        assert g.active("sim1") == (1, "confirmed")
        name = g.artifact_name()
        assert name == BASE and not name.endswith("_INCONSISTENT"), name
        assert g.mender("commit")[0] == 2
    finally:
        g.close()


def case_one_unreachable_mcu_fails_the_deployment_and_the_others_are_rolled_back():
    g = gateway()
    try:
        g.standard()
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        ghost = s.getsockname()[1]
        s.close()  # nothing listens there any more
        g.write_conf(["ghost tcp:127.0.0.1:%d --timeout 2" % ghost])
        v1, v2 = g.sim_containers(1, 2)
        g.baseline(v1)
        g.keep_board()
        a2 = g.artifact("sims-v2", v2)
        t = time.time()
        rc, out = g.mender("install", a2)
        took = time.time() - t
        assert rc == 1, (rc, out)
        assert [ln for ln in module_lines(out) if "ghost" in ln], ("the unreachable MCU is not named", out)
        name = g.artifact_name()
        assert name == BASE and not name.endswith("_INCONSISTENT"), (name, out)
        for n in SIMS:
            m = g.models(n)["network"]
            assert (m["active"]["seq"], m["active"]["state"]) == (1, "confirmed"), (n, m, out)
        g.assert_board_kept()
        inv = g.inventory()
        assert inv.get("mota.ghost.reachable") == "no" and inv.get("mota.sim1.reachable") == "yes", inv
        assert inv.get("mota.sim1.network.version") == "1.0.0", inv
        # without it the same artifact installs: the unreachable MCU was the reason
        g.write_conf(leave_out=("ghost",))
        rc, out = g.mender("install", a2)
        assert rc == 0, out
        assert g.mender("commit")[0] == 0 and [g.active(n) for n in SIMS] == [(2, "confirmed")] * 2
        print("the deployment failed in %.1f s with ghost unreachable; without it, it installs" % took)
    finally:
        g.close()


def module_pgids(data):
    """Process groups of the module's processes on this case's mender data directory."""
    groups = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().split(b"\0")
            if b"mender-module" in cmd and any(a.startswith(data.encode()) for a in cmd):
                groups.add(os.getpgid(int(pid)))
        except (OSError, ProcessLookupError):
            pass
    return groups


def module_running(data, state):
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    cmd = f.read().split(b"\0")
            except OSError:
                continue
            if b"mender-module" in cmd and state.encode() in cmd and any(a.startswith(data.encode()) for a in cmd):
                return True
    return False


def case_a_module_killed_mid_push_resumes_and_installs_once():
    g = gateway()
    try:
        g.standard("--baud", "115200")
        v1, = g.sim_containers(1)
        v2, = g.sim_containers(2, params=160000, tag="big")
        size = os.path.getsize(v2)
        # what the whole upload of v2 erases on a simulator that runs v1: measured on one nobody interrupts
        ref = g.sim("ref")
        g.baseline(v1, names=("ref",))
        rc, _, res, err = g.env.push(ref, v2)
        assert rc == 0 and res["installed"], (rc, res, err)
        time.sleep(0.3)
        full_erases = int(re.findall(r"upload over: (\d+) erases", g.sim_log("ref"))[-1])
        del g.mcus["ref"]
        g.baseline(v1)
        marks = {s: len(g.sim_log(s)) for s in SIMS}
        a2 = g.artifact("big-v2", v2)

        mlog = open(g.p("killed-install.log"), "w")
        inst = subprocess.Popen(g.mender_cmd("install", a2), stdout=mlog, stderr=subprocess.STDOUT, env=g.menv)
        end = time.time() + 60
        while not module_running(g.data, "ArtifactInstall"):
            assert inst.poll() is None and time.time() < end, ("ArtifactInstall never ran", open(mlog.name).read())
            time.sleep(0.05)
        time.sleep(6)  # about 60 KiB of the 160 KiB on each 115200-baud line
        assert inst.poll() is None, ("the install ended before it was killed", open(mlog.name).read())
        inst.kill()
        inst.wait()
        for pg in module_pgids(g.data):
            os.killpg(pg, signal.SIGKILL)
        end = time.time() + 10
        while module_pgids(g.data):
            assert time.time() < end, "the module's processes outlived SIGKILL"
            time.sleep(0.1)
        kept = {}
        for s in SIMS:
            st = g.env.wait_status(g.mcus[s], 20)
            assert st is not None, s
            m = [m for m in st["models"] if m["name"] == "network"][0]
            assert m["active"]["seq"] == 1 and m["upload"] and m["upload"]["length"] == size, (s, m)
            kept[s] = m["upload"]["offset"]
            assert 4096 <= kept[s] < size, (s, "killed too early or too late to show a resume", m["upload"])
        before = {s: flash_since(g.sim_log(s), marks[s]) for s in SIMS}
        kill_marks = {s: len(g.sim_log(s)) for s in SIMS}

        # what a user does: mender has nothing pending (the install never finished), so install again
        rc, out = g.mender("install", a2)
        assert rc == 0, out
        time.sleep(0.3)
        for s in SIMS:
            m = g.models(s)["network"]
            assert (m["active"]["seq"], m["active"]["state"]) == (2, "trial") and m["previous"]["seq"] == 1, (s, m)
            log = g.sim_log(s)
            assert len(re.findall(r"upload over", log[marks[s]:])) == 1, (s, "installed more than once", log[marks[s]:])
            pre = sum(e for e, _ in before[s])
            post = sum(e for e, _ in flash_since(log, kill_marks[s]))
            # resumed: the sectors erased before the kill are not erased again
            assert pre >= 2 and post <= full_erases - pre + 1, (s, "erases before/after the kill, whole upload", pre,
                                                                post, full_erases)
        assert g.mender("commit")[0] == 0
        assert [g.active(s) for s in SIMS] == [(2, "confirmed")] * 2
        assert g.artifact_name() == "big-v2"
        print("killed with %s of %d bytes kept; the second install resumed there and installed once"
              % (kept, size))
    finally:
        g.close()


def mender_dir(g, d, artifact, container):
    """A module working directory laid out as mender 3.4 makes it (files/, tmp/, header/), from the artifact."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "files"))
    os.makedirs(os.path.join(d, "tmp"))
    os.makedirs(os.path.join(d, "header"))
    with tarfile.open(artifact) as outer:
        hdr = tarfile.open(fileobj=outer.extractfile("header.tar.gz"), mode="r:gz")
        info = hdr.extractfile("header-info").read()
        type_info = hdr.extractfile("headers/0000/type-info").read()
        try:
            meta = hdr.extractfile("headers/0000/meta-data").read()
        except KeyError:
            meta = b"null"
    name = json.loads(info)["artifact_provides"]["artifact_name"]
    for rel, data in (("version", b"3"), ("current_artifact_name", BASE.encode()), ("current_artifact_group", b""),
                      ("current_device_type", DEVICE_TYPE.encode()), ("header/header-info", info),
                      ("header/type-info", type_info), ("header/meta-data", meta),
                      ("header/artifact_name", name.encode()), ("header/artifact_group", b""),
                      ("header/payload_type", b"mota")):
        with open(os.path.join(d, rel), "wb") as f:
            f.write(data)
    shutil.copy(container, os.path.join(d, "files", os.path.basename(container)))
    return d


def case_every_state_run_twice_on_a_saved_dir_does_the_right_thing():
    g = gateway()
    try:
        g.standard()
        v1, v2, v3 = g.sim_containers(1, 2, 3)
        g.baseline(v1)
        g.keep_board()
        da = mender_dir(g, g.p("dir-a"), g.artifact("sims-v2", v2), v2)
        db = mender_dir(g, g.p("dir-b"), g.artifact("sims-v3", v3), v3)
        for d in (da, db):
            for _ in range(2):
                r = g.module("SupportsRollback", d)
                assert r.returncode == 0 and r.stdout.strip() == "Yes", (r.stdout, r.stderr)
                r = g.module("NeedsArtifactReboot", d)
                assert r.returncode == 0 and r.stdout.strip() == "No", (r.stdout, r.stderr)

        def run_twice(state, d, expect, what):
            for i in range(2):
                marks = {s: len(g.sim_log(s)) for s in SIMS}
                r = g.module(state, d)
                assert r.returncode == 0, (state, i, r.returncode, r.stderr)
                for s in SIMS:
                    assert g.active(s) == expect, (state, i, s, g.models(s)["network"], r.stderr)
                if i == 1 and what:  # the second run did nothing to the flash
                    time.sleep(0.2)
                    for s in SIMS:
                        used = flash_since(g.sim_log(s), marks[s])
                        assert sum(e + p for e, p in used) == 0 and "upload over" not in g.sim_log(s)[marks[s]:], \
                            (state, s, what, used)

        run_twice("ArtifactInstall", da, (2, "trial"), "installed again")
        run_twice("ArtifactCommit", da, (2, "confirmed"), "")
        run_twice("ArtifactInstall", db, (3, "trial"), "installed again")
        run_twice("ArtifactRollback", db, (2, "confirmed"), "")
        for d in (da, db):
            for i in range(2):
                r = g.module("Cleanup", d)
                assert r.returncode == 0, ("Cleanup", d, i, r.stderr)
        for s in SIMS:
            m = g.models(s)["network"]
            assert m["committed_seq"] == 2 and m["active"]["seq"] == 2, (s, m)
        g.assert_board_kept()
    finally:
        g.close()


def case_a_busy_port_is_retried_until_the_device_is_free():
    g = gateway()
    try:
        g.standard()
        v1, v2 = g.sim_containers(1, 2)
        g.baseline(v1)
        a2 = g.artifact("sims-v2", v2)
        host, port = g.mcus["sim1"].rsplit(":", 1)
        mark = len(g.sim_log("sim1"))
        holder = socket.create_connection((host, int(port)))  # sim1's one client: silent, for 3 s
        time.sleep(0.3)
        inst = subprocess.Popen(g.mender_cmd("install", a2), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=g.menv)
        time.sleep(3)
        holder.close()
        out, _ = inst.communicate(timeout=400)
        with open(g.mlog, "a") as f:
            f.write("$ mender install %s (sim1 held for 3 s)\nexit %d\n%s\n" % (a2, inst.returncode, out))
        assert inst.returncode == 0, out
        assert "answered MOTA_ERR_BUSY" in g.sim_log("sim1")[mark:], ("sim1 was never asked while held",
                                                                     g.sim_log("sim1")[mark:])
        assert [g.active(s) for s in SIMS] == [(2, "trial")] * 2
        assert g.mender("commit")[0] == 0
        assert [g.active(s) for s in SIMS] == [(2, "confirmed")] * 2
        assert g.artifact_name() == "sims-v2"
    finally:
        g.close()


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
