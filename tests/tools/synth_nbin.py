#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Write a minimal, valid split NPU NBIN model whose params file has any size.

usage: synth_nbin.py OUT_REL.bin OUT_PARAMS.bin PARAMS_BYTES [SEED [random|weights [C_NAME]]]
The model has no real code; it exists so that containers can be built and
benchmarked around a params blob of a chosen size (the header carries the
blob's size and CRC-32, as ST's generator writes them). The blob is random
bytes, or with `weights` 64-byte rows repeated, zeroed or new, which compress
about as real weights do (1.5x to 2x with LZ4).
"""
import random
import struct
import sys
import zlib

out_rel, out_params, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
kind = sys.argv[5] if len(sys.argv) > 5 else "random"
c_name = sys.argv[6].encode() if len(sys.argv) > 6 else b"network"
assert 0 < len(c_name) < 8, "C_NAME: 1 to 7 bytes"

rng = random.Random(seed)


def weights(k):
    rows = []
    for _ in range((k + 63) // 64):
        r = rng.random()
        rows.append(rows[rng.randrange(len(rows))] if r < 0.35 and rows else bytes(64) if r < 0.5 else
                    rng.randbytes(64))
    return b"".join(rows)[:k]

CHUNK = 1 << 20
crc = 0
with open(out_params, "wb") as f:
    left = n
    while left:
        k = min(CHUNK, left)
        block = weights(k) if kind == "weights" else rng.randbytes(k)
        crc = zlib.crc32(block, crc)
        f.write(block)
        left -= k

# .data: rt_ctx (17 words), then the pool descriptors (one RELOC PARAM pool and
# the zero terminator) ending .data proper, then the 3 reserved GOT words
RO, DATA_END, GOT_S, GOT_E, BSS_S, BSS_E = 0xC0, 0x6C, 0x6C, 0x78, 0x78, 0xD8
REL = (RO + GOT_E + 7) & ~7  # where ST's post-processor puts it: after the data image, padded to 8
img = bytearray(REL)
hdr = [0x4E49424E, 0x80785D22, 0x40000000, 0x40000000 | DATA_END, 0x20000000 | RO,
       0x40000000 | BSS_S, 0x40000000 | BSS_E, 0x40000000 | GOT_S, 0x40000000 | GOT_E,
       0x20000000 | REL, 0x20000000 | REL, 0x40000044, 0] + [0x20000061] * 10 + [0x40000000]
struct.pack_into("<24I", img, 0, *hdr)
img[0x60:0x64] = b"\x00\x20\x70\x47"  # movs r0,#0; bx lr: every entry, get_epoch_items too, returns NULL
img[0x80:0x88] = c_name.ljust(8, b"\0")
img[0x88:0x88 + 22] = b"synthetic (RELOC.GCC)\0"
img[0xA0:0xA7] = b"params\0"
rt = [0, 0, 0, 0, 0, 0x20000080, 65536, n, 0, 0x20000088, 0x01010100, 0, n, crc, 0x3038, 0, 0x40000000]
struct.pack_into("<17I", img, RO, *rt)
struct.pack_into("<5I", img, RO + 0x44, 0x200000A0, 0x01010100, 0, 0, n)  # params: RELOC, PARAM, READ, id 0
open(out_rel, "wb").write(img)
