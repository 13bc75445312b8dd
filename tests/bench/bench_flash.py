# SPDX-License-Identifier: Apache-2.0
"""Updates as each profile's flash takes them (scripts/bench-flash.sh).

For each model, profile, flash timing and line rate: `mota sim --profile P --flash-timing T --baud B` and a
`mota push` with default options. Printed per run:
  - transfer: the update's wall time, from the first DATA byte sent to the verdict (push's transfer_seconds);
  - wire: the container's bytes on the line, 10 bits each;
  - flash: the time the simulated part was busy erasing and programming during the upload (the simulator's
    "upload over" line: the sectors the container needed, its units and the journal's records);
  - bound: max(wire, flash) where the part lets code run while it works; wire + flash on a single-bank
    part (nucleo-f401re), whose CPU stalls while its flash works, so that nothing can overlap;
  - ratio: transfer / bound;
  - dup: container bytes sent more than once (push's data_bytes_sent minus the container);
  - lost: bytes the simulated UART receiver lost (a full ring, a CPU stalled by the flash).
--quick runs one short case per kind of part (CI); the sweep takes about 25 minutes.
"""
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "link"))
from harness import Env  # noqa: E402

PROFILES = ["stm32n6570-dk", "stm32h747i-disco", "b-u585i-iot02a", "nucleo-f401re"]
STALLS = {"nucleo-f401re"}
# the compatibility of the synthetic model, over each profile: the flash is what is measured
SYNTH_COMPAT = ["--cpu", "0xD22", "--fpu", "--float-abi", "hard", "--secure", "--family", "npu",
                "--ll-aton", "1.1.1", "--dbg-info", "--async", "--struct-sizes", "0"]


def sim_log_value(log, pattern):
    m = re.findall(pattern, log)
    return m[-1] if m else None


def run_one(env, container, profile, timing, baud, compat, size):
    log = env.p("sim-%s-%s-%d.err" % (profile, timing, baud))
    args = [env.mota, "sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem"), "--profile", profile,
            "--flash-timing", timing, "--baud", str(baud)] + compat
    with open(log, "w") as err:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True)
        port = None
        for line in proc.stdout:
            m = re.search(r"listening on tcp:(\S+)", line)
            if m:
                port = m.group(1)
                break
        assert port, open(log).read()
        time.sleep(0.3)
        r = subprocess.run([env.mota, "push", "--json", "tcp:" + port, container], capture_output=True, text=True)
        proc.terminate()
        proc.wait(timeout=30)
    text = open(log).read()
    res = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    res = [x for x in res if x.get("event") == "result"]
    assert r.returncode == 0 and res and res[0]["status"] == "MOTA_OK", (profile, timing, baud, r.stderr, text)
    res = res[0]
    busy = float(sim_log_value(text, r"upload over: \d+ erases, \d+ programs, flash busy ([0-9.]+) s") or 0)
    erases = int(sim_log_value(text, r"upload over: (\d+) erases") or 0)
    losses = re.findall(r"bytes lost by the receiver: (\d+) \(ring full\), (\d+)", text)
    lost = sum(int(x) for x in losses[-1]) if losses else 0
    wire = size * 10.0 / baud
    bound = wire + busy if profile in STALLS else max(wire, busy)
    t = res["transfer_seconds"]
    return {"transfer": t, "wire": wire, "flash": busy, "bound": bound, "ratio": t / bound,
            "dup": res["data_bytes_sent"] - size, "lost": lost, "erases": erases, "holds": res["flash_holds"]}


def main():
    mota, work, fixtures = sys.argv[1:4]
    quick = "--quick" in sys.argv[4:]
    env = Env(mota, work)
    rel, params = env.model("u5", 82000)  # ST's U585 model and its weights: 40 KB + 42 KB
    u5 = env.pack("u5.mota", rel, params, selftest=None)
    runs = []
    yolo = os.path.join(fixtures, "st-n6", "yolov8n_network_rel.bin")
    if quick:
        runs = [("u5-sized", u5, "stm32h747i-disco", "max", 921600, SYNTH_COMPAT),
                ("u5-sized", u5, "nucleo-f401re", "max", 921600, SYNTH_COMPAT)]
    else:
        if os.path.exists(yolo):
            y = env.pack("yolo.mota", yolo, selftest=None)
            runs += [("yolov8n", y, "stm32n6570-dk", t, b, []) for t in ("typ", "max") for b in (115200, 921600)]
        else:
            print("yolov8n: SKIPPED (%s is absent)" % yolo)
        runs += [("u5-sized", u5, p, t, b, SYNTH_COMPAT) for p in PROFILES for t in ("typ", "max")
                 for b in (115200, 921600)]
    print("%-9s %-17s %-4s %7s %9s %8s %8s %8s %6s %6s %5s %6s %6s" % (
        "model", "profile", "time", "baud", "transfer", "wire", "flash", "bound", "ratio", "dup", "lost",
        "erases", "holds"))
    worst, bad = 0.0, []
    for name, c, prof, timing, baud, compat in runs:
        size = os.path.getsize(c)
        r = run_one(env, c, prof, timing, baud, compat, size)
        print("%-9s %-17s %-4s %7d %8.2fs %7.2fs %7.2fs %7.2fs %6.3f %6d %5d %6d %6d" % (
            name, prof, timing, baud, r["transfer"], r["wire"], r["flash"], r["bound"], r["ratio"], r["dup"],
            r["lost"], r["erases"], r["holds"]), flush=True)
        worst = max(worst, r["ratio"])
        if r["dup"] != 0 or r["lost"] != 0:
            bad.append((name, prof, timing, baud, r["dup"], r["lost"]))
    print("worst ratio %.3f (goal <= 1.10); runs with duplicate or lost bytes: %d" % (worst, len(bad)))
    env.close()
    # correctness, not timing: no byte sent twice without a loss, none lost on any part
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
