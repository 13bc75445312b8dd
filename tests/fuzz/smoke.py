#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Short libFuzzer runs for the test suite (scripts/fuzz.sh runs long ones).

usage: smoke.py FUZZ_BIN_DIR MOTA SOURCE_DIR FIXTURES_DIR TARGET RUNS
Builds a seed corpus in a temporary directory (containers from the malformed
catalogue, the SUIT example and containers encrypted for the fuzz device's
key-encryption key, compressed or not; the small models of tests/fuzz/corpus with a
dictionary for fuzz_nbin; LZ4 frames, deflate streams and LZMA blocks for
fuzz_decompress; regions, sources and streams for fuzz_delta; the SUIT working group's encryption-info items for
fuzz_encinfo), runs TARGET for RUNS executions and fails if the fuzzer
finds a crash, leak or timeout. RUNS 0: only build the corpus, print its
directory and keep it (scripts/fuzz.sh seeds its long runs so).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

fuzz_dir, mota, src, fix, target, runs = sys.argv[1:7]
extra = []
work = tempfile.mkdtemp(prefix="mota-fuzz-")
corpus = os.path.join(work, "corpus")
os.makedirs(corpus)

if target == "fuzz_link":
    # seeds: the sessions of tests/fuzz/agent_seeds.py, and one raw byte stream (the first byte's bit 7 set):
    # frames a host sends (HELLO, BEGIN, DATA, STATUS), COBS-encoded
    import struct as _s, zlib as _z

    def fr(cmd, payload, seq=1):
        body = _s.pack("<BBHBBH", 1, 1, seq, cmd, 0, len(payload)) + payload
        raw = body + _s.pack("<I", _z.crc32(body))
        out = bytearray()
        for blk in raw.split(b"\x00"):
            while len(blk) >= 254:
                out += b"\xff" + blk[:254]
                blk = blk[254:]
            out += bytes([len(blk) + 1]) + blk
        return bytes(out) + b"\x00"
    seed = fr(1, b"\x01\x00\x08") + fr(2, _s.pack("<I", 100) + bytes(32), 2) + fr(3, _s.pack("<I", 0) + b"\xd8\x6b", 3) + fr(4, b"", 4)
    open(os.path.join(corpus, "raw_session"), "wb").write(b"\x80\x00" + seed)
    import agent_seeds
    agent_seeds.write(mota, src, work, corpus, target)
    max_len = 32768
elif target == "fuzz_decompress":
    # seeds: the payloads `mota pack --compress` makes (liblz4's frames, zlib's streams, LZMA) of a synthetic model
    # whose params compress as weights do, at two block sizes' worth of image, each with its header bytes
    import json
    subprocess.run([mota, "keygen", os.path.join(work, "k.pem")], check=True, capture_output=True)
    for kib, alg in ((6, "lz4"), (6, "deflate"), (6, "lzma"), (16, "lz4"), (16, "deflate"), (16, "lzma")):
        rel, prm, out = (os.path.join(work, n) for n in ("s_rel.bin", "s_params.bin", "s.mota"))
        subprocess.run(["/usr/bin/python3", os.path.join(src, "tests", "tools", "synth_nbin.py"), rel, prm,
                        str(kib * 1024), "5", "weights"], check=True, capture_output=True)
        subprocess.run([mota, "pack", "-k", os.path.join(work, "k.pem"), "--vendor", "example.com", "--class", "c",
                        "--seq", "1", "--params", prm, "--compress=" + alg, "-o", out, rel], check=True,
                       capture_output=True)
        comp = [c for c in json.loads(subprocess.run([mota, "inspect", "--json", out], check=True,
                                                     capture_output=True, text=True).stdout)["components"]
                if c["role"] == "params"][0]
        z = comp["compression"]
        payload = open(out, "rb").read()[-z["size"]:]  # the params payload is the container's last
        head = bytes([{"deflate": 0x80, "lzma": 0x40}.get(alg, 0) | (z["block"].bit_length() - 9)])
        head += struct.pack("<I", comp["size"])[:3] + b"\x2a"
        open(os.path.join(corpus, "%s_%dk" % (alg, kib)), "wb").write(head + payload)
    max_len = 65536
elif target == "fuzz_gateway":
    # seeds: the example gateway.conf and the configurations and meta-data of the fleet tests (byte 0: even
    # for gateway.conf, odd for meta-data)
    seeds = [open(os.path.join(src, "host_tool", "mender", "gateway.conf"), "rb").read(),
             b"a tcp:127.0.0.1:4000 --baud 9600 --timeout 30 --retries 0 --id 00112233445566778899aabb\n"
             b"# the pump\r\nb /dev/serial/by-id/usb-STM-if02   # on the bench\n",
             b"a tcp:127.0.0.1:99999\n", b"pump.1 /dev/ttyACM0 --colour red\n"]
    metas = [b'{"mota_mcus": ["a", "b"]}', b'{\n  "aaa": "x\\"y",\n  "mota_mcus": [\n    "a"\n  ]\n}',
             b'{"description": "mota_mcus", "x": {"mota_mcus": ["a"]}, "n": [1, -2.5e3, true, null]}', b"null", b""]
    for i, d in enumerate(seeds):
        open(os.path.join(corpus, "conf%d" % i), "wb").write(b"\x00" + d)
    for i, d in enumerate(metas):
        open(os.path.join(corpus, "meta%d" % i), "wb").write(b"\x01" + d)
    max_len = 8192
elif target == "fuzz_answers":
    # seeds: a simulated device's answers (byte 0: 0 HELLO, 1 STATUS), whole and in parts (4 models in 256-byte
    # frames), and a provisioning record (2) as `mota provision --image` writes it
    import re
    import time
    sys.path.insert(0, os.path.join(src, "tests", "link"))
    from harness import RawLink
    k = os.path.join(work, "k.pem")
    subprocess.run([mota, "keygen", k], check=True, capture_output=True)
    rec = os.path.join(work, "rec.bin")
    subprocess.run([mota, "provision", "--image", rec, "--address", "0x08100000", "--key", k.replace(".pem", ".pub.pem"),
                    "--vendor", "example.com", "--class", "board-a", "--model", "a", "--model", "b"], check=True,
                   capture_output=True)
    open(os.path.join(corpus, "record"), "wb").write(b"\x02" + open(rec, "rb").read())
    pf = os.path.join(work, "port")
    sim = subprocess.Popen([mota, "sim", "--tcp", "127.0.0.1:0", "--port-file", pf, "--max-payload", "256",
                            "--key", k.replace(".pem", ".pub.pem"), *[a for m in "abcd" for a in ("--model", m)]],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(pf) and open(pf).read().strip():
                break
            time.sleep(0.05)
        link = RawLink(re.sub(r"^tcp:", "", open(pf).read().strip()))
        for i, (cmd, req) in enumerate(((1, struct.pack("<BH", 1, 256)), (1, struct.pack("<BHB", 1, 256, 0)),
                                        (4, b""), (4, b"\x00"), (4, b"\x02"))):
            st, body = link.request(cmd, req)
            open(os.path.join(corpus, "answer%d" % i), "wb").write(bytes([0 if cmd == 1 else 1]) + body)
    finally:
        sim.terminate()
        sim.wait()
    max_len = 8192
elif target == "fuzz_agent":
    # seeds: scripts of operations on two containers the fuzz device accepts (tests/fuzz/fuzz_agent.c reads
    # them), signed by `mota pack` with a key of its own (the target signs them again)
    import agent_seeds
    agent_seeds.write(mota, src, work, corpus, target)
    max_len = 32768
elif target == "fuzz_delta":
    # seeds: a source and an image of a few hundred bytes with one, two and three regions (one shifted, one
    # with moved bytes), and a region that reaches past the source (refused)
    import random
    import struct
    rnd = random.Random(7)
    src_b = bytes(rnd.randrange(256) for _ in range(600))
    for name, regions in (("one", [(0, 600, 0)]), ("two", [(0, 200, 100), (250, 300, 0)]),
                          ("three", [(10, 50, 500), (60, 40, 0), (400, 190, 410)]), ("past", [(0, 100, 550)])):
        rb = b"".join(struct.pack("<III", *r) for r in regions)
        head = struct.pack("<HHH", 600, 600, len(rb)) + bytes([rnd.randrange(256)])
        stream = bytes(rnd.choice((0, 0, 0, 1, 255)) for _ in range(600))
        open(os.path.join(corpus, "delta_" + name), "wb").write(head + rb + src_b + stream)
    max_len = 16384
elif target == "fuzz_encinfo":
    # seeds: the working group's four SUIT_Encryption_Info items (../shared/suit-encryption-examples), and parameter 19
    # as the five signed manifests carry it (the ES-DH ones with kid-2, in the draft's {-1, 4} order)
    import cbor2
    data = os.path.join(src, "..", "shared", "suit-encryption-examples")
    if not os.path.isdir(data):
        print("SKIPPED: ../shared/suit-encryption-examples is absent (no seeds)")
        data = None

    def unhex(name):
        return bytes.fromhex("".join(open(os.path.join(data, name)).read().split()))

    def param19(x):
        if isinstance(x, cbor2.CBORTag):
            return param19(x.value)
        if isinstance(x, dict):
            if isinstance(x.get(19), bytes):
                return x[19]
            vals = x.values()
        elif isinstance(x, list):
            vals = x
        elif isinstance(x, bytes):
            try:
                vals = [cbor2.loads(x)]
            except Exception:
                return None
        else:
            return None
        for v in vals:
            found = param19(v)
            if found is not None:
                return found
        return None
    for f in sorted(os.listdir(data)) if data else []:
        if f.startswith("suit-encryption-info-") and f.endswith(".hex"):
            open(os.path.join(corpus, f[:-4]), "wb").write(unhex(f))
        elif f.startswith("suit-manifest-") and f.endswith(".hex.signed"):
            open(os.path.join(corpus, f[:-11] + "-param19"), "wb").write(param19(cbor2.loads(unhex(f))))
    max_len = 1024
elif target == "fuzz_container":
    subprocess.run([mota, "keygen", os.path.join(work, "k.pem")], check=True, capture_output=True)
    subprocess.run(["/usr/bin/python3", os.path.join(src, "tests", "vectors", "malformed.py"), mota,
                    os.path.join(work, "k.pem"), os.path.join(work, "k.pub.pem"), corpus],
                   check=True, capture_output=True)
    ex0 = os.path.join(fix, "suit", "example0.suit")
    if os.path.exists(ex0):
        shutil.copy(ex0, corpus)
    # encrypted for the fuzz device's KEK (agent_seeds.FUZZ_KEK), and compressed then encrypted: a small
    # model and a split one with 6 KiB of params
    import agent_seeds
    kek = ["--encrypt-kek", agent_seeds.fuzz_kek(work)]
    models = os.path.join(src, "tests", "fuzz", "corpus", "fuzz_nbin")
    rel, prm = os.path.join(work, "e_rel.bin"), os.path.join(work, "e_params.bin")
    subprocess.run(["/usr/bin/python3", os.path.join(src, "tests", "tools", "synth_nbin.py"), rel, prm, "6144", "7",
                    "weights"], check=True, capture_output=True)
    for name, opts in (("enc_gcm", [os.path.join(models, "dense_npu_m55.bin")]),
                       ("enc_ctr", ["--cipher", "a128ctr", os.path.join(models, "conv_npu_m55.bin")]),
                       ("enc_deflate_gcm", ["--compress", "--params", prm, rel]),
                       ("enc_lz4_ctr", ["--compress=lz4", "--cipher", "a128ctr", "--params", prm, rel])):
        subprocess.run([mota, "pack", "-k", os.path.join(work, "k.pem"), "--vendor", "example.com", "--class", "c",
                        "--seq", "1", *kek, "-o", os.path.join(corpus, name + ".mota"), *opts], check=True,
                       capture_output=True)
    # each as it is (byte 0: no fix), and signed again by the target (byte 7: every fix)
    for f in os.listdir(corpus):
        data = open(os.path.join(corpus, f), "rb").read()
        open(os.path.join(corpus, f), "wb").write(b"\x00" + data)
        open(os.path.join(corpus, f + ".signed"), "wb").write(b"\x07" + data)
    max_len = 16384
else:  # fuzz_nbin: the small seeds kept in the repository (tests/fuzz/nbin_corpus.py made them) and a dictionary
    seeds = os.path.join(src, "tests", "fuzz", "corpus", "fuzz_nbin")
    for f in os.listdir(seeds):
        shutil.copy(os.path.join(seeds, f), corpus)
    extra = ["-dict=" + os.path.join(src, "tests", "fuzz", "nbin.dict")]
    max_len = 65536

if runs == "0":
    print(corpus)
    sys.exit(0)
cmd = [os.path.join(fuzz_dir, target), "-runs=" + runs, "-max_len=%d" % max_len, "-timeout=10",
       "-rss_limit_mb=2048", "-artifact_prefix=" + work + "/"] + extra + [corpus]
print(" ".join(cmd), flush=True)
r = subprocess.run(cmd, capture_output=True, text=True)
tail = r.stderr.strip().splitlines()[-6:]
print("\n".join(tail))
if r.returncode != 0:
    print(r.stderr[-4000:])
    print("FAILED: %s exited %d; artifacts in %s" % (target, r.returncode, work))
    sys.exit(1)
shutil.rmtree(work)
print("%s: %s runs without a finding" % (target, runs))
