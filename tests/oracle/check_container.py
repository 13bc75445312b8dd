#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Independent verification of a container written by `mota pack`.

usage: check_container.py CONTAINER PUBLIC.pem MODEL [--params F]
         [--vendor V --class C] [--seq N] [--mode xip|copy]
         [--selftest-input F --selftest-output F --selftest-max-latency-us N]
         [--compressed]

Checks, with cbor2, cryptography and the openssl command line, everything
the format promises: deterministic encoding, SUIT digest, ES256 signature,
key id, vendor/class UUID5, component digests and sizes, payload bytes, and
every compatibility field against a hand decode of the NBIN header. With
--compressed (pack --compress), the code payload must be compressed: an
LZ4 frame of mota's form, decoded here by a decoder of its own (lz4's Frame
and Block format documents, not the C code), or a raw deflate stream with a
sync flush every block, decoded by zlib; either back to the file.
"""
import argparse
import hashlib
import os
import subprocess
import re
import sys
import tempfile

import cbor2

import suitlib as S

failures = 0


def check(what, ok, detail=""):
    global failures
    print(("ok    " if ok else "FAIL  ") + what + ((": " + detail) if detail and not ok else ""))
    if not ok:
        failures += 1


def npu_epochs(path):
    """The npu-epochs array a container of this model carries (container-format.md), or None: a model
    without an epoch table, decoded by the independent decoder of tests/oracle/epochs_oracle.py."""
    import epochs_oracle as E
    try:
        r = E.Model(path).report()
    except Exception:  # a legacy model, or a table the oracle cannot read: pack writes no summary
        return None
    if r["table_offset"] is None:
        return None
    s = r["summary"]
    return [s["blocks"], s["blob_blocks"], s["hw_blocks"], s["hybrid_blocks"], s["sw_blocks"], s["epochs"],
            s["npu_epochs"], s["hybrid_epochs"], s["sw_epochs"]]


def lz4_frame(frame, size, block):
    """The image an LZ4 frame of mota's form decodes to, or an exception (lz4_Frame_format.md,
    lz4_Block_format.md; the form: docs/container-format.md)."""
    if frame[:7] != bytes.fromhex("04224d184040c0"):
        raise ValueError("header %s" % frame[:7].hex())
    out, p = bytearray(), 7
    while True:
        word = int.from_bytes(frame[p:p + 4], "little")
        p += 4
        if word == 0:
            break
        n, stored = word & 0x7FFFFFFF, word >> 31
        data, p = frame[p:p + n], p + n
        start = len(out)
        if stored:
            out += data
        else:
            q = 0
            while q < len(data):
                tok = data[q]
                q += 1
                lit = tok >> 4
                if lit == 15:
                    while True:
                        lit += data[q]
                        q += 1
                        if data[q - 1] != 255:
                            break
                out += data[q:q + lit]
                q += lit
                if q == len(data):
                    break
                off = data[q] | data[q + 1] << 8
                q += 2
                ml = (tok & 15) + 4
                if tok & 15 == 15:
                    while True:
                        ml += data[q]
                        q += 1
                        if data[q - 1] != 255:
                            break
                if off == 0 or off > len(out):
                    raise ValueError("offset %d at %d" % (off, len(out)))
                for _ in range(ml):
                    out.append(out[-off])
        if len(out) - start != min(block, size - start):
            raise ValueError("block at %d holds %d bytes" % (start, len(out) - start))
    if p != len(frame):
        raise ValueError("%d bytes after the end mark" % (len(frame) - p))
    return bytes(out)


def deflate_stream(stream, size, block):
    """zlib's decoding of a raw deflate stream, which must end where the payload does, and must hold a sync
    flush (an empty stored block, 00 00 ff ff) after every block of image bytes but the last."""
    import zlib
    d = zlib.decompressobj(-15)
    out = d.decompress(stream) + d.flush()
    if not d.eof or d.unused_data:
        raise ValueError("the stream does not end with the payload")
    flushes = stream.count(b"\x00\x00\xff\xff")
    if flushes < (size - 1) // block:
        raise ValueError("%d flushes for %d blocks" % (flushes, (size + block - 1) // block))
    return out


def run_install(install):
    """What suit-install does to each component index: its parameters, whether it is fetched, and the
    command that makes it from another (copy or mota-directive-decompress) with its argument."""
    idx, st = 0, {}
    for i in range(0, len(install), 2):
        cmd, arg = install[i], install[i + 1]
        s = st.setdefault(idx, {"p": {}, "fetched": False, "made": None})
        if cmd == 12:
            idx = arg
        elif cmd == 20:
            s["p"].update(arg)
        elif cmd == 21:
            s["fetched"] = True
        elif cmd in (S.CMD_COPY, S.DECOMPRESS_CMD):
            s["made"] = (cmd, arg)
    return st


def check_transform(role, img, tr, st, shared_params, wire, image):
    """Role's image made from its transport component: fetched there, its size and digest the payload's,
    then decompressed (mota-directive-decompress) into the image."""
    if tr is None:
        check(f"{role}: fetched into its own component (no transport)", st.get(img, {}).get("fetched"))
        check(f"{role}: sent as it is", wire == image)
        return False
    t, i = st.get(tr, {}), st.get(img, {})
    check(f"{role}: the payload is fetched into [{role}, transport] from #{role}",
          t.get("fetched") and t["p"].get(21) == "#" + role and 21 not in i.get("p", {}))
    tp = shared_params.get(tr, {})
    check(f"{role}: transport size = the payload's", tp.get(14) == len(wire))
    check(f"{role}: transport digest = SHA-256 of the payload",
          cbor2.loads(tp.get(3)) == [S.SHA256, hashlib.sha256(wire).digest()])
    check(f"{role}: the image's source is its transport", i.get("p", {}).get(S.PARAM_SOURCE) == tr)
    made = i.get("made")
    check(f"{role}: made by mota-directive-decompress", made is not None and made[0] == S.DECOMPRESS_CMD, str(made))
    if made is None or made[0] != S.DECOMPRESS_CMD:
        return False
    z = cbor2.loads(made[1])
    check(f"{role}: decompress argument is {{1: 1 or 2, 2: 4096}}", list(z) == [1, 2] and z[1] in (1, 2) and
          z[2] == 4096, str(z))
    what = "the LZ4 frame decodes (independent decoder)" if z.get(1) == 1 else "the deflate stream decodes (zlib)"
    try:
        got = lz4_frame(wire, len(image), z.get(2, 0)) if z.get(1) == 1 else deflate_stream(wire, len(image), z[2])
        check(f"{role}: {what} to the file", got == image)
    except Exception as e:  # noqa: BLE001
        check(f"{role}: {what} to the file", False, repr(e))
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("container")
    ap.add_argument("pubkey")
    ap.add_argument("model")
    ap.add_argument("--params")
    ap.add_argument("--vendor")
    ap.add_argument("--class", dest="klass")
    ap.add_argument("--seq", type=int)
    ap.add_argument("--mode", default="xip")
    ap.add_argument("--selftest-input")
    ap.add_argument("--selftest-output")
    ap.add_argument("--selftest-max-latency-us", type=int)
    ap.add_argument("--compressed", action="store_true")
    a = ap.parse_args()

    raw = open(a.container, "rb").read()
    model = open(a.model, "rb").read()
    pub = S.load_public(a.pubkey)

    env = cbor2.loads(raw)
    check("envelope is CBOR tag 107", isinstance(env, cbor2.CBORTag) and env.tag == 107)
    check("envelope encoding is deterministic", S.enc(env) == raw)
    body = env.value
    check("auth wrapper first, manifest second", list(body.keys())[:2] == [2, 3])

    auth = cbor2.loads(body[2])
    digest = cbor2.loads(auth[0])
    man_bytes = body[3]
    check("SUIT digest is SHA-256 of the bstr-wrapped manifest",
          digest == [S.SHA256, hashlib.sha256(S.enc(man_bytes)).digest()])
    sign1 = cbor2.loads(auth[1])
    check("authentication block is COSE_Sign1", isinstance(sign1, cbor2.CBORTag) and sign1.tag == 18)
    prot_b, unprot, payload, sig = sign1.value
    prot = cbor2.loads(prot_b)
    check("protected header is {alg: ES256, kid}", prot.get(1) == S.ES256 and set(prot) == {1, 4})
    check("key id = SHA-256(public point)[0:16]", prot.get(4) == S.key_id(pub))
    check("detached payload", payload is None and unprot == {})
    try:
        S.verify(pub, prot_b, auth[0], sig)
        check("ES256 signature verifies (python cryptography)", True)
    except Exception as e:  # noqa: BLE001
        check("ES256 signature verifies (python cryptography)", False, repr(e))

    with tempfile.TemporaryDirectory() as td:
        data = os.path.join(td, "tbs")
        der = os.path.join(td, "sig.der")
        open(data, "wb").write(S.sig_structure(prot_b, auth[0]))
        r = int.from_bytes(sig[:32], "big")
        s = int.from_bytes(sig[32:], "big")
        from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
        open(der, "wb").write(encode_dss_signature(r, s))
        res = subprocess.run(["openssl", "dgst", "-sha256", "-verify", a.pubkey, "-signature", der, data],
                             capture_output=True, text=True)
        check("ES256 signature verifies (openssl dgst)", res.returncode == 0 and "Verified OK" in res.stdout,
              res.stdout + res.stderr)

    man = cbor2.loads(man_bytes)
    check("manifest encoding is deterministic", S.enc(man) == man_bytes)
    check("manifest version 1", man.get(1) == 1)
    if a.seq is not None:
        check("sequence number", man.get(2) == a.seq, str(man.get(2)))
    common = cbor2.loads(man[3])
    roles = [c[0].decode() for c in common[2] if len(c) == 1]
    transports = {c[0].decode(): i for i, c in enumerate(common[2]) if len(c) == 2 and c[1] == S.TRANSPORT}
    check("identifiers: the images, then a transport per transformed image",
          len(common[2]) == len(roles) + len(transports) and set(transports) <= set(roles), str(common[2]))
    expect_roles = ["code"] + (["params"] if a.params else []) + (["selftest"] if a.selftest_input else [])
    check("components " + ",".join(expect_roles), roles == expect_roles, str(roles))
    files = {"code": model}
    if a.params:
        files["params"] = open(a.params, "rb").read()
    if a.selftest_input:
        files["selftest"] = open(a.selftest_input, "rb").read()
    shared = cbor2.loads(common[4])
    params = {}
    idx = 0
    for i in range(0, len(shared), 2):
        cmd, arg = shared[i], shared[i + 1]
        if cmd == 12:
            idx = arg
        elif cmd == 20:
            params.setdefault(idx, {}).update(arg)
    vid, cid = S.vendor_class(a.vendor, a.klass) if a.vendor else (None, None)
    for i, role in enumerate(roles):
        p = params.get(i, {})
        check(f"{role}: size", p.get(14) == len(files[role]))
        check(f"{role}: digest", cbor2.loads(p.get(3)) == [S.SHA256, hashlib.sha256(files[role]).digest()])
        if vid:
            check(f"{role}: vendor id = UUID5(DNS, {a.vendor})", p.get(1) == vid)
            check(f"{role}: class id = UUID5(vendor, {a.klass})", p.get(2) == cid)
    check("vendor and class conditions in the shared sequence", shared[-4:] == [1, 15, 2, 15])
    install = cbor2.loads(man[20])
    st = run_install(install)
    compressed = []
    for i, role in enumerate(roles):
        compressed.append(check_transform(role, i, transports.get(role), st, params, body.get("#" + role),
                                          files[role]))
    if a.compressed:
        check("the code is compressed", compressed[0])
    else:
        check("nothing is compressed", not any(compressed))

    compat = cbor2.loads(man[S.COMPAT_KEY])
    named = {S.COMPAT_NAMES[k]: v for k, v in compat.items()}
    want = S.nbin_compat(model)
    for k, v in want.items():
        check(f"compat {k} = {v}", named.get(k) == v, f"container has {named.get(k)!r}")
    check("compat install_mode", named.get("install_mode") == (1 if a.mode == "xip" else 2))
    want_epochs = npu_epochs(a.model)
    check("compat npu-epochs = the epoch table's summary (epochs_oracle.py)", named.get("npu_epochs") == want_epochs,
          f"container has {named.get('npu_epochs')!r}, the model {want_epochs!r}")
    if a.selftest_output:
        out = open(a.selftest_output, "rb").read()
        st = named.get("selftest", {})
        check("self-test output digest", st.get(1) == [S.SHA256, hashlib.sha256(out).digest()])
        check("self-test output size", st.get(2) == len(out))
        check("self-test max latency", st.get(3) == a.selftest_max_latency_us)
    text = cbor2.loads(man[23])["en"]
    reserved = [k for k in list(man) + list(text) if isinstance(k, int) and k in S.RESERVED]
    check("no manifest member or text key in SUIT's reserved range -255..-1", not reserved, str(reserved))
    check("creation time (RFC 3339, UTC) under the private-use text key",
          re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", str(text.get(S.TEXT_CREATED_KEY))) is not None, str(text))
    comp_text = text.get((b"code",), {})
    check("text: model name and version on the code component", 2 in comp_text and 6 in comp_text, str(text))
    print(f"{'FAILED' if failures else 'passed'}: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
