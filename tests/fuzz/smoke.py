#!/usr/bin/python3
"""Short libFuzzer runs for the test suite (scripts/fuzz.sh runs long ones).

usage: smoke.py FUZZ_BIN_DIR MOTA SOURCE_DIR FIXTURES_DIR TARGET RUNS
Builds a seed corpus in a temporary directory (containers from the malformed
catalogue and the SUIT example; the small models of tests/fuzz/corpus with a
dictionary for fuzz_nbin; LZ4 frames and deflate streams for
fuzz_decompress), runs TARGET for RUNS executions and fails if the fuzzer
finds a crash, leak or timeout.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

fuzz_dir, mota, src, fix, target, runs = sys.argv[1:7]
extra = []
work = tempfile.mkdtemp(prefix="mota-fuzz-")
corpus = os.path.join(work, "corpus")
os.makedirs(corpus)

if target == "fuzz_link":
    # seeds: frames a host sends (HELLO, BEGIN, DATA, STATUS), COBS-encoded
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
    open(os.path.join(corpus, "session"), "wb").write(seed)
    max_len = 8192
elif target == "fuzz_decompress":
    # seeds: frames of mota's form (header 04 22 4D 18 40 40 C0, linked blocks) made here by a small
    # greedy encoder (test seeds only: mota pack uses liblz4), and one with a stored block
    def block(raw, start, end):
        out, lit, i = bytearray(), start, start
        while i < end - 12:
            best = (0, 0)
            for d in (1, 2, 3, 4, 8, 16, 64, 300):
                if i - d >= 0:
                    n = 0
                    while i + n < end - 5 and raw[i + n] == raw[i - d + n] and n < 300:
                        n += 1
                    best = max(best, (n, d))
            if best[0] < 4:
                i += 1
                continue
            n, d = best
            ll, ml = i - lit, n - 4
            out.append((min(ll, 15) << 4) | min(ml, 15))
            if ll >= 15:
                out += b"\xff" * ((ll - 15) // 255) + bytes([(ll - 15) % 255])
            out += raw[lit:i] + struct.pack("<H", d)
            if ml >= 15:
                out += b"\xff" * ((ml - 15) // 255) + bytes([(ml - 15) % 255])
            i += n
            lit = i
        ll = end - lit
        out.append(min(ll, 15) << 4)
        if ll >= 15:
            out += b"\xff" * ((ll - 15) // 255) + bytes([(ll - 15) % 255])
        return bytes(out + raw[lit:end])

    def frame(raw, bexp):
        bs, out = 1 << bexp, bytearray(b"\x04\x22\x4d\x18\x40\x40\xc0")
        for o in range(0, len(raw), bs):
            e = min(len(raw), o + bs)
            b = block(raw, o, e)
            out += struct.pack("<I", len(b)) + b if len(b) < e - o else struct.pack("<I", (e - o) | 1 << 31) + raw[o:e]
        return struct.pack("<B", bexp - 8) + struct.pack("<I", len(raw))[:3] + b"\x2a" + out + bytes(4)
    text = b"".join(b"weights %d: %s; " % (i, b"ab" * (i % 7)) for i in range(300))
    open(os.path.join(corpus, "text_256"), "wb").write(frame(text, 8))
    open(os.path.join(corpus, "text_4k"), "wb").write(frame(text, 12))
    open(os.path.join(corpus, "stored"), "wb").write(frame(os.urandom(700), 9))
    import zlib  # deflate streams as mota pack writes them: a sync flush every block

    def deflated(raw, bexp):
        c = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
        bs = 1 << bexp
        body = b"".join(c.compress(raw[o:o + bs]) + (c.flush(zlib.Z_SYNC_FLUSH) if o + bs < len(raw) else b"")
                        for o in range(0, len(raw), bs)) + c.flush(zlib.Z_FINISH)
        return bytes([0x80 | (bexp - 8)]) + struct.pack("<I", len(raw))[:3] + b"\x2a" + body
    open(os.path.join(corpus, "deflate_256"), "wb").write(deflated(text, 8))
    open(os.path.join(corpus, "deflate_4k"), "wb").write(deflated(text, 12))
    open(os.path.join(corpus, "deflate_stored"), "wb").write(deflated(os.urandom(900), 9))
    max_len = 65536
elif target in ("fuzz_container", "fuzz_agent"):
    subprocess.run([mota, "keygen", os.path.join(work, "k.pem")], check=True, capture_output=True)
    subprocess.run(["/usr/bin/python3", os.path.join(src, "tests", "vectors", "malformed.py"), mota,
                    os.path.join(work, "k.pem"), os.path.join(work, "k.pub.pem"), corpus],
                   check=True, capture_output=True)
    ex0 = os.path.join(fix, "suit", "example0.suit")
    if os.path.exists(ex0):
        shutil.copy(ex0, corpus)
    max_len = 16384 if target == "fuzz_container" else 32768
else:  # fuzz_nbin: the small seeds kept in the repository (tests/fuzz/nbin_corpus.py made them) and a dictionary
    seeds = os.path.join(src, "tests", "fuzz", "corpus", "fuzz_nbin")
    for f in os.listdir(seeds):
        shutil.copy(os.path.join(seeds, f), corpus)
    extra = ["-dict=" + os.path.join(src, "tests", "fuzz", "nbin.dict")]
    max_len = 65536

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
