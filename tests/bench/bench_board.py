#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmarks of the firmware on a QEMU board (an547: mps3-an547, Cortex-M55;
an505: mps2-an505, Cortex-M33; an386: mps2-an386, Cortex-M4; netduinoplus2: the F401 port on QEMU's
STM32F405, Cortex-M4; an500:
mps2-an500, Cortex-M7), driven through mota commands.

usage: bench_board.py MOTA SOURCE_DIR FIRMWARE_MAP WORKDIR [TARGET] [--quick]   (default an547)
       bench_board.py --footprint FIRMWARE_MAP ...   (the footprint of each image only)

Instruction counts come from a board run under `-icount shift=0` (`mota sim
--target TARGET --icount`): the guest clock then advances exactly 1 ns per
instruction, so the agent's own timings (STATUS key 4, microseconds of the
board's SysTick clock) are thousands of instructions. QEMU has no timing
model: these are instructions, not cycles.
UART goodput is wall time on a board without -icount: container bytes per
second of `mota push` against the raw byte rate QEMU delivers to the UART in
the same run (bytes the board only reads and discards, timed to the answer
of a request queued behind them).
What ST's licence check costs a legacy model's inference (docs/porting.md,
"The STM32 CRC unit"): instructions per trapped access, from two models
that differ only in 1,000 loads (of the CRC unit's IDR, trapped and
emulated, or of their own RAM); on the an505, one inference of ST's own
U585 model (../shared/fixtures/st-legacy) with the board's CRC callbacks and
without them (the runtime probes), the accesses trapped in each (the board's
log), and from those what a part that grants the unit its page would spend.
--quick (CI's run of scripts/bench-board.sh): every line, from fewer runs: a 16 KiB container instead of
96 KiB, two head checks instead of four, one UART round instead of the best of three.
"""
import json
import os
import re
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "link"))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
from harness import Env  # noqa: E402
import footprint  # noqa: E402

# per board: its CPU (models are built for it), its SysTick clock (instructions per tick under -icount)
BOARDS = {
    "an547": {"machine": "mps3-an547", "cpu": "cortex-m55", "part": 0xD22, "sysclk_mhz": 32},
    "an505": {"machine": "mps2-an505", "cpu": "cortex-m33", "part": 0xD21, "sysclk_mhz": 20},
    "an386": {"machine": "mps2-an386", "cpu": "cortex-m4", "part": 0xC24, "sysclk_mhz": 25},
    "an500": {"machine": "mps2-an500", "cpu": "cortex-m7", "part": 0xC27, "sysclk_mhz": 25},
    # the NUCLEO-F401RE port on QEMU's STM32F405: SysTick on the machine's fixed 168 MHz
    "netduinoplus2": {"machine": "netduinoplus2", "cpu": "cortex-m4", "part": 0xC24, "sysclk_mhz": 168},
}
results = []


def report(name, value, goal=None):
    ok = "" if goal is None else ("  (goal %s: %s)" % (goal[0], "met" if goal[1] else "NOT MET"))
    results.append((name, value, ok))
    print("  %-58s %s%s" % (name, value, ok), flush=True)


def dense_model():
    subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "models", "gen_weights.py"), "dense", GEN],
                   check=True, stdout=subprocess.DEVNULL)
    return build_model(env.p("dense_rel.bin"), os.path.join(SRC, "tests", "models", "dense.c"),
                       os.path.join(GEN, "dense_weights.c"))


def build_model(out, *sources):
    env.run("build-model", "--cpu", B["cpu"], "-D", "MOTA_MODEL_CPU_PART=0x%Xu" % B["part"], "-o", out, *sources)
    return out


def blob_model(kib):
    """A CPU model with a KIB KiB constant table: a container to hash and to time on the UART."""
    src = env.p("blob.c")
    with open(src, "w") as f:
        f.write('#include "mota_model.h"\n'
                "const uint8_t blob[%d] = {1, 2, 3};\n"
                "static int32_t init(void) { return 0; }\n"
                "static int32_t run(const int8_t *in, int8_t *out) { out[0] = (int8_t)blob[in[0] & 1023]; return 0; }\n"
                'MOTA_MODEL("dense", init, run, 64, 10, 0);\n' % (kib * 1024))
    return build_model(env.p("blob_rel.bin"), src)


def pack(out, rel, seq, selftest=True, encrypt=()):
    args = ["pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", "mota-" + TARGET, "--seq", str(seq),
            "--version", "%d.0.0" % seq, "-o", env.p(out), *encrypt]
    if selftest:
        args += ["--selftest-input", os.path.join(GEN, "dense_in_0.bin"), "--selftest-output",
                 os.path.join(GEN, "dense_out_0.bin"), "--selftest-max-latency-us", "1000000"]
    env.run(*args, rel)
    return env.p(out)


class Board:
    def __init__(self, flash, *extra):
        self.flash = env.p(flash)
        self.proc, self.port = env.board(self.flash, "--key", env.p("k.pub.pem"), "--model", "dense", *extra,
                                         target=TARGET)
        self.status()

    def status(self, timeout=60):
        st = env.wait_status(self.port, timeout, per_try=5)
        assert st is not None, "the board did not answer"
        return st

    def push(self, container):
        rc, ev, res, err = env.push(self.port, container, "--confirm", timeout=600)
        assert rc == 0 and res["status"] == "MOTA_OK", (res, err)
        return res

    def timing(self):
        """The last update's timings (STATUS key 4), as `mota status --json` names them (docs/json.md)."""
        t = self.status()["last_update"]
        assert t is not None, "the board reports no update since boot"
        names = {"check": "head_check_us", "erase": "erase_us", "digest": "digests_us", "install": "install_us",
                 "selftest": "selftest_us", "verdict": "verdict_after_last_byte_us", "digest_bytes": "bytes_hashed"}
        return {k: t[v] for k, v in names.items()}

    def log(self):
        return open(self.flash + ".log").read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)


TRAP_LOADS = 1000
TRAP_MODEL = """#include "mota_model.h"
/* %d loads of the STM32 CRC unit's IDR (trapped and emulated by the guard) or of a word of its own RAM */
static volatile uint32_t cell[2];
static int32_t init(void) { return 0; }
static int32_t run(const int8_t *in, int8_t *out)
{
    volatile uint32_t *reg = TRAPPED ? (volatile uint32_t *)0x40023000u : cell;
    uint32_t acc = 0;
    for (int i = 0; i < %d; i++)
        acc += reg[1];
    out[0] = (int8_t)acc;
    (void)in;
    return 0;
}
MOTA_MODEL("dense", init, run, 64, 10, 0);
""" % (TRAP_LOADS, TRAP_LOADS)


def invoke_us(board, model, inp, size):
    r = env.run("invoke", "--json", "--model", model, "--input", inp, "--output-size", str(size), "tcp:" + board.port)
    return json.loads(r.stdout)["duration_us"]


def legacy_run(board):
    """The last legacy model's first run, as the board logs it at each open: its guarded call in instructions
    (SysTick ticks: 50 instructions on the an505, 40 on the an386 and an500, finer than invoke's whole
    microseconds) and the accesses
    the guard emulated in it."""
    log = board.log()
    ticks = int(re.findall(r"legacy run, guarded call \(SysTick ticks\) 0x([0-9a-f]+)", log)[-1], 16)
    traps = int(re.findall(r"accesses emulated in a run 0x([0-9a-f]+)", log)[-1], 16)
    return ticks * 1000.0 / B["sysclk_mhz"], traps


def licence_check_costs():
    """Instructions per trapped access; on the an505, ST's U585 model's inference with and without the CRC
    callbacks, and what granting the unit would leave of it."""
    src = env.p("traps.c")
    with open(src, "w") as f:
        f.write(TRAP_MODEL)
    # the "network" slot takes ST's U585 model, measured on the an505 only (a board serving one model has none)
    b = Board("licence.flash", "--icount", *(["--model", "network"] if TARGET == "an505" else []))
    us = {}
    for seq, trapped in ((1, 1), (2, 0)):
        rel = build_model(env.p("traps%d_rel.bin" % trapped), "-D", "TRAPPED=%d" % trapped, src)
        b.push(pack("traps%d.mota" % trapped, rel, seq, selftest=False))
        us[trapped] = invoke_us(b, "dense", os.path.join(GEN, "dense_in_1.bin"), 10)
    per_trap = (us[1] - us[0]) * 1000.0 / TRAP_LOADS  # invoke's microseconds: +-1 instruction per access
    report("one trapped access (fault, decode, emulate, return), %d-load models" % TRAP_LOADS,
           "%.0f instructions" % per_trap)
    st = os.path.join(SRC, "..", "shared", "fixtures", "st-legacy")
    if TARGET != "an505" or not os.path.exists(os.path.join(st, "u585_network_rel.bin")):
        print("  (ST's U585 model: %s)" % ("built for the Cortex-M33, measured on the an505" if TARGET != "an505"
                                          else "SKIPPED: ../shared/fixtures/st-legacy absent"))
        b.stop()
        return
    rel = os.path.join(st, "u585_network_rel.bin")
    probing = env.p("u585_probing_rel.bin")  # rt_ctx declared 52 bytes long: no callback words, it probes
    img = bytearray(open(rel, "rb").read())
    img[12] = 0xA0  # data_end 0x800007A8 -> 0x800007A0
    open(probing, "wb").write(img)
    runs = {}
    for seq, name, model in ((1, "callbacks", rel), (2, "probing", probing)):
        c = env.p("u585_%s.mota" % name)
        env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", "mota-" + TARGET, "--seq",
                str(seq), "--params", os.path.join(st, "u585_network_data.bin"), "--selftest-input",
                os.path.join(st, "u585_static_input.bin"), "--selftest-output",
                os.path.join(st, "u585_static_output.bin"), "--selftest-max-latency-us", "1000000", "-o", c, model)
        b.push(c)
        runs[name] = legacy_run(b)
    b.stop()
    (cb, n_cb), (pr, n_pr) = runs["callbacks"], runs["probing"]
    report("ST's U585 model, one inference (its run, guarded), the board's CRC callbacks",
           "%.0f instructions, %d accesses trapped (%.1f%% of it)" % (cb, n_cb, 100.0 * n_cb * per_trap / cb))
    report("  the same, the runtime probing the unit", "%.0f instructions, %d accesses trapped" % (pr, n_pr))
    crc = n_cb - 2  # FP_CTRL's read and write trap on any part: the Flash Patch unit is privileged only
    granted = cb - crc * per_trap
    report("  the unit's page granted (a part with it: %d CRC accesses untrapped, FP_CTRL's 2 still)" % crc,
           "%.0f instructions (%.0f fewer)" % (granted, cb - granted))


def raw_rate(board, n=48 * 1024):
    """Bytes per second QEMU delivers to the UART: n bytes the board discards, timed to an answer behind them."""
    host, port = board.port.rsplit(":", 1)
    t_status = []
    for _ in range(3):  # what a status costs on its own
        t0 = time.time()
        board.status()
        t_status.append(time.time() - t0)
    with socket.create_connection((host, int(port))) as s:
        t0 = time.time()
        # no 0x00: the device's deframer drops the lot as one oversized frame, then the delimiter
        s.sendall(b"\x55" * n + b"\x00")
        time.sleep(0.05)  # the launcher has it queued for the UART before the next client takes the cable
    board.status(timeout=120)
    return n / (time.time() - t0 - min(t_status))


def main():
    dense = dense_model()
    blob = blob_model(16 if QUICK else 96)
    v1, v2 = pack("v1.mota", dense, 1), pack("v2.mota", blob, 2, selftest=False)
    v3 = pack("v3.mota", dense, 3)

    print("%s on QEMU %s, -icount shift=0 (1 instruction = 1 ns of guest time):" % (B["cpu"], B["machine"]),
          flush=True)
    b = Board("icount.flash", "--icount", "--measure-stack")
    b.push(v1)
    t = b.timing()
    report("head check, first after boot", "%.2f M instructions" % (t["check"] / 1e3))
    report("self-test run of the dense model, under guard", "%.1f k instructions" % t["selftest"])
    m = re.search(r"guarded call round trip \(SysTick ticks\) 0x([0-9a-f]+)", b.log())
    guard = int(m.group(1), 16) * 1000.0 / B["sysclk_mhz"]  # SysTick on the processor clock, 1 instruction per ns
    report("guard round trip: MPU setup, SVC in and out, teardown (a size query)", "%.0f instructions" % guard,
           ("<= 2,000", guard <= 2000))
    report("install of the dense model (XIP)", "%.1f k instructions" % t["install"])
    report("last byte received -> verdict (digests, install, self-test)", "%.2f M instructions" % (t["verdict"] / 1e3))
    b.push(v2)
    t2 = b.timing()
    per_byte = t2["digest"] * 1000.0 / t2["digest_bytes"]
    report("SHA-256 of components read back from flash (%d KiB)" % (t2["digest_bytes"] // 1024),
           "%.1f instructions/byte" % per_byte, ("<= 45", per_byte <= 45))
    report("erase of the slot (%d KiB container)" % (os.path.getsize(v2) // 1024),
           "%.2f M instructions" % (t2["erase"] / 1e3))
    report("last byte received -> verdict, %d KiB container without self-test" % (os.path.getsize(v2) // 1024),
           "%.2f M instructions" % (t2["verdict"] / 1e3))
    b.push(v3)
    # the UART's RX interrupts for frames arriving during a check count in it: the best of the later checks
    checks = [t2["check"], b.timing()["check"]]
    for i in range(0 if QUICK else 2):
        b.push(pack("c%d.mota" % i, dense, 4 + i))
        checks.append(b.timing()["check"])
    best = min(checks)
    report("head check: ECDSA-P256 verify + manifest + compatibility (best of %d)" % len(checks),
           "%.2f M instructions" % (best / 1e3),
           ("<= 13.5 M on the M55", best <= 13500) if TARGET == "an547" else None)
    r = env.run("invoke", "--json", "--input", os.path.join(GEN, "dense_in_1.bin"), "--output-size", "10",
                "tcp:" + b.port)
    report("invoke: one inference of the dense model", "%.1f k instructions" % json.loads(r.stdout)["duration_us"])
    b.stop()
    print("ST's licence check on the emulated CRC unit, -icount shift=0:", flush=True)
    licence_check_costs()
    stack = {}
    for used, phase in re.findall(r"stack high-water (\d+) bytes in (.+)", b.log()):
        stack[phase] = max(stack.get(phase, 0), int(used))
    print("Stack high-water mark by phase (painted; interrupts included):")
    for phase, used in stack.items():
        report("  " + phase, "%d bytes" % used)

    print("UART through QEMU (wall time, no -icount):", flush=True)
    # host load makes wall-time rates noisy: the best of three of each, interleaved
    kek = env.p("bench.jwk")
    env.run("keygen", "--kek", kek)
    b = Board("wall.flash", "--kek", kek)
    raws, goods, wires, plain_rates, enc_rates = [], [], [], [], []
    rounds = 1 if QUICK else 5
    for i in range(rounds):
        raws.append(raw_rate(b))
        res = b.push(pack("w%d.mota" % i, blob, 20 + 2 * i, selftest=False))
        goods.append(os.path.getsize(v2) / res["seconds"])
        wires.append(res.get("wire_bytes_out", 0) / res["seconds"])
        plain_rates.append(os.path.getsize(blob) / res["seconds"])
        # the same model, every payload AES-128-GCM to the board's KEK: image bytes installed per second
        res = b.push(pack("we%d.mota" % i, blob, 21 + 2 * i, selftest=False, encrypt=("--encrypt-kek", kek)))
        enc_rates.append(os.path.getsize(blob) / res["seconds"])
    b.stop()
    # each encrypted push against the plain one just before it (the host's load drifts between pairs)
    ratio = sorted(e / p for e, p in zip(enc_rates, plain_rates))[len(enc_rates) // 2]
    # wall time of QEMU's TCG, not of the part: the goal is bench-link.sh's (the line) and bench_cipher.py's
    # (instructions per byte, the core's share at 921,600 baud)
    report("encrypted push (AES-128-GCM) / plain push, image bytes/s, QEMU wall time (median of %d pairs)" % rounds,
           "%.3f" % ratio)
    raw, good, wire = max(raws), max(goods), max(wires)
    report("raw byte rate QEMU delivers to UART0 (best of %d)" % rounds, "%.1f KiB/s" % (raw / 1024))
    report("mota push goodput, %d KiB container, confirmed (best of %d)" % (os.path.getsize(v2) // 1024, rounds),
           "%.1f KiB/s = %.0f%% of the raw rate" % (good / 1024, 100 * good / raw))
    report("  bytes on the wire during that push (frames, retries)", "%.1f KiB/s" % (wire / 1024))

    sizes, syms, flash, ram = image_footprint(MAP)
    big = {n: z for n, z, _ in syms}
    peak = max(stack.values()) if stack else 0
    # the goals of the full build (issue 30); bench-board.sh --footprint measures the min build's too
    report("flash, whole image", "%d B (%.1f KiB)" % (flash, flash / 1024), ("<= 48 KiB", flash <= 48 * 1024))
    agent_ram = ram - big.get("ring", 0) + peak
    report("RAM: static %d B - RX ring %d + stack %d" % (ram, big.get("ring", 0), peak),
           "%d B (%.1f KiB)" % (agent_ram, agent_ram / 1024), ("<= 16 KiB", agent_ram <= 16 * 1024))
    report("  of which: container head buffer (scratch)", "%d B" % big.get("scratch", 0))
    report("  of which: agent + link state (dev)", "%d B" % big.get("dev", 0))
    with open(env.p("bench-board.json"), "w") as f:
        json.dump([{"name": n, "value": v, "goal": g} for n, v, g in results], f, indent=1)


def image_footprint(path):
    """Flash and static RAM of a firmware image by module, from its linker map; totals checked against
    arm-none-eabi-size of the ELF beside it."""
    print("Footprint of %s (linker map; arm-none-eabi-size of the ELF):" % os.path.basename(path), flush=True)
    sizes, syms = footprint.parse(path)
    for mod, _ in footprint.MODULES:
        if mod in sizes:
            report("  " + mod, "flash %6d B, RAM %6d B" % (sizes[mod]["flash"], sizes[mod]["data"] + sizes[mod]["bss"]))
    flash = sum(s["flash"] for s in sizes.values())
    ram = sum(s["data"] + s["bss"] for s in sizes.values())
    elf = path[:-len(".map")] + ".elf"
    text, data, bss = (int(v) for v in subprocess.run(["arm-none-eabi-size", elf], capture_output=True, text=True,
                                                      check=True).stdout.splitlines()[1].split()[:3])
    report("  image (arm-none-eabi-size: text + data | data + bss)",
           "flash %6d B, RAM %6d B (of which stack %d)" % (text + data, data + bss, stack_size(path)))
    return sizes, syms, flash, ram


def stack_size(path):
    m = re.search(r"^\s+0x[0-9a-f]+\s+__stack_size = (0x[0-9a-f]+)", open(path).read(), re.M)
    return int(m.group(1), 16) if m else 0


if sys.argv[1] == "--footprint":
    for m in sys.argv[2:]:
        image_footprint(m)
    sys.exit(0)

QUICK = "--quick" in sys.argv[5:]
MOTA, SRC, MAP, WORK = sys.argv[1:5]
TARGET = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] != "--quick" else "an547"
B = BOARDS[TARGET]
env = Env(MOTA, WORK)
GEN = env.p("gen")
try:
    main()
finally:
    env.close()
