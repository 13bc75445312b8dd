#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The cost of decryption on QEMU's Cortex-M55 (-icount shift=0), from the cipher test firmware
(tests/qemu/cipher_vectors.c): instructions per byte of AES-CTR, AES-GCM (one pass, and in the agent's two
halves), and the instructions of a key unwrap and of an ES-DH key agreement, against issue 32's goals.

  bench_cipher.py FIRMWARE.elf

The firmware's own checks (the working group's vectors, a wrong key, a changed bit) must pass first."""
import re
import subprocess
import sys

GOALS = {"AES-CTR decryption": 45.0, "AES-GCM decryption": 100.0,
         "AES-GCM decryption in two halves": 100.0}


def main():
    out = subprocess.run(["qemu-system-arm", "-M", "mps3-an547", "-nographic", "-monitor", "none", "-icount",
                          "shift=0", "-semihosting-config", "enable=on,target=native", "-kernel", sys.argv[1]],
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0 or "FAIL" in out.stdout:
        sys.stdout.write(out.stdout + out.stderr)
        print("bench_cipher.py: the cipher firmware's checks failed")
        return 1
    bad, figures = 0, {}
    for line in out.stdout.splitlines():
        m = re.match(r"(.+?)(?: \(.*\))?: ([0-9.]+) instructions(/byte)?", line)
        if not m:
            continue
        name, value, unit = m.group(1), float(m.group(2)), m.group(3) or ""
        figures[name] = value
        goal = GOALS.get(name)
        ok = "" if goal is None else "  (goal <= %g: %s)" % (goal, "met" if value <= goal else "NOT MET")
        bad += goal is not None and value > goal
        shown = "%.1f instructions%s" % (value, unit) if unit else "{:,} instructions".format(int(value))
        print("  %-58s %s%s" % (name, shown, ok))
    # the budget: decryption under 10% of a 160 MHz core while 921,600 baud (92,160 bytes/s) arrive
    share = {k: figures[k] * 92160 / 160e6 * 100 for k in ("AES-CTR decryption", "AES-GCM decryption in two halves")}
    worst = max(share.values())
    print("  share of a 160 MHz core at 921,600 baud: AES-CTR %.1f%%, AES-GCM %.1f%% (goal < 10%%: %s)" %
          (share["AES-CTR decryption"], share["AES-GCM decryption in two halves"], "met" if worst < 10 else
           "NOT MET"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
