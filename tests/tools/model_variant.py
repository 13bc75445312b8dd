#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Make a realistic NEW model file from an OLD one, to benchmark delta updates.

usage: model_variant.py OLD_rel.bin OUT_rel.bin head [--layers K] [--seed N]
       model_variant.py OLD_rel.bin OUT_rel.bin retrain [--seed N]
       model_variant.py OLD_rel.bin OUT_rel.bin bytes --percent P [--seed N]
       (split models: add --params OLD_params.bin OUT_params.bin)

head     the weights of the last K constant buffers (default 1) get new values,
         everything else stays identical (a fine-tuned head)
retrain  every constant buffer gets new values (a full retrain); code, tables
         and anything the buffer tables do not name stay identical
bytes    P% of the bytes of the weight region change by small +-1..3 shifts,
         scattered at random

The weights are found through the model's own tables, never by offset:
  * ST Neural-ART (LL_ATON) models: the epoch table (header entry 19) lists the
    epoch-controller blobs; each blob's EC binary header (magic 0xECBF0030,
    in the code) carries a relocation table naming a memory pool ("xSPI1") and
    the blob words that hold pool offsets, in pairs (stream start, stream end:
    last byte + 0x40). Each pair is one constant buffer [start, end + 1 - 0x40)
    of the pool; the pool is found in the mempool descriptor table by name and
    lies in the params blob (params_offset + foff). Buffers are ordered by
    their last use: epoch-table order, then program order inside a blob.
  * mota CPU-ABI models (mota build-model) and models without EC relocations:
    the GOT words and REL-patched words holding tag-8/9 addresses into a RELOC
    PARAM/MIXED pool are the buffer starts; a buffer ends at the next start or
    the pool's used size. Ordered by first appearance in the GOT, then REL.
  * Legacy X-CUBE-AI models: weights_start..weights_end as one buffer (the
    per-layer ai_array tables are not read); split files have no weights.
New values: the buffer's own int8 values shuffled within 64-byte windows,
zero bytes kept in place, 10% shifted by +-1 (int32 buffers, where every word
is a sign-extended 16-bit value as biases are: words shuffled, half shifted by
+-1..2), so the histogram and local statistics stay those of trained
weights. The params blob's CRC-32 in rt_ctx is rewritten when it was right.
Prints: variant KIND: N buffers changed, B bytes of S (X.XX%) at offsets A..Z
(S = the output file's size, A..Z = first and last changed file offset).
"""
import argparse
import random
import struct
import sys
import zlib

MAGIC = 0x4E49424E
EC_BINARY_MAGIC = 0xECBF0030  # the variant in ST Edge AI 2.2 models (newer ecloader.h: 0xECBF0050)
EC_BLOB_MAGIC = 0xCA057A7A
EC_END_SLACK = 0x40  # a stream's end word is its last byte + 0x40


class FormatError(Exception):
    pass


def off(v):
    return v & 0x0FFFFFFF


def tag(v):
    return v >> 28


class Model:
    def __init__(self, rel, params=None):
        self.d = bytearray(rel)
        self.params_file = bytearray(params) if params is not None else None
        if len(self.d) < 104 or self.u32(0) != MAGIC:
            raise FormatError("not an NBIN file")
        self.h = [self.u32(4 * i) for i in range(26)]
        self.family = tag(self.h[1])
        self.ro = off(self.h[4])
        self.note = ""
        if self.family == 8:
            self.parse_npu()
        elif self.family == 2:
            self.parse_legacy()
        else:
            raise FormatError("unknown reloc family %d" % self.family)

    def u32(self, o, buf=None):
        buf = self.d if buf is None else buf
        if o < 0 or o + 4 > len(buf):
            raise FormatError("read outside the file at %#x" % o)
        return struct.unpack_from("<I", buf, o)[0]

    def cstr(self, o):
        return bytes(self.d[o:self.d.index(b"\0", o)]).decode("latin-1")

    # ---- NPU: header, rt_ctx, pools (st-reloc-format sections 2, 4, 5) ----
    def parse_npu(self):
        h = self.h
        if tag(h[23]) == 4:
            self.hdr_words, ctx = 24, h[23]
        elif tag(h[23]) == 2 and tag(h[25]) == 4:
            self.hdr_words, ctx = 26, h[25]
        else:
            raise FormatError("cannot locate rt_ctx")
        self.ctx = self.ro + off(ctx)
        self.rt_version = self.u32(self.ctx + 40)
        self.params_bin_sz = self.u32(self.ctx + 48)
        self.crc_off = self.ctx + 52
        self.struct_sizes = self.u32(self.ctx + 56) if self.rt_version >= 0x01010100 else 0x1438
        poff = h[12]
        if poff:  # appended: the raw blob ends the file
            self.pbuf, self.pbase = self.d, poff
        elif self.params_file is not None:
            self.pbuf, self.pbase = self.params_file, 0
        else:
            self.pbuf, self.pbase = None, 0
        self.got = (self.ro + off(h[7]), self.ro + off(h[8]))
        self.rel = (off(h[9]), off(h[10]))
        self.pools = []
        p = self.ro + off(h[11])
        for _ in range(10):
            name, flags, foff, dst, size = struct.unpack_from("<5I", self.d, p)
            if name == 0 or flags == 0:
                break
            self.pools.append({"name": self.cstr(off(name)), "flags": flags, "foff": foff, "size": size})
            p += 20

    def pool_file_off(self, pool):
        return self.pbase + pool["foff"]

    def reloc_pool(self, t):
        """The RELOC PARAM/MIXED pool tag t (8: id 0, 9: id 1) resolves into, or None."""
        for pl in self.pools:
            typ, dtype, pid = pl["flags"] >> 24, (pl["flags"] >> 16) & 0xFF, pl["flags"] & 0xFF
            if typ == 1 and dtype in (1, 3) and pid == t - 8:
                return pl
        return None

    # ---- the epoch table and its EC blobs ----
    def getter_table(self, entry):
        """RW offset of the table a getter `ldr rX,[pc,#i]; ldr.w r0,[r9,rX]; bx lr` returns, None for NULL."""
        e = off(entry) & ~1
        hw0, hw1 = struct.unpack_from("<HH", self.d, e)
        if hw0 == 0x2000:  # movs r0, #0
            return None
        if hw0 & 0xF800 != 0x4800 or hw1 != 0xF859:  # ldr rX,[pc,#imm8*4]; ldr.w r0,[r9, ...]
            raise FormatError("getter at %#x has an unknown shape" % e)
        got_off = self.u32(((e + 4) & ~3) + (hw0 & 0xFF) * 4)
        v = self.u32(self.ro + got_off)
        if tag(v) != 4:
            raise FormatError("getter at %#x does not return a RAM table" % e)
        return off(v)

    def epoch_blobs(self):
        """Blob addresses of the epoch table's blob blocks, in epoch order."""
        t = self.getter_table(self.h[19])
        if t is None:
            return []
        rs, out = (self.struct_sizes >> 8) & 0xFF, []
        for i in range(10000):
            rec = self.ro + t + i * rs
            blob, fl = self.u32(rec + 8), struct.unpack_from("<H", self.d, rec + 16)[0]
            if fl & 0x8:  # last_eb
                return out
            if blob:
                out.append(blob)
        raise FormatError("epoch table has no terminator")

    def ec_binaries(self):
        """Every EC binary in the code: {blob file offset: (blob words, [(pool name, [pool offsets])])}."""
        bins, d = {}, self.d
        mag = struct.pack("<I", EC_BINARY_MAGIC)
        i = d.find(mag, self.hdr_words * 4, self.ro)
        while i != -1:
            if i % 4 == 0 and i + 24 <= self.ro:
                _, rt, patch, dbg, bo, _ = struct.unpack_from("<6I", d, i)
                b = i + bo
                if rt == 24 and patch == 0 and bo > rt and b + 8 <= self.ro and self.u32(b) == EC_BLOB_MAGIC:
                    words = self.u32(b + 4)
                    rels, r = [], i + rt
                    for k in range(self.u32(r)):
                        ido, num, lo = struct.unpack_from("<3I", d, r + 4 + 12 * k)
                        idx = struct.unpack_from("<%dI" % num, d, r + lo)
                        if any(x >= words for x in idx):
                            raise FormatError("EC relocation outside its blob at %#x" % i)
                        rels.append((self.cstr(r + ido), [self.u32(b + 8 + 4 * x) for x in idx]))
                    bins[b] = (words, rels)
            i = d.find(mag, i + 1, self.ro)
        # blobs without a relocation table have no binary header: record the bare ones the epoch table names
        return bins

    def npu_buffers(self):
        """(buffers in use order [(pool, start, size)], how) from the EC relocation tables, or None."""
        blobs = self.epoch_blobs()
        bins = self.ec_binaries()
        if not blobs or not any(r for _, r in bins.values()):
            return None
        # blobs with pool relocations are copied to RAM (tag 4) and relocated there by the model's init;
        # the RAM copies lie in the same order as their sources in the code, each round8(8 + 4*words)
        ram = sorted(off(b) for b in blobs if tag(b) == 4)
        src = sorted(b for b, (w, r) in bins.items() if r and b not in {off(x) for x in blobs if tag(x) == 2})
        if len(ram) != len(src):
            raise FormatError("%d RAM blobs, %d relocatable EC binaries" % (len(ram), len(src)))
        for k in range(len(ram) - 1):
            if ram[k + 1] - ram[k] != (8 + 4 * bins[src[k]][0] + 7) & ~7:
                raise FormatError("RAM blob at %#x does not match EC binary at %#x" % (ram[k], src[k]))
        of_ram = dict(zip(ram, src))
        uses = []
        for b in blobs:
            fb = off(b) if tag(b) == 2 else of_ram.get(off(b))
            if fb is None or fb not in bins:
                continue  # a blob without pool relocations: reads no constants
            for name, vals in bins[fb][1]:
                pool = next((p for p in self.pools if p["name"] == name), None)
                if pool is None:
                    raise FormatError("EC relocation names unknown pool %r" % name)
                if len(vals) % 2:
                    raise FormatError("odd number of EC relocations for %r" % name)
                for j in range(0, len(vals), 2):
                    s, e = vals[j], vals[j + 1] + 1 - EC_END_SLACK
                    if not s < e <= pool["size"]:
                        raise FormatError("stream %#x..%#x outside pool %r" % (vals[j], vals[j + 1], name))
                    uses.append((name, s, e - s))
        last = {}
        for k, u in enumerate(uses):
            last[u] = k
        bufs = sorted(last, key=last.get)
        spans = sorted((p, s, s + n) for p, s, n in bufs)
        for a, b in zip(spans, spans[1:]):
            if a[0] == b[0] and b[1] < a[2]:
                raise FormatError("constant buffers overlap: %#x and %#x" % (a[1], b[1]))
        pools = {p["name"]: p for p in self.pools}
        out = [(pools[p], s, n) for p, s, n in bufs]
        self.note = "EC blob relocation pairs (%d stream reads, %d buffers, by last use)" % (len(uses), len(out))
        return out

    def pointer_buffers(self):
        """Buffers from tag-8/9 GOT words and REL targets (mota CPU ABI, synthetic models)."""
        vals = []
        for g in range(self.got[0], self.got[1], 4):
            vals.append(self.u32(g))
        for r in range(self.rel[0], self.rel[1], 4):
            e = self.u32(r)
            if tag(e) == 4:
                vals.append(self.u32(self.ro + off(e)))
        starts = {}
        for v in vals:
            pool = self.reloc_pool(tag(v)) if tag(v) in (8, 9) else None
            if pool is not None and off(v) < pool["size"]:
                starts.setdefault((pool["name"], off(v)), len(starts))
        pools = {p["name"]: p for p in self.pools}
        if not starts:  # no references at all (e.g. synth_nbin): each param pool is one buffer
            for p in self.pools:
                if p["flags"] >> 24 in (1, 2) and (p["flags"] >> 16) & 0xFF in (1, 3):
                    starts[(p["name"], 0)] = len(starts)
            self.note = "no buffer references: each param pool is one buffer"
        else:
            self.note = "tag-8/9 GOT and REL pointers (GOT order)"
        out = []
        for (name, s), _ in sorted(starts.items(), key=lambda kv: kv[1]):
            ends = [x for (n, x) in starts if n == name and x > s] + [pools[name]["size"]]
            out.append((pools[name], s, min(ends) - s))
        return out

    def buffers(self):
        """[(buffer file, file offset, size)] in use order."""
        if self.family == 2:
            ws, we = off(self.h[11]), off(self.h[12])
            if ws == 0 or we <= ws:
                raise FormatError("legacy model without weights in the file (split: network_data.bin)")
            self.note = "legacy weights_start..weights_end, one buffer"
            return [(self.d, ws, we - ws)]
        if self.pbuf is None:
            raise FormatError("split model: give --params OLD_params.bin OUT_params.bin")
        bufs = self.npu_buffers() or self.pointer_buffers()
        out = []
        for pool, s, n in bufs:
            fo = self.pool_file_off(pool) + s
            if fo + n > len(self.pbuf):
                raise FormatError("buffer %#x+%d beyond the params" % (fo, n))
            out.append((self.pbuf, fo, n))
        return out

    def parse_legacy(self):
        self.pbuf = None

    def fix_crc(self, old_pbuf):
        """Rewrite rt_ctx.params_bin_crc32 if it held the old blob's CRC (the raw blob ends the params)."""
        if self.family != 8 or self.pbuf is None or not self.params_bin_sz:
            return
        n = self.params_bin_sz
        old = zlib.crc32(bytes(old_pbuf[len(old_pbuf) - n:])) & 0xFFFFFFFF
        if self.u32(self.crc_off) == old:
            struct.pack_into("<I", self.d, self.crc_off, zlib.crc32(bytes(self.pbuf[len(self.pbuf) - n:])) & 0xFFFFFFFF)


def as_int32(chunk):
    """Element size 4 if the buffer reads as int32 biases: every word a sign-extended 16-bit value."""
    if len(chunk) < 8 or len(chunk) % 4:
        return False
    words = struct.unpack("<%di" % (len(chunk) // 4), chunk)
    return all(-32768 <= w < 32768 for w in words) and any(w not in (0, -1) for w in words)


def new_values(chunk, rng, window=64):
    """Trained-looking replacement of the same type: own elements shuffled within 64-byte windows (local
    statistics kept), zero bytes kept in place (padding, pruned taps), 10% of the rest shifted by +-1."""
    n = len(chunk)
    if as_int32(chunk):
        w = list(struct.unpack("<%di" % (n // 4), chunk))
        rng.shuffle(w)
        w = [v + rng.choice((-2, -1, 1, 2)) if rng.random() < 0.5 else v for v in w]
        return struct.pack("<%di" % len(w), *w)
    out = bytearray(chunk)
    for w0 in range(0, n, window):
        pos = [k for k in range(w0, min(n, w0 + window)) if chunk[k]]
        vals = [chunk[k] - 256 if chunk[k] > 127 else chunk[k] for k in pos]
        rng.shuffle(vals)
        for k, v in zip(pos, vals):
            if rng.random() < 0.1:
                t = v + rng.choice((-1, 1))
                v = t if t != 0 and -128 <= t <= 127 else 2 * v - t
            out[k] = v & 0xFF
    return bytes(out)


def shift_byte(b, rng):
    v = b - 256 if b > 127 else b
    s = rng.choice((1, 2, 3)) * rng.choice((-1, 1))
    if not -128 <= v + s <= 127:
        s = -s
    return (v + s) & 0xFF


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("out")
    ap.add_argument("kind", choices=("head", "retrain", "bytes"))
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--percent", type=float)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--params", nargs=2, metavar=("OLD_PARAMS", "OUT_PARAMS"))
    a = ap.parse_args(argv)
    if a.kind == "bytes" and (a.percent is None or not 0 < a.percent <= 100):
        ap.error("bytes needs --percent P, 0 < P <= 100")
    if a.layers < 1:
        ap.error("--layers must be >= 1")
    rng = random.Random(a.seed)
    old_rel = open(a.old, "rb").read()
    old_params = open(a.params[0], "rb").read() if a.params else None
    try:
        m = Model(old_rel, old_params)
        bufs = m.buffers()
    except (FormatError, struct.error, ValueError) as e:
        sys.exit("model_variant: %s: %s" % (a.old, e))
    if a.kind == "head":
        chosen = bufs[-a.layers:]
    elif a.kind == "retrain":
        chosen = bufs
    else:
        chosen = []
    touched = set()
    if a.kind == "bytes":
        total = sum(n for _, _, n in bufs)
        k = max(1, round(total * a.percent / 100))
        for idx in rng.sample(range(total), k):
            for bi, (buf, fo, n) in enumerate(bufs):
                if idx < n:
                    buf[fo + idx] = shift_byte(buf[fo + idx], rng)
                    touched.add(bi)
                    break
                idx -= n
    else:
        for buf, fo, n in chosen:
            buf[fo:fo + n] = new_values(bytes(buf[fo:fo + n]), rng)
        touched = set(range(len(chosen)))
    m.fix_crc(old_params if m.params_file is not None else old_rel)
    open(a.out, "wb").write(m.d)
    outputs = [(old_rel, m.d)]
    if a.params:
        open(a.params[1], "wb").write(m.params_file)
        outputs.append((old_params, m.params_file))
    for old, new in outputs:
        diff = [i for i in range(len(new)) if old[i] != new[i]]
        print("variant %s: %d buffers changed, %d bytes of %d (%.2f%%) at offsets %s" %
              (a.kind, len(touched), len(diff), len(new), 100.0 * len(diff) / len(new),
               "%d..%d" % (diff[0], diff[-1]) if diff else "-"))
    print("  (%d constant buffers, %d bytes, found by %s)" % (len(bufs), sum(n for _, _, n in bufs), m.note),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
