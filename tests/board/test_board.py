#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""System tests of the firmware on the QEMU boards (mps3-an547, Cortex-M55;
mps2-an505, Cortex-M33; mps2-an386, Cortex-M4; mps2-an500, Cortex-M7), through
`mota` commands only, as a user drives a board: `mota sim --target TARGET`,
push, status, confirm, reboot, invoke. One test list for every board; one case
per run.

usage: test_board.py MOTA SOURCE_DIR FIXTURES_DIR WORKDIR TARGET CASE
"""
import hashlib
import json
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "link"))
from harness import Env, RawLink  # noqa: E402

# What the cases need to know of each board: its CPU (models are built for it) and its architecture (Armv8-M
# with the Security Extension, or Armv7-M: no Secure state), addresses a hostile model reaches for: the agent's
# RAM, the provisioning record, the watchdog; the board whose CPU model it must refuse.
BOARDS = {
    # the power-cut sweeps in CI: 12 rounds here (4 of each phase), half on the an505, a third on the Armv7-M
    # boards: the flash and journal code is the same layer on all (ports/mps/common), and the suite stays within
    # its 15 minutes on two cores. MOTA_CUT_ROUNDS=N runs N on any board (docs/ci.md: a long sweep).
    "an547": {"cpu": "cortex-m55", "part": 0xD22, "arch": "v8-m", "ram": 0x20000000, "flash": 0x60000000,
              "wdog": 0x5802E000, "other": "an505", "cut_rounds": 12},
    "an505": {"cpu": "cortex-m33", "part": 0xD21, "arch": "v8-m", "ram": 0x38000000, "flash": 0x80000000,
              "wdog": 0x5002E000, "other": "an547", "cut_rounds": 6},
    # the Armv7-M boards (the flash on each board's PSRAM, at two addresses)
    "an386": {"cpu": "cortex-m4", "part": 0xC24, "arch": "v7-m", "ram": 0x20000000, "flash": 0x21000000,
              "wdog": 0x40008000, "other": "an500", "cut_rounds": 4},
    "an500": {"cpu": "cortex-m7", "part": 0xC27, "arch": "v7-m", "ram": 0x20000000, "flash": 0x60000000,
              "wdog": 0x40008000, "other": "an386", "cut_rounds": 4},
    # the NUCLEO-F401RE port on QEMU's STM32F405 (ports/stm32/netduinoplus2): its flash the F401's layout
    # (mota/nucleo_f401re_layout.h: the record in sector 7, one model's A/B pair), no ECC (mixed sectors), the
    # IWDG's key register the watchdog a hostile model reaches for
    "netduinoplus2": {"cpu": "cortex-m4", "part": 0xC24, "arch": "v7-m", "ram": 0x20000000, "flash": 0x08000000,
                      "record": 0x60000, "slots": (0x20000, 0x60000), "wdog": 0x40003000 - 0xC00, "other": "an547", "cut_rounds": 4,
                      "models": 1, "ecc": False, "erase": (128 * 1024, 4000)},
}
MOTA, SRC, FIXTURES, WORK, TARGET, CASE = sys.argv[1:7]
# the build under test: the full one, or MOTA_VARIANT=min (cmake/features.cmake: one model, no legacy models, no
# decompressor, no epoch summary) from MOTA_MIN_FIRMWARE, where the list's cases that need what it leaves out
# are skipped, saying so
VARIANT = os.environ.get("MOTA_BOARD_VARIANT", "full")
MIN_FIRMWARE = os.environ.get("MOTA_MIN_FIRMWARE", "")
# the board's firmware (tests/CMakeLists.txt): an STM32 board's is not built without ST's sources
FIRMWARE = os.environ.get("MOTA_BOARD_FIRMWARE", "")
if FIRMWARE and VARIANT == "full" and not os.path.exists(FIRMWARE):
    print("SKIPPED: no %s firmware at %s (an STM32 board's needs ST's sources: scripts/build-firmware.sh)"
          % (TARGET, FIRMWARE))
    sys.exit(77)
B = BOARDS[TARGET]
TAG = "mota-%s: " % TARGET
CLASS = "mota-" + TARGET
env = Env(MOTA, os.path.join(WORK, TARGET, CASE))
GEN = env.p("gen")
FLASH_SIZE, SECTOR = 16 << 20, 4096
# the provisioning record's offset in the board's flash file, and the slots' range (mota/mps_layout.h: the
# journal's two sectors, then the slots up to the record; an STM32 board's from its layout header)
RECORD = B.get("record", FLASH_SIZE - SECTOR)
SLOTS = B.get("slots", (2 * SECTOR, FLASH_SIZE - SECTOR))


def build_model(out, *sources, board=B):
    """mota build-model for a board's CPU: its -mcpu (its FPU comes with it: single precision on the M33 and
    the M4, double on the M7) and its part number in the model's flags word."""
    env.run("build-model", "--cpu", board["cpu"], "-D", "MOTA_MODEL_CPU_PART=0x%Xu" % board["part"], "-o", out,
            *sources)
    return out


def model(name="dense", board=B):
    """A CPU model built by mota build-model, with the host reference's vectors."""
    subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "models", "gen_weights.py"), name, GEN],
                   check=True, stdout=subprocess.DEVNULL)
    return build_model(env.p("%s_%s_rel.bin" % (name, board["cpu"])), os.path.join(SRC, "tests", "models", name + ".c"),
                       os.path.join(GEN, name + "_weights.c"), board=board)


def vec(kind, i, name="dense"):
    return os.path.join(GEN, "%s_%s_%d.bin" % (name, kind, i))


# The self-test's latency budget: QEMU's clock is wall time without -icount, and a loaded two-core host can
# stall a board for a tenth of a second; the hostile cases set their own to test the budget itself.
def pack(out, rel, seq, expect=None, key="k.pem", cls=CLASS, selftest=True, budget_us=500000, compress=None,
         encrypt=(), extra=()):
    args = ["pack", "-k", env.p(key), "--vendor", "example.com", "--class", cls, "--seq", str(seq),
            "--version", "%d.0.0" % seq, "-o", env.p(out)] + (["--compress=" + compress] if compress else [])
    args += list(encrypt) + list(extra)  # --encrypt-kek FILE, --encrypt-to PUB.pem, --cipher; --delta-from
    if selftest:
        args += ["--selftest-input", vec("in", 0), "--selftest-output", expect or vec("out", 0),
                 "--selftest-max-latency-us", str(budget_us)]
    env.run(*args, rel)
    return env.p(out)


def needs(what):
    """A case the min build cannot run (what: two models, legacy models, compression), or this board (two
    models where it has one A/B pair): skipped there."""
    if VARIANT == "min":
        print("SKIPPED: needs %s, which the min build leaves out" % what)
        sys.exit(77)
    if what == "two models" and B.get("models", 2) < 2:
        print("SKIPPED: needs two models; the %s serves one" % TARGET)
        sys.exit(77)


# the model slots a board is provisioned with: as many as its build serves
MODELS = ["dense"] if VARIANT == "min" or B.get("models", 2) < 2 else ["dense", "network"]


class Board:
    """The launcher with its QEMU board on a flash file of this case."""

    def __init__(self, *extra, flash="board.flash", provision=True):
        args = []
        if provision:
            args += ["--key", env.p("k.pub.pem"), *[a for m in MODELS for a in ("--model", m)], "--trial-boots", "2"]
        if VARIANT == "min":
            assert os.path.exists(MIN_FIRMWARE), "MOTA_BOARD_VARIANT=min needs MOTA_MIN_FIRMWARE"
            args += ["--firmware", MIN_FIRMWARE]
        self.flash = env.p(flash)
        self.proc, self.port = env.board(self.flash, *args, *extra, target=TARGET)
        self.wait_ready()

    def wait_ready(self, timeout=30):
        """The device answers (a board boots in well under a second)."""
        st = env.wait_status(self.port, timeout)
        assert st is not None, "board did not answer: " + self.log()
        return st

    @staticmethod
    def log_of(flash):
        try:
            return open(flash + ".log").read()
        except OSError:
            return ""

    def log(self):
        return Board.log_of(self.flash)

    def status(self):
        return self.wait_ready()

    def dense(self):
        st = self.status()
        return [m for m in st["models"] if m["name"] == "dense"][0], st

    def push(self, container, *extra):
        return env.push(self.port, container, *extra, timeout=120)

    def push_ok(self, container, *extra):
        """A push that must succeed: what the host and the board said if it does not."""
        rc, _, res, err = self.push(container, *extra)
        assert rc == 0, (container, rc, res, err, self.log()[-1500:])
        return res

    def invoke(self, inp, size=10):
        r = env.run("invoke", "--json", "--input", inp, "--output-size", str(size), "tcp:" + self.port)
        return bytes.fromhex(json.loads(r.stdout)["output"])

    def cmd(self, *args):
        return env.run(*args, "tcp:" + self.port, check=False)

    def stop(self):
        """Off: the launcher ends its QEMU and releases the flash file before this returns."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def assert_runs_v(board, seq, confirmed=True):
    m, _ = board.dense()
    assert m["active"] and m["active"]["seq"] == seq and (m["active"]["state"] == "trial") is (not confirmed), m
    for i in range(3):
        got = board.invoke(vec("in", i))
        assert got == open(vec("out", i), "rb").read(), (i, got.hex())


def slots_region():
    with open(env.p("board.flash"), "rb") as f:
        f.seek(SLOTS[0])
        return f.read(SLOTS[1] - SLOTS[0])


def case_v1_is_installed_runs_and_answers_like_the_reference():
    rel = model()
    v1 = pack("v1.mota", rel, 1)
    b = Board()
    rc, _, res, err = b.push(v1, "--confirm")
    assert rc == 0 and res["status"] == "MOTA_OK" and res["confirmed"], (rc, res, err)
    assert_runs_v(b, 1)
    assert "boot, reset cause power-on" in b.log()
    # its inputs and outputs, as the model's size entries say them; invoke takes its output size from there,
    # and an input of another size is refused with the model's sizes before anything is sent
    m, st = b.dense()
    in_size = os.path.getsize(vec("in", 0))
    assert m["io"]["input_bytes"] == in_size and m["io"]["output_bytes"] == 10, m["io"]
    text = b.cmd("status").stdout
    assert "  inputs:    1 tensor, %d bytes\n  outputs:   1 tensor, 10 bytes\n" % in_size in text, text
    # the names its provisioning record keeps, beside the ids
    assert "identity: vendor example.com (id %s), class %s (id %s)" % (
        st["device"]["vendor_id"], CLASS, st["device"]["class_id"]) in text, text
    r = env.run("invoke", "--json", "--input", vec("in", 0), "tcp:" + b.port)
    assert bytes.fromhex(json.loads(r.stdout)["output"]) == open(vec("out", 0), "rb").read(), r.stdout
    short = env.p("short.in")
    with open(short, "wb") as f:
        f.write(b"\1" * (in_size - 1))
    r = b.cmd("invoke", "--json", "--input", short)
    d = json.loads(r.stdout)
    assert r.returncode == 1 and d["status"] == "MOTA_ERR_SELFTEST_RUN", (r.returncode, d)
    assert "model dense takes %d input bytes and gives 10 output bytes (mota status); given %d input bytes" % (
        in_size, in_size - 1) in d["detail"], d
    vi, vo = env.p("short_in"), env.p("short_out")  # validate checks the same sizes before it sends a sample
    for d_, data in ((vi, b"\1" * (in_size - 1)), (vo, open(vec("out", 0), "rb").read())):
        os.makedirs(d_, exist_ok=True)
        with open(os.path.join(d_, "s0.bin"), "wb") as f:
            f.write(data)
    r = b.cmd("validate", "--json", "--inputs", vi, "--outputs", vo)
    d = json.loads(r.stdout)
    assert r.returncode == 1 and d["status"] == "MOTA_ERR_SELFTEST_RUN" and "takes %d input bytes" % in_size in \
        d["detail"], d
    # the profile the firmware reads from the hardware is the one `mota sim --profile TARGET` simulates, and
    # with the same model slots the simulated device lays them out as the board does: the largest container
    # (a power of two on the Armv7-M boards) and the exec RAM each model gets
    board_st = b.status()
    board_profile = board_st["profile"]
    sim, port = env.start([MOTA, "sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem"), "--flash",
                           env.p("profile.flash"), "--profile", TARGET, *[a for m in MODELS for a in ("--model", m)]],
                          r"listening on tcp:(\S+)")
    sim_st = json.loads(env.run("status", "--json", "tcp:" + port).stdout)
    sim_profile = sim_st["profile"]
    env.stop(sim)
    if VARIANT == "min":  # the profile says the families its build runs: the NBIN v8 one alone
        sim_profile["families"] = [f for f in sim_profile["families"] if f != "legacy"]
    assert board_profile == sim_profile and board_profile["name"] == TARGET, (board_profile, sim_profile)
    slots = lambda st: [(m["name"], m["max_container"], m["memory"]["exec_ram"]) for m in st["models"]]  # noqa: E731
    assert slots(board_st) == slots(sim_st), (slots(board_st), slots(sim_st))
    # the I/O buffer holds one exchange (on these boards it is the guard's model I/O area): an INVOKE between
    # INPUT, RUN and OUTPUT never passes its own data off as theirs
    i0, i1 = (open(vec("in", i), "rb").read() for i in (0, 1))
    o0, o1 = (open(vec("out", i), "rb").read() for i in (0, 1))
    link = RawLink(b.port)
    link.request(1, struct.pack("<BH", 1, 512))  # HELLO
    put = lambda data: link.request(12, struct.pack("<I", 0) + data)[0]  # noqa: E731  INPUT
    run = lambda: link.request(13, struct.pack("<BI", 0, len(o1)))[0]  # noqa: E731  RUN
    out = lambda: link.request(14, struct.pack("<IH", 0, len(o1)))  # noqa: E731  OUTPUT
    invoke = lambda data: link.request(11, struct.pack("<BH", 0, len(o0)) + data)  # noqa: E731  INVOKE
    assert put(i1) == 0 and run() == 0 and out() == (0, o1)
    assert put(i1) == 0 and invoke(i0)[0] == 0 and invoke(i0)[1][4:] == o0
    assert run() != 0, "RUN ran on an input an INVOKE replaced"
    assert put(i1) == 0 and run() == 0 and invoke(i0)[0] == 0
    assert out()[0] == -908, "OUTPUT gave an INVOKE's output as RUN's"  # MOTA_ERR_PROTO_NO_OUTPUT
    link.close()
    # one host at a time, as on a cable: a second client is told the device is busy
    host, p = b.port.rsplit(":", 1)
    holder = socket.create_connection((host, int(p)))
    time.sleep(0.3)
    r = b.cmd("status", "--timeout", "10")
    holder.close()
    assert r.returncode == 5 and "MOTA_ERR_BUSY" in r.stderr, (r.returncode, r.stderr)
    print("v1 self-tested on the %s (real output), confirmed; invoke equals the host reference on 3 vectors; "
          "its profile and slots are --profile %s's (%s)" % (B["cpu"], TARGET, slots(board_st)))


def case_v2_whose_expected_output_is_wrong_is_refused_and_v1_still_runs():
    rel = model()
    b = Board()
    b.push_ok(pack("v1.mota", rel, 1), "--confirm")
    wrong = env.p("wrong.out")
    ref = bytearray(open(vec("out", 0), "rb").read())
    ref[3] ^= 0x40
    open(wrong, "wb").write(ref)
    rc, _, res, _ = b.push(pack("v2.mota", rel, 2, expect=wrong))
    assert rc == 1 and res["status"] == "MOTA_ERR_SELFTEST_OUTPUT" and not res["installed"], res
    # the facts, from a firmware without message strings: the digests' first 8 bytes, produced and expected
    digest = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()[:16]  # noqa: E731
    if VARIANT == "min":  # a build without refusal details: the device's output is its own to tell
        assert res["detail"] == "", res
    else:
        assert res["detail"] == "output_sha256: device %s, model %s" % (digest(vec("out", 0)), digest(wrong)), res
    assert_runs_v(b, 1)
    m, st = b.dense()
    e = m["last_error"]
    assert e["code"] == -807 and e["this_boot"] is True and e["at_ms"] <= st["device"]["uptime_ms"], (m, st["device"])
    # an older push refused at its number, both named; then a reboot: the error is of an earlier boot
    rc, _, res, _ = b.push(pack("v0.mota", rel, 0))
    said = "seq: committed 1 on the device, offered 0; pack with --seq above 1" if VARIANT == "min" else \
        "seq: device 1, model 0"  # the host's facts where the device's build sends none
    assert res["status"] == "MOTA_ERR_ROLLBACK" and res["detail"] == said, res
    assert b.cmd("reboot").returncode == 0
    time.sleep(0.5)
    m, _ = b.dense()
    assert m["last_error"]["code"] == -807 and m["last_error"]["this_boot"] is False, m  # journaled: the self-test's; the head refusal was not
    print("v2 refused by its self-test run on the device (MOTA_ERR_SELFTEST_OUTPUT, %s); v1 runs" % res["detail"])


def case_invoke_moves_an_input_and_an_output_larger_than_a_frame():
    """The wide model takes 600 bytes and gives 1200: more than a 512-byte frame each way, so `mota invoke`
    sends the input in pieces, runs the model and reads the output in windows (INPUT, RUN, OUTPUT)."""
    subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "models", "gen_weights.py"), "wide", GEN],
                   check=True, stdout=subprocess.DEVNULL)
    rel = build_model(env.p("wide_rel.bin"), os.path.join(SRC, "tests", "models", "wide.c"),
                      os.path.join(GEN, "wide_weights.c"))
    w = env.p("wide.mota")
    env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", CLASS, "--seq", "1", "--version",
            "1.0.0", "--selftest-input", vec("in", 0, "wide"), "--selftest-output", vec("out", 0, "wide"),
            "--selftest-max-latency-us", "500000", "-o", w, rel)
    second = ["--model", "dense"] if len(MODELS) > 1 else []  # a board that serves two: the other slot too
    b = Board("--key", env.p("k.pub.pem"), "--model", "wide", *second, provision=False)
    b.push_ok(w, "--confirm")
    hello = b.status()["device"]
    assert hello["max_payload"] < 600 and hello["io_buffer"] >= 608 + 1200, hello  # frames too small, the I/O buffer not
    for i in range(3):
        got = b.invoke(vec("in", i, "wide"), size=1200)
        assert got == open(vec("out", i, "wide"), "rb").read(), (i, got.hex())
    # an output the model does not give (more than the buffer holds, too): refused before anything is sent,
    # with the model's sizes as the board says them
    r = b.cmd("invoke", "--input", vec("in", 0, "wide"), "--output-size", str(hello["io_buffer"]))
    assert r.returncode == 1 and "MOTA_ERR_SELFTEST_RUN" in r.stderr and \
        "model wide takes 600 input bytes and gives 1200 output bytes" in r.stderr, r.stderr
    # validate: the same model on every vector against the host reference, with the board's latency figures
    ins, refs = env.p("v_in"), env.p("v_out")
    os.makedirs(ins, exist_ok=True)
    os.makedirs(refs, exist_ok=True)
    n = 0
    while os.path.exists(vec("in", n, "wide")):
        for kind, d in (("in", ins), ("out", refs)):
            with open(vec(kind, n, "wide"), "rb") as src, open(os.path.join(d, "v%02d.bin" % n), "wb") as dst:
                dst.write(src.read())
        n += 1
    j = json.loads(b.cmd("validate", "--json", "--model", "wide", "--inputs", ins, "--outputs", refs).stdout)
    assert j["status"] == "MOTA_OK" and j["samples"] == n >= 3 and j["errors"]["exact"] == n, j
    lat = j["latency_us"]  # a run can be shorter than the board clock's tick: 0 is a measurement
    assert 0 <= lat["min"] <= lat["median"] <= lat["max"] and lat["min"] <= lat["mean"] <= lat["max"], lat
    print("invoke of the wide model (600 bytes in, 1200 out, %d-byte frames) through the %d-byte I/O buffer "
          "equals the host reference on 3 vectors; validate: %d of %d exact, latency min/median/max %d/%d/%d us"
          % (hello["max_payload"], hello["io_buffer"], j["errors"]["exact"], n, lat["min"], lat["median"], lat["max"]))


def case_unconfirmed_v2_is_reverted_after_the_trial_boots():
    rel = model()
    b = Board()
    b.push_ok(pack("v1.mota", rel, 1), "--confirm")
    b.push_ok(pack("v2.mota", rel, 2))
    m, _ = b.dense()
    assert m["active"]["seq"] == 2 and m["active"]["state"] == "trial", m
    for _ in range(3):  # 2 trial boots are allowed; the third reboot reverts
        assert b.cmd("reboot").returncode == 0
        time.sleep(0.5)
        m, st = b.dense()
    assert m["active"]["seq"] == 1 and m["active"]["state"] == "confirmed" and m["last_error"]["code"] == -815, m  # MOTA_ERR_TRIAL_EXPIRED
    assert st["device"]["boot_cause"] == "software reset", st["device"]  # booted after a software reset
    text = b.cmd("status").stdout
    assert "seq 1 v1.0.0" in text and "MOTA_ERR_TRIAL_EXPIRED" in text, text
    assert_runs_v(b, 1)
    print("v2 on trial, never confirmed: reverted to v1 at the third reboot (MOTA_ERR_TRIAL_EXPIRED)")


def case_unconfirmed_v2_is_reverted_by_the_watchdog_when_the_application_hangs():
    rel = model()
    v1, v2 = pack("v1.mota", rel, 1), pack("v2.mota", rel, 2)
    b = Board()
    assert b.push(v1, "--confirm")[0] == 0
    b.stop()
    b = Board("--hang-on-trial")
    b.push(v2)  # its answer may or may not beat the hang
    end = time.time() + 30
    while time.time() < end:
        if "reset cause watchdog" in b.log():
            break
        time.sleep(0.3)
    assert "watchdog expired" in b.log() and "reset cause watchdog" in b.log(), b.log()
    m, st = b.dense()
    assert m["active"]["seq"] == 1 and m["active"]["state"] == "confirmed" and m["last_error"]["code"] == -816, m  # MOTA_ERR_WATCHDOG
    assert st["device"]["boot_cause"] == "watchdog reset", st["device"]
    assert "MOTA_ERR_WATCHDOG" in b.cmd("status").stdout
    assert_runs_v(b, 1)
    print("the application hung with v2 on trial: watchdog NMI, reset, v1 runs again (MOTA_ERR_WATCHDOG)")


def case_st_n6_model_is_refused_before_any_flash_erase():
    n6 = os.path.join(FIXTURES, "st-n6", "yolov8n_network_rel.bin")
    if not os.path.exists(n6):
        print("SKIPPED: ../shared/fixtures absent")
        sys.exit(77)
    rel = model()
    one_slot = VARIANT == "min" or B.get("models", 2) < 2
    if one_slot:  # its one model slot is the N6 model's ("network"): nothing runs before it
        b = Board("--key", env.p("k.pub.pem"), "--model", "network", provision=False)
    else:
        b = Board()
        b.push_ok(pack("v1.mota", rel, 1), "--confirm")
    before = slots_region()
    c = pack("n6.mota", n6, 5, selftest=False)
    t0 = time.time()
    rc, _, res, err = b.push(c)
    took = time.time() - t0
    # an NPU model for a Cortex-M55: on the M55 board the NPU rule refuses it, on the others the CPU rule comes first
    reason, detail = (("MOTA_ERR_COMPAT_NPU", "npu: device 0x0, model 0x1") if B["part"] == 0xD22 else
                      ("MOTA_ERR_COMPAT_CPU", "cpu_part: device 0x%x, model 0xd22" % B["part"]))
    assert rc == 1 and res["status"] == reason and not res["installed"], (res, err)
    assert res["detail"] == detail and detail in err, (res, err)
    assert slots_region() == before, "a slot changed: something was erased or written"
    assert took < 20, took  # the head only: 3.3 MB at UART speed would take minutes
    if not one_slot:
        assert_runs_v(b, 1)
    print("yolov8n (3.3 MB) refused after its head in %.1f s: %s (%s); no flash byte of the slots changed"
          % (took, reason, detail))


def case_model_for_the_other_cpu_is_refused_before_any_flash_erase():
    """The other board's model (Cortex-M55 on an505, Cortex-M33 on an547, Cortex-M7 on an386, Cortex-M4 on
    an500), and on the an505 a Cortex-M4 one too: refused on its head with the CPU reason and both part
    numbers, before anything is erased; v1 still runs. (An M4 model on the M7 is refused too: the part number
    must equal the device's, loader/src/compat.c.)"""
    rel = model()
    b = Board()
    b.push_ok(pack("v1.mota", rel, 1), "--confirm")
    before = slots_region()
    others = [B["other"]] + (["an386"] if TARGET == "an505" else [])
    for name in others:
        other = BOARDS[name]
        rc, _, res, err = b.push(pack("other_%s.mota" % name, model(board=other), 2))
        assert rc == 1 and res["status"] == "MOTA_ERR_COMPAT_CPU" and not res["installed"], (name, res, err)
        detail = "cpu_part: device 0x%x, model 0x%x" % (B["part"], other["part"])
        assert res["detail"] == detail and detail in err, (res, err)
        assert slots_region() == before, "a slot changed: something was erased or written"
        assert_runs_v(b, 1)
        print("a %s model refused on the %s board: MOTA_ERR_COMPAT_CPU (%s); no flash byte of the slots changed; "
              "v1 runs" % (other["cpu"], TARGET, detail))


def case_hostile_containers_are_refused_and_v1_is_untouched():
    import cbor2
    rel = model()
    b = Board()
    b.push_ok(pack("v1.mota", rel, 2), "--confirm")
    env.run("keygen", "--force", env.p("other.pem"))
    good = open(pack("v3.mota", rel, 3), "rb").read()
    # unsigned: the authentication wrapper keeps its digest, loses its signature
    envl = cbor2.loads(good)
    auth = cbor2.loads(envl.value[2])
    unsigned = cbor2.dumps(cbor2.CBORTag(107, {**envl.value, 2: cbor2.dumps([auth[0]])}))
    open(env.p("unsigned.mota"), "wb").write(unsigned)
    open(env.p("truncated.mota"), "wb").write(good[:len(good) * 2 // 3])
    cases = [
        ("unsigned.mota", "MOTA_ERR_AUTH_NO_BLOCK"),
        (os.path.basename(pack("wrongkey.mota", rel, 3, key="other.pem")), "MOTA_ERR_KEY_UNKNOWN"),
        (os.path.basename(pack("older.mota", rel, 1)), "MOTA_ERR_ROLLBACK"),
        (os.path.basename(pack("class.mota", rel, 3, cls="another-board")), "MOTA_ERR_CLASS_MISMATCH"),
        ("truncated.mota", "MOTA_ERR_CBOR_TRUNCATED"),
    ]
    for name, want in cases:
        rc, _, res, err = b.push(env.p(name))
        if name == "unsigned.mota":  # push itself will not send what is not a container
            assert rc == 1 and want in err, (name, rc, err)
        else:
            assert rc == 1 and res["status"] == want and not res["installed"], (name, res, err)
        if name == "truncated.mota":  # push refuses it before sending; a host that sends it anyway:
            assert res["sent"] is False, res
            digest = bytes.fromhex(json.loads(env.run("inspect", "--json", pack("v3.mota", rel, 3)).stdout)["digest"])
            cut = good[:len(good) * 2 // 3]
            link = RawLink(b.port)
            status, _ = link.upload(cut, len(cut), digest)
            link.close()
            assert status == -820, status  # the firmware's own verdict: MOTA_ERR_UPLOAD_TRUNCATED
        assert_runs_v(b, 2)
    print("unsigned, wrongly signed, older, wrong class and truncated containers refused; v1 untouched")


def case_random_power_cuts_during_upload_install_confirm_and_rollback():
    """QEMU killed at chosen flash operations and at random instants: after each
    restart the device boots a verified model and a repeated push completes."""
    power_cut_rounds(cut_rounds())


def case_random_power_cuts_on_ecc_flash_that_programs_once_and_cannot_read_torn_units():
    """The same rounds on the emulated flash with ECC (--flash-ecc): a unit is programmed once per erase,
    and one a cut tore (a program, or a whole sector's erase) reads as MOTA_ERR_FLASH_ECC until erased:
    every journal, resume and verification read meets it, and none is a crash or a lost journal."""
    if not B.get("ecc", True):
        print("SKIPPED: the %s's flash has mixed sectors and no ECC (the emulated ECC takes uniform ones)" % TARGET)
        sys.exit(77)
    power_cut_rounds(cut_rounds() // 2 + 1, "--flash-ecc")  # half the rounds: CI's time


def cut_rounds():
    """The board's rounds, or MOTA_CUT_ROUNDS's; the min build's sweep at the an505's length: its agent, flash
    and journal code is the full build's, less the features it leaves out."""
    if os.environ.get("MOTA_CUT_ROUNDS"):
        return int(os.environ["MOTA_CUT_ROUNDS"])
    return BOARDS["an505"]["cut_rounds"] if VARIANT == "min" else B["cut_rounds"]


def power_cut_rounds(rounds, *flash):
    rel = model()
    rnd = random.Random(int(os.environ.get("MOTA_SEED", "9")))
    containers = [pack("v%d.mota" % s, rel, s) for s in range(1, 40)]
    b = Board(*flash)
    assert b.push(containers[0], "--confirm")[0] == 0
    b.stop()
    seq, resumed = 1, 0
    start = len(Board.log_of(env.p("board.flash")))
    for i in range(rounds):
        phase = ("upload", "confirm", "rollback")[i % 3]
        # on ECC flash every upload round is torn, early enough to land inside the upload
        op = rnd.randint(1, 20 if flash and phase == "upload" else 40)
        torn = rnd.random() < 0.3 or bool(flash and phase == "upload")
        extra = ["--cut-at-op", str(op)] + (["--torn"] if torn else [])
        before = len(Board.log_of(env.p("board.flash")))
        b = Board(*flash, *extra)
        nxt = containers[seq]
        if phase == "upload":
            b.push(nxt, "--timeout", "20")
        else:
            if b.push(nxt, "--timeout", "20")[0] == 0:
                b.cmd(phase)
        if rnd.random() < 0.5:  # and a cut at a random instant of what follows
            b.proc.send_signal(signal.SIGUSR1)
            time.sleep(rnd.random() * 0.3)
        log = b.log()[before:]  # for the messages: a cut at a random instant may not be logged yet
        m, st = b.dense()
        assert m["active"], ("no valid model after a cut", m, log[-2000:])
        assert m["active"]["seq"] in (seq, seq + 1), m
        # the same container again: it completes (resuming when the journal allows)
        rc, ev, res, err = b.push(nxt, "--timeout", "30")
        if rc == 1 and res.get("status") in ("MOTA_ERR_ROLLBACK", "MOTA_ERR_ROLLBACK_SAME_SEQ"):
            pass  # it was committed before the cut and then superseded: not a failure
        elif rc == 1 and res.get("status") == "MOTA_ERR_TRIAL_PENDING":
            assert b.cmd("confirm").returncode == 0  # it is on trial already
        else:
            assert rc == 0, (phase, op, torn, res, err, log[-2000:])
            resumed += any(e.get("event") == "hello" for e in ev)
        st = b.cmd("status").stdout
        if "ON TRIAL" in st:
            assert b.cmd("confirm").returncode == 0
        m, _ = b.dense()
        assert m["active"]["state"] == "confirmed", m
        seq = m["active"]["seq"]
        # every boot since this board was powered found a consistent journal
        starts = re.findall(r"agent start: (\S+)", b.log()[before:])
        assert starts and all(s == "ok" for s in starts), (starts, b.log()[-1000:])
        b.stop()
    # counted once every round is over: the launcher logs a cut when its board is up again, which can be after
    # the round's first look at the log (counting there lost cuts on a loaded host)
    cuts = Board.log_of(env.p("board.flash"))[start:].count("mota-sim: power cut; powering on")
    assert cuts >= rounds - 2, cuts
    b = Board(*flash)
    for i in range(3):
        assert b.invoke(vec("in", i)) == open(vec("out", i), "rb").read()
    b.stop()
    log = Board.log_of(env.p("board.flash"))[start:]
    torn, unreadable = len(re.findall(r"ECC: (?:unit|sector) torn", log)), log.count("ECC: read error")
    if flash:  # the torn cuts left units behind (those the agent read back said MOTA_ERR_FLASH_ECC, never a fault)
        assert torn > 0, (torn, unreadable)
        print("ECC: %d units or sectors torn by cuts, %d reads that met one (MOTA_ERR_FLASH_ECC)" % (torn, unreadable))
    print("%d power cuts (QEMU killed) over uploads, confirms and rollbacks%s: every restart booted a verified "
          "model with a consistent journal, and every repeated push completed; final seq %d" % (
              cuts, " on ECC flash" if flash else "", seq))


def big_model(retrained=0):
    """dense with 96 KiB of unused weights beside its own (kept: MOTA_PARAM): rows repeated, zeroed or new, as
    real weights compress (about 1.5x), so a compressed stream spans several 16 KiB progress steps. retrained:
    that many of its last rows moved by -2..2, as a retrained layer is (its outputs stay the reference's)."""
    model()  # the weights and vectors
    rnd, rows = random.Random(5), []
    for i in range(96 * 1024 // 64):
        k = rnd.random()
        rows.append(rows[rnd.randrange(len(rows))] if k < 0.35 and rows else [0] * 64 if k < 0.5 else
                    [rnd.randint(-100, 100) for _ in range(64)])
    moved = random.Random(6)
    rows[len(rows) - retrained:] = [[max(-128, min(127, v + moved.randint(-2, 2))) for v in r]
                                    for r in rows[len(rows) - retrained:]] if retrained else []
    ballast = env.p("ballast%d.c" % retrained)
    with open(ballast, "w") as f:
        f.write('#include "mota_model.h"\nMOTA_PARAM const signed char ballast[%d] = {%s};\n' %
                (len(rows) * 64, ",".join(str(v) for r in rows for v in r)))
    return build_model(env.p("dense_big%d_rel.bin" % retrained), os.path.join(SRC, "tests", "models", "dense.c"),
                       os.path.join(GEN, "dense_weights.c"), ballast)


def case_lzma_and_delta_containers_install_resume_after_power_cuts_and_run():
    """pack --compress=lzma: the firmware decodes LZMA blocks whose dictionary is its own slot; --delta-from: v2
    (its last 160 weight rows retrained) sent as a delta against v1, which the board runs: rebuilt from v1's
    slot while received, checked from flash, run like the reference; power cuts inside the delta resume; the
    delta rolls back to v1. A board running another model refuses the delta before erasing anything."""
    needs("compression")
    v1 = pack("v1x.mota", big_model(), 1, compress="lzma")
    v2 = pack("v2d.mota", big_model(retrained=160), 2, extra=("--delta-from", v1))
    insp = json.loads(env.run("inspect", "--json", v2).stdout)
    code = [c for c in insp["components"] if c["role"] == "code"][0]
    assert code["delta"] and code["compression"]["size"] * 10 < code["size"], code
    other = pack("o1.mota", model(), 1)
    b = Board(flash="other.flash")
    b.push_ok(other, "--confirm")
    rc, _, res, _ = b.push(v2)
    assert rc != 0 and res["status"] == "MOTA_ERR_DELTA_SOURCE" and "full container" in res["detail"], res
    assert_runs_v(b, 1)
    b.stop()
    b = Board()
    b.push_ok(v1, "--confirm")
    assert_runs_v(b, 1)
    b.stop()
    # a cut at a flash operation inside the code's image (its erases first, then 256-byte programs)
    op = (code["size"] + 8192) // SECTOR + 2 + 3 + int(0.6 * code["size"] / 256)
    b = Board("--cut-at-op", str(op))
    _, ev, _, _ = b.push(v2, "--timeout", "20")
    rc, ev2, res, err = b.push(v2, "--timeout", "60")
    assert rc == 0 or res.get("status") == "MOTA_ERR_TRIAL_PENDING", (op, res, err, b.log()[-1500:])
    resumed = [e["offset"] for e in ev + ev2 if e.get("event") == "resume"]
    assert_runs_v(b, 2, confirmed=False)
    assert b.cmd("rollback").returncode == 0
    assert_runs_v(b, 1)
    b.stop()
    print("lzma v1 %d bytes; delta v2 %d bytes (code %d -> %d); a board running another model refused it and "
          "still ran it; installed after a cut at flash op %d (resumed at %s), ran like the reference, rolled back "
          "to v1" % (os.path.getsize(v1), os.path.getsize(v2), code["size"], code["compression"]["size"], op,
                     resumed))


def case_compressed_containers_install_resume_after_power_cuts_and_run():
    """pack --compress: the firmware decodes an LZ4 frame (v1) and a deflate stream (v2) into its slot, checks
    the image from flash, runs it; power cuts inside v2's payload resume at journaled block boundaries."""
    needs("compression")
    rel = big_model()
    v1, v2 = pack("v1z.mota", rel, 1, compress="lz4"), pack("v2z.mota", rel, 2, compress="deflate")
    plain = pack("v1.mota", rel, 1)
    insp = json.loads(env.run("inspect", "--json", v2).stdout)
    code = [c for c in insp["components"] if c["role"] == "code"][0]
    assert code["compression"] and code["compression"]["size"] < code["size"], code
    b = Board()
    b.push_ok(v1, "--confirm")
    assert_runs_v(b, 1)
    b.stop()
    # cuts at flash operations inside the code's image (the slot's erase comes first, then 256-byte
    # programs of the decoded image): each restart resumes, and the push completes
    erases = (code["size"] + 8192) // SECTOR + 2
    resumed_inside = []
    for frac in (0.6,):
        op = erases + 3 + int(frac * code["size"] / 256)
        b = Board("--cut-at-op", str(op))
        _, ev, _, _ = b.push(v2, "--timeout", "20")  # push reconnects after the board's restart and resumes
        resumed_inside += [e["offset"] for e in ev if e.get("event") == "resume"]
        m, _ = b.dense()
        assert m["active"] and m["active"]["seq"] in (1, 2), m
        rc, ev, res, err = b.push(v2, "--timeout", "60")
        assert rc == 0 or res.get("status") == "MOTA_ERR_TRIAL_PENDING", (op, res, err, b.log()[-1500:])
        resumed_inside += [e["offset"] for e in ev if e.get("event") == "resume"]
        if "ON TRIAL" in b.cmd("status").stdout:
            assert b.cmd("rollback").returncode == 0  # back to v1 for the next cut
        b.stop()
    head = os.path.getsize(v2) - code["compression"]["size"]
    assert any(o > head + 16384 for o in resumed_inside), (resumed_inside, head)
    b = Board()
    b.push_ok(v2, "--confirm")
    assert_runs_v(b, 2)
    b.stop()
    print("compressed containers: v2 code deflated %d -> %d bytes (%.2fx), container %d bytes instead of %d; installed, run "
          "like the reference; resumed inside the compressed payload at offsets %s" %
          (code["size"], code["compression"]["size"], code["size"] / code["compression"]["size"],
           os.path.getsize(v2), os.path.getsize(plain), resumed_inside))


def case_encrypted_containers_install_resume_after_power_cuts_and_run():
    """pack --encrypt-kek / --encrypt-to: the firmware unwraps the content key with its provisioned KEK or its own
    P-256 key (ES-DH), decrypts AES-GCM and AES-CTR while it receives, checks the tag and the image from flash and
    runs the model; a power cut inside v2's encrypted, deflated payload resumes there with its GHASH state; a
    container for another KEK is refused before anything is sent, one for a KEK of the same kid but another key
    before any erase. The keys appear in no output and no log."""
    needs("decryption")
    rel = model()
    kek, wrong = env.p("board.jwk"), env.p("wrong.jwk")
    env.run("keygen", "--kek", kek, "--kid", "board-kek")
    env.run("keygen", "--kek", wrong, "--kid", "board-kek")  # the same kid, another key
    env.run("keygen", "--kek", env.p("stranger.jwk"), "--kid", "stranger")
    v1 = pack("v1e.mota", rel, 1, encrypt=("--encrypt-kek", kek, "--cipher", "a128ctr"))
    b = Board("--kek", kek)
    b.push_ok(v1, "--confirm")
    assert_runs_v(b, 1)
    pub = env.p("device.pub.pem")
    env.run("getpub", "--device", "tcp:" + b.port, "-o", pub)
    v2 = pack("v2e.mota", big_model(), 2, compress="deflate", encrypt=("--encrypt-to", pub))
    rc, _, res, err = b.push(pack("v2s.mota", rel, 2, encrypt=("--encrypt-kek", env.p("stranger.jwk"))))
    assert rc != 0 and res.get("status") == "MOTA_ERR_ENC_NO_KEY", (res, err)
    rc, _, res, err = b.push(pack("v2w.mota", rel, 2, encrypt=("--encrypt-kek", wrong)))
    assert rc != 0 and res.get("status") == "MOTA_ERR_ENC_UNWRAP", (res, err)
    log = b.log()
    b.stop()
    # a cut inside the code's payload: the push resumes after the board's restart, and completes
    code = [c for c in json.loads(env.run("inspect", "--json", v2).stdout)["components"] if c["role"] == "code"][0]
    b = Board("--kek", kek, "--cut-at-op", str((code["size"] + 8192) // SECTOR + 5 + code["size"] // 2 // 256))
    _, ev, _, _ = b.push(v2, "--timeout", "20")
    resumed = [e["offset"] for e in ev if e.get("event") == "resume"]
    m, _ = b.dense()
    assert m["active"] and m["active"]["seq"] in (1, 2), m
    rc, ev, res, err = b.push(v2, "--timeout", "60")
    assert rc == 0 or res.get("status") == "MOTA_ERR_TRIAL_PENDING", (res, err, b.log()[-1500:])
    resumed += [e["offset"] for e in ev if e.get("event") == "resume"]
    assert_runs_v(b, 2, confirmed=False)
    log += b.log()
    b.stop()
    secret = json.load(open(kek))["k"]
    assert secret not in log, "a key in the board's log"
    head = os.path.getsize(v2) - code["encryption"]["size"]
    assert any(o > head + 16384 for o in resumed), (resumed, head)  # inside the encrypted payload
    print("encrypted containers: v1 AES-CTR to the KEK, v2 deflated then AES-GCM to the device's own key, "
          "installed and run; a KEK of another kid refused before sending, one of the same kid before any "
          "erase; resumed inside v2's payload at %s" % resumed)


def case_long_version_texts_never_lock_the_host_out():
    """HELLO and STATUS answer whatever the manifests' text: two models with 256-byte versions are more
    than one 512-byte answer holds, so the device answers in parts and mota shows both versions whole (an
    older host, which asks for one answer, gets them cut short: sim_four_models_span_...)."""
    needs("two models")
    long_version = "1.0.0+" + "b" * 250
    containers = []
    for name in ("dense", "conv"):
        rel = model(name)
        out = env.p(name + "-long.mota")
        env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", CLASS, "--seq", "1",
                "--version", long_version, "--selftest-input", vec("in", 0, name), "--selftest-output",
                vec("out", 0, name), "--selftest-max-latency-us", "200000", "-o", out, rel)
        containers.append(out)
    b = Board("--key", env.p("k.pub.pem"), "--model", "dense", "--model", "conv", provision=False)
    for c in containers:
        rc, _, res, err = b.push(c, "--confirm")
        assert rc == 0 and res["confirmed"], (res, err)
    st = b.status()                                    # HELLO and STATUS still answer
    ms = st["models"]
    assert [m["active"]["seq"] for m in ms] == [1, 1], ms
    assert all(m["active"]["version"] == long_version for m in ms), ms
    rel = model("dense")
    b.push_ok(pack("v2.mota", rel, 2), "--confirm")
    m, _ = b.dense()
    assert m["active"]["seq"] == 2 and m["active"]["version"] == "2.0.0", m
    b.stop()
    print("two models with 256-byte version texts installed and confirmed; HELLO and STATUS in parts show "
          "both versions whole (%d bytes), and the next update went through" % len(ms[0]["active"]["version"]))


def case_both_models_with_previous_models_and_errors_fit_one_answer():
    """The board's worst case for HELLO and STATUS (no long texts): both of its models with a release's
    from-version sequence numbers, a previous model and a last error each, in one 512-byte answer, all said
    (the device leaves the extras out only when an answer cannot hold them)."""
    needs("two models")
    names = ("dense", "wide")  # MOTA_AGENT_MAX_MODELS of the boards
    b = Board("--key", env.p("k.pub.pem"), *[a for n in names for a in ("--model", n)], provision=False)
    for name in names:
        rel = model(name)
        for version in ("1.0.0", "1.0.1"):
            out = env.p("%s-%s.mota" % (name, version))
            env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", CLASS, "--seq",
                    "from-version", "--version", version, "-o", out, rel)
            b.push_ok(out, "--confirm")
        rc, _, res, _ = b.push(env.p("%s-1.0.0.mota" % name))  # older: refused, the model's last error
        assert rc == 1 and res["status"] == "MOTA_ERR_ROLLBACK", res
    st = b.status()
    ms = st["models"]
    assert [m["name"] for m in ms] == list(names), ms
    assert re.fullmatch(r"[0-9a-f]{24}", st["device"]["device_id"] or ""), st["device"]  # never left out
    for m in ms:
        assert m["active"]["seq"] > 1 << 32 and m["active"]["version"] == "1.0.1", m
        assert m["previous"]["version"] == "1.0.0" and m["previous"]["seq"] < m["active"]["seq"], m
        assert m["last_error"]["status"] == "MOTA_ERR_ROLLBACK" and m["last_error"]["this_boot"] is True, m
    text = b.cmd("status")
    assert text.returncode == 0 and text.stdout.count("previous:  seq") == 2, text.stdout
    link = RawLink(b.port)
    status, hello = link.request(1, bytes([1, 0x00, 0x10]))  # HELLO, 4 KiB asked: the board's 512 given
    link.s.close()
    assert status == 0 and bytes.fromhex(st["device"]["device_id"]) in hello, (status, hello.hex())
    b.stop()
    print("both models with previous models and last errors: HELLO (%d bytes, with the device id) and STATUS "
          "say all of it in one 512-byte frame" % len(hello))


# The agent's own RAM: past the guard's areas at RAM's start (mps.ld: the model's stack, I/O areas), in its bss.
AGENT_RAM = B["ram"] + 0x8000
# The model I/O area (board.c guard_io), right after the model's stack (MOTA_MPS_GUARD_STACK) at RAM's start.
GUARD_IO = B["ram"] + (0x400 if VARIANT == "min" else 0x1000)

HOSTILE = {
    # name: (body of run(), expected reason, expected fault address or None[, the fault if not a MemManage])
    "write_agent_ram": ("*(volatile uint32_t *)0x%xu = 0xdeadbeefu;" % (AGENT_RAM + 0x100), "MOTA_ERR_SELFTEST_FAULT",
                        AGENT_RAM + 0x100),
    "read_provisioning": ("out[0] = *(volatile int8_t *)0x%xu;" % (B["flash"] + B.get("record", 0xFFF000)),
                          "MOTA_ERR_SELFTEST_FAULT", B["flash"] + B.get("record", 0xFFF000)),
    "write_watchdog": ("*(volatile uint32_t *)0x%xu = 0x1ACCE551u;" % (B["wdog"] + 0xC00), "MOTA_ERR_SELFTEST_FAULT",
                       B["wdog"] + 0xC00),
    "divide_by_zero": ("volatile int32_t z = 0; out[0] = (int8_t)(in[0] / z);", "MOTA_ERR_SELFTEST_FAULT", None),
    "jump_to_0": ("void (*volatile f)(void) = 0; f();", "MOTA_ERR_SELFTEST_FAULT", None),
    "infinite_loop": ("for (;;) __asm__ volatile(\"\");", "MOTA_ERR_SELFTEST_TIMEOUT", None),
    # a budget beyond the watchdog's first expiry: stopped short of it, a verdict and not a reset
    "infinite_loop_10s_budget": ("for (;;) __asm__ volatile(\"\");", "MOTA_ERR_SELFTEST_TIMEOUT", None),
    "runaway_recursion": ("out[0] = (int8_t)deep(in, 100000);", "MOTA_ERR_SELFTEST_FAULT", None),
    # a model's init (and its size queries) gets no I/O region: another model's input may wait there
    "init_reads_the_io_area": ("(void)*(volatile int8_t *)0x%xu;" % GUARD_IO, "MOTA_ERR_SELFTEST_FAULT", GUARD_IO),
    # the guard's own MPU turned off (MPU_CTRL, in the System Control Space): unprivileged, a precise BusFault
    "write_mpu_ctrl": ("*(volatile uint32_t *)0xE000ED94u = 0u;", "MOTA_ERR_SELFTEST_FAULT", 0xE000ED94, "BusFault"),
    # a stack outside its region, then SVC: the SVC stays pending behind the fault and must die with the model
    "svc_on_a_stolen_stack": ("__asm__ volatile(\"ldr r0, =0x%x\\n\\tmov sp, r0\\n\\tsvc #0\" ::: \"r0\");" % (B["ram"] + 0x70000),
                              "MOTA_ERR_SELFTEST_FAULT", None),
}
if B["arch"] == "v8-m":
    # into the Non-secure state (all memory is Secure): a SecureFault, not a board reset. Armv7-M has no
    # Security Extension (BXNS does not assemble): write_mpu_ctrl is its nearest, the guard's own registers
    HOSTILE["bxns_to_nonsecure"] = ("__asm__ volatile(\"movs r0, #0\\n\\tbxns r0\" ::: \"r0\");",
                                    "MOTA_ERR_SELFTEST_FAULT", None)


def hostile_model(name):
    """The hostile body in run(), or in init() for the init_ cases."""
    body = HOSTILE[name][0]
    init_body, body = (body, "") if name.startswith("init_") else ("", body)
    src = env.p("hostile_%s.c" % name)
    with open(src, "w") as f:
        f.write('#include "mota_model.h"\n'
                "static int32_t deep(const int8_t *p, int32_t n)\n"
                "{\n    volatile int8_t frame[256];\n    frame[0] = p[0];\n"
                "    return n ? deep((const int8_t *)frame, n - 1) + frame[1] : frame[0];\n}\n"
                "static int32_t init(void)\n{\n    %s\n    return 0;\n}\n"
                "static int32_t run(const int8_t *in, int8_t *out)\n{\n    (void)in;\n    (void)deep;\n"
                "    %s\n    out[1] = 1;\n    return 0;\n}\n"
                'MOTA_MODEL("dense", init, run, 64, 10, 0);\n' % (init_body, body))
    return build_model(env.p("hostile_%s_rel.bin" % name), src)


def case_hostile_models_are_stopped_and_the_device_keeps_running_v1():
    """Each hostile model gets its reason code from the guarded self-test; the board does not reset,
    answers status right after, and v1 still runs."""
    rel = model()
    b = Board()
    b.push_ok(pack("v1.mota", rel, 1), "--confirm")
    boots = b.log().count(TAG + "boot")
    for name, (_, reason, addr, *fault) in HOSTILE.items():
        before = len(b.log())
        c = pack("%s.mota" % name, hostile_model(name), 2, expect=vec("out", 0),
                 budget_us=10000000 if "10s" in name else 200000)
        rc, _, res, err = b.push(c, "--timeout", "30")
        assert rc == 1 and res["status"] == reason and not res["installed"], (name, res, err, b.log()[before:])
        log = b.log()[before:]
        assert "model fault" in log or "model stopped" in log, (name, log)
        if addr is not None:
            assert "model fault address 0x%08x" % addr in log, (name, log)
            # and the host is told where: the verdict's detail
            assert "address 0x%08x" % addr in res["detail"] and \
                "%s at pc 0x" % (fault or ["MemManage"])[0] in res["detail"], (name, res)
        if reason == "MOTA_ERR_SELFTEST_TIMEOUT":
            assert "time budget" in res["detail"], (name, res)
        if name == "runaway_recursion" and B["arch"] == "v7-m":
            # no PSPLIM: stopped by the no-access region below the model's stack (first in RAM), at its first
            # access there, as the frame the overflow pushed (MSTKERR) or a store
            at = int(re.search(r"address 0x([0-9a-f]{8})", res["detail"]).group(1), 16)
            assert B["ram"] - 4096 <= at < B["ram"], (name, res)
        m, st = b.dense()                       # it answers right after
        assert m["active"]["seq"] == 1 and m["active"]["state"] == "confirmed" and m["last_error"]["code"] == {"MOTA_ERR_SELFTEST_FAULT": -821,
                                                                  "MOTA_ERR_SELFTEST_TIMEOUT": -822}[reason], m
        assert b.invoke(vec("in", 0)) == open(vec("out", 0), "rb").read()
    # a confirmed model that faults only on some input: invoke says so, the device counts it and keeps going
    src = env.p("trap.c")
    with open(src, "w") as f:
        f.write('#include "mota_model.h"\n'
                "static int32_t init(void) { return 0; }\n"
                "static int32_t run(const int8_t *in, int8_t *out)\n{\n"
                "    if (in[0] == 0x55)\n        *(volatile uint32_t *)0x%xu = 1;\n"
                "    for (int i = 0; i < 10; i++)\n        out[i] = in[i];\n    return 0;\n}\n"
                'MOTA_MODEL("dense", init, run, 64, 10, 0);\n' % (AGENT_RAM + 0x200))
    trap = build_model(env.p("trap_rel.bin"), src)
    expect = env.p("trap.out")
    with open(vec("in", 0), "rb") as fi, open(expect, "wb") as fo:
        fo.write(fi.read()[:10])
    b.push_ok(pack("trap.mota", trap, 3, expect=expect), "--confirm")
    trigger = env.p("trigger.in")
    with open(trigger, "wb") as f:
        f.write(b"\x55" * 64)
    r = env.run("invoke", "--input", trigger, "--output-size", "10", "tcp:" + b.port, check=False)
    assert r.returncode != 0 and "MOTA_ERR_SELFTEST_FAULT" in r.stderr, (r.stdout, r.stderr)
    m, _ = b.dense()
    assert m["active"]["seq"] == 3 and m["faults"] == 1 and m["last_error"]["code"] == -821, m
    assert "1 fault(s) or overrun(s) since boot" in b.cmd("status").stdout
    assert b.invoke(vec("in", 0)) == open(expect, "rb").read()
    # COPY mode: its code runs from its exec RAM, under the same guard
    copy = env.p("copy.mota")
    env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", CLASS, "--seq", "4",
            "--version", "4.0.0", "--install-mode", "copy", "--selftest-input", vec("in", 0), "--selftest-output",
            vec("out", 0), "--selftest-max-latency-us", "200000", "-o", copy, rel)
    rc, _, res, err = b.push(copy, "--confirm")
    assert rc == 0 and res["confirmed"], (res, err, b.log()[-1500:])
    m, _ = b.dense()
    assert m["active"]["seq"] == 4 and m["active"]["install_mode"] == "copy", m  # install mode COPY
    assert b.invoke(vec("in", 1)) == open(vec("out", 1), "rb").read()
    assert b.log().count(TAG + "boot") == boots and "reset fault" not in b.log(), b.log()[-2000:]
    b.stop()
    print("%d hostile models (agent RAM, provisioning, watchdog, division by zero, jump to 0, endless loop, "
          "runaway recursion, the I/O area from init, the MPU's control register%s, a stolen stack) each stopped "
          "with its reason; no reset; v1 still answers like the reference" % (len(HOSTILE), ", BXNS" if B["arch"] == "v8-m" else ""))


def legacy_model(out, *extra, sources=None, split=None):
    """An X-CUBE-AI legacy (reloc v2.0) model of this board's CPU: `mota build-model --family legacy`."""
    model()  # the weights and vectors
    srcs = sources or [os.path.join(SRC, "tests", "models", "dense.c"), os.path.join(GEN, "dense_weights.c")]
    args = ["build-model", "--family", "legacy", "--cpu", B["cpu"], "-o", env.p(out)] + list(extra)
    if split:
        args += ["--split", env.p(split)]
    env.run(*args, *srcs)
    return env.p(out)


def case_legacy_models_run_through_their_own_api_and_describe_themselves():
    """ST's legacy layout: installed XIP (weights appended) and COPY (weights split into their own
    component), self-tested through create/init_v2/report/run with ST's licence check on the emulated CRC
    unit; the model's report in status; invoke equals the reference. A licence check that fails loops
    (time verdict); a CRC configuration the guard does not emulate stays a fault; v1 keeps running."""
    needs("legacy models")
    b = Board()
    v1 = pack("l1.mota", legacy_model("l1.bin"), 1)
    rc, _, res, err = b.push(v1, "--confirm")
    assert rc == 0 and res["confirmed"], (res, err, b.log()[-1500:])
    assert "licence check: FP_CTRL and CRC accesses emulated" in b.log(), b.log()[-1500:]
    text = b.cmd("status").stdout
    assert "model's report: dense, compiled " in text and "by mota build-model" in text and \
        "activations 32, weights 2536 bytes" in text, text
    in_size = os.path.getsize(vec("in", 0))  # the model's report says its tensors' formats and sizes
    assert "  inputs:    1 tensor, %d bytes: int8 (%d B)\n  outputs:   1 tensor, 10 bytes: int8 (10 B)\n" % (
        in_size, in_size) in text, text
    assert_runs_v(b, 1)
    # COPY mode, weights in their own component
    split = env.p("l2.mota")
    env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", CLASS, "--seq", "2",
            "--version", "2.0.0", "--install-mode", "copy", "--params", env.p("l2_weights.bin"),
            "--selftest-input", vec("in", 0), "--selftest-output", vec("out", 0),
            "--selftest-max-latency-us", "200000", "-o", split, legacy_model("l2.bin", split="l2_weights.bin"))
    rc, _, res, err = b.push(split, "--confirm")
    assert rc == 0 and res["confirmed"], (res, err, b.log()[-1500:])
    m, _ = b.dense()
    assert m["active"]["seq"] == 2 and m["active"]["install_mode"] == "copy" and m["report"]["name"] == "dense", m  # COPY, and its report
    assert_runs_v(b, 2)
    # hostile licence checks, written as ST's runtime would make them
    for name, cr, expect, reason in (("wrong_answer", 1, 0x12345678, "MOTA_ERR_SELFTEST_TIMEOUT"),
                                     ("polysize_16", 0x9, 0xB5E8B5CD, "MOTA_ERR_SELFTEST_FAULT")):
        src = env.p("lic_%s.c" % name)
        with open(src, "w") as f:
            f.write('#include "mota_model.h"\n'
                    "static int32_t init(void)\n{\n"
                    "    volatile uint32_t *crc = (volatile uint32_t *)0x40023000u;\n"
                    "    crc[2] = 0x%xu;\n    crc[0] = 0xF407A5C2u;\n"
                    "    while (crc[0] != 0x%xu) {\n    }\n    return 0;\n}\n"
                    "static int32_t run(const int8_t *in, int8_t *out) { (void)in; (void)out; return 0; }\n"
                    'MOTA_MODEL("dense", init, run, 64, 10, 0);\n' % (cr, expect))
        bad = pack("lic_%s.mota" % name, legacy_model("lic_%s.bin" % name, sources=[src]), 3)
        rc, _, res, err = b.push(bad, "--timeout", "30")
        assert rc == 1 and res["status"] == reason and not res["installed"], (name, res, err)
        m, _ = b.dense()
        assert m["active"]["seq"] == 2, m
        assert_runs_v(b, 2)
    assert "reset fault" not in b.log(), b.log()[-2000:]
    b.stop()
    print("legacy models on the %s: XIP with appended weights and COPY with split weights, self-tested and "
          "invoked through ST's API, licence check on the emulated CRC unit; a failing check is stopped at its "
          "budget, an unemulated CRC mode faults; v2 keeps running" % B["cpu"])


def case_st_u585_model_runs_bit_exact_through_its_own_runtime_in_xip_and_copy():
    """ST's own X-CUBE-AI 7.2 model for the STM32U585 (its vibration classifier, weights in their own
    file), packed with ST's test vector as its self-test: installed XIP, then COPY, each self-tested and
    invoked bit-exact through ST's runtime, whose licence check the board answers (the CRC callbacks in
    its rt_ctx, the emulated unit); status shows the model's own report. Then the same code without the
    callbacks (its rt_ctx declared 52 bytes long, as an older runtime's): it probes the unit's aliases
    with CR = 0x18, and the emulated CR answers as the part does."""
    needs("legacy models")
    st = os.path.join(FIXTURES, "st-legacy")
    rel, data = os.path.join(st, "u585_network_rel.bin"), os.path.join(st, "u585_network_data.bin")
    vin, vout = os.path.join(st, "u585_static_input.bin"), os.path.join(st, "u585_static_output.bin")
    if not all(os.path.exists(f) for f in (rel, data, vin, vout)):
        print("SKIPPED: ../shared/fixtures/st-legacy absent (ST's U585 model and its test vector)")
        sys.exit(77)
    expected = open(vout, "rb").read()
    # data_end 8 bytes earlier: the installer sees no callback words, so the runtime probes for the unit
    probing = env.p("u585_probing_rel.bin")
    with open(rel, "rb") as f:
        img = bytearray(f.read())
    assert img[12:16] == bytes.fromhex("a8070080"), img[12:16].hex()
    img[12] = 0xA0
    with open(probing, "wb") as f:
        f.write(img)
    b = Board()
    # accesses trapped in a run: FP_CTRL read and write, CR = 1, its poll, DR written and read; probing
    # adds CR = 0x18 and its read-back
    for seq, mode, model, run_traps in ((1, "xip", rel, 6), (2, "copy", rel, 6), (3, "xip", probing, 8)):
        c = env.p("u585_%d.mota" % seq)
        env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", CLASS, "--seq", str(seq),
                "--version", "%d.0.0" % seq, "--install-mode", mode, "--params", data, "--selftest-input", vin,
                "--selftest-output", vout, "--selftest-max-latency-us", "500000", "-o", c, model)
        rc, _, res, err = b.push(c, "--confirm")
        assert rc == 0 and res["confirmed"], (mode, res, err, b.log()[-1500:])
        m = [m for m in b.status()["models"] if m["name"] == "network"][0]
        assert m["active"]["seq"] == seq and m["active"]["install_mode"] == mode, m
        rep = m["report"]
        assert rep["name"] == "network" and rep["compiled"] == "Nov  9 2022 10:24:46" and \
            rep["tool_version"] == "7.2.0" and rep["activations"] == 736 and rep["weights"] == 42120, rep
        for _ in range(2):  # twice through the handle the self-test opened: its state stays good
            r = json.loads(env.run("invoke", "--json", "--model", "network", "--input", vin, "--output-size",
                                   str(len(expected)), "tcp:" + b.port).stdout)
            assert r["model"] == "network" and bytes.fromhex(r["output"]) == expected, (mode, r)
        runs = re.findall(r"accesses emulated in a run 0x([0-9a-f]+)", b.log())
        assert len(runs) >= seq and int(runs[-1], 16) == run_traps, (seq, runs)
    text = b.cmd("status").stdout
    assert "model's report: network, compiled Nov  9 2022 10:24:46" in text and \
        "activations 736, weights 42120 bytes" in text, text + b.log()[-800:]
    assert "licence check: FP_CTRL and CRC accesses emulated" in b.log() and "model fault" not in b.log(), \
        b.log()[-1500:]
    b.stop()
    print("ST's U585 model (X-CUBE-AI 7.2, split weights) on the %s: XIP and COPY self-tested with ST's vector "
          "and invoked bit-exact (%s), its licence check answered through the CRC callbacks (6 accesses "
          "trapped in a run), and by probing the emulated CR without them (8); its report in status"
          % (B["cpu"], expected.hex()))


def case_a_push_at_max_flash_timing_holds_the_host_through_each_erase():
    """The emulated flash at its part's longest times (--flash-timing max: the MPS boards' NOR 400 ms a 4 KiB
    sector; netduinoplus2's F401 4 s a 128 KiB sector): the board erases each sector as the stream reaches it
    while its UART interrupt keeps receiving, announces every erase, and mota push with its default options
    sends no byte twice and installs."""
    sector, erase_ms = B.get("erase", (4096, 400))
    model()  # the dense model's weights and vectors
    pad = env.p("pad.c")  # 40 KB of unused weights (kept: MOTA_PARAM): ten sectors of stream
    with open(pad, "w") as f:
        f.write('#include "mota_model.h"\nMOTA_PARAM const signed char pad_rows[40000] = {1, 2, 3};\n')
    rel = build_model(env.p("dense_pad_rel.bin"), os.path.join(SRC, "tests", "models", "dense.c"),
                      os.path.join(GEN, "dense_weights.c"), pad)
    v1 = pack("v1.mota", rel, 1)
    assert os.path.getsize(v1) > 40000, os.path.getsize(v1)
    b = Board("--flash-timing", "max")
    rc, _, res, err = b.push(v1)
    assert rc == 0 and res["installed"], (rc, res, err)
    assert res["data_bytes_sent"] == os.path.getsize(v1), res
    assert res["flash_holds"] >= os.path.getsize(v1) // sector, res
    assert res["flash_hold_ms"] == erase_ms * res["flash_holds"], res
    assert_runs_v(b, 1, confirmed=False)
    b.stop()
    print("%s at --flash-timing max: %d bytes in %.1f s through %d erase holds, none sent twice" % (
        TARGET, os.path.getsize(v1), res["transfer_seconds"], res["flash_holds"]))


def case_blank_flash_and_unprovisioned_board_say_so():
    rel = model()
    b = Board(flash="blank.flash", provision=False)
    text = b.cmd("status").stdout
    assert "NOT PROVISIONED" in text and "none installed" in text, text
    rc, _, res, _ = b.push(pack("v1.mota", rel, 1))
    assert rc == 1 and res["status"] == "MOTA_ERR_NOT_PROVISIONED", res
    b.stop()
    b = Board(flash="fresh.flash")
    text = b.cmd("status").stdout
    assert "provisioned; booted after power-on" in text and re.search(r"model dense: .*\n  active: +none installed",
                                                                        text), text
    print("an erased flash boots to 'none installed'; an unprovisioned board says so and refuses updates")


def device_id_of(b):
    """The board's device id as `mota status --json` gives it, and its text line."""
    st = b.status()
    text = b.cmd("status").stdout
    did = st["device"]["device_id"]
    assert (("\ndevice id %s\n" % did) in text) if did else "device id" not in text, (did, text)
    return did


REC_ID_LEN, REC_ID, REC_CRC = 75, 460, 476  # offsets in a version 1 (480-byte) provisioning record (mota/provision.h)


def case_the_board_has_a_stable_device_id():
    """A board's unique id (HELLO key 14): 12 random bytes `mota provision` writes into its provisioning
    record, the same after a reboot and when the launcher starts again on that flash (provisioned again
    with the same identity: the record and its id kept); another board has its own; a record written
    before ids, without one, gives an id derived from the record; an unprovisioned board has none."""
    import zlib
    b = Board()
    first = device_id_of(b)
    assert re.fullmatch(r"[0-9a-f]{24}", first or ""), first
    assert b.cmd("reboot").returncode == 0
    time.sleep(0.5)
    r = env.run("status", "--wait", "20", "--json", "tcp:" + b.port)  # reached through the reboot
    dev = json.loads(r.stdout)["device"]
    assert dev["device_id"] == first and dev["boot_cause"] == "software reset", dev
    b.stop()
    b = Board()
    assert device_id_of(b) == first
    b.stop()
    other = Board(flash="other.flash")
    second = device_id_of(other)
    other.stop()
    assert re.fullmatch(r"[0-9a-f]{24}", second or "") and second != first, (first, second)
    # the id is in the record, and a record without one (an older mota's, version 1 with 480 bytes and no
    # names: those bytes were reserved, zero)
    with open(env.p("board.flash"), "r+b") as f:
        f.seek(RECORD)
        rec = bytearray(f.read(480))
        assert rec[REC_ID_LEN] == 12 and rec[REC_ID:REC_ID + 12].hex() == first, rec.hex()
        rec[4:8] = (1).to_bytes(2, "little") + (480).to_bytes(2, "little")
        rec[REC_ID_LEN] = 0
        rec[REC_ID:REC_CRC] = bytes(REC_CRC - REC_ID)
        rec[REC_CRC:] = zlib.crc32(bytes(rec[:REC_CRC])).to_bytes(4, "little")
        f.seek(RECORD)
        f.write(rec)
    b = Board()
    derived = device_id_of(b)
    b.stop()
    assert derived == hashlib.sha256(b"mota-provision:" + bytes(rec)).digest()[:12].hex(), (derived, first)
    with open(env.p("board.flash"), "rb") as f:
        f.seek(RECORD)
        assert f.read(480) == bytes(rec), "the launcher rewrote an older board's record"
    u = Board(flash="blank.flash", provision=False)
    assert device_id_of(u) is None
    u.stop()
    print("board device ids: %s (kept across a reboot and a restart), %s (another board), %s (derived from a "
          "record without one); none unprovisioned" % (first, second, derived))


def case_the_min_build_refuses_what_it_leaves_out_before_any_erase():
    """MOTA_VARIANT=min (one model, CPU models of the NBIN v8 family, no decompressor, no decryption, no epoch
    summary, none of the agent's optional parts): the board says what its build has (HELLO key 17), and status
    shows no errors ring rather than an empty one; ERRORS is unsupported, HELLO from model 1 on is answered
    whole, a refusal's answer has no detail text (the host explains), an interrupted upload starts from 0;
    a compressed container is refused by the host
    before it sends anything, and by the device itself at the head (MOTA_ERR_DECOMP_OFF), an encrypted one the
    same way (MOTA_ERR_DECRYPT_OFF), a legacy model by its family;
    nothing is erased, and a plain container installs, runs and confirms."""
    if VARIANT != "min":
        print("SKIPPED: the min build's case (MOTA_BOARD_VARIANT=min)")
        sys.exit(77)
    b = Board()
    dev = b.status()["device"]
    assert dev["features"] == ["invoke"], dev
    status = b.cmd("status").stdout
    assert ("built with: no lz4 no deflate no legacy no epochs invoke no trap no decrypt no lzma no delta no details "
            "no errors no resume no pages no history no retire") in status, status
    # no errors ring: said, not shown empty (the device answers ERRORS with MOTA_ERR_UNSUPPORTED)
    assert "recent errors: not kept (the device's build has no errors ring" in status, status
    assert b.status()["recent_errors"] is None
    link = RawLink(b.port)
    assert link.request(10)[0] == -5
    # no answers in parts: a request from model 1 on is answered as an older device does, every model at once
    st, body = link.request(1, struct.pack("<BHB", 1, 1024, 1))
    assert st == 0 and body, st
    link.close()
    rel = model()
    z = pack("z.mota", rel, 1, compress="lz4")
    rc, _, res, err = b.push(z)
    assert rc == 1 and res["status"] == "MOTA_ERR_DECOMP_OFF" and not res["sent"], (rc, res, err)
    assert "no LZ4 decoder" in res["detail"], res
    data = open(z, "rb").read()
    digest = bytes.fromhex(json.loads(env.run("inspect", "--json", z).stdout)["digest"])
    link = RawLink(b.port)
    st, body = link.upload(data, len(data), digest)  # as a host that does not look at key 17
    link.close()
    assert st == -336, (st, body)
    legacy = pack("l.mota", legacy_model("l.bin"), 1)
    rc, _, res, err = b.push(legacy)
    assert rc == 1 and res["status"] == "MOTA_ERR_COMPAT_FAMILY", (rc, res, err)
    # no refusal details from the device: the host finds the rule in HELLO's profile, in the device's form
    assert re.fullmatch(r"\w+: device 0x[0-9a-f]+, model 0x[0-9a-f]+", res["detail"]), res
    data = open(legacy, "rb").read()
    link = RawLink(b.port)
    st, body = link.upload(data, len(data), bytes.fromhex(json.loads(env.run("inspect", "--json", legacy).stdout)["digest"]))
    link.close()
    assert st == -500 and body == b"", (st, body)  # the device's answer carries no detail text
    env.run("keygen", "--kek", env.p("min.jwk"))
    e = pack("e.mota", rel, 1, encrypt=("--encrypt-kek", env.p("min.jwk")))
    rc, _, res, err = b.push(e)
    assert rc == 1 and res["status"] == "MOTA_ERR_DECRYPT_OFF" and not res["sent"], (rc, res, err)
    data = open(e, "rb").read()
    link = RawLink(b.port)
    st, body = link.upload(data, len(data), bytes.fromhex(json.loads(env.run("inspect", "--json", e).stdout)["digest"]))
    link.close()
    assert st == -338, (st, body)  # the device's own refusal, at the head
    m, _ = b.dense()
    assert m["active"] is None and m["upload"] is None, m  # nothing erased, nothing kept
    # no resume: an upload cut off after most of its bytes starts again from 0 (BEGIN's "kept" says 0)
    v1 = pack("v1.mota", rel, 1)
    data = open(v1, "rb").read()
    digest = bytes.fromhex(json.loads(env.run("inspect", "--json", v1).stdout)["digest"])
    link = RawLink(b.port)
    assert link.upload(data[:len(data) * 3 // 4], len(data), digest)[0] == 0
    link.close()
    link = RawLink(b.port)
    assert link.request(1, struct.pack("<BH", 1, 1024))[0] == 0
    st, body = link.request(2, struct.pack("<I", len(data)) + digest)
    link.close()
    assert st == 0 and struct.unpack("<I", body[:4])[0] == 0, (st, body)
    rc, ev, res, err = b.push(v1, "--confirm")
    assert rc == 0 and not any(e.get("event") == "resume" for e in ev), (rc, ev, res, err)
    assert_runs_v(b, 1)
    b.stop()
    print("min build: features %s; compressed and legacy containers refused before any erase (host and "
          "device), no errors ring, no detail text, no pages, no resume (an upload cut off starts from 0), "
          "a plain one installed, self-tested, invoked and confirmed" % dev["features"])


def main():
    try:
        globals()["case_" + CASE]()
    finally:
        env.close()


if __name__ == "__main__":
    main()
