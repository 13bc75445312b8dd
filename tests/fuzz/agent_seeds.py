# SPDX-License-Identifier: Apache-2.0
"""Seeds for fuzz_agent and fuzz_link: containers the fuzz device (tests/fuzz/fuzz_device.h) accepts,
packed by `mota pack` from the small test models kept for fuzz_nbin, with and without compression and
self-tests, encrypted (A128GCM, A128CTR, after compression or not) for the fuzz device's fixed key-encryption
key (FUZZ_KEK: kid "fuzz-kek", k = 16 bytes 0x42), in the scripts of operations the targets read.

fuzz_agent's input: [fix] [n] [n op bytes] [u16 LE length of A] [container A] [container B]
fuzz_link's input:  the same, the ops being sessions (tests/fuzz/fuzz_link.c)
"""
import os
import struct
import subprocess

# fuzz_agent's operations (tests/fuzz/fuzz_agent.c, enum op): op | arg << 4
UP_A, UP_B, REBOOT, CONFIRM, ROLLBACK, SELFTEST, FAULT, REVOKE, CUT, ABORT, SIM, QUERY = range(12)
HALF, RESEND = 4, 8          # upload args
TORN = 1                     # cut args: bit 0 torn, arg >> 1 = k: the cut at flash operation 1 + 4 k^2 on
DENSE, CONV = 0, 1           # the fuzz device's models
WATCHDOG, FAULT_RESET = 2, 3  # reboot args: reset causes


# The fuzz device's key-encryption key (tests/fuzz/fuzz_device.h provisions it): the encrypted seeds' one
# recipient. A JWK as `mota keygen --kek` writes it; k is base64url of 16 bytes 0x42.
FUZZ_KEK_KID = "fuzz-kek"
FUZZ_KEK = '{"kty":"oct","alg":"A128KW","kid":"fuzz-kek","k":"QkJCQkJCQkJCQkJCQkJCQg"}\n'


def fuzz_kek(work):
    """The fuzz device's KEK file in work (mode 0600, as keygen --kek writes one)."""
    path = os.path.join(work, "fuzz-kek.jwk")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(FUZZ_KEK)
    return path


def op(kind, arg=0):
    return kind | arg << 4


def script(ops, a, b=b"", fix=7):
    return bytes([fix, len(ops)]) + bytes(ops) + struct.pack("<H", len(a)) + a + b


def pack(mota, work, key, model, out, seq, *extra):
    subprocess.run([mota, "pack", "-k", key, "--vendor", "example.com", "--class", "mota-sim", "--seq", str(seq),
                    "--version", "%d.0.0" % seq, "-o", out, model, *extra], check=True, capture_output=True)
    return open(out, "rb").read()


def containers(mota, src, work):
    """name -> container bytes"""
    key = os.path.join(work, "seed.pem")
    subprocess.run([mota, "keygen", key], check=True, capture_output=True)
    models = os.path.join(src, "tests", "fuzz", "corpus", "fuzz_nbin")
    dense, conv = os.path.join(models, "dense_npu_m55.bin"), os.path.join(models, "conv_npu_m55.bin")
    inp, good, bad = (os.path.join(work, n) for n in ("st.in", "st.out", "st.bad"))
    open(inp, "wb").write(bytes(range(16)))
    subprocess.run([mota, "sim-output", "--input", inp, "10", good], check=True, capture_output=True)
    open(bad, "wb").write(bytes(10))
    # a split model with 6 KiB of params: two 4 KiB blocks when compressed, progress journaled inside it
    big, big_params = os.path.join(work, "big_rel.bin"), os.path.join(work, "big_params.bin")
    subprocess.run(["/usr/bin/python3", os.path.join(src, "tests", "tools", "synth_nbin.py"), big, big_params,
                    str(6 * 1024), "7", "weights", "conv"], check=True, capture_output=True)
    rel = bytearray(open(big, "rb").read())
    rel[4:8] = struct.pack("<I", 0x80085D22)  # the flags build-model writes: no debug info, as the device
    open(big, "wb").write(rel)
    st = ["--selftest-input", inp, "--selftest-max-latency-us", "50000", "--selftest-output"]
    kek = ["--encrypt-kek", fuzz_kek(work)]
    p = lambda name, model, seq, *extra: pack(mota, work, key, model, os.path.join(work, name + ".mota"), seq, *extra)
    return {
        # encrypted for the fuzz device's KEK: every payload, after compression when there is one
        "dense5enc": p("dense5enc", dense, 5, *kek, *st, good),
        "conv5encz": p("conv5encz", conv, 5, *kek, "--cipher", "a128ctr", "--compress", *st, good),
        "conv6bigenc": p("conv6bigenc", big, 6, "--params", big_params, *kek, "--cipher", "a128ctr"),
        "conv7bigzenc": p("conv7bigzenc", big, 7, "--params", big_params, *kek, "--compress", "--install-mode",
                          "copy"),
        "dense1": p("dense1", dense, 1, *st, good),
        "dense2z": p("dense2z", dense, 2, "--compress", "--install-mode", "copy", *st, good),
        "dense3lz4": p("dense3lz4", dense, 3, "--compress=lz4", "--install-mode", "copy"),
        "dense4bad": p("dense4bad", dense, 4, *st, bad),
        "conv1": p("conv1", conv, 1),
        "conv2z": p("conv2z", conv, 2, "--compress", *st, good),
        "conv3big": p("conv3big", big, 3, "--params", big_params),
        "conv4bigz": p("conv4bigz", big, 4, "--params", big_params, "--compress", "--install-mode", "copy"),
    }


# fuzz_link's operations (tests/fuzz/fuzz_link.c, enum op)
(L_UP_A, L_UP_B, L_HELLO, L_STATUS, L_CONFIRM, L_ROLLBACK, L_ABORT, L_RESULT, L_ERRORS, L_REBOOT, L_INVOKE, L_IO,
 L_RECONNECT, L_REPEAT, L_STRAY, L_CUT) = range(16)
WINDOW, GONE = 4, 8  # upload args (arg & 3: frame size)


def link_seeds(c):
    return {
        "push_confirm_update_rollback": script(
            [op(L_HELLO, 5), op(L_UP_A, 2 | WINDOW), op(L_CONFIRM), op(L_UP_B, 1), op(L_STATUS), op(L_REBOOT),
             op(L_ROLLBACK), op(L_ERRORS), op(L_RESULT)], c["dense1"], c["dense2z"]),
        "resume_after_reconnect": script(
            [op(L_HELLO, 4), op(L_UP_A, 1), op(L_CONFIRM), op(L_UP_B, GONE), op(L_RECONNECT), op(L_HELLO, 4),
             op(L_UP_B, 3 | WINDOW), op(L_REPEAT), op(L_STATUS)], c["dense1"], c["dense2z"]),
        "power_cut_mid_upload": script(
            [op(L_HELLO, 5), op(L_CUT, 1 << 1), op(L_UP_A, 2), op(L_HELLO, 5), op(L_UP_A, 2), op(L_CONFIRM, CONV),
             op(L_STATUS)], c["conv1"], c["conv2z"]),
        "invoke_and_io": script(
            [op(L_UP_A), op(L_INVOKE, 4), op(L_IO, 2), op(L_IO, 14), op(L_INVOKE, 2), op(L_STRAY, 15),
             op(L_STRAY, 0), op(L_ABORT)], c["dense1"], c["conv1"]),
        "refused_selftest": script(
            [op(L_HELLO, 5), op(L_UP_A), op(L_CONFIRM), op(L_UP_B, 2), op(L_RESULT), op(L_ERRORS), op(L_STATUS)],
            c["dense1"], c["dense4bad"]),
        "unsigned": script([op(L_HELLO, 5), op(L_UP_A), op(L_RESULT)], c["conv1"], fix=0),
        "encrypted_push_resumed": script(
            [op(L_HELLO, 5), op(L_UP_A, 2 | WINDOW), op(L_CONFIRM, CONV), op(L_UP_B, 1 | GONE), op(L_RECONNECT),
             op(L_HELLO, 4), op(L_UP_B, 2), op(L_STATUS)], c["conv6bigenc"], c["conv7bigzenc"]),
        "big_resumed": script(
            [op(L_HELLO, 5), op(L_UP_A, 2 | GONE), op(L_CUT, 1 << 1 | TORN), op(L_UP_B, 1), op(L_HELLO, 4), op(L_UP_A, 1),
             op(L_CONFIRM, CONV), op(L_UP_B, 2 | WINDOW), op(L_STATUS)], c["conv3big"], c["conv4bigz"]),
    }


def write(mota, src, work, corpus, target):
    c = containers(mota, src, work)
    if target == "fuzz_link":
        for name, data in link_seeds(c).items():
            open(os.path.join(corpus, name), "wb").write(data)
        return
    seeds = {
        # install, confirm, update, reboot on trial, roll back
        "update_rollback": script([op(UP_A), op(CONFIRM), op(UP_B, 1), op(REBOOT), op(ROLLBACK), op(QUERY)],
                                  c["dense1"], c["dense2z"]),
        # an update cut off halfway, resumed after a reboot, confirmed
        "resume": script([op(UP_A), op(CONFIRM), op(UP_B, HALF), op(REBOOT), op(UP_B, RESEND | 2), op(CONFIRM),
                          op(QUERY)], c["dense1"], c["dense2z"]),
        # power cuts during an update and during a confirm
        "power_cut": script([op(UP_A), op(CONFIRM), op(CUT, 2 << 1 | TORN), op(UP_B, 3), op(UP_B, RESEND),
                             op(CUT, 0), op(CONFIRM), op(QUERY)], c["dense1"], c["dense2z"]),
        "torn_cut": script([op(CUT, 2 << 1 | TORN), op(UP_A), op(UP_A, RESEND), op(CONFIRM, CONV)], c["conv1"],
                           c["conv2z"]),
        # trial expiry and watchdog reverts
        "trial_expiry": script([op(UP_A), op(CONFIRM), op(UP_B), op(REBOOT), op(REBOOT), op(REBOOT), op(REBOOT),
                                op(QUERY)], c["dense1"], c["dense3lz4"]),
        "watchdog": script([op(UP_A), op(CONFIRM, CONV), op(UP_B), op(REBOOT, WATCHDOG), op(QUERY, CONV)],
                           c["conv1"], c["conv2z"]),
        # a failing self-test, a slow one, a fault in the application's inference and a retirement
        "selftest_fails": script([op(UP_A), op(CONFIRM), op(UP_B), op(SIM, 2), op(SELFTEST), op(QUERY)],
                                 c["dense1"], c["dense4bad"]),
        "retire": script([op(UP_A), op(CONFIRM), op(UP_B), op(CONFIRM), op(FAULT), op(ROLLBACK), op(QUERY)],
                         c["dense1"], c["dense3lz4"]),
        # both models, key revocation, an abort mid-upload, the same container twice
        "two_models": script([op(UP_A), op(UP_B, HALF), op(ABORT), op(UP_B), op(CONFIRM, CONV), op(REVOKE, 2),
                              op(UP_A), op(QUERY, CONV)], c["dense1"], c["conv1"]),
        # what the signer leaves alone: a manifest digest, a payload digest, a signature
        "unsigned_payload": script([op(UP_A), op(UP_B)], c["dense1"], c["conv1"][:-1] + b"\x5a", fix=6),
        "unsigned_manifest": script([op(UP_A), op(UP_B)], c["dense2z"].replace(b"2.0.0", b"2.0.1"), c["conv1"],
                                    fix=5),
        "unsigned": script([op(UP_A)], c["conv1"], fix=0),
        # power cuts inside a payload, plain and compressed: the upload resumes where the journal says
        "resume_inside_payload": script([op(UP_A), op(CONFIRM, CONV), op(CUT, 3 << 1), op(UP_B, 2), op(UP_B),
                                         op(CONFIRM, CONV), op(QUERY, CONV)], c["conv3big"], c["conv4bigz"]),
        # a compressed upload dropped halfway, then cut (cleanly, torn) past a journaled block boundary
        "resume_compressed_block": script([op(UP_A), op(CONFIRM, CONV), op(UP_B, HALF), op(CUT, 2 << 1), op(UP_B),
                                           op(UP_B), op(CONFIRM, CONV)], c["conv3big"], c["conv4bigz"]),
        "torn_compressed_block": script([op(UP_A), op(CONFIRM, CONV), op(UP_B, HALF), op(CUT, 2 << 1 | TORN),
                                         op(UP_B, 1), op(UP_B), op(QUERY, CONV)], c["conv3big"], c["conv4bigz"]),
        "resume_after_drop": script([op(UP_A, HALF | 1), op(REBOOT), op(UP_A, 2), op(CONFIRM, CONV),
                                     op(UP_B, HALF), op(UP_B), op(QUERY, CONV)], c["conv3big"], c["conv4bigz"]),
        # encrypted containers: installed and confirmed; cut (cleanly, torn) and resumed inside an encrypted
        # payload, plain (CTR) and compressed (GCM); dropped halfway; a tampered ciphertext
        "encrypted_update": script([op(UP_A), op(CONFIRM), op(UP_B, 1), op(REBOOT), op(CONFIRM), op(QUERY)],
                                   c["dense1"], c["dense5enc"]),
        "encrypted_compressed_selftest": script([op(UP_A), op(CONFIRM, CONV), op(UP_B), op(SELFTEST),
                                                 op(CONFIRM, CONV), op(QUERY, CONV)], c["conv1"], c["conv5encz"]),
        "resume_inside_encrypted_payload": script([op(UP_A), op(CONFIRM, CONV), op(CUT, 3 << 1), op(UP_B, 2),
                                                   op(UP_B), op(CONFIRM, CONV), op(QUERY, CONV)],
                                                  c["conv3big"], c["conv6bigenc"]),
        "torn_inside_encrypted_compressed": script([op(UP_A), op(CONFIRM, CONV), op(UP_B, HALF),
                                                    op(CUT, 2 << 1 | TORN), op(UP_B, 1), op(UP_B), op(QUERY, CONV)],
                                                   c["conv6bigenc"], c["conv7bigzenc"]),
        "encrypted_dropped_then_resent": script([op(UP_A, HALF | 1), op(REBOOT), op(UP_A, RESEND | 2),
                                                 op(CONFIRM, CONV), op(QUERY, CONV)], c["conv7bigzenc"], c["conv1"]),
        "encrypted_ciphertext_altered": script([op(UP_A), op(UP_B)], c["dense1"],
                                               c["dense5enc"][:-20] + bytes([c["dense5enc"][-20] ^ 1]) +
                                               c["dense5enc"][-19:], fix=7),
        # a forged journal under a first boot
        "forged_journal": script([op(UP_A), op(QUERY)], c["dense1"], bytes(64) + b"\xff" * 64, fix=0x87),
    }
    for name, data in seeds.items():
        open(os.path.join(corpus, name), "wb").write(data)
