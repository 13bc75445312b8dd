#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Annotated hex dump of a mota container, for docs/container-format.md.

usage: walkthrough.py MOTA WORKDIR
Packs a small synthetic model with the RFC 6979 (A.2.5) example key, so the
output is the same on every machine, and prints every CBOR head with its
meaning. tests/cli checks that the document holds exactly this output.
"""
import os
import subprocess
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

mota, work = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
os.makedirs(work, exist_ok=True)
d = int("C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721", 16)
key = ec.derive_private_key(d, ec.SECP256R1())
open(os.path.join(work, "rfc6979.pem"), "wb").write(key.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
subprocess.run(["/usr/bin/python3", os.path.join(here, "synth_nbin.py"), os.path.join(work, "rel.bin"),
                os.path.join(work, "params.bin"), "16"], check=True)
env = dict(os.environ, SOURCE_DATE_EPOCH="1767225600")
subprocess.run([mota, "pack", "-k", os.path.join(work, "rfc6979.pem"), "--vendor", "example.com", "--class",
                "demo-board", "--seq", "1", "--version", "1.0.0", "--params", os.path.join(work, "params.bin"),
                "-o", os.path.join(work, "demo.mota"), os.path.join(work, "rel.bin")],
               check=True, env=env, stdout=subprocess.DEVNULL)
buf = open(os.path.join(work, "demo.mota"), "rb").read()

MAJOR = ["uint", "nint", "bstr", "tstr", "array", "map", "tag", "simple"]
NAMES = {
    ("env", 2): "authentication-wrapper", ("env", 3): "manifest",
    ("man", 1): "manifest-version", ("man", 2): "sequence-number", ("man", 3): "common",
    ("man", 7): "validate", ("man", 20): "install", ("man", 23): "text", ("man", -257): "mota-compat",
    ("common", 2): "components", ("common", 4): "shared-sequence",
}
NESTED = {"authentication-wrapper": "auth", "manifest": "man", "common": "common",
          "shared-sequence": "seq", "validate": "seq", "install": "seq", "text": "text",
          "mota-compat": "compat", "digest": "digest", "authentication block": "blk", "protected": "hdr"}
COMPAT = {1: "reloc-version", 2: "cpu-part", 3: "fpu", 4: "float-abi", 5: "secure", 6: "dbg-info",
          7: "async", 8: "toolchain", 9: "ll-aton-version", 10: "c-name", 11: "activations-size",
          12: "params-size", 13: "ext-ram-size", 14: "exec-ram-xip", 15: "exec-ram-copy",
          16: "install-mode", 17: "struct-sizes", 20: "runtime-desc"}
CMDS = {1: "condition-vendor-identifier", 2: "condition-class-identifier", 3: "condition-image-match",
        12: "directive-set-component-index", 20: "directive-override-parameters", 21: "directive-fetch"}
PARAMS = {1: "vendor-id", 2: "class-id", 3: "image-digest", 14: "image-size", 21: "uri"}
out = []


def head(pos):
    ib = buf[pos]
    major, ai = ib >> 5, ib & 31
    if ai < 24:
        return major, ai, 1
    n = 1 << (ai - 24)
    return major, int.from_bytes(buf[pos + 1:pos + 1 + n], "big"), 1 + n


def hexs(b, limit=16):
    s = b[:limit].hex(" ")
    return s + (" ..." if len(b) > limit else "")


def item(pos, depth, ctx, note=""):
    major, arg, hl = head(pos)
    ind = "  " * depth
    if major in (2, 3):
        body = buf[pos + hl:pos + hl + arg]
        nested = NESTED.get(note)
        if major == 3:
            desc = '"%s"' % body.decode()
        else:
            desc = "%d bytes" % arg
        out.append("%-52s %s%s %s%s" % (hexs(buf[pos:pos + hl] + (body if not nested else b""), 12 if nested else 16),
                                       ind, MAJOR[major], desc, (": " + note) if note else ""))
        end = pos + hl + arg
        if nested and major == 2:
            sub(pos + hl, end, depth + 1, nested)
        return end
    if major in (0, 1, 7):
        val = arg if major == 0 else (-1 - arg if major == 1 else {20: "false", 21: "true", 22: "null"}[arg])
        out.append("%-52s %s%s%s" % (hexs(buf[pos:pos + hl]), ind, val, (" (" + note + ")") if note else ""))
        return pos + hl
    if major == 6:
        out.append("%-52s %stag %d%s" % (hexs(buf[pos:pos + hl]), ind, arg, (": " + note) if note else ""))
        return item(pos + hl, depth + 1, "cose" if arg == 18 else ctx, "COSE_Sign1" if arg == 18 else note)
    kind = "array" if major == 4 else "map"
    out.append("%-52s %s%s(%d)%s" % (hexs(buf[pos:pos + hl]), ind, kind, arg, (": " + note) if note else ""))
    pos += hl
    for i in range(arg):
        if major == 4:
            n = ""
            if ctx == "seq" and i % 2 == 0 and buf[pos] < 24:
                n = CMDS.get(buf[pos], "")
            if ctx == "auth":
                n = "digest" if i == 0 else "authentication block"
            if ctx == "cose":
                n = ["protected", "unprotected", "payload (detached)", "signature r||s"][i]
            pos = item(pos, depth + 1, ctx, n)
        else:
            kpos = pos
            major_k, karg, _ = head(pos)
            k = karg if major_k == 0 else (-1 - karg if major_k == 1 else None)
            kn = NAMES.get((ctx, k), "")
            if ctx == "compat":
                kn = COMPAT.get(k, "")
            if ctx == "seq":
                kn = PARAMS.get(k, "")
            if ctx == "hdr":
                kn = {1: "alg", 4: "kid"}.get(k, "")
            pos = item(kpos, depth + 1, ctx, "key " + kn if kn else "")
            vnote = kn if kn in NESTED or kn == "image-digest" else ""
            if kn == "image-digest":
                vnote = "digest"
            if ctx == "env" and major_k == 3:
                vnote = "payload"
            pos = item(pos, depth + 1, ctx, vnote)
    return pos


def sub(start, end, depth, ctx):
    pos = start
    while pos < end:
        pos = item(pos, depth, ctx)


major, arg, hl = head(0)
out.append("%-52s tag %d: SUIT envelope" % (hexs(buf[:hl]), arg))
pos = hl
major, arg, hl2 = head(pos)
out.append("%-52s   map(%d)" % (hexs(buf[pos:pos + hl2]), arg))
pos += hl2
for i in range(arg):
    pos = item(pos, 2, "env", "key " + ({2: "authentication-wrapper", 3: "manifest"}.get(buf[pos], "payload")))
    pos = item(pos, 2, "env", {0: "authentication-wrapper", 1: "manifest"}.get(i, ""))
assert pos == len(buf)
print("%d bytes; `mota pack --seq 1 --version 1.0.0 --vendor example.com --class demo-board`" % len(buf))
print("of a synthetic split model with a 16-byte params file, signed with the RFC 6979")
print("A.2.5 example key, SOURCE_DATE_EPOCH=1767225600.\n")
print("\n".join(out))
