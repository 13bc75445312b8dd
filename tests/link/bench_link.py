#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark of the update link over a rate-limited serial-line emulator.

usage: bench_link.py MOTA WORKDIR [FIXTURES_DIR] [--quick]
For 115200 and 921600 baud (8N1: baud/10 bytes per second), pushes a
container through tests/link/linkemu.py to `mota sim` and prints the goodput
as a fraction of the raw line rate, the protocol's overhead in bytes per MiB
(both directions), and how long the device takes to refuse an incompatible
container (before it writes anything). All in one run, on this machine.
Then, for compressed payloads (pack --compress), the effective goodput: image
bytes installed per second over the raw 8N1 rate, for the yolov8n fixture (on
the stm32n6570-dk profile) and a test model with model-like weights, each
packed as it is, as LZ4 frames, deflated and as LZMA, and pushed at both rates (LZMA on yolov8n: goals
2.20x smaller, 2.15x the uncompressed push's speed at 921600); and the same with every payload
encrypted (AES-128-GCM, as it is and deflated first): the goodput against the unencrypted push's. Then
deltas (pack --delta-from): yolov8n with the weights of its last layers retrained (found through its own
buffer tables: tests/tools/model_variant.py), the test model with 1% of its bytes moved (goal: at most 5% of
the full LZMA container each), and yolov8n retrained whole (goal: at most 1.02x), the first pushed at 921600
to a device running the old model.
--quick (CI's run): every kind of line at 921600 baud only, from the small model and a 64 KiB test model (the
delta's: 160 KiB); no yolov8n.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Env  # noqa: E402

args = [a for a in sys.argv[1:] if a != "--quick"]
QUICK = len(args) < len(sys.argv) - 1
mota, work = args[:2]
FIXTURES = args[2] if len(args) > 2 else os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "fixtures")
BAUDS = (921600,) if QUICK else (115200, 921600)


def weights_like_model(env, kib):
    """A split test model whose KIB KiB params compress as real weights do (synth_nbin.py weights)."""
    rel, params = env.p("wl_rel.bin"), env.p("wl_params.bin")
    subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                                                      "synth_nbin.py"), rel, params, str(kib * 1024), "3", "weights"],
                   check=True)
    return rel, params


def goodput_cases(env):
    """(label, model, params, sim options) of the goodput runs: yolov8n on its N6 profile (not with --quick),
    and a test model whose weights compress as real ones do."""
    cases = []
    yolo = os.path.join(FIXTURES, "st-n6", "yolov8n_network_rel.bin")
    if QUICK:
        print("yolov8n: left out (--quick)")
    elif os.path.exists(yolo):
        cases.append(("yolov8n (N6 fixture)", yolo, None, ["--profile", "stm32n6570-dk", "--flash-size", "16777216"]))
    else:
        print("SKIPPED: yolov8n (../shared/fixtures absent)")
    kib = 64 if QUICK else 400
    rel, params = weights_like_model(env, kib)
    cases.append(("test model, %d KiB" % kib, rel, params, []))
    return cases


def compressed_goodput(env):
    print("\ncompressed payloads: effective goodput = image bytes installed per second / raw 8N1 rate")
    print("%-8s %-22s %10s %10s %9s %9s %8s" % ("baud", "model", "image", "container", "seconds", "goodput",
                                             "speedup"))
    cases = goodput_cases(env)
    for baud in BAUDS:
        for label, rel, params, sim_args in cases:
            image = os.path.getsize(rel) + (os.path.getsize(params) if params else 0)
            plain_rate = None
            for compress in (None, "lz4", "deflate", "lzma"):
                tag = "%s_%d_%s" % (label.split()[0], baud, compress)
                c = env.pack("z%s.mota" % tag, rel, params, seq=1, selftest=None, compress=compress)
                sim, port = env.sim(*sim_args, flash="z%s.flash" % tag)
                emu, eport = env.emu(port, "--baud", str(baud))
                rc, events, res, err = env.push(eport, c, timeout=900)
                env.stop(emu)
                env.stop(sim)
                if rc != 0:
                    sys.exit("push failed: %s %s" % (res, err))
                rate = image / res["seconds"] / (baud / 10.0)
                plain_rate = plain_rate or rate
                print("%-8d %-22s %10d %10d %9.2f %8.3fx %7.3fx%s" % (baud, label, image, os.path.getsize(c),
                                                                   res["seconds"], rate, rate / plain_rate,
                                                                   "  (--compress=%s)" % compress if compress else ""),
                      flush=True)
                if compress == "lzma" and label.startswith("yolov8n") and baud == 921600:
                    ratio, speedup = image / os.path.getsize(c), rate / plain_rate
                    print("lzma on yolov8n: container %.3fx smaller than the model (goal >= 2.20: %s), speed-up %.3fx "
                          "over the uncompressed push at 921600 (goal >= 2.15: %s)" % (
                              ratio, "met" if ratio >= 2.20 else "NOT MET", speedup,
                              "met" if speedup >= 2.15 else "NOT MET"), flush=True)
def variant(src, out, *how, params=None):
    """tests/tools/model_variant.py: a new version of a model (its rel file, and params file if split)."""
    extra = ["--params", params[0], params[1]] if params else []
    r = subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                                                          "model_variant.py"), src, out, *how, *extra],
                       check=True, capture_output=True, text=True)
    return r.stdout.strip().splitlines()[-1]


def delta_case(env, label, rel, params, new, new_params, goal, push=False):
    """The full LZMA container of the new model against its delta from the old one's; with push, the old one
    installed and the delta pushed at 921600."""
    tag = label.split()[0]
    old = env.pack("dold_%s.mota" % tag, rel, params, seq=1, selftest=None, compress="lzma")
    full = env.pack("dfull_%s.mota" % tag, new, new_params, seq=2, selftest=None, compress="lzma")
    delta = env.pack("ddelta_%s.mota" % tag, new, new_params, seq=2, selftest=None, extra=("--delta-from", old))
    whole = "wrote the full one" in env.last_pack
    share = os.path.getsize(delta) / os.path.getsize(full)
    print("%-34s %10d %10d %8.2f%%  %s%s" % (label, os.path.getsize(full), os.path.getsize(delta), 100 * share,
                                          goal(share), " (pack wrote the full container: no smaller)" if whole else ""),
          flush=True)
    if push:
        sim, port = env.sim("--profile", "stm32n6570-dk", "--flash-size", "16777216", flash="d_%s.flash" % tag)
        assert env.push(port, old, "--confirm")[0] == 0
        emu, eport = env.emu(port, "--baud", "921600")
        rc, _, res, err = env.push(eport, delta, timeout=900)
        env.stop(emu)
        env.stop(sim)
        if rc != 0:
            sys.exit("push failed: %s %s" % (res, err))
        print("%-34s pushed at 921600 to a device running the old model: installed in %.2f s (%.1fx the image "
              "rate of the raw line)" % ("", res["seconds"], os.path.getsize(new) / res["seconds"] / 92160.0))


def delta_sizes(env):
    print("\ndelta containers (pack --delta-from): against the full LZMA container of the same new model")
    print("%-34s %10s %10s %9s" % ("new model", "full", "delta", "share"))
    yolo = os.path.join(FIXTURES, "st-n6", "yolov8n_network_rel.bin")
    five = lambda s: "goal <= 5%%: %s" % ("met" if s <= 0.05 else "NOT MET")  # noqa: E731
    if not QUICK and os.path.exists(yolo):
        for layers in (3, 6):
            new = env.p("yolo_head%d_rel.bin" % layers)
            print("  " + variant(yolo, new, "head", "--layers", str(layers)))
            delta_case(env, "yolov8n, last %d layers retrained" % layers, yolo, None, new, None, five,
                       push=layers == 6)
        new = env.p("yolo_retrain_rel.bin")
        print("  " + variant(yolo, new, "retrain"))
        delta_case(env, "yolov8n, retrained whole", yolo, None, new, None,
                   lambda s: "goal <= 1.02x: %s" % ("met" if s <= 1.02 else "NOT MET"))
    # a container's head (signature, manifest: about 0.9 KiB) is in both: below about 110 KiB of model it alone
    # is 5% of the full container
    kib = 160 if QUICK else 400
    rel, params = weights_like_model(env, kib)
    new, new_params = env.p("wl2_rel.bin"), env.p("wl2_params.bin")
    print("  " + variant(rel, new, "bytes", "--percent", "1", params=(params, new_params)))
    delta_case(env, "test model %d KiB, 1%% of bytes moved" % kib, rel, params, new, new_params, five)


def encrypted_goodput(env):
    """The same pushes with every payload encrypted (AES-128-GCM to a key-encryption key the device holds),
    as they are and deflated first: goodput against the unencrypted container's (goal: within 5%)."""
    print("\nencrypted payloads: effective goodput = image bytes installed per second / raw 8N1 rate")
    print("%-8s %-22s %10s %10s %9s %9s %8s" % ("baud", "model", "image", "container", "seconds", "goodput",
                                             "payloads"))
    kek = env.p("bench.jwk")
    env.run("keygen", "--kek", kek)
    cases = goodput_cases(env)
    worst = None
    for baud in (921600,):  # the rate; the line's share does not change with it
        for label, rel, params, sim_args in cases:
            image = os.path.getsize(rel) + (os.path.getsize(params) if params else 0)
            rates = {}
            for how in ("plain", "a128gcm", "plain+deflate", "deflate+a128gcm"):
                tag = "%s_%d_%s" % (label.split()[0], baud, how.replace("+", "_"))
                enc = ("--encrypt-kek", kek) if "gcm" in how else ()
                c = env.pack("e%s.mota" % tag, rel, params, seq=1, selftest=None,
                             compress="deflate" if "deflate" in how else False, encrypt=enc)
                sim, port = env.sim(*sim_args, "--kek", kek, flash="e%s.flash" % tag)
                emu, eport = env.emu(port, "--baud", str(baud))
                rc, events, res, err = env.push(eport, c, timeout=900)
                env.stop(emu)
                env.stop(sim)
                if rc != 0:
                    sys.exit("push failed: %s %s" % (res, err))
                rates[how] = image / res["seconds"] / (baud / 10.0)
                print("%-8d %-22s %10d %10d %9.2f %8.3fx %s" % (
                    baud, label, image, os.path.getsize(c), res["seconds"], rates[how],
                    "" if how == "plain" else "(%s)" % how), flush=True)
            for enc, plain in (("a128gcm", "plain"), ("deflate+a128gcm", "plain+deflate")):
                ratio = rates[enc] / rates[plain]
                worst = ratio if worst is None else min(worst, ratio)
                print("%-8d %-22s %s / %s: %.3f" % (baud, label, enc, plain, ratio))
    print("worst encrypted / unencrypted goodput: %.3f (goal >= 0.95: %s)" % (worst, "met" if worst >= 0.95 else
                                                                           "NOT MET"))


env = Env(mota, work)
try:
    print("%-8s %10s %9s %10s %9s %14s %14s" % ("baud", "container", "seconds", "goodput", "of 8N1", "overhead/MiB",
                                                  "acks/MiB"))
    for baud, params in ((921600, 60 * 1024),) if QUICK else ((115200, 60 * 1024), (921600, 500 * 1024)):
        rel, prm = env.model("m%d" % baud, params, seed=baud)
        c = env.pack("c%d.mota" % baud, rel, prm, seq=1)
        size = os.path.getsize(c)
        sim, port = env.sim(flash="f%d.flash" % baud)
        emu, eport = env.emu(port, "--baud", str(baud))
        rc, events, res, err = env.push(eport, c)
        counters = json.loads(env.stop(emu).strip().splitlines()[-1])
        env.stop(sim)
        if rc != 0:
            sys.exit("push failed: %s %s" % (res, err))
        secs = res["seconds"]
        line_rate = baud / 10.0
        goodput = size / secs
        over = (counters["bytes_to_device"] - size) / size * (1 << 20)
        acks = counters["bytes_to_host"] / size * (1 << 20)
        print("%-8d %10d %9.2f %7.0f B/s %9.3f %14.0f %14.0f" % (baud, size, secs, goodput, goodput / line_rate, over,
                                                                 acks))
    # an incompatible container (built for another board class): refused before any byte is written
    rel, prm = env.model("inc", 200 * 1024, seed=9)
    bad = env.pack("bad.mota", rel, prm, seq=1, cls="another-board")
    sim, port = env.sim(flash="fi.flash")
    emu, eport = env.emu(port, "--baud", "115200")
    rc, events, res, err = env.push(eport, bad)
    counters = json.loads(env.stop(emu).strip().splitlines()[-1])
    st = env.status(port)
    print("incompatible container (%d bytes) at 115200 baud: refused with %s after %.3f s, %d bytes sent, "
          "upload state %s (nothing written)" % (os.path.getsize(bad), res.get("status"), res.get("seconds", 0),
                                                 counters["bytes_to_device"], (st["upload"] or {"state": "none"})["state"]))
    compressed_goodput(env)
    encrypted_goodput(env)
    delta_sizes(env)
finally:
    env.close()
