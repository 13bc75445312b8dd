#!/usr/bin/python3
"""Independent verification of a container written by `mota pack`.

usage: check_container.py CONTAINER PUBLIC.pem MODEL [--params F]
         [--vendor V --class C] [--seq N] [--mode xip|copy]
         [--selftest-input F --selftest-output F --selftest-max-latency-us N]

Checks, with cbor2, cryptography and the openssl command line, everything
the format promises: deterministic encoding, SUIT digest, ES256 signature,
key id, vendor/class UUID5, component digests and sizes, payload bytes, and
every compatibility field against a hand decode of the NBIN header.
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
    roles = [c[0].decode() for c in common[2]]
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
        check(f"{role}: integrated payload bytes", body.get("#" + role) == files[role])
    check("vendor and class conditions in the shared sequence", shared[-4:] == [1, 15, 2, 15])
    install = cbor2.loads(man[20])
    for role in roles:
        check(f"install fetches #{role}", {21: "#" + role} in install)

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
