# SPDX-License-Identifier: Apache-2.0
"""Independent model of the mota container, for tests only.

Written against docs/container-format.md with Debian's python3-cbor2 and
python3-cryptography; it shares no code with the C implementation, so a
container both accept (or both reject) is evidence about the format, not
about one implementation agreeing with itself.
"""
import hashlib
import struct
import uuid

import cbor2
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature, encode_dss_signature)

SUIT_ENVELOPE_TAG = 107
COSE_SIGN1_TAG = 18
ES256 = -7
SHA256 = -16
# mota's own members sit below -256: private use is -256 and below (draft-ietf-suit-manifest section 11),
# custom commands below -256 (sections 8.4.9, 8.4.11); -257 satisfies both readings
COMPAT_KEY = -257
TEXT_CREATED_KEY = -257
DECOMPRESS_CMD = -257  # mota-directive-decompress, a custom command: bstr .cbor {1: algorithm, 2: block}
RESERVED = range(-256, 0)  # Standards Action, or the boundary: never ours
# standard SUIT numbers of the two-component pattern (draft-ietf-suit-firmware-encryption)
PARAM_ENCRYPTION_INFO = 19
PARAM_SOURCE = 22
CMD_COPY = 22
TRANSPORT = b"transport"

COMPAT_NAMES = {
    1: "reloc_version", 2: "cpu_part", 3: "fpu", 4: "float_abi", 5: "secure",
    6: "dbg_info", 7: "async", 8: "toolchain", 9: "ll_aton_version", 10: "c_name",
    11: "activations_size", 12: "params_size", 13: "ext_ram_size", 14: "exec_ram_xip",
    15: "exec_ram_copy", 16: "install_mode", 17: "struct_sizes", 19: "selftest",
    20: "runtime_desc", -1: "npu_epochs",
}


def enc(obj):
    """Deterministic encoding (RFC 8949 4.2.1 for the key types we use)."""
    return cbor2.dumps(obj, canonical=True)


def load_private(path):
    with open(path, "rb") as f:
        return serialization.load_pem_private_key(f.read(), password=None)


def load_public(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        return serialization.load_pem_public_key(data)
    except ValueError:
        return serialization.load_pem_private_key(data, password=None).public_key()


def point(pub):
    return pub.public_bytes(serialization.Encoding.X962,
                            serialization.PublicFormat.UncompressedPoint)


def key_id(pub):
    return hashlib.sha256(point(pub)).digest()[:16]


def sig_structure(protected, digest_enc):
    return enc(["Signature1", protected, b"", digest_enc])


def sign(priv, protected, digest_enc):
    der = priv.sign(sig_structure(protected, digest_enc), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def verify(pub, protected, digest_enc, sig):
    r = int.from_bytes(sig[:32], "big")
    s = int.from_bytes(sig[32:], "big")
    pub.verify(encode_dss_signature(r, s), sig_structure(protected, digest_enc),
               ec.ECDSA(hashes.SHA256()))


def vendor_class(vendor, klass):
    v = uuid.uuid5(uuid.NAMESPACE_DNS, vendor)
    c = uuid.uuid5(v, klass)
    return v.bytes, c.bytes


def nbin_compat(model):
    """Decode an NPU or legacy NBIN header into the compat fields, by hand."""
    w = struct.unpack_from("<26I", model, 0)
    flags = w[1]
    off = lambda x: x & 0x0FFFFFFF
    major = flags >> 28
    c = {
        "reloc_version": [major, (flags >> 24) & 0xF],
        "cpu_part": flags & 0xFFF,
        "fpu": bool(flags >> 12 & 1),
        "float_abi": flags >> 13 & 3,
        "secure": bool(flags >> 20 & 1),
        "dbg_info": bool(flags >> 21 & 1),
        "async": bool(flags >> 22 & 1),
        "toolchain": flags >> 16 & 0xF,
    }
    ro = off(w[4])
    rw = off(w[6])
    cstr = lambda p: model[off(p):model.index(b"\0", off(p))].decode()
    if major == 8:
        hdr = 24 if (w[23] >> 28) == 4 else 26
        ctx = ro + off(w[hdr - 1])
        rc = struct.unpack_from("<17I", model, ctx)
        rtv = rc[10]
        c["ll_aton_version"] = [rtv >> 24, rtv >> 16 & 0xFF, rtv >> 8 & 0xFF]
        c["c_name"] = cstr(rc[5])
        c["runtime_desc"] = cstr(rc[9])
        c["activations_size"] = rc[6]
        c["params_size"] = rc[7]
        c["ext_ram_size"] = (rc[8] + 7) & ~7
        if (rtv & 0xFFFFFF00) >= 0x01010100:
            c["struct_sizes"] = rc[14]
        c["exec_ram_xip"] = (rw + 7) & ~7
        c["exec_ram_copy"] = ((rw + 7) & ~7) + ((ro + 7) & ~7)
    else:
        ctx = ro + off(w[24])
        rc = struct.unpack_from("<8I", model, ctx)
        c["c_name"] = cstr(rc[5])
        c["activations_size"] = rc[6]
        c["params_size"] = rc[7]
        c["ext_ram_size"] = 0
        c["exec_ram_xip"] = (rw + 3) & ~3
        c["exec_ram_copy"] = ((rw + 3) & ~3) + ((ro + 3) & ~3)
    return c


def compat_map(fields):
    """compat fields (by name) -> the CBOR map with integer keys."""
    inv = {v: k for k, v in COMPAT_NAMES.items()}
    return {inv[k]: v for k, v in fields.items()}


def deflate_blocks(image, block=4096):
    """mota's deflate payload (zlib, raw): a sync flush after every block of image bytes but the last."""
    import zlib
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    out = b""
    for at in range(0, len(image), block):
        out += z.compress(image[at:at + block])
        out += z.flush(zlib.Z_FINISH if at + block >= len(image) else zlib.Z_SYNC_FLUSH)
    return out


def transformed_sequences(payloads, transforms, vid, cid):
    """ids, shared, validate, install of the two-component pattern: each role in transforms is fetched into
    [role, 'transport'] and made from it. transforms: role -> {"wire": bytes, "make": (cmd, arg),
    "params": {19: encryption info} or {}}"""
    ids = [[role.encode()] for role, _ in payloads]
    roles = [role for role, _ in payloads]
    tr = {}
    for role in roles:
        if role in transforms:
            tr[role] = len(ids)
            ids.append([role.encode(), TRANSPORT])
    shared = []
    for i, (role, data) in enumerate(payloads):
        shared += [12, i, 20, {1: vid, 2: cid, 3: enc([SHA256, hashlib.sha256(data).digest()]), 14: len(data)}]
    for role in roles:
        if role in tr:
            w = transforms[role]["wire"]
            shared += [12, tr[role], 20, {1: vid, 2: cid, 3: enc([SHA256, hashlib.sha256(w).digest()]),
                                          14: len(w)}]
    shared += [12, True, 1, 15, 2, 15]
    validate = [12, list(range(len(roles))) if len(roles) > 1 else 0, 3, 15]
    install = []
    for i, role in enumerate(roles):
        if role not in tr:
            install += [12, i, 20, {21: "#" + role}, 21, 2, 3, 15]
            continue
        t = transforms[role]
        install += [12, tr[role], 20, {21: "#" + role}, 21, 2, 3, 15]
        install += [12, i, 20, {**t.get("params", {}), PARAM_SOURCE: tr[role]}, t["make"][0], t["make"][1], 3, 15]
    return ids, shared, validate, install


def build(priv, vendor, klass, seq, payloads, compat, text=None, kid=None,
          manifest_hook=None, common_hook=None, shared_hook=None, auth_hook=None,
          envelope_hook=None, protected=None, transforms=None, install_hook=None):
    """Build a container the way mota pack does; hooks mutate each layer.

    payloads: list of (role, bytes) in order code, params, selftest: the images.
    transforms: role -> how its payload is sent (transformed_sequences).
    """
    vid, cid = vendor_class(vendor, klass)
    ids = [[role.encode()] for role, _ in payloads]
    n = len(payloads)
    shared = []
    for i, (_, data) in enumerate(payloads):
        if n > 1:
            shared += [12, i]
        shared += [20, {1: vid, 2: cid, 3: enc([SHA256, hashlib.sha256(data).digest()]), 14: len(data)}]
    if n > 1:
        shared += [12, True]
    shared += [1, 15, 2, 15]
    validate = ([12, True] if n > 1 else []) + [3, 15]
    install = []
    for i, (role, _) in enumerate(payloads):
        if n > 1:
            install += [12, i]
        install += [20, {21: "#" + role}, 21, 2, 3, 15]
    if transforms:
        ids, shared, validate, install = transformed_sequences(payloads, transforms, vid, cid)
    if shared_hook:
        shared = shared_hook(shared)
    if install_hook:
        install = install_hook(install)
    common = {2: ids, 4: enc(shared)}
    if common_hook:
        common = common_hook(common)
    manifest = {1: 1, 2: seq, 3: enc(common), 7: enc(validate), 20: enc(install),
                COMPAT_KEY: enc(compat)}
    if text is not None:
        manifest[23] = enc(text)
    if manifest_hook:
        manifest = manifest_hook(manifest)
    manifest_bytes = manifest if isinstance(manifest, bytes) else enc(manifest)
    digest_enc = enc([SHA256, hashlib.sha256(enc(manifest_bytes)).digest()])
    if protected is None:
        protected = enc({1: ES256, 4: kid if kid is not None else key_id(priv.public_key())})
    sig = sign(priv, protected, digest_enc)
    sign1 = cbor2.CBORTag(COSE_SIGN1_TAG, [protected, {}, None, sig])
    auth = [digest_enc, enc(sign1)]
    if auth_hook:
        auth = auth_hook(auth, priv)
    env = {2: auth if isinstance(auth, bytes) else enc(auth), 3: manifest_bytes}
    for role, data in payloads:
        env["#" + role] = transforms[role]["wire"] if transforms and role in transforms else data
    if envelope_hook:
        env = envelope_hook(env)
    if isinstance(env, bytes):
        return env
    return enc(cbor2.CBORTag(SUIT_ENVELOPE_TAG, env))


# ---- encrypted payloads (draft-ietf-suit-firmware-encryption; RFC 9052, 9053, 9459, 3394) ----
# Written from the draft and the RFCs, checked against the working group's four examples: the oracle's
# decryptor shares nothing with crypto/ or container/src/encinfo.c.
COSE_ENCRYPT_TAG = 96
A128GCM, A128CTR, A128KW, ECDH_ES_A128KW = 1, -65534, -3, -29
ALG_NAMES = {A128GCM: "A128GCM", A128CTR: "A128CTR", A128KW: "A128KW", ECDH_ES_A128KW: "ECDH-ES+A128KW"}


def read_kek(path):
    """A key-encryption key file (a JWK: kty oct, alg A128KW, kid text, k base64url of 16 bytes) -> (kid, k)."""
    import base64
    import json
    jwk = json.load(open(path, encoding="utf-8"))
    if jwk.get("kty") != "oct" or jwk.get("alg") != "A128KW":
        raise ValueError("%s: not an A128KW JWK" % path)
    k = base64.urlsafe_b64decode(jwk["k"] + "=" * (-len(jwk["k"]) % 4))
    if len(k) != 16:
        raise ValueError("%s: k is %d bytes" % (path, len(k)))
    return jwk["kid"].encode("utf-8"), k


def kdf_context(recipient_protected):
    """COSE_KDF_Context of an ECDH-ES+A128KW recipient (RFC 9053 5.3, as the draft fills it): the algorithm the
    derived key is for (A128KW), empty party infos, SuppPubInfo [key bits, the recipient's protected bstr as
    sent, 'SUIT Payload Encryption' as a bstr], no SuppPrivInfo."""
    return cbor2.dumps([A128KW, [None, None, None], [None, None, None],
                        [128, recipient_protected, b"SUIT Payload Encryption"]])


def ecdh_kek(device_priv, recipient):
    """The KEK an ECDH-ES+A128KW recipient's CEK is wrapped with: HKDF-SHA256(salt, Z, KDF context)."""
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    epk = recipient[1][-1]
    if epk.get(1) != 2 or epk.get(-1) != 1:
        raise ValueError("ephemeral key is not EC2 P-256: %r" % epk)
    pub = ec.EllipticCurvePublicNumbers(int.from_bytes(epk[-2], "big"), int.from_bytes(epk[-3], "big"),
                                        ec.SECP256R1()).public_key()
    z = device_priv.exchange(ec.ECDH(), pub)
    salt = recipient[1].get(-20) or None
    return HKDF(algorithm=hashes.SHA256(), length=16, salt=salt, info=kdf_context(recipient[0])).derive(z)


def recipient_ceks(info, keks, device_keys):
    """Each recipient of a decoded SUIT_Encryption_Info that a key here serves -> (index, CEK); the unwrap
    (RFC 3394, default IV) raises on a wrong key. keks: {kid: k}; device_keys: private keys."""
    from cryptography.hazmat.primitives.keywrap import aes_key_unwrap
    out = []
    for n, r in enumerate(info.value[3]):
        prot = cbor2.loads(r[0]) if r[0] else {}
        alg = prot.get(1, r[1].get(1))
        kid = r[1].get(4)
        if alg == A128KW and kid in keks:
            out.append((n, aes_key_unwrap(keks[kid], r[2])))
        elif alg == ECDH_ES_A128KW:
            for d in device_keys:
                if kid is None or kid == key_id(d.public_key()):
                    out.append((n, aes_key_unwrap(ecdh_kek(d, r), r[2])))
    return out


def decrypt_payload(info, cek, wire):
    """The plaintext of a detached ciphertext: A128GCM with AAD = Enc_structure ["Encrypt", protected, h'']
    (its tag the last 16 bytes; raises if it does not verify), or A128CTR from the 16-byte IV."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    prot_b, unprot = info.value[0], info.value[1]
    alg = (cbor2.loads(prot_b) if prot_b else {}).get(1, unprot.get(1))
    if alg == A128GCM:
        return AESGCM(cek).decrypt(unprot[5], wire, cbor2.dumps(["Encrypt", prot_b, b""]))
    if alg == A128CTR:
        d = Cipher(algorithms.AES(cek), modes.CTR(unprot[5])).decryptor()
        return d.update(wire) + d.finalize()
    raise ValueError("content algorithm %r" % alg)
