# SPDX-License-Identifier: Apache-2.0
"""A fleet behind one gateway (scripts/bench-fleet.sh): N simulated MCUs, paced like a UART at --baud, in one
gateway.conf; one Mender artifact installed and committed by Debian's mender client in standalone mode (as
root) through `mota mender-module`. Printed per N:
  - install+commit: the wall time of `mender install` then `mender commit`;
  - one MCU's push: the wall time of `mota push --confirm` of the same container to one such MCU, measured in
    the same run;
  - ratio: install+commit / one push. Pushes to different ports run side by side, so the ratio stays near 1
    whatever N (goal: 16 MCUs at most 1.5x one MCU).
--quick: 1 and 4 MCUs and a smaller container (CI's short case).

usage: bench_fleet.py MOTA WORK [--quick]
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fleet"))
sys.path.insert(0, os.path.join(HERE, "..", "link"))
from gateway_lib import Gateway  # noqa: E402
from harness import Skip  # noqa: E402


def one_push(mota, work, baud, params):
    """Seconds of `mota push --confirm` to one fresh MCU at this line rate."""
    g = Gateway(mota, work)
    try:
        port = g.sim("one", "--baud", str(baud))
        c, = g.sim_containers(2, params=params)
        t0 = time.monotonic()
        rc, _, res, err = g.env.push(port, c, "--confirm")
        assert rc == 0 and res["confirmed"], (rc, res, err)
        return time.monotonic() - t0
    finally:
        g.close()


def fleet(mota, work, n, baud, params):
    """Seconds of mender install + commit of one artifact to n fresh MCUs; each ends confirmed."""
    g = Gateway(mota, work)
    try:
        for i in range(n):
            g.sim("m%d" % (i + 1), "--baud", str(baud))
        g.write_conf()
        c, = g.sim_containers(2, params=params)
        a = g.artifact("fleet-v2", c)
        t0 = time.monotonic()
        rc, out = g.mender("install", a)
        assert rc == 0, out[-3000:]
        rc, out = g.mender("commit")
        assert rc == 0, out[-3000:]
        el = time.monotonic() - t0
        for name in g.mcus:
            assert g.active(name) == (2, "confirmed"), (name, g.models(name))
        return el
    finally:
        g.close()


def main():
    mota, work = sys.argv[1:3]
    quick = "--quick" in sys.argv[3:]
    baud, params = 115200, (16 << 10 if quick else 64 << 10)
    counts = (1, 4) if quick else (1, 4, 16)
    try:
        ref = one_push(mota, os.path.join(work, "one"), baud, params)
        print("one MCU's push at %d baud, %d KiB of params: %.2f s" % (baud, params >> 10, ref))
        worst = 0.0
        for n in counts:
            el = fleet(mota, os.path.join(work, "n%d" % n), n, baud, params)
            worst = max(worst, el / ref)
            print("fleet %d MCU(s): install+commit %.2f s, ratio %.2f to one MCU's push" % (n, el, el / ref))
            sys.stdout.flush()
        print("worst ratio %.2f (goal: at most 1.5 with 16 MCUs)" % worst)
    except Skip as e:
        print("SKIPPED: %s" % e)
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
