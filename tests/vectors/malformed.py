#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Catalogue of malformed containers, each with the reason `mota verify` must give.

usage: malformed.py MOTA PRIVATE.pem PUBLIC.pem WORKDIR

Every container is built by the independent encoder in tests/oracle/suitlib.py
and, unless the case is about the signature, correctly signed, so that each
defect is reached by the verifier rather than masked by an earlier check.
Prints one line per case and a final "N passed, N failed" count.
"""
import hashlib
import os
import subprocess
import sys

import cbor2

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
import suitlib as S  # noqa: E402

CODE = bytes((i * 7 + 3) & 0xFF for i in range(4000))
PARAMS = bytes((i ^ 0x5A) & 0xFF for i in range(1000))
COMPAT = S.compat_map({
    "reloc_version": [8, 0], "cpu_part": 0xD22, "fpu": True, "float_abi": 2, "secure": False,
    "dbg_info": False, "async": True, "toolchain": 8, "ll_aton_version": [1, 1, 1],
    "c_name": "network", "activations_size": 4096, "params_size": 1000, "ext_ram_size": 0,
    "exec_ram_xip": 512, "exec_ram_copy": 4512, "install_mode": 1,
})
TEXT = {"en": {1: "catalogue", (b"code",): {2: "network", 6: "1.0.0"}}}


def rebuild_map(pairs):
    """Encode a map from (encoded key, encoded value) pairs, in the given order."""
    assert len(pairs) < 24
    return bytes([0xA0 | len(pairs)]) + b"".join(k + v for k, v in pairs)


def raw_manifest(m, first):
    """Manifest map with the raw (key, value) byte pairs `first` in front of
    members 3 and up, to express what a canonical encoder cannot."""
    rest = [(S.enc(k), S.enc(v)) for k, v in sorted(m.items(), key=lambda kv: S.enc(kv[0])) if k not in (1, 2)]
    return rebuild_map(first + rest)


def ok_payloads(two=True):
    return [("code", CODE), ("params", PARAMS)] if two else [("code", CODE)]


def make(priv, **kw):
    base = dict(vendor="example.com", klass="board", seq=7, payloads=ok_payloads(), compat=dict(COMPAT),
                text=TEXT)
    base.update(kw)
    return S.build(priv, base.pop("vendor"), base.pop("klass"), base.pop("seq"), base.pop("payloads"),
                   base.pop("compat"), **base)


def envelope_pairs(blob):
    """Split an encoded envelope into its tag head and (key, value) byte pairs."""
    env = cbor2.loads(blob)
    return [(S.enc(k), S.enc(v)) for k, v in env.value.items()]


def tagged(pairs, tag=107):
    return S.enc(cbor2.CBORTag(tag, 0))[:-1] + rebuild_map(pairs)


def resign_auth(priv, digest_enc, protected=None, n_blocks=1, sig_mut=None):
    prot = protected or S.enc({1: S.ES256, 4: S.key_id(priv.public_key())})
    sig = S.sign(priv, prot, digest_enc)
    if sig_mut:
        sig = sig_mut(sig)
    block = S.enc(cbor2.CBORTag(18, [prot, {}, None, sig]))
    return [digest_enc] + [block] * n_blocks


def cases(priv):
    good = make(priv)
    kid = S.key_id(priv.public_key())
    pairs = envelope_pairs(good)
    c = []

    def add(name, reason, blob):
        c.append((name, reason, blob))

    add("valid", "MOTA_OK", good)
    # -- structure and CBOR profile
    add("truncated-in-auth", "MOTA_ERR_CBOR_TRUNCATED", good[:40])
    add("truncated-in-manifest", "MOTA_ERR_CBOR_TRUNCATED", good[:200])
    add("truncated-in-payload", "MOTA_ERR_CBOR_TRUNCATED", good[:-500])
    add("truncated-before-last-payload", "MOTA_ERR_CBOR_TRUNCATED", good[:-(len(PARAMS) + 9)])
    add("trailing-bytes", "MOTA_ERR_CBOR_TRAILING", good + b"\x00")
    add("wrong-envelope-tag", "MOTA_ERR_ENV_TAG", tagged(pairs, 108))
    add("untagged-envelope", "MOTA_ERR_ENV_TAG", rebuild_map(pairs))
    add("manifest-declares-64k", "MOTA_ERR_ENV_TOO_LARGE",
        tagged([pairs[0], (S.enc(3), b"\x59\xff\xff" + b"\x00" * 100)]))
    add("too-many-envelope-members", "MOTA_ERR_CBOR_TOO_LARGE",
        tagged(pairs + [(S.enc("#x%d" % i), S.enc(b"x")) for i in range(6)]))
    add("manifest-before-auth", "MOTA_ERR_ENV_NO_AUTH", tagged([pairs[1], pairs[0]] + pairs[2:]))
    add("no-manifest", "MOTA_ERR_ENV_NO_MANIFEST", tagged([pairs[0]]))
    add("delegation-member", "MOTA_ERR_ENV_UNKNOWN_KEY", tagged([(S.enc(1), S.enc(b"\x80"))] + pairs))
    add("manifest-as-text", "MOTA_ERR_CBOR_TYPE",
        tagged([pairs[0], (S.enc(3), S.enc(cbor2.loads(pairs[1][1]).decode("latin-1")))] + pairs[2:]))
    add("duplicate-manifest-key", "MOTA_ERR_CBOR_DUP_KEY",
        make(priv, manifest_hook=lambda m: raw_manifest(m, [(b"\x01", b"\x01"), (b"\x02", b"\x07"),
                                                            (b"\x02", b"\x07")])))
    add("manifest-keys-out-of-order", "MOTA_ERR_CBOR_KEY_ORDER",
        make(priv, manifest_hook=lambda m: raw_manifest(m, [(b"\x02", b"\x07"), (b"\x01", b"\x01")])))
    add("indefinite-length-validate", "MOTA_ERR_CBOR_INDEFINITE",
        make(priv, manifest_hook=lambda m: {**m, 7: b"\x9f\x0c\xf5\x03\x0f\xff"}))
    add("non-minimal-sequence-number", "MOTA_ERR_CBOR_NONMINIMAL",
        make(priv, manifest_hook=lambda m: raw_manifest(m, [(b"\x01", b"\x01"), (b"\x02", b"\x19\x00\x07")])))
    add("float-sequence-number", "MOTA_ERR_CBOR_SIMPLE",
        make(priv, manifest_hook=lambda m: raw_manifest(m, [(b"\x01", b"\x01"), (b"\x02", b"\xf9\x47\x00")])))
    add("deep-nesting-in-compat-hint", "MOTA_ERR_CBOR_DEPTH",
        make(priv, compat={**COMPAT, -7: cbor2.loads(b"\x81" * 40 + b"\x00")}))  # -7: no key mota knows
    add("text-not-utf8", "MOTA_ERR_CBOR_UTF8",
        make(priv, manifest_hook=lambda m: {**m, 23: b"\xa1\x62en\xa1\x01\x62\xc0\xaf"}))
    # -- authentication
    add("no-auth-block", "MOTA_ERR_AUTH_NO_BLOCK", make(priv, auth_hook=lambda a, k: a[:1]))
    add("five-auth-blocks", "MOTA_ERR_AUTH_TOO_MANY", make(priv, auth_hook=lambda a, k: a[:1] + a[1:] * 5))
    add("digest-alg-sha384", "MOTA_ERR_DIGEST_ALG",
        make(priv, auth_hook=lambda a, k: resign_auth(k, S.enc([-43, cbor2.loads(a[0])[1]]))))
    add("digest-31-bytes", "MOTA_ERR_DIGEST_LEN",
        make(priv, auth_hook=lambda a, k: resign_auth(k, S.enc([-16, cbor2.loads(a[0])[1][:31]]))))
    add("manifest-digest-mismatch", "MOTA_ERR_MANIFEST_DIGEST",
        make(priv, auth_hook=lambda a, k: resign_auth(k, S.enc([-16, hashlib.sha256(b"other").digest()]))))
    add("cose-mac0-tag", "MOTA_ERR_COSE_TAG",
        make(priv, auth_hook=lambda a, k: [a[0], S.enc(cbor2.CBORTag(17, cbor2.loads(a[1]).value))]))
    add("alg-es384", "MOTA_ERR_COSE_ALG", make(priv, protected=S.enc({1: -35, 4: kid})))
    add("alg-only-unprotected", "MOTA_ERR_COSE_ALG", make(priv, protected=S.enc({4: kid})))
    add("attached-payload", "MOTA_ERR_COSE_PAYLOAD",
        make(priv, auth_hook=lambda a, k: [a[0], S.enc(cbor2.CBORTag(18, cbor2.loads(a[1]).value[:2] + [a[0]] +
                                                                        cbor2.loads(a[1]).value[3:]))]))
    add("critical-header", "MOTA_ERR_COSE_CRIT", make(priv, protected=S.enc({1: -7, 2: [99], 4: kid})))
    add("signature-63-bytes", "MOTA_ERR_COSE_SIG_LEN",
        make(priv, auth_hook=lambda a, k: resign_auth(k, a[0], sig_mut=lambda s: s[:63])))
    add("kid-as-integer", "MOTA_ERR_COSE_KID", make(priv, protected=S.enc({1: -7, 4: 5})))
    add("signature-bit-flip", "MOTA_ERR_SIGNATURE",
        make(priv, auth_hook=lambda a, k: resign_auth(k, a[0], sig_mut=lambda s: bytes([s[0] ^ 1]) + s[1:])))
    add("unknown-key-id", "MOTA_ERR_KEY_UNKNOWN", make(priv, kid=b"\x01" * 16))
    # -- manifest semantics
    add("manifest-version-2", "MOTA_ERR_MANIFEST_VERSION", make(priv, manifest_hook=lambda m: {**m, 1: 2}))
    add("negative-sequence-number", "MOTA_ERR_MANIFEST_SEQ", make(priv, seq=-1))
    add("no-common", "MOTA_ERR_MANIFEST_NO_COMMON",
        make(priv, manifest_hook=lambda m: {k: v for k, v in m.items() if k not in (3, 23)}))
    add("unknown-manifest-member", "MOTA_ERR_MANIFEST_UNKNOWN_KEY", make(priv, manifest_hook=lambda m: {**m, 99: 0}))
    add("no-components", "MOTA_ERR_COMPONENTS", make(priv, common_hook=lambda c: {**c, 2: []}))
    add("unknown-component", "MOTA_ERR_COMPONENT_ID",
        make(priv, common_hook=lambda c: {**c, 2: [[b"boot"], [b"params"]]},
             manifest_hook=lambda m: {k: v for k, v in m.items() if k != 23}))
    add("try-each-command", "MOTA_ERR_COMMAND_UNSUPPORTED", make(priv, shared_hook=lambda s: [15, [b"\x80"]] + s))
    add("component-offset-parameter", "MOTA_ERR_PARAM_UNSUPPORTED",
        make(priv, shared_hook=lambda s: [20, {5: 0}] + s))
    add("component-index-5", "MOTA_ERR_COMPONENT_INDEX", make(priv, shared_hook=lambda s: [12, 5] + s))
    add("no-vendor-check", "MOTA_ERR_NO_VENDOR_CHECK", make(priv, shared_hook=lambda s: s[:-4] + s[-2:]))
    add("no-class-check", "MOTA_ERR_NO_CLASS_CHECK", make(priv, shared_hook=lambda s: s[:-2]))
    add("image-match-without-digest", "MOTA_ERR_IMAGE_PARAMS",
        make(priv, shared_hook=lambda s: [x if not isinstance(x, dict) else {k: v for k, v in x.items() if k != 3}
                                          for x in s]))
    add("odd-command-sequence", "MOTA_ERR_SEQUENCE_MALFORMED", make(priv, shared_hook=lambda s: s + [1]))
    add("uri-not-integrated", "MOTA_ERR_URI",
        make(priv, manifest_hook=lambda m: {**m, 20: S.enc([12, 0, 20, {21: "http://x"}, 21, 2])}))
    add("text-value-integer", "MOTA_ERR_TEXT", make(priv, text={"en": {1: 5}}))
    add("compat-missing", "MOTA_ERR_COMPAT_MISSING",
        make(priv, manifest_hook=lambda m: {k: v for k, v in m.items() if k != S.COMPAT_KEY}))
    add("compat-without-cpu", "MOTA_ERR_COMPAT_FIELD",
        make(priv, compat={k: v for k, v in COMPAT.items() if k != 2}))
    add("compat-unknown-critical-field", "MOTA_ERR_COMPAT_CRITICAL", make(priv, compat={**COMPAT, 99: 1}))
    add("selftest-without-latency", "MOTA_ERR_SELFTEST_FIELD",
        make(priv, compat={**COMPAT, 19: {1: [-16, b"\x00" * 32], 2: 10}}))
    # -- mota's keys moved below -256 (a format break): the old ones are refused by name
    add("compat-under-the-old-key-256", "MOTA_ERR_MANIFEST_UNKNOWN_KEY",
        make(priv, manifest_hook=lambda m: {**{k: v for k, v in m.items() if k != S.COMPAT_KEY},
                                            -256: m[S.COMPAT_KEY]}))
    add("old-compression-parameter-256", "MOTA_ERR_PARAM_UNSUPPORTED",
        make(priv, install_hook=lambda i: [x if not isinstance(x, dict) else {**x, -256: S.enc({1: 1})}
                                           for x in i]))
    # -- the two-component pattern: a payload fetched into [role, 'transport'], the image made from it
    deflated = S.deflate_blocks(CODE)
    inflate = {"code": {"wire": deflated, "make": (S.DECOMPRESS_CMD, S.enc({1: 2, 2: 4096}))}}
    add("deflated-by-an-independent-encoder", "MOTA_OK", make(priv, transforms=inflate))
    add("decompress-argument-without-block", "MOTA_ERR_COMPRESSION_INFO",
        make(priv, transforms={"code": {**inflate["code"], "make": (S.DECOMPRESS_CMD, S.enc({1: 2}))}}))
    add("copy-without-encryption-info", "MOTA_ERR_COMMAND_UNSUPPORTED",
        make(priv, transforms={"code": {"wire": CODE, "make": (S.CMD_COPY, 15)}}))
    add("decompress-before-the-transport-is-fetched", "MOTA_ERR_SOURCE_COMPONENT",
        make(priv, transforms=inflate, install_hook=lambda i: i[:2] + i[8:] + i[2:8]))
    add("source-is-the-image-itself", "MOTA_ERR_SOURCE_COMPONENT",
        make(priv, transforms=inflate, install_hook=lambda i: [{**x, 22: 0} if isinstance(x, dict) and 22 in x
                                                               else x for x in i]))
    add("image-made-twice", "MOTA_ERR_SOURCE_COMPONENT",
        make(priv, transforms=inflate, install_hook=lambda i: i[:14] + i[12:14] + i[14:]))
    add("transport-listed-before-its-image", "MOTA_ERR_COMPONENTS",
        make(priv, transforms=inflate, common_hook=lambda c: {**c, 2: [c[2][2], c[2][0], c[2][1]]}))
    add("transport-image-matched-in-validate", "MOTA_ERR_COMMAND_UNSUPPORTED",
        make(priv, transforms=inflate, manifest_hook=lambda m: {**m, 7: S.enc([12, True, 3, 15])}))
    add("encryption-info-not-cose-encrypt", "MOTA_ERR_ENC_INFO",
        make(priv, transforms={"code": {"wire": CODE, "make": (S.CMD_COPY, 15),
                                        "params": {19: S.enc(cbor2.CBORTag(16, [b"", {}, None]))}}}))
    add("encryption-info-on-a-transport", "MOTA_ERR_ENC_INFO",
        make(priv, transforms=inflate, install_hook=lambda i: [{**x, 19: b"\x80"} if isinstance(x, dict) and 21 in x
                                                               else x for x in i]))
    # -- payloads
    add("payload-digest-mismatch", "MOTA_ERR_PAYLOAD_DIGEST",
        tagged(pairs[:3] + [(pairs[3][0], S.enc(bytes([PARAMS[0] ^ 1]) + PARAMS[1:]))]))
    add("payload-size-mismatch", "MOTA_ERR_PAYLOAD_SIZE", tagged(pairs[:3] + [(pairs[3][0], S.enc(PARAMS + b"!"))]))
    add("payload-missing", "MOTA_ERR_PAYLOAD_MISSING", tagged(pairs[:3]))
    add("payload-unreferenced", "MOTA_ERR_PAYLOAD_UNKNOWN", tagged(pairs + [(S.enc("#unlisted"), S.enc(b"x"))]))
    add("payloads-out-of-order", "MOTA_ERR_PAYLOAD_ORDER", tagged(pairs[:2] + [pairs[3], pairs[2]]))
    return c


def main():
    mota, priv_path, pub_path, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    priv = S.load_private(priv_path)
    passed = failed = 0
    reasons = set()
    for i, (name, reason, blob) in enumerate(cases(priv)):
        path = os.path.join(work, "%02d-%s.mota" % (i, name))
        with open(path, "wb") as f:
            f.write(blob)
        r = subprocess.run([mota, "verify", "--quiet", "--key", pub_path, path], capture_output=True, text=True)
        got = "MOTA_OK" if r.returncode == 0 else (r.stderr.split(":")[2].strip() if r.stderr.count(":") >= 2 else "?")
        ok = got == reason and (r.returncode == 0) == (reason == "MOTA_OK") and r.returncode in (0, 1)
        print("%-4s %-34s want %-30s got %s" % ("ok" if ok else "FAIL", name, reason, got))
        passed += ok
        failed += not ok
        reasons.add(reason)
    print("%d distinct reason codes in %d malformed containers" % (len(reasons) - 1, passed + failed - 1))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or len(reasons) - 1 < 25 else 0


if __name__ == "__main__":
    sys.exit(main())
