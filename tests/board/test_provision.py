#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The factory step and the QEMU board's state, through `mota` only: `mota provision` into a board's flash
file and as an image a real part's programmer writes (raw and Intel HEX at the record's address, --address or
the --target board's own), what it says when it cannot, `mota sim --target` refusing a real board and giving
each board its flash and serial ports (on a stand-in for QEMU), and `mota sim --target an547` keeping its
flash in mota's state directory ($XDG_STATE_HOME/mota, a directory of the test's own: never the real home)
rather than the current one. One case per run; the board's case needs the an547 firmware (exit 77 without it).

usage: test_provision.py MOTA WORKDIR CASE
"""
import os
import re
import resource
import signal
import shutil
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "link"))
from harness import Env, Skip, run_case  # noqa: E402

MOTA, WORK, CASE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
env = Env(MOTA, WORK)
FLASH_SIZE, PROVISION, REC = 16 << 20, (16 << 20) - 4096, 816  # mota/mps_layout.h, mota/provision.h (version 3)
REC_ID_LEN, REC_ID, REC_VENDOR, REC_CLASS, REC_NAMES_END = 75, 460, 476, 540, 604  # offsets in the record
REC_N_KEKS, REC_KEKS, REC_D, REC_PUB, REC_CRC = 604, 608, 712, 744, 812  # version 3's keys (docs/porting.md)
AN547_RECORD = 0x60000000 + PROVISION  # MOTA_MPS_FLASH_BASE (ports/mps/an547/board_config.h) + 0xFFF000
IDENTITY = ["--vendor", "example.com", "--class", "factory-board", "--name", "unit-7", "--model", "dense",
            "--model", "network", "--trial-boots", "5"]


def home_env():
    """The environment of a mota that must not touch the real home: its state and home in the work dir."""
    e = dict(os.environ, XDG_STATE_HOME=env.p("state"), HOME=env.p("home"))
    os.makedirs(e["HOME"], exist_ok=True)
    return e


def mota(*args, preexec=None, cwd=None):
    return subprocess.run([MOTA, *args], capture_output=True, text=True, preexec_fn=preexec, cwd=cwd, env=home_env())


def one_error(r):
    """The one error line of a failed command, in the tool's form: mota: error: NAME: message: detail."""
    lines = [line for line in r.stderr.splitlines() if line.startswith("mota: error: ")]
    assert len(lines) == 1, r.stderr
    return lines[0]


def record_of(flash):
    with open(flash, "rb") as f:
        f.seek(PROVISION)
        return f.read(REC)


def read_intel_hex(path):
    """A tiny Intel HEX reader: {address: byte} from data records (00) placed by extended linear address
    records (04), every checksum checked, nothing after the end-of-file record (01)."""
    mem, upper, ended = {}, 0, False
    with open(path, "rb") as f:
        text = f.read().decode("ascii")
    for line in text.splitlines():
        assert not ended, "a record after the end-of-file record: " + line
        assert re.fullmatch(r":([0-9A-F]{2})+", line), line
        raw = bytes.fromhex(line[1:])
        n, off, kind, data = raw[0], int.from_bytes(raw[1:3], "big"), raw[3], raw[4:-1]
        assert len(data) == n and sum(raw) & 0xFF == 0, "length or checksum: " + line
        if kind == 0x04:
            assert n == 2 and off == 0, line
            upper = int.from_bytes(data, "big") << 16
        elif kind == 0x00:
            assert off + n <= 0x10000, "a data record across 64 KiB: " + line
            for i, b in enumerate(data):
                assert upper + off + i not in mem, "written twice: %#x" % (upper + off + i)
                mem[upper + off + i] = b
        else:
            assert kind == 0x01 and n == 0 and line == ":00000001FF", line
            ended = True
    assert ended, "no end-of-file record"
    return mem


def bytes_at(mem, addr, n):
    assert sorted(mem) == list(range(addr, addr + n)), (hex(min(mem)), len(mem))
    return bytes(mem[addr + i] for i in range(n))


def case_errors_name_the_file_and_the_system_reason():
    """`mota provision`'s failures say what happened, with the path: a write that fails carries the system's
    reason (and leaves no partial flash), a flash it may not open says so (not that it is no board flash), a
    file of another size gives its size, and a board provisioned otherwise is said to be that, what differs
    and the way out, never "malformed or unreadable"."""
    key = env.p("k.pub.pem")

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    r = mota("provision", "--flash", env.p("big.flash"), "--key", key, preexec=small_files)
    line = one_error(r)
    assert r.returncode == 3 and line.startswith("mota: error: MOTA_ERR_IO: ") and env.p("big.flash") in line, line
    assert line.endswith(": " + os.strerror(27)), line  # EFBIG: the system's reason, not a bare "cannot write"
    assert not os.path.exists(env.p("big.flash")), "a partial flash was left"

    r = mota("provision", "--flash", env.p("board.flash"), "--key", key, *IDENTITY)
    assert r.returncode == 0 and "provisioned" in r.stdout, r.stderr
    # a flash the user may not write: as root (which opens any file) the command runs as nobody, from a
    # directory nobody may enter (the work dir may sit under a 0700 one) holding mota, the key and the flash
    shared = tempfile.mkdtemp(prefix="mota-prov-")
    try:
        os.chmod(shared, 0o755)
        tool, k, flash = (os.path.join(shared, n) for n in ("mota", "k.pub.pem", "board.flash"))
        for src, dst in ((MOTA, tool), (key, k), (env.p("board.flash"), flash)):
            shutil.copy(src, dst)
        os.chmod(tool, 0o755)
        os.chmod(k, 0o644)
        os.chmod(flash, 0o444)
        if os.geteuid() == 0:
            def nobody():
                os.setgid(65534)
                os.setgroups([])
                os.setuid(65534)
        else:
            nobody = None
        r = subprocess.run([tool, "provision", "--flash", flash, "--key", k, *IDENTITY], capture_output=True,
                           text=True, preexec_fn=nobody, cwd=shared, env=dict(home_env(), HOME=shared))
        line = one_error(r)
        assert r.returncode == 3 and line == "mota: error: MOTA_ERR_IO: input/output error: %s: %s" % (
            flash, os.strerror(13)), line  # EACCES
    finally:
        shutil.rmtree(shared, ignore_errors=True)

    with open(env.p("short.flash"), "wb") as f:
        f.write(b"\xff" * 100)
    line = one_error(mota("provision", "--flash", env.p("short.flash"), "--key", key))
    assert "short.flash: not a board flash: 100 bytes, a board flash has %d" % FLASH_SIZE in line, line

    env.run("keygen", env.p("other.pem"))
    r = mota("provision", "--flash", env.p("board.flash"), "--key", env.p("other.pub.pem"), *IDENTITY[:2],
             "--class", "another-board", *IDENTITY[4:])
    line = one_error(r)
    assert r.returncode == 1 and "malformed or unreadable" not in line, line
    assert line.startswith("mota: error: MOTA_ERR_PROVISION: board already provisioned, with another identity: "
                           "%s holds 'unit-7' (1 key, models dense network, 5 trial boots); asked for other keys, "
                           "class: give --flash another file" % env.p("board.flash")), line
    assert "delete %s" % env.p("board.flash") in line, line
    r = mota("provision", "--flash", env.p("board.flash"), "--key", key, *IDENTITY)
    assert r.returncode == 0 and "already provisioned with this identity" in r.stdout, (r.stdout, r.stderr)
    print("errors: %s; EACCES as such; a board provisioned otherwise: what differs and the way out" % os.strerror(27))


def case_image_holds_the_board_flash_record_raw_and_as_intel_hex_at_its_address():
    """`mota provision --image OUT.bin --hex OUT.hex --address ADDR` writes the record a board's flash gets
    with the same options (byte for byte with the same --device-id, but for the device key: a new one each
    time) raw, and as Intel HEX that reads back to those bytes at ADDR, across a 64 KiB boundary too; without
    --device-id each image has a new random id."""
    key, did = env.p("k.pub.pem"), "00112233445566778899aabb"
    r = mota("provision", "--flash", env.p("board.flash"), "--key", key, *IDENTITY, "--device-id", did)
    assert r.returncode == 0, r.stderr
    on_board = record_of(env.p("board.flash"))
    r = mota("provision", "--image", env.p("prov.bin"), "--hex", env.p("prov.hex"), "--address",
             "0x%08X" % AN547_RECORD, "--key", key, *IDENTITY, "--device-id", did)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("for 0x%08X" % AN547_RECORD) == 2 and "device id " + did in r.stdout, r.stdout
    with open(env.p("prov.bin"), "rb") as f:
        image = f.read()
    assert image[:REC_D] == on_board[:REC_D] and len(image) == REC, (image.hex(), on_board.hex())
    assert image[REC_N_KEKS:REC_N_KEKS + 2] == b"\0\1" and image[REC_PUB:REC_CRC] != on_board[REC_PUB:REC_CRC]
    assert bytes_at(read_intel_hex(env.p("prov.hex")), AN547_RECORD, REC) == image
    assert os.stat(env.p("prov.bin")).st_mode & 0o077 == 0 and os.stat(env.p("prov.hex")).st_mode & 0o077 == 0

    across = 0x0800FF00  # 256 bytes below 0x08010000: the record spans two 64 KiB pages
    r = mota("provision", "--hex", env.p("stm32.hex"), "--address", str(across), "--key", key, *IDENTITY)
    assert r.returncode == 0 and not os.path.exists(env.p("stm32.bin")), r.stderr
    with open(env.p("stm32.hex")) as f:
        assert [line for line in f.read().splitlines() if line[7:9] == "04"] == [":020000040800F2", ":020000040801F1"]
    rec = bytes_at(read_intel_hex(env.p("stm32.hex")), across, REC)
    assert rec[:4] == b"MPRV" and rec[REC_ID_LEN] == 12, rec.hex()
    # the names the ids are made from, for mota status to show beside them
    assert rec[REC_VENDOR:REC_CLASS].rstrip(b"\0") == b"example.com", rec.hex()
    assert rec[REC_CLASS:REC_NAMES_END].rstrip(b"\0") == b"factory-board", rec.hex()
    assert zlib.crc32(rec[:REC_CRC]).to_bytes(4, "little") == rec[REC_CRC:], "CRC"
    assert rec[REC_ID:REC_ID + 12].hex() != did and rec[:REC_ID_LEN] == on_board[:REC_ID_LEN], rec.hex()
    assert "device id " + rec[REC_ID:REC_ID + 12].hex() in r.stdout, r.stdout
    # a part of no --target without --class: mota-part, not the first QEMU board's name
    r = mota("provision", "--image", env.p("part.bin"), "--address", "0x08060000", "--key", key)
    part = open(env.p("part.bin"), "rb").read()
    assert r.returncode == 0 and part[REC_CLASS:REC_NAMES_END].rstrip(b"\0") == b"mota-part", (r.stderr, part.hex())
    assert "class mota-part" in r.stdout, r.stdout
    # for a part whose firmware predates version 2: the 480-byte version 1, the same record without the names
    r = mota("provision", "--image", env.p("v1.bin"), "--address", "0x%08X" % AN547_RECORD, "--key", key, *IDENTITY,
             "--device-id", did, "--record-version", "1")
    assert r.returncode == 0 and "480 bytes raw" in r.stdout, (r.stdout, r.stderr)
    with open(env.p("v1.bin"), "rb") as f:
        v1 = f.read()
    assert len(v1) == 480 and v1[4:8] == bytes([1, 0, 0xE0, 1]), v1[:8].hex()
    assert v1[8:REC_VENDOR] == on_board[8:REC_VENDOR] and zlib.crc32(v1[:476]).to_bytes(4, "little") == v1[476:]
    # for a part whose firmware predates version 3: the 608-byte version 2, the same record without keys
    r = mota("provision", "--image", env.p("v2.bin"), "--address", "0x%08X" % AN547_RECORD, "--key", key, *IDENTITY,
             "--device-id", did, "--record-version", "2")
    assert r.returncode == 0 and "608 bytes raw" in r.stdout and "device key" not in r.stdout, (r.stdout, r.stderr)
    with open(env.p("v2.bin"), "rb") as f:
        v2 = f.read()
    assert len(v2) == 608 and v2[4:8] == bytes([2, 0, 0x60, 2]), v2[:8].hex()
    assert v2[8:604] == on_board[8:604] and zlib.crc32(v2[:604]).to_bytes(4, "little") == v2[604:]
    r = mota("provision", "--flash", env.p("x.flash"), "--key", key, "--record-version", "1")
    assert r.returncode == 2 and "--record-version goes with --image" in r.stderr, r.stderr
    print("record image: %d bytes at 0x%08X, equal to the board flash's; HEX across 64 KiB reads back" %
          (len(image), AN547_RECORD))


def case_image_options_are_checked_before_anything_is_written():
    """A malformed, unaligned or too high --address, an image without an address, an address without an
    image, --flash with --image, one file for both images, a bad --device-id: usage errors (exit 2), no file."""
    key = env.p("k.pub.pem")
    bad = [
        ["--image", "p.bin", "--address", "0x6OFFF000"],
        ["--image", "p.bin", "--address", "-16"],
        ["--image", "p.bin", "--address", "0x60FFF008"],
        ["--image", "p.bin", "--address", "0x100000000"],
        ["--image", "p.bin", "--address", "0xFFFFFD00"],  # 816 bytes do not fit below 4 GiB
        ["--image", "p.bin", "--address", ""],
        ["--image", "p.bin"],
        ["--flash", "b.flash", "--address", "0x60FFF000"],
        ["--flash", "b.flash", "--image", "p.bin", "--address", "0x60FFF000"],
        ["--image", "p.bin", "--hex", "./p.bin", "--address", "0x60FFF000"],
        ["--image", "p.bin", "--address", "0x60FFF000", "--device-id", "0011x"],
        ["--image", "p.bin", "--address", "0x60FFF000", "--device-id", "00" * 17],
        ["--image", "p.bin", "--address", "0x60FFF000", "--record-version", "2", "--kek", "k.jwk"],  # no keys in 2
        ["--image", "p.bin", "--address", "0x60FFF000", "--record-version", "4"],
    ]
    for args in bad:
        r = mota("provision", *args, "--key", key, cwd=env.work)
        line = one_error(r)
        assert r.returncode == 2 and line.startswith("mota: error: provision: ") and "--help" in line, (args, line)
        assert not [n for n in os.listdir(env.work) if n.startswith(("p.", "b."))], (args, os.listdir(env.work))
    r = mota("provision", "--image", "p.bin", "--address", "0xFFFFFCD0", "--key", key, cwd=env.work)
    assert r.returncode == 0 and os.path.getsize(env.p("p.bin")) == REC, r.stderr  # the last place it fits
    print("%d malformed command lines refused as usage errors" % len(bad))


def write_kek(path, kid, k):
    """A key-encryption key file as `mota keygen --kek` writes it: a JWK (common/kek.h)."""
    import base64
    import json
    with open(path, "w") as f:
        json.dump({"kty": "oct", "alg": "A128KW", "kid": kid, "k": base64.urlsafe_b64encode(k).rstrip(b"=").decode()},
                  f)
    return path


def case_a_version_3_record_holds_the_keks_and_a_device_key_shown_by_id_and_exported_as_pem():
    """`mota provision --kek A --kek B --device-key-out PUB.pem`: the record (version 3, mode 0600) holds the
    two KEKs and a fresh device key pair whose point is d.G; the key's id is printed and its public half
    written as PEM; no key is printed; the same identity again keeps the pair, other KEKs are another
    identity (refused, named), a third --kek and a bad key file are refused."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    import hashlib
    key, flash, pub = env.p("k.pub.pem"), env.p("keys.flash"), env.p("dev.pem")
    ka, kb = bytes([0x42]) * 16, bytes(range(16, 32))
    a, b = write_kek(env.p("a.jwk"), "kek-a", ka), write_kek(env.p("b.jwk"), "kek-b", kb)
    r = mota("provision", "--flash", flash, "--key", key, *IDENTITY, "--kek", a, "--kek", b, "--device-key-out", pub)
    assert r.returncode == 0, r.stderr
    rec = record_of(flash)
    assert rec[4:6] == b"\3\0" and rec[REC_N_KEKS:REC_N_KEKS + 2] == b"\2\1", rec[:8].hex()
    assert rec[REC_KEKS] == 5 and rec[REC_KEKS + 1:REC_KEKS + 6] == b"kek-a" and rec[REC_KEKS + 33:REC_KEKS + 49] == ka
    assert rec[REC_KEKS + 52] == 5 and rec[REC_KEKS + 52 + 33:REC_KEKS + 52 + 49] == kb
    assert zlib.crc32(rec[:REC_CRC]).to_bytes(4, "little") == rec[REC_CRC:], "CRC"
    d, point = rec[REC_D:REC_PUB], rec[REC_PUB:REC_PUB + 65]
    made = ec.derive_private_key(int.from_bytes(d, "big"), ec.SECP256R1()).public_key()
    assert made.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint) == point
    exported = serialization.load_pem_public_key(open(pub, "rb").read())
    assert exported.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint) == point
    kid = hashlib.sha256(point).hexdigest()[:32]
    assert r.stdout.endswith("device key id %s\n" % kid), r.stdout
    assert os.stat(flash).st_mode & 0o077 == 0, oct(os.stat(flash).st_mode)
    for secret in (ka, kb, d):
        assert secret.hex() not in r.stdout + r.stderr and secret.hex().upper() not in r.stdout + r.stderr
    r = mota("provision", "--flash", flash, "--key", key, *IDENTITY, "--kek", a, "--kek", b)
    assert r.returncode == 0 and "already provisioned" in r.stdout and kid in r.stdout, r.stdout
    assert record_of(flash) == rec
    r = mota("provision", "--flash", flash, "--key", key, *IDENTITY, "--kek", a)
    assert r.returncode == 1 and "asked for other key-encryption keys" in one_error(r), r.stderr
    r = mota("provision", "--flash", env.p("n.flash"), "--key", key, "--kek", a, "--kek", b, "--kek", a)
    assert r.returncode == 2 and "at most 2 --kek" in r.stderr, r.stderr
    with open(env.p("bad.jwk"), "w") as f:
        f.write('{"kty":"oct","alg":"A128KW","kid":"","k":"QkJC"}')
    r = mota("provision", "--flash", env.p("n.flash"), "--key", key, "--kek", env.p("bad.jwk"))
    assert r.returncode != 0 and "MOTA_ERR_KEK_INVALID" in one_error(r), r.stderr
    assert not os.path.exists(env.p("n.flash"))
    print("version 3 record: KEKs kek-a, kek-b and device key %s (d.G checked, PEM exported), kept on re-provision"
          % kid)


# Each board's provisioning record by its CPU address (its flash's offset 0 plus the record's offset: 0x08000000
# + 0x60000 in mota/nucleo_f401re_layout.h, whose port netduinoplus2 runs; 0x08100000 + 0xFE000 in
# mota/b_u585i_iot02a_layout.h; 0x08000000 + 0xE0000 (bank 1, sector 7) in mota/stm32h747i_disco_layout.h; the
# N6's NOR 0x70100000 + 0xFFF000 in mota/stm32n6570_dk_layout.h; an MPS board's board_config.h
# MOTA_MPS_FLASH_BASE + 0xFFF000), its flash file's
# size, the record's offset in it, and whether the board reports its part's 96-bit unique id as its device id.
BOARD_RECORDS = {
    "nucleo-f401re": (0x08060000, 512 << 10, 0x60000, True),
    "b-u585i-iot02a": (0x081FE000, 1 << 20, 0xFE000, True),
    "stm32h747i-disco": (0x080E0000, 2 << 20, 0xE0000, True),
    "stm32n6570-dk": (0x710FF000, 16 << 20, 0xFFF000, True),
    "netduinoplus2": (0x08060000, 512 << 10, 0x60000, False),
    "an547": (0x60FFF000, FLASH_SIZE, PROVISION, False),
    "an505": (0x80FFF000, FLASH_SIZE, PROVISION, False),
    "an386": (0x21FFF000, FLASH_SIZE, PROVISION, False),
    "an500": (0x60FFF000, FLASH_SIZE, PROVISION, False),
}
UID_NOTE = ("mota: note: %s reports its part's 96-bit unique id as its device id (`mota status` shows it): the "
            "record holds none")


def case_target_places_the_record_at_its_boards_provisioning_sector():
    """`mota provision --target BOARD --image OUT.bin --hex OUT.hex` writes the record at the board's own
    address (nucleo-f401re 0x08060000, b-u585i-iot02a 0x081FE000, an MPS board its emulated flash's last
    sector): the Intel HEX's data records start there and read back to the raw image's bytes. A board whose
    device id is its part's unique id gets none in the record (said on stderr, once) unless --device-id; the
    others a random one. --help lists each board's address."""
    key, did = env.p("k.pub.pem"), "a1b2c3d4"
    helped = mota("provision", "--help").stdout
    for board, (addr, _, _, uid) in BOARD_RECORDS.items():
        assert re.search(r"^ +%s +0x%08X%s$" % (re.escape(board), addr,
                                                 re.escape(" (device id: the part's unique id)") if uid else ""),
                         helped, re.M), (board, helped)
        bin_, hex_ = env.p(board + ".bin"), env.p(board + ".hex")
        r = mota("provision", "--target", board, "--image", bin_, "--hex", hex_, "--key", key)
        assert r.returncode == 0 and r.stdout.count("for 0x%08X" % addr) == 2, (board, r.stdout, r.stderr)
        image = open(bin_, "rb").read()
        assert len(image) == REC and image[:4] == b"MPRV", (board, image[:8].hex())
        assert zlib.crc32(image[:REC_CRC]).to_bytes(4, "little") == image[REC_CRC:], (board, "CRC")
        mem = read_intel_hex(hex_)
        assert min(mem) == addr and bytes_at(mem, addr, REC) == image, (board, hex(min(mem)))
        assert image[REC_CLASS:REC_NAMES_END].rstrip(b"\0") == b"mota-" + board.encode(), image[REC_CLASS:].hex()
        notes = [line for line in r.stderr.splitlines() if "unique id" in line]
        if uid:
            assert image[REC_ID_LEN] == 0 and image[REC_ID:REC_ID + 16] == bytes(16), (board, image.hex())
            assert notes == [UID_NOTE % board] and "device id the part's unique id)" in r.stdout, (r.stdout, r.stderr)
            # a record already there is kept (a new one would give the part another device key and id)
            r = mota("provision", "--target", board, "--image", bin_, "--key", key, "--device-id", did)
            assert r.returncode == 3 and "%s holds a provisioning record" % bin_ in r.stderr, r.stderr
            assert open(bin_, "rb").read() == image
            r = mota("provision", "--target", board, "--image", bin_, "--key", key, "--device-id", did, "--force")
            image = open(bin_, "rb").read()
            assert r.returncode == 0 and "unique id" not in r.stderr and "device id " + did in r.stdout, r.stderr
            assert image[REC_ID_LEN] == 4 and image[REC_ID:REC_ID + 4].hex() == did, image.hex()
        else:
            assert image[REC_ID_LEN] == 12 and notes == [], (board, image.hex(), r.stderr)
            assert "device id " + image[REC_ID:REC_ID + 12].hex() in r.stdout, r.stdout
    print("records at " + ", ".join("%s 0x%08X" % (b, a[0]) for b, a in BOARD_RECORDS.items()))


def case_target_with_another_address_is_refused():
    """--target and --address together: the same address is taken; another is a usage error naming the
    board's address, nothing written; an image needs one of them."""
    key = env.p("k.pub.pem")
    for board, bad in (("nucleo-f401re", "0x08000000"), ("b-u585i-iot02a", "0x08060000"),
                       ("stm32h747i-disco", "0x081E0000"), ("stm32n6570-dk", "0x70000000"), ("an547", "0x60FFE000")):
        addr = BOARD_RECORDS[board][0]
        r = mota("provision", "--target", board, "--hex", "p.hex", "--address", bad, "--key", key, cwd=env.work)
        line = one_error(r)
        assert r.returncode == 2 and line == (
            "mota: error: provision: --address %s: %s's provisioning record is at 0x%08X (--target places it "
            "there: give one or the other) (see mota provision --help)" % (bad, board, addr)), line
        assert not os.path.exists(env.p("p.hex"))
        r = mota("provision", "--target", board, "--hex", "p.hex", "--address", "0x%08X" % addr, "--key", key,
                 cwd=env.work)
        assert r.returncode == 0 and bytes_at(read_intel_hex(env.p("p.hex")), addr, REC), r.stderr
        os.unlink(env.p("p.hex"))
    r = mota("provision", "--hex", "p.hex", "--key", key, cwd=env.work)
    assert r.returncode == 2 and "need --target BOARD or --address ADDR" in one_error(r), r.stderr
    print("--target with another --address refused, with its own taken; an image without either refused")


def fake_qemu():
    """A stand-in for qemu-system-arm that writes its command line to qemu.args and exits (the board resets
    at once: the launcher starts it again, and gives up after a few)."""
    path = env.p("fake-qemu")
    with open(path, "w") as f:
        f.write("#!/bin/sh\nprintf '%%s\\n' \"$@\" > %s\nexit 0\n" % env.p("qemu.args"))
    os.chmod(path, 0o755)
    with open(env.p("fw.elf"), "wb") as f:
        f.write(b"\x7fELF")
    return path


def case_sim_refuses_a_real_board_and_gives_a_serial2_board_qemus_second_serial():
    """`mota sim --target` of a board QEMU does not run is refused, saying what to do; netduinoplus2 (flag
    serial2) gets `-serial null -serial chardev:...` (its link is QEMU's second UART), an MPS board one
    -serial; each board's new flash file has its size, the record at its offset; a flash of another board's
    size is refused before QEMU starts."""
    for board in ("nucleo-f401re", "b-u585i-iot02a", "stm32h747i-disco", "stm32n6570-dk"):
        r = mota("sim", "--target", board, "--tcp", "127.0.0.1:0")
        assert r.returncode == 2 and one_error(r) == (
            "mota: error: sim: %s is a real board: flash it (docs/porting.md) and use mota push PORT (see mota "
            "sim --help)" % board), r.stderr
    qemu = fake_qemu()
    for board, machine, serials in (("netduinoplus2", "netduinoplus2", ["null", "chardev:uart0"]),
                                    ("an547", "mps3-an547", ["chardev:uart0"])):
        _, size, offset, _ = BOARD_RECORDS[board]
        flash = env.p(board + ".flash")
        r = subprocess.run([MOTA, "sim", "--target", board, "--flash", flash, "--key", env.p("k.pub.pem"), "--qemu",
                            qemu, "--firmware", env.p("fw.elf"), "--tcp", "127.0.0.1:0"], capture_output=True,
                           text=True, env=home_env(), timeout=60)
        assert r.returncode == 3 and "keeps resetting before it is ready" in r.stderr, (board, r.returncode, r.stderr)
        args = open(env.p("qemu.args")).read().splitlines()
        assert args[args.index("-M") + 1] == machine, args
        assert [args[i + 1] for i, a in enumerate(args) if a == "-serial"] == serials, (board, args)
        assert args[args.index("-kernel") + 1] == env.p("fw.elf") and "-no-reboot" in args, args
        assert os.path.getsize(flash) == size, (board, os.path.getsize(flash))
        with open(flash, "rb") as f:
            f.seek(offset)
            assert f.read(4) == b"MPRV", (board, hex(offset))
    shutil.copy(env.p("an547.flash"), env.p("other.flash"))
    r = subprocess.run([MOTA, "sim", "--target", "netduinoplus2", "--flash", env.p("other.flash"), "--qemu", qemu,
                        "--firmware", env.p("fw.elf"), "--tcp", "127.0.0.1:0"], capture_output=True, text=True,
                       env=home_env(), timeout=60)
    assert r.returncode == 3 and one_error(r) == (
        "mota: error: MOTA_ERR_IO: input/output error: %s: not a board flash: %d bytes, a board flash has %d on "
        "netduinoplus2" % (env.p("other.flash"), FLASH_SIZE, 512 << 10)), r.stderr
    print("real boards refused; netduinoplus2 on -serial null -serial chardev, a 512 KiB flash; an547 one serial")


def launch(*args):
    """`mota sim --target an547` in a directory of its own (cwd), its state in the test's: (launcher,
    HOST:PORT), or Skip without the firmware."""
    err = env.p("launcher.err")
    proc = subprocess.Popen([MOTA, "sim", "--target", "an547", *args], stdout=subprocess.PIPE, text=True,
                            stderr=open(err, "w"), cwd=env.p("cwd"), env=home_env())
    env.procs.append(proc)
    line = proc.stdout.readline()
    m = re.search(r"listening on tcp:(\S+)", line)
    if m is None:
        proc.wait()
        text = open(err).read()
        if "firmware was not found" in text:
            raise Skip("no an547 firmware in this build")
        raise AssertionError(("launcher did not start", line, text))
    return proc, m.group(1)


def stop(proc):
    proc.terminate()
    proc.wait(timeout=15)


def case_board_flash_is_kept_in_the_state_directory_and_another_key_is_told_the_way_out():
    """Without --flash the an547 board's flash is $XDG_STATE_HOME/mota/an547.flash, said at start, the current
    directory untouched (an older mota's mota-an547.flash there is named, not used); a later run with another
    --key is refused before the board starts, saying what differs and the way out; without --key the board
    runs as it is provisioned, its device id kept."""
    os.makedirs(env.p("cwd"))
    with open(env.p("cwd/mota-an547.flash"), "wb") as f:
        f.write(b"an older mota's board")
    proc, port = launch("--key", env.p("k.pub.pem"), "--class", "my-board")
    st = env.wait_status(port, 30)
    stop(proc)
    flash = os.path.join(env.p("state"), "mota", "an547.flash")
    text = open(env.p("launcher.err")).read()
    assert "mota-sim: board flash %s (kept; --flash FILE for another)\n" % flash in text, text[:2000]
    assert "mota-an547.flash here, an older mota's default, is not used: --flash mota-an547.flash" in text, text
    assert st is not None and st["device"]["device_id"], (st, text[-2000:])
    assert os.path.getsize(flash) == FLASH_SIZE and os.path.exists(flash + ".log"), os.listdir(os.path.dirname(flash))
    assert os.listdir(env.p("cwd")) == ["mota-an547.flash"], os.listdir(env.p("cwd"))
    assert not os.path.exists(env.p("home/.local")), "the home was written to with XDG_STATE_HOME set"

    env.run("keygen", env.p("other.pem"))
    r = subprocess.run([MOTA, "sim", "--target", "an547", "--key", env.p("other.pub.pem"), "--class", "my-board"],
                       capture_output=True, text=True, cwd=env.p("cwd"), env=home_env(), timeout=30)
    line = one_error(r)
    assert r.returncode == 1 and "listening" not in r.stdout and "malformed" not in line, (r.stdout, line)
    assert line.startswith("mota: error: MOTA_ERR_PROVISION: board already provisioned, with another identity: "
                           "%s holds 'mota-an547' (1 key, model network, 3 trial boots); asked for other keys: "
                           "give --flash another file for another board, delete %s to start a new one, or leave "
                           "out --key" % (flash, flash)), line

    proc, port = launch()
    again = env.wait_status(port, 30)
    stop(proc)
    assert again is not None and again["device"]["device_id"] == st["device"]["device_id"], (st, again)
    print("board flash %s: kept, refused with another key and the way out, run as provisioned without --key" %
          flash)


if __name__ == "__main__":
    try:
        rc = run_case(globals(), CASE)
    finally:
        env.close()
    sys.exit(rc)
