#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""An STM32 board's firmware against its memory: every byte the image loads lies in the firmware's flash
(FW0, FW1) of the board's layout header (ports/stm32/<board>/include/mota/<board>_layout.h, the one source
the port's linker script and the host's profile read), none in the agent's journal, slots or provisioning
record; the vector table is at FW0's start (VTOR, the part's boot address on a real board); its RAM lies in
the firmware's RAM, never in the models' exec RAM; the layout itself fits the part (the journal, the slots
and the record inside the agent's flash, apart; where the boot ROM reads the firmware from the same memory,
the N6's NOR, that boot image apart from them and large enough for the image and ST's header). The image is read with arm-none-eabi-readelf.
Exit 77 without the firmware (no ST sources: scripts/build-firmware.sh said SKIPPED).

usage: test_stm32_images.py LAYOUT_HEADER FIRMWARE_ELF
"""
import os
import re
import subprocess
import sys

HEADER, ELF = sys.argv[1], sys.argv[2]
BOOT_HEADER = 1024  # the header ST's signing tool puts before a boot ROM's image (the N6's FSBL)


def layout(path):
    """The header's MOTA_<BOARD>_<NAME> values by NAME (hex or decimal literals only)."""
    text = open(path).read()
    prefix = re.search(r"^#define (MOTA_[A-Z0-9_]+_)FLASH_BASE ", text, re.M).group(1)
    return {m.group(1): int(m.group(2), 0)
            for m in re.finditer(r"^#define " + prefix + r"([A-Z0-9_]+) (0x[0-9A-Fa-f]+|[0-9]+)\b", text, re.M)}


def loads(elf):
    """(vaddr, paddr, filesz, memsz) of each PT_LOAD."""
    out = subprocess.run(["arm-none-eabi-readelf", "-lW", elf], capture_output=True, text=True, check=True).stdout
    segs = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[2], 16), int(f[3], 16), int(f[4], 16), int(f[5], 16)))
    return segs


def entry_vectors(elf):
    out = subprocess.run(["arm-none-eabi-readelf", "-SW", elf], capture_output=True, text=True, check=True).stdout
    m = re.search(r"\]\s+\.vectors\s+\S+\s+([0-9a-f]+)", out)
    return int(m.group(1), 16) if m else None


def inside(lo, n, base, size):
    return base <= lo and lo + n <= base + size


def overlaps(lo, n, base, size):
    return n > 0 and size > 0 and lo < base + size and base < lo + n


def main():
    if not os.path.exists(ELF):
        print(f"SKIPPED: no firmware at {ELF} (ST's sources missing: scripts/build-firmware.sh)")
        return 77
    L = layout(HEADER)
    base = L["FLASH_BASE"]
    fw = [(L["FW0_ADDR"], L["FW0_SIZE"])] if "FW0_ADDR" in L else [(base + L["FW0"], L["FW0_SIZE"])]
    if "FW1" in L:
        fw.append((base + L["FW1"], L["FW1_SIZE"]))
    # the journal runs to the next thing the layout places after it (the F401's FW1, else the slots)
    agent = {"journal": (base + L["JOURNAL"], L.get("FW1", L["SLOTS"]) - L["JOURNAL"]),
             "slots": (base + L["SLOTS"], 2 * L["SLOT_SIZE"]),
             "provisioning record": (base + L["PROVISION"], L["PROVISION_SIZE"])}
    errors = []
    # the layout: journal, slots, record inside the agent's flash, apart from each other and the firmware
    j, s, p = L["JOURNAL"], L["SLOTS"], L["PROVISION"]
    parts = list(agent.items())
    if not all(inside(b, n, base, L["FLASH_SIZE"]) for _, (b, n) in parts) or any(
            overlaps(*parts[a][1], *parts[b][1]) for a in range(3) for b in range(a + 1, 3)):
        errors.append(f"layout: journal 0x{j:x}, slots 0x{s:x} (2 x 0x{L['SLOT_SIZE']:x}), record 0x{p:x} "
                      f"do not fit apart in 0x{L['FLASH_SIZE']:x}")
    # where the boot ROM reads the firmware from the agent's memory (the N6's NOR): apart from the agent's
    if "BOOT_IMAGE" in L and overlaps(L["BOOT_IMAGE"], L["BOOT_IMAGE_SIZE"], base, L["FLASH_SIZE"]):
        errors.append(f"layout: the boot image 0x{L['BOOT_IMAGE']:08x}+0x{L['BOOT_IMAGE_SIZE']:x} overlaps the "
                      f"agent's flash")
    for (fb, fs) in fw:
        for what, (ab, asz) in agent.items():
            if overlaps(fb, fs, ab, asz):
                errors.append(f"layout: firmware 0x{fb:08x}+0x{fs:x} overlaps the {what}")
    if overlaps(L["RAM"], L["RAM_SIZE"], L["EXEC"], L["EXEC_SIZE"]):
        errors.append("layout: the firmware's RAM overlaps the models' exec RAM")
    flash_bytes = ram_bytes = 0
    for (vaddr, paddr, filesz, memsz) in loads(ELF):
        if filesz:  # bytes a programmer writes, at their load address
            flash_bytes += filesz
            if not any(inside(paddr, filesz, fb, fs) for fb, fs in fw):
                errors.append(f"image: 0x{paddr:08x}+0x{filesz:x} outside the firmware's flash "
                              + ", ".join(f"0x{b:08x}+0x{n:x}" for b, n in fw))
            for what, (ab, asz) in agent.items():
                if overlaps(paddr, filesz, ab, asz):
                    errors.append(f"image: 0x{paddr:08x}+0x{filesz:x} overwrites the {what}")
        if vaddr != paddr or not filesz:  # RAM
            ram_bytes += memsz
            if not inside(vaddr, memsz, L["RAM"], L["RAM_SIZE"]):
                errors.append(f"image: RAM 0x{vaddr:08x}+0x{memsz:x} outside the firmware's "
                              f"0x{L['RAM']:08x}+0x{L['RAM_SIZE']:x}")
            if overlaps(vaddr, memsz, L["EXEC"], L["EXEC_SIZE"]):
                errors.append(f"image: RAM 0x{vaddr:08x}+0x{memsz:x} in the models' exec RAM")
    if "BOOT_IMAGE" in L and flash_bytes + BOOT_HEADER > L["BOOT_IMAGE_SIZE"]:
        errors.append(f"image: {flash_bytes} B and ST's {BOOT_HEADER}-byte header exceed the boot image's "
                      f"0x{L['BOOT_IMAGE_SIZE']:x}")
    vt = entry_vectors(ELF)
    if vt != fw[0][0]:
        errors.append(f"image: the vector table at {vt if vt is None else hex(vt)}, not at FW0's start 0x{fw[0][0]:08x}")
    for e in errors:
        print("FAIL " + e)
    print(f"{os.path.basename(ELF)}: {flash_bytes} B in flash at " + ", ".join(f"0x{b:08x}" for b, _ in fw)
          + f", {ram_bytes} B of RAM; journal 0x{j:x}, slots 0x{s:x} 0x{s + L['SLOT_SIZE']:x}, record 0x{p:x}")
    return 1 if errors else 0


sys.exit(main())
