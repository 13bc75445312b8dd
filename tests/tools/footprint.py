#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Footprint of a firmware image by module, from its GNU ld map file.

usage: footprint.py FIRMWARE.map [--json]

Flash is what the image stores (.text, .rodata, vectors, .data's load image);
RAM is .data and .bss. Every input section is charged to the archive (or
object) it came from, grouped into modules; the application's large buffers
(main.c) are listed by symbol, since they are sized by the product, not by
the libraries.
"""
import json
import re
import sys

MODULES = [
    ("agent", ("libmota_agent.a", "libmota_proto.a")),
    ("container", ("libmota_container.a",)),
    ("decompress", ("libmota_decompress.a",)),
    ("loader", ("libmota_loader.a",)),
    ("crypto: p256-m verify", ("libmota_dep_p256m_lib.a",)),
    ("crypto: AES-128, CTR, GCM, key wrap, HKDF, ECDH", ()),  # objects of the two below: MEMBERS
    ("crypto: SHA-256 (mbed TLS) + shim", ("libmota_crypto.a", "libmota_dep_mbedtls_lib.a")),
    ("libcbor", ("libmota_dep_cbor_lib.a",)),
    ("reason codes", ("libmota_base.a",)),
    ("port: the Arm layer (ports/arm)", ()),  # objects of a board's port library: ARM_OBJS
    ("port: QEMU launcher, emulated flash (ports/arm/qemu)", ()),  # QEMU_OBJS, a QEMU board's only
    ("port: family and board (ports/FAMILY)", ()),  # the rest of a board's port library, libmota_hal_<board>.a
    ("application (main.c)", ("main.c.obj",)),
    ("libc + libgcc", ("libc.a", "libgcc.a", "libm.a")),
]

SECTION = re.compile(r"^ (\.[\w.$]+|COMMON)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$")


def kind(name):
    if name.startswith((".text", ".rodata", ".vectors")):
        return "flash"
    if name.startswith(".data"):
        return "data"
    if name.startswith((".bss", "COMMON")):
        return "bss"
    return None


# objects of a library counted as a module of their own: decryption (MOTA_FEATURE_DECRYPT) inside crypto/
# and mbed TLS, and the container's SUIT_Encryption_Info
MEMBERS = [
    ("crypto: AES-128, CTR, GCM, key wrap, HKDF, ECDH", ("aes.c.obj", "aes_mbedtls.c.obj", "cipher.c.obj",
                                                        "ecdh_p256m.c.obj")),
]


# the Arm layer's objects inside a board's port library (ports/arm/arm.cmake)
ARM_OBJS = ("core.c.obj", "clock.c.obj", "fault.c.obj", "guard.c.obj", "infer.c.obj", "mpu.c.obj", "port.c.obj",
            "rx.c.obj")
QEMU_OBJS = ("launcher.c.obj", "emu_flash.c.obj", "emu_flash_ecc.c.obj")


def module_of(src):
    base = re.sub(r"\(.*", "", src).rsplit("/", 1)[-1]
    member = re.search(r"\(([^)]*)\)", src)
    if base.startswith("libmota_hal_") and base.endswith(".a"):
        obj = member.group(1) if member else ""
        if obj in ARM_OBJS:
            return "port: the Arm layer (ports/arm)"
        return "port: QEMU launcher, emulated flash (ports/arm/qemu)" if obj in QEMU_OBJS else \
            "port: family and board (ports/FAMILY)"
    for mod, objs in MEMBERS:
        if member and member.group(1) in objs:
            return mod
    for mod, libs in MODULES:
        if base in libs:
            return mod
    return "other (" + base + ")"


def parse(path):
    text = open(path).read().split("Linker script and memory map", 1)[1]
    sizes = {}
    bss_symbols = []  # (name, size, module): the large zero-initialised objects
    current = None
    for line in text.splitlines():
        m = SECTION.match(line)
        if m is None and re.match(r"^ (\.[\w.$]+|COMMON)$", line):
            current = line.strip()
            continue
        if m is not None:
            name = m.group(1) or current
            current = None
            addr, size, src = int(m.group(2), 16), int(m.group(3), 16), m.group(4)
            k = kind(name or "")
            if k is None or size == 0:
                continue
            mod = module_of(src)
            sizes.setdefault(mod, {"flash": 0, "data": 0, "bss": 0})
            sizes[mod][k] += size
            if k == "data":
                sizes[mod]["flash"] += size  # its load image
            if k == "bss" and size >= 256:  # statics are not in the map's symbols: the section names them
                bss_symbols.append((name.rsplit(".", 1)[-1], size, mod))
    return sizes, bss_symbols


def main():
    sizes, syms = parse(sys.argv[1])
    if "--json" in sys.argv:
        print(json.dumps({"modules": sizes, "bss_symbols": syms}))
        return
    order = [m for m, _ in MODULES] + sorted(m for m in sizes if m.startswith("other"))
    print("  %-24s %8s %8s" % ("module", "flash", "RAM"))
    for mod in order:
        if mod in sizes:
            s = sizes[mod]
            print("  %-24s %8d %8d" % (mod, s["flash"], s["data"] + s["bss"]))
    print("  %-24s %8d %8d" % ("total", sum(s["flash"] for s in sizes.values()),
                               sum(s["data"] + s["bss"] for s in sizes.values())))
    print("  largest RAM objects: " + ", ".join("%s %d" % (n, z) for n, z, _ in sorted(syms, key=lambda x: -x[1])[:8]))


if __name__ == "__main__":
    main()
