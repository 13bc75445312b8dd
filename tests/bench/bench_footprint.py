#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The firmware's footprint per build variant (cmake/features.cmake) and board.

usage: bench_footprint.py MOTA SOURCE_DIR WORK VARIANT:BOARD:MAP:MACHINE [...]
       bench_footprint.py --sizes MAP   (its flash and ram alone, "N N": bench-board.sh --footprint --features)
For each firmware: its flash and static RAM by module (the linker map, tests/tools/footprint.py), then, where
the board has a QEMU machine (MACHINE, "-" for none: its stack line is the reservation), the board run once under -icount with --measure-stack (one CPU model pushed twice): the painted stack peak and
the head check of the second push (ECDSA + manifest + compatibility), and one line in this form:
  footprint VARIANT-BOARD: flash N B, ram N B, stack N B, rx-ring N B
  head check: N instructions
ram is the static RAM without the RX ring and the stack's reservation; the RAM goal counts ram + stack.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "link"))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
from harness import Env  # noqa: E402
import footprint  # noqa: E402

CPU = {"an547": ("cortex-m55", 0xD22), "an505": ("cortex-m33", 0xD21), "an386": ("cortex-m4", 0xC24),
       "an500": ("cortex-m7", 0xC27), "netduinoplus2": ("cortex-m4", 0xC24)}
# flash, static RAM without the RX ring (issue 45: the stack printed apart)
GOALS = {"min": (32 * 1024, 8 * 1024), "full": (48 * 1024, 16 * 1024)}
QEMU_MODULE = "port: QEMU launcher, emulated flash (ports/arm/qemu)"  # a QEMU board's stand-in for a part's flash


def static_ram(map_path, by_module=True):
    """(flash, static RAM, stack reservation, RX ring) of an image, from its map and its ELF; by_module: its
    flash and RAM by module first (an LTO image's map names no module: the same build without LTO's does)."""
    global qemu_part
    sizes, syms = footprint.parse(map_path)
    if by_module:  # the LTO build's map names no module: the same build without LTO's is used for it
        q = sizes.get(QEMU_MODULE, {})
        qemu_part = (q.get("flash", 0), q.get("data", 0) + q.get("bss", 0))
    elf = map_path[:-len(".map")] + ".elf"
    text, data, bss = (int(v) for v in subprocess.run(["arm-none-eabi-size", elf], capture_output=True, text=True,
                                                      check=True).stdout.splitlines()[1].split()[:3])
    m = re.search(r"^\s+0x[0-9a-f]+\s+__stack_size = (0x[0-9a-f]+)", open(map_path).read(), re.M)
    ring = {n: z for n, z, _ in syms}.get("ring", 0)
    for mod, _ in footprint.MODULES if by_module else ():
        if mod in sizes:
            print("    %-40s flash %6d B, RAM %6d B" % (mod, sizes[mod]["flash"],
                                                        sizes[mod]["data"] + sizes[mod]["bss"]))
    return text + data, data + bss, int(m.group(1), 16) if m else 0, ring


def measured(env, board, elf, work):
    """(stack peak, head check instructions) of one run: a CPU model pushed twice, the second check timed."""
    cpu, part = CPU[board]
    gen = os.path.join(work, "gen")
    subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "models", "gen_weights.py"), "dense", gen],
                   check=True, stdout=subprocess.DEVNULL)
    rel = os.path.join(work, "dense_rel.bin")
    env.run("build-model", "--cpu", cpu, "-D", "MOTA_MODEL_CPU_PART=0x%Xu" % part, "-o", rel,
            os.path.join(SRC, "tests", "models", "dense.c"), os.path.join(gen, "dense_weights.c"))
    flash = os.path.join(work, "board.flash")
    proc, port = env.board(flash, "--key", env.p("k.pub.pem"), "--model", "dense", "--firmware", elf, "--icount",
                           "--measure-stack", target=board)
    checks = []
    for seq in (1, 2):
        c = os.path.join(work, "v%d.mota" % seq)
        env.run("pack", "-k", env.p("k.pem"), "--vendor", "example.com", "--class", "mota-" + board, "--seq",
                str(seq), "--version", "%d.0.0" % seq, "-o", c, rel)
        rc, _, res, err = env.push(port, c, "--confirm", timeout=600)
        assert rc == 0, (res, err)
        checks.append(env.wait_status(port, 60)["last_update"]["head_check_us"])
    proc.terminate()
    proc.wait(timeout=20)
    log = open(flash + ".log").read()
    peak = max([int(u) for u in re.findall(r"stack high-water (\d+) bytes in", log)] or [0])
    return peak, checks[-1] * 1000  # -icount shift=0: 1 instruction per ns


qemu_part = (0, 0)  # flash and RAM of the QEMU stand-ins in the last image measured by module


def main():
    env = Env(MOTA, WORK)  # with its key, k.pem
    last_flash = {}  # (variant, board): flash, for the LTO build's saving
    try:
        for spec in sys.argv[4:]:
            variant, board, map_path, machine = spec.split(":", 3)
            print("Footprint of the %s build on the %s (%s):" % (variant, board, os.path.basename(map_path)),
                  flush=True)
            lto = variant.endswith("-lto")
            flash, ram, stack_res, ring = static_ram(map_path, not lto)
            if lto:
                print("    (optimised whole at link time, -DMOTA_LTO=ON: by module, the %s build above; %d B of "
                      "flash less than it)" % (variant[:-4], last_flash.get((variant[:-4], board), flash) - flash))
            last_flash[(variant, board)] = flash
            work = env.p("%s-%s" % (variant, board))
            os.makedirs(work, exist_ok=True)
            ram_only = ram - stack_res - ring
            if machine == "-":  # a real board only: its stack's reservation, nothing measured
                peak = stack_res
                print("footprint %s-%s: flash %d B, ram %d B, stack %d B, rx-ring %d B" % (
                    variant, board, flash, ram_only, peak, ring))
                print("  stack: the reservation (%s has no QEMU machine: nothing measured)" % board, flush=True)
            else:
                peak, check = measured(env, board, map_path[:-len(".map")] + ".elf", work)
                print("footprint %s-%s: flash %d B, ram %d B, stack %d B, rx-ring %d B" % (variant, board, flash,
                                                                                        ram_only, peak, ring))
                print("head check: %d instructions" % check)
            goals(variant, flash, ram_only, qemu_part if machine != "-" else (0, 0))
    finally:
        env.close()


def goals(variant, flash, ram, qemu):
    """Issue 45's goals: flash, and the static RAM without the RX ring (the stack is printed apart); on a QEMU
    board also without its launcher and emulated flash, which a real part's flash driver replaces."""
    goal = GOALS.get(variant.replace("-lto", ""))
    if not goal:
        return
    said = lambda v, g: "met" if v <= g else "NOT MET"  # noqa: E731
    apart = lambda v, q: "; %d B without the QEMU stand-ins" % (v - q) if q else ""  # noqa: E731
    print("  goals: flash <= %d B: %s (%d B%s); ram <= %d B: %s (%d B%s)" % (
        goal[0], said(flash, goal[0]), flash, apart(flash, qemu[0]), goal[1], said(ram, goal[1]), ram,
        apart(ram, qemu[1])), flush=True)


if sys.argv[1] == "--sizes":  # bench-board.sh --footprint --features: "flash ram" of one map, ram as above
    f, r, res, rx = static_ram(sys.argv[2], False)
    print(f, r - res - rx)
else:
    MOTA, SRC, WORK = sys.argv[1:4]
    main()
