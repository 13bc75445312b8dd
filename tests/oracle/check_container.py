#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Independent verification of a container written by `mota pack`.

usage: check_container.py CONTAINER PUBLIC.pem MODEL [--params F]
         [--vendor V --class C] [--seq N] [--mode xip|copy]
         [--selftest-input F --selftest-output F --selftest-max-latency-us N]
         [--compressed] [--encrypted A128GCM|A128CTR [--kek JWK]... [--device-key PEM]...]

Checks, with cbor2, cryptography and the openssl command line, everything
the format promises: deterministic encoding, SUIT digest, ES256 signature,
key id, vendor/class UUID5, component digests and sizes, payload bytes, and
every compatibility field against a hand decode of the NBIN header. With
--compressed (pack --compress), the code payload must be compressed: LZMA
blocks (decoded by liblzma through ctypes), an
LZ4 frame of mota's form, decoded here by a decoder of its own (lz4's Frame
and Block format documents, not the C code), or a raw deflate stream with a
sync flush every block, decoded by zlib; either back to the file. With
--encrypted (pack --encrypt-kek / --encrypt-to), every payload must be
encrypted so (draft-ietf-suit-firmware-encryption): the encryption info is
checked field by field, the content key unwrapped for every recipient a
--kek (its JWK read here) or --device-key serves, and the payload decrypted
(AES-GCM with its Enc_structure, or AES-CTR) by python's cryptography, then
decompressed when it is, back to the file.
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


def lzma_blocks(stream, size, block):
    """mota's LZMA payload (docs/container-format.md): a block per `block` image bytes, each `p n0 n1 n2` and n
    bytes that liblzma's raw LZMA1 decoder (through ctypes: Python's lzma module has no preset dictionary)
    decodes to the block's bytes with the image before it as its dictionary, taking them all; or 0xFF and the
    bytes themselves."""
    import ctypes
    lib = ctypes.CDLL("liblzma.so.5")

    class Opts(ctypes.Structure):  # lzma_options_lzma (lzma/lzma12.h)
        _fields_ = ([("dict_size", ctypes.c_uint32), ("preset_dict", ctypes.c_char_p),
                     ("preset_dict_size", ctypes.c_uint32)] +
                    [(n, ctypes.c_uint32) for n in ("lc", "lp", "pb", "mode", "nice_len", "mf", "depth", "ext_flags",
                                                    "ext_size_low", "ext_size_high", "r4", "r5", "r6", "r7", "r8",
                                                    "e1", "e2", "e3", "e4")] +
                    [("p1", ctypes.c_void_p), ("p2", ctypes.c_void_p)])

    class Filter(ctypes.Structure):
        _fields_ = [("id", ctypes.c_uint64), ("options", ctypes.c_void_p)]
    out, p = bytearray(), 0
    while len(out) < size:
        n = min(block, size - len(out))
        if stream[p] == 0xFF:
            out += stream[p + 1:p + 1 + n]
            p += 1 + n
            continue
        props, clen = stream[p], int.from_bytes(stream[p + 1:p + 4], "little")
        if props >= 225 or props % 9 + props // 9 % 5 > 1 or not 5 <= clen < n:
            raise ValueError("block at %d: parameters %d, %d bytes for %d" % (p, props, clen, n))
        hist = bytes(out)
        o = Opts(dict_size=max(1 << 20, len(hist)), preset_dict=hist or None, preset_dict_size=len(hist),
                 lc=props % 9, lp=props // 9 % 5, pb=props // 45, ext_size_low=n)
        f = (Filter * 2)((0x4000000000000002, ctypes.cast(ctypes.pointer(o), ctypes.c_void_p)),  # LZMA1EXT
                         (0xFFFFFFFFFFFFFFFF, None))
        src = bytes(stream[p + 4:p + 4 + clen])
        dst = ctypes.create_string_buffer(n)
        ip, op = ctypes.c_size_t(0), ctypes.c_size_t(0)
        ret = lib.lzma_raw_buffer_decode(f, None, src, ctypes.byref(ip), ctypes.c_size_t(len(src)), dst,
                                         ctypes.byref(op), ctypes.c_size_t(n))
        if ret != 0 or ip.value != clen or op.value != n:
            raise ValueError("block at %d: liblzma says %d, %d of %d bytes in, %d of %d out" %
                             (p, ret, ip.value, clen, op.value, n))
        out += dst.raw
        p += 4 + clen
    if p != len(stream):
        raise ValueError("%d bytes after the last block" % (len(stream) - p))
    return bytes(out)


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


def check_encryption_info(role, info_b, want_alg, wire, dev_keys):
    """Param 19 as the draft and mota's profile write it: a COSE_Encrypt_Tagged with a detached ciphertext,
    the content algorithm where the draft's examples put it, a fresh IV (CTR: the low 32 bits zero), 1 to 4
    recipients, each A128KW with its kid or ECDH-ES+A128KW with an ephemeral P-256 key and the device key's
    id as kid. The decoded item, or None."""
    try:
        info = cbor2.loads(info_b)
    except Exception as e:  # noqa: BLE001
        check(f"{role}: encryption info decodes", False, repr(e))
        return None
    ok = isinstance(info, cbor2.CBORTag) and info.tag == S.COSE_ENCRYPT_TAG and len(info.value) == 4
    check(f"{role}: encryption info is a COSE_Encrypt (tag 96) of four items", ok, repr(info)[:200])
    if not ok:
        return None
    check(f"{role}: encryption info in canonical CBOR", S.enc(info) == info_b)
    prot_b, unprot, ct, recips = info.value
    gcm = prot_b == S.enc({1: S.A128GCM}) and set(unprot) == {5} and len(unprot[5]) == 12
    ctr = prot_b == b"" and unprot.get(1) == S.A128CTR and set(unprot) == {1, 5} and len(unprot[5]) == 16 \
        and unprot[5][12:] == bytes(4)
    alg = S.A128GCM if gcm else S.A128CTR if ctr else None
    check(f"{role}: content {S.ALG_NAMES.get(want_alg)} (GCM: {{1: 1}} protected, 12-byte IV; CTR: h'' protected, "
          "alg unprotected, 16-byte IV whose low 32 bits are zero)", alg == want_alg, f"{prot_b.hex()} {unprot}")
    check(f"{role}: detached ciphertext, 1 to 4 recipients", ct is None and 1 <= len(recips) <= 4)
    for n, r in enumerate(recips):
        kw = r[0] == b"" and set(r[1]) == {1, 4} and r[1][1] == S.A128KW and 1 <= len(r[1][4]) <= 32
        ecdh = r[0] == S.enc({1: S.ECDH_ES_A128KW}) and set(r[1]) == {-1, 4} and \
            r[1][-1].get(1) == 2 and r[1][-1].get(-1) == 1 and len(r[1][-1].get(-2, b"")) == 32 and \
            len(r[1][-1].get(-3, b"")) == 32 and len(r[1][4]) == 16
        check(f"{role}: recipient {n} is A128KW with a kid or ECDH-ES+A128KW on P-256 with the device key's id",
              kw or ecdh, repr(r)[:300])
        check(f"{role}: recipient {n}'s wrapped key is 24 bytes", isinstance(r[2], bytes) and len(r[2]) == 24)
        if ecdh and dev_keys:
            check(f"{role}: recipient {n}'s kid is a device key's id (SHA-256 of its point, 16 bytes)",
                  r[1][4] in [S.key_id(d.public_key()) for d in dev_keys])
    return info


def decrypt_transport(role, info, wire, keys):
    """The plaintext of role's payload from every recipient a key here serves (each must give the same
    content key), or None."""
    keks, dev_keys = keys
    try:
        ceks = S.recipient_ceks(info, keks, dev_keys)
    except Exception as e:  # noqa: BLE001
        check(f"{role}: the content key unwraps (aes_key_unwrap)", False, repr(e))
        return None
    check(f"{role}: a key given unwraps the content key ({len(ceks)} of {len(info.value[3])} recipients)",
          len(ceks) > 0)
    check(f"{role}: every recipient wraps the same content key", len({c for _, c in ceks}) <= 1)
    if not ceks:
        return None
    try:
        return S.decrypt_payload(info, ceks[0][1], wire)
    except Exception as e:  # noqa: BLE001
        check(f"{role}: the payload decrypts (GCM tag / CTR)", False, repr(e))
        return None


def check_transform(role, img, tr, st, shared_params, wire, image, want_alg=None, keys=({}, [])):
    """Role's image made from its transport component: fetched there, its size and digest the payload's,
    then decrypted (copy with encryption info, 19) and/or decompressed (mota-directive-decompress) into the
    image. (compressed, encryption info or None)."""
    if tr is None:
        check(f"{role}: fetched into its own component (no transport)", st.get(img, {}).get("fetched"))
        check(f"{role}: sent as it is", wire == image)
        return False, None
    t, i = st.get(tr, {}), st.get(img, {})
    check(f"{role}: the payload is fetched into [{role}, transport] from #{role}",
          t.get("fetched") and t["p"].get(21) == "#" + role and 21 not in i.get("p", {}))
    tp = shared_params.get(tr, {})
    check(f"{role}: transport size = the payload's", tp.get(14) == len(wire))
    check(f"{role}: transport digest = SHA-256 of the payload",
          cbor2.loads(tp.get(3)) == [S.SHA256, hashlib.sha256(wire).digest()])
    check(f"{role}: the image's source is its transport", i.get("p", {}).get(S.PARAM_SOURCE) == tr)
    made, info_b = i.get("made"), i.get("p", {}).get(S.PARAM_ENCRYPTION_INFO)
    check(f"{role}: made by copy with encryption info or by mota-directive-decompress",
          made is not None and (made[0] == S.DECOMPRESS_CMD or (made[0] == S.CMD_COPY and info_b is not None)),
          str(made))
    if made is None:
        return False, None
    check(f"{role}: encrypted as asked", (info_b is not None) == (want_alg is not None))
    info, stream = None, wire
    if info_b is not None:
        info = check_encryption_info(role, info_b, want_alg, wire, keys[1])
        stream = decrypt_transport(role, info, wire, keys) if info is not None else None
        if stream is None:
            return made[0] == S.DECOMPRESS_CMD, info
        tag = 16 if info.value[0] else 0  # GCM's alg is protected, CTR's protected bstr is empty
        check(f"{role}: the payload is the ciphertext" + (", then GCM's 16-byte tag" if tag else ""),
              len(wire) == len(stream) + tag)
    if made[0] == S.CMD_COPY:
        check(f"{role}: copy's argument is a reporting policy", made[1] == 15, str(made[1]))
        check(f"{role}: the payload decrypts to the file", stream == image)
        return False, info
    z = cbor2.loads(made[1])
    check(f"{role}: decompress argument is {{1: 1 or 2, 2: 4096}} or {{1: 3, 2: 262144}}", list(z) == [1, 2] and
          (z[1] in (1, 2) and z[2] == 4096 or z[1] == 3 and z[2] == 262144), str(z))
    what = {1: "the LZ4 frame decodes (independent decoder)", 2: "the deflate stream decodes (zlib)",
            3: "the LZMA blocks decode (liblzma)"}.get(z.get(1), "?")
    what += ", once decrypted," if info is not None else ""
    try:
        dec = {1: lz4_frame, 2: deflate_stream, 3: lzma_blocks}[z.get(1)]
        got = dec(stream, len(image), z.get(2, 0))
        check(f"{role}: {what} to the file", got == image)
    except Exception as e:  # noqa: BLE001
        check(f"{role}: {what} to the file", False, repr(e))
    return True, info


def check_recipients_shared(infos):
    """One content key per container, the same recipients for every payload (the same wrapped key and
    ephemeral keys), and a fresh IV for each."""
    recips = [S.enc(i.value[3]) for i in infos]
    check("every payload has the same recipients (wrapped key, ephemeral keys)", len(set(recips)) == 1)
    ivs = [i.value[1][5] for i in infos]
    check("every payload has an IV of its own", len(set(ivs)) == len(ivs))


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
    ap.add_argument("--encrypted", choices=["A128GCM", "A128CTR"], help="every payload encrypted so")
    ap.add_argument("--kek", action="append", default=[], help="a key-encryption key file (JWK)")
    ap.add_argument("--device-key", action="append", default=[], help="a device's P-256 private key (PEM)")
    a = ap.parse_args()
    keys = (dict(S.read_kek(k) for k in a.kek), [S.load_private(k) for k in a.device_key])
    want_alg = {"A128GCM": S.A128GCM, "A128CTR": S.A128CTR}.get(a.encrypted)

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
    compressed, infos = [], []
    for i, role in enumerate(roles):
        z, info = check_transform(role, i, transports.get(role), st, params, body.get("#" + role), files[role],
                                  want_alg, keys)
        compressed.append(z)
        infos += [info] if info is not None else []
    if want_alg is not None:
        check("every payload is encrypted", len(infos) == len(roles))
        if infos:
            check_recipients_shared(infos)
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
