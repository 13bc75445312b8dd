#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Does a benchmark script still print its lines? (issue 30: no benchmark can rot)

usage: check_bench_output.py NAME [COMMAND [ARG ...]]
Runs COMMAND (else reads its output from stdin), passes its output on, and
checks that every line scripts/NAME.sh prints in its --quick run is there
with its numbers: the figures themselves are not judged, a goal NOT MET
passes. Exit status: COMMAND's when it fails (77, a skip, included), 1 when
lines are missing (each named), else 0.

An expected line is written as the line is printed, with whitespace runs
counting as one space: `#` stands for a number (digits, an optional sign,
thousands commas and decimals; "nan", "?" or an empty field do not pass),
`*` for any text, and a `$` at its end for the end of the line. Its label,
the text before the first `#` or `*`, tells a missing line from one whose
numbers do not parse.
"""
import os
import re
import subprocess
import sys

NUM = r"([-+]?\d[\d,]*(?:\.\d+)?)"

# bench_install.py's lines: printed by bench-loader.sh, and indented by bench-board.sh
INSTALL = [
    "run GOT REL copied zeroed install validate",
    "base-xip # # # # # #",
    "bss32k-copy # # # # # #",
    "install cost on Cortex-M55 (QEMU mps3-an547, -icount shift=0), least-squares fit over # installs:",
    "fixed (config, pools, header, rt_ctx) # instructions",
    "per GOT entry # instructions",
    "per REL entry # instructions",
    "per KiB copied # instructions",
    "per KiB zeroed # instructions",
    "largest residual # instructions (SysTick resolution: #)",
    "validation (mota_nbin_validate: *",
    "dense model, the calls of one self-test (# size queries, init, # run), unguarded: # instructions",
]

# scripts/bench-board.sh --footprint on the boards without ST's sources (issue 30's exact form); issue 45: the
# min build of each, the an547's LTO build (-DMOTA_LTO=ON)
FOOTPRINT = ["footprint %s-%s: flash # B, ram # B, stack # B, rx-ring # B$" % (v, b)
             for b in ("an547", "an505", "an386", "an500") for v in ("min", "min-lto", "full")
             if v != "min-lto" or b == "an547"] + ["head check: # instructions$"]

# the build-time features (cmake/features.cmake's options): bench-board.sh --footprint --features prints each
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cmake", "features.cmake")) as f:
    FEATURES = re.findall(r"^option\(MOTA_FEATURE_(\w+) ", f.read(), re.M)

EXPECTED = {
    "bench-agent": [
        "update of a #-byte container (a # KiB model, #-byte self-test input) on a NOR flash with #-byte sectors "
        "and #-byte program units:",
        "flash operations # (# programs, # erases, # reads)",
        "bytes programmed # (# x the container)",
        "sectors erased # (slot #, journal #)",
        "bytes read back # (verification from flash, journal)",
        "struct mota_agent # bytes (for # models)",
        "scratch (head) # bytes for any head the format allows",
        "self-test buffer the largest self-test output (here # bytes)",
        "stack peak # bytes during the update",
        "mota_agent_init # bytes",
        "mota_agent_write # bytes",
        "mota_agent_confirm # bytes",
        "mota_agent_rollback # bytes",
        "all device libraries: text # bytes, data #, bss #",
        "the an547 firmware * text # bytes, data #, bss #",
    ],
    "bench-board": [
        "cortex-m55 on QEMU mps3-an547, -icount shift=0",
        "head check, first after boot # M instructions",
        "self-test run of the dense model, under guard # k instructions",
        "guard round trip: MPU setup, SVC in and out, teardown (a size query) # instructions",
        "install of the dense model (XIP) # k instructions",
        "last byte received -> verdict (digests, install, self-test) # M instructions",
        "SHA-256 of components read back from flash (# KiB) # instructions/byte",
        "erase of the slot (# KiB container) # M instructions",
        "last byte received -> verdict, # KiB container without self-test # M instructions",
        "head check: ECDSA-P256 verify + manifest + compatibility (best of #) # M instructions",
        "invoke: one inference of the dense model # k instructions",
        "one trapped access (fault, decode, emulate, return), #-load models # instructions",
        "boot (journal, re-validation, install) # bytes",
        "link (HELLO, STATUS) # bytes",
        "upload: receive, hash, program # bytes",
        "upload: head check (signature) # bytes",
        "upload: digests, install, self-test # bytes",
        "confirm, rollback, reboot # bytes",
        "invoke (model run) # bytes",
        "raw byte rate QEMU delivers to UART0 (best of #) # KiB/s",
        "mota push goodput, # KiB container, confirmed (best of #) # KiB/s = #% of the raw rate",
        "bytes on the wire during that push (frames, retries) # KiB/s",
        "encrypted push (AES-128-GCM) / plain push, image bytes/s, QEMU wall time (median of # pairs) #",
        "image (arm-none-eabi-size: text + data | data + bss) flash # B, RAM # B (of which stack #)",
        "flash, whole image # B (# KiB)",
        "RAM: static # B - RX ring # + stack # # B (# KiB)",
        "Loader install cost on the Cortex-M55 (tests/qemu/bench_install.py):",
    ] + INSTALL + [
        "Decryption on the Cortex-M55 (tests/bench/bench_cipher.py, the cipher test firmware):",
        "ECDH P-256 # instructions",
        "AES key unwrap # instructions",
        "HKDF-SHA256 of the KDF context # instructions",
        "AES-CTR decryption # instructions/byte (goal <= 45: *",
        "AES-GCM decryption # instructions/byte (goal <= 100: *",
        "AES-GCM decryption in two halves # instructions/byte (goal <= 100: *",
        "share of a 160 MHz core at 921,600 baud: AES-CTR #%, AES-GCM #% (goal < 10%: *",
    ],
    "bench-board-footprint": FOOTPRINT + [  # without ST's sources: the F4 boards' firmware SKIPPED
        "footprint %s-%s: SKIPPED (no firmware: *" % (v, b) for b in ("nucleo-f401re", "netduinoplus2")
        for v in ("min", "min-lto", "full") if v != "min-lto" or b == "nucleo-f401re"],
    "bench-board-footprint-stm32": FOOTPRINT + [  # the same with ST's sources: the STM32 boards too (issue 41)
        "footprint %s-%s: flash # B, ram # B, stack # B, rx-ring # B$" % (v, b)
        for b in ("nucleo-f401re", "b-u585i-iot02a", "netduinoplus2", "stm32h747i-disco", "stm32n6570-dk")
        for v in ("min", "min-lto", "full") if v != "min-lto" or b == "nucleo-f401re"],  # issue 45: min too
    "bench-board-features": [  # scripts/bench-board.sh --footprint --features: each feature of features.cmake
        "features on the * min build flash # B, ram # B; full build flash # B, ram # B$"] + [
        "feature %s: min # B flash # B ram; full # B flash # B ram$" % f for f in FEATURES],
    "bench-container": [
        "params file: # MiB (# bytes); container # bytes",
        "openssl dgst -sha256 # ms # MB/s ratio # (reference)",
        "sha256sum # ms # MB/s ratio #",
        "cp + sync # ms # MB/s ratio #",
        "mota pack # ms # MB/s ratio # of openssl (a new file",
        "mota pack (replacing) # ms # MB/s ratio # of openssl",
        "mota pack --sync # ms # MB/s ratio # of openssl",
        "mota verify # ms # MB/s ratio # of openssl",
    ],
    "bench-flash": [
        "model profile time baud transfer wire flash bound ratio dup lost erases holds",
        "u5-sized stm32h747i-disco max 921600 #s #s #s #s # # # # #",
        "u5-sized nucleo-f401re max 921600 #s #s #s #s # # # # #",
        "worst ratio # (goal <= 1.10); runs with duplicate or lost bytes: #",
    ],
    "bench-fleet": [
        "one MCU's push at # baud, # KiB of params: # s",
        "fleet 1 MCU(s): install+commit # s, ratio # to one MCU's push",
        "fleet 4 MCU(s): install+commit # s, ratio # to one MCU's push",
        "worst ratio # (goal: at most # with # MCUs)",
    ],
    "bench-link": [
        "baud container seconds goodput of 8N1 overhead/MiB acks/MiB",
        "921600 # # # B/s # # #",
        "incompatible container (# bytes) at # baud: refused with MOTA_ERR_* after # s, # bytes sent, "
        "upload state none (nothing written)",
        "compressed payloads: effective goodput = image bytes installed per second / raw 8N1 rate",
        "921600 test model, # KiB # # # #x #x$",
        "921600 test model, # KiB # # # #x #x (--compress=lz4)",
        "921600 test model, # KiB # # # #x #x (--compress=deflate)",
        "921600 test model, # KiB # # # #x #x (--compress=lzma)",
        "encrypted payloads: effective goodput = image bytes installed per second / raw 8N1 rate",
        "921600 test model, # KiB # # # #x (a128gcm)",
        "921600 test model, # KiB # # # #x (deflate+a128gcm)",
        "921600 test model, # KiB a128gcm / plain: #",
        "921600 test model, # KiB deflate+a128gcm / plain+deflate: #",
        "worst encrypted / unencrypted goodput: # (goal >= 0.95: *",
        "model alg image payload ratio decode/image B decode/sent B memcpy/B sha256/B",
        "dense lz4 # # #x # # # #",
        "dense deflate # # #x # # # #",
        "wide lz4 # # #x # # # #",
        "wide deflate # # #x # # # #",
        "dense lzma # # #x # # # #",
        "wide lzma # # #x # # # #",
        "dense+delta lzma # # #x # # # #",
        "decoder state on the Cortex-M55: lz4 # bytes, deflate # bytes",
        "decoder state on the Cortex-M55: lzma # bytes (its probability models; goal <= 8192: met)",
        "patcher state on the Cortex-M55: # bytes (its regions and source; goal <= 2048: met)",
        "delta dense: # instructions per image byte for the patcher",
        "code in the an547 firmware (Cortex-M55, -Os): lz4 decoder # bytes * deflate decoder # bytes * "
        "their common interface # bytes * the agent's sink # bytes",
        "code in the an547 firmware (Cortex-M55, -Os): lzma decoder # bytes (decompress/src/lzma.c; goal <= 4096: "
        "met)",
        "code in the an547 firmware (Cortex-M55, -Os): patcher # bytes * goal <= 3072: met)",
        "delta containers (pack --delta-from): against the full LZMA container of the same new model",
        "test model # KiB, 1% of bytes moved # # #% goal <= 5%: met",
    ],
    "bench-loader": INSTALL,
}


def compile_line(spec):
    """(label, regex) of an expected line."""
    end = spec.endswith("$")
    parts = re.split(r"([#*])", spec[:-1] if end else spec)
    rx = "".join(NUM if p == "#" else ".*?" if p == "*" else re.escape(p) for p in parts)
    return parts[0].strip(), re.compile(rx + ("$" if end else ""))


def missing_lines(name, text):
    """What is wrong with NAME's output, one sentence per expected line absent or without its numbers."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    wrong = []
    for spec in EXPECTED[name]:
        label, rx = compile_line(spec)
        if any(rx.search(line) for line in lines):
            continue
        near = [line for line in lines if label in line]
        wrong.append("missing line: %r" % spec if not near else
                     "no number where one belongs: %r, printed as %r" % (spec, near[0]))
    return wrong


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in EXPECTED:
        sys.exit("usage: check_bench_output.py %s [COMMAND [ARG ...]]" % "|".join(EXPECTED))
    name, cmd = sys.argv[1], sys.argv[2:]
    if not cmd:
        text = sys.stdin.read()
    else:
        out = []
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, errors="replace") as p:
            for line in p.stdout:  # passed on as it comes: a slow run shows where it is
                sys.stdout.write(line)
                sys.stdout.flush()
                out.append(line)
        text = "".join(out)
        if p.returncode != 0:
            print("%s: %s %s" % (name, " ".join(cmd), "skipped (77)" if p.returncode == 77 else
                                 "exited with %d" % p.returncode), file=sys.stderr)
            return p.returncode
    wrong = missing_lines(name, text)
    for w in wrong:
        print("%s: %s" % (name, w), file=sys.stderr)
    print("%s: %d of %d expected lines printed with their numbers" % (name, len(EXPECTED[name]) - len(wrong),
                                                                      len(EXPECTED[name])))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
