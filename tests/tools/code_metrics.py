#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tree's shape, measured: function lengths and the include graph.

  code_metrics.py [--root DIR] functions [--over N] [--top K] [--check]   --check: exit 1 when one is over N
  code_metrics.py [--root DIR] layers      exit 1 on an include or a link the layers forbid
  code_metrics.py [--root DIR] selftest    the layer check refuses violations planted in a copy of the tree
  code_metrics.py [--root DIR] format      exit 1 on a C file clang-format (the tree's .clang-format) would change
  code_metrics.py [--root DIR] hygiene     exit 1 on a source or script file without its SPDX licence line
                                           and an opening comment that says what it holds

The layers (docs/architecture.md), lowest first; each is a folder. Two views
of the same rule, both checked:
- files: a file may include headers of its own layer or a lower one, never
  one above; on top of that, only agent/ and the ports see port.h, only
  crypto/ sees mbed TLS, only container/ sees libcbor;
- folders: every source file lives in a layer's folder (a new top-level
  folder must be given its place here), each folder is one layer's whole
  (no folder holds two), and the folder graph (an arrow from a folder to
  another for every include and every link of a mota_ library between them)
  has no arrow running up: the base at the bottom, the ports and the host
  tool at the top. The folders are the top-level ones, and under ports/ each
  family (ports/arm, ports/mps, ports/posix, ports/firmware): a family
  reaches another only through the Arm layer's include/ (mota/arm.h), never
  a family's private files or another family.
"""
import argparse
import os
import re
import subprocess
import sys

# (layer name, path prefixes it owns); index = height
LAYERS = [
    ("base", ["base/"]),
    ("crypto", ["crypto/"]),
    ("loader", ["loader/"]),
    ("decompress", ["decompress/"]),
    ("container", ["container/"]),
    ("port contract", ["hal/"]),
    ("proto", ["proto/"]),
    ("agent", ["agent/"]),
    ("arm", ["ports/arm/"]),
    ("ports", ["ports/"]),
    ("host_tool", ["host_tool/"]),
]
# what only some folders may include: (pattern on the resolved path or the <system> name, folders allowed, why)
RESTRICTED = [
    (re.compile(r"^hal/include/mota/port\.h$"), ["agent/", "hal/", "ports/"], "only agent/ and the ports see port.h"),
    (re.compile(r"^<(mbedtls|psa)/"), ["crypto/", "cmake/"], "only crypto/ sees mbed TLS"),
    (re.compile(r"^<p256-m\.h>"), ["crypto/"], "only crypto/ sees p256-m"),
    (re.compile(r"^<openssl/"), ["crypto/src/sha256_openssl.c"], "only crypto/'s host SHA-256 sees OpenSSL"),
    (re.compile(r"^<cbor[./]"), ["container/src/cbor.c"], "only the CBOR decoder sees libcbor"),
    (re.compile(r"^<zlib\.h>$"), ["base/src/crc32.c", "host_tool/src/", "tests/unit/encoders.h"],
     "only the host's CRC-32 and deflate encoder (and the tests' encoders) see zlib"),
    (re.compile(r"^<lz4"), ["host_tool/src/", "tests/unit/encoders.h"],
     "only the host's encoder (and the decoder's test) sees liblz4: devices decode with decompress/src/lz4.c"),
    (re.compile(r"^<lzma\.h>$"), ["host_tool/src/"],
     "only the host's encoder sees liblzma: devices decode with decompress/src/lzma.c"),
    (re.compile(r"^<divsufsort\.h>$"), ["host_tool/src/offline/delta_diff.c"], "only the host's delta diff sees libdivsufsort"),
]
# what is no layer's: build helpers and the tree's own tools
OUTSIDE = ("cmake/", "tests/", "scripts/", ".ci/", ".deps/", "docs/")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def tracked(root):
    """The tree's files (git's tracked and untracked-but-not-ignored ones; outside a checkout every file but
    the builds), as paths relative to root."""
    try:
        return subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"],
                              capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return [os.path.relpath(os.path.join(d, f), root) for d, ds, fs in os.walk(root)
                for f in fs if not os.path.relpath(d, root).startswith(("build", ".git", ".deps"))]


def sources(root):
    return sorted(p for p in tracked(root) if p.endswith((".c", ".h")) and not p.startswith(("tests/", ".deps/"))
                  and os.path.exists(os.path.join(root, p)))


def layer_of(path):
    best = None
    for height, (name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if path.startswith(p) and (best is None or len(p) > best[2]):
                best = (height, name, len(p))
    return (best[0], best[1]) if best else (None, None)


def include_dirs(root):
    """Every include/ folder of the tree: where a quoted include that is not beside its file is looked up."""
    dirs = []
    for d, ds, _ in os.walk(root):
        ds[:] = [x for x in ds if not x.startswith((".", "build")) and x != "tests"]
        if os.path.basename(d) == "include":
            dirs.append(d)
    return sorted(dirs)


def resolve(root, src, name, dirs):
    """The repo path a quoted include names (beside the file first, as the compiler does), or None."""
    for base in [os.path.dirname(os.path.join(root, src))] + dirs:
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(path):
            return os.path.relpath(path, root)
    return None


def check_layers(root):
    """Every include of the tree: a quoted one is resolved to the file it names (a private header belongs to
    its folder's layer), a <system> one is checked against the restricted libraries."""
    files = sources(root)
    dirs = include_dirs(root)
    bad, edges = [], 0
    for f in files:
        if f.startswith("cmake/"):
            continue
        fh, fname = layer_of(f)
        text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
        for kind, name in INCLUDE.findall(text):
            target = resolve(root, f, name, dirs) if kind == '"' else None
            what = target if target is not None else "<%s>" % name
            for rx, allowed, why in RESTRICTED:
                if rx.search(what) and not any(f.startswith(a) for a in allowed):
                    bad.append(f"{f}: includes {name}: {why}")
            if target is None:
                continue  # a system header
            edges += 1
            th, tname = layer_of(target)
            if target.startswith("tests/"):
                bad.append(f"{f} includes {name}: test code")
            elif fh is not None and th is not None and th > fh:
                bad.append(f"{f} ({fname}) includes {name} ({target}, {tname}): upward")
    return files, edges, bad + check_folders(root, files) + check_folder_graph(root, files, dirs) + check_picture(root)


def folder_of(path):
    """The folder a path belongs to: its top-level folder, or under ports/ its family's folder."""
    parts = path.split("/")
    if parts[0] == "ports" and len(parts) > 2:
        return "ports/%s/" % parts[1]
    return parts[0] + "/" if len(parts) > 1 else ""


def check_folder_graph(root, files, dirs):
    """The folder grain: each folder holds one layer, and no arrow between folders runs up (includes and
    links of mota_ libraries); families under ports/ reach each other only through ports/arm/include."""
    bad, height, arrows = [], {}, {}
    for f in files:
        if f.startswith(OUTSIDE):
            continue
        d, (h, name) = folder_of(f), layer_of(f)
        if h is None:
            continue
        if height.setdefault(d, (h, name)) != (h, name):
            bad.append(f"folder {d} holds two layers ({height[d][1]}, {name}): give each its own folder")
    for f in files:
        if f.startswith(OUTSIDE):
            continue
        text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
        for kind, name in INCLUDE.findall(text):
            target = resolve(root, f, name, dirs) if kind == '"' else None
            if target is None or target.startswith(OUTSIDE) or folder_of(target) == folder_of(f):
                continue
            a, b = folder_of(f), folder_of(target)
            ha, hb = height.get(a), height.get(b)
            if ha is None or hb is None:
                continue
            if hb[0] > ha[0]:
                arrows.setdefault((a, b, "up"), f"folder {a} ({ha[1]}) -> {b} ({hb[1]}): upward ({f} includes {target})")
            elif a.startswith("ports/") and b.startswith("ports/") and not target.startswith("ports/arm/include/"):
                arrows.setdefault((a, b, target), f"folder {a} -> {b}: a family reaches another only through "
                                                  f"ports/arm/include ({f} includes {target})")
    return bad + [arrows[k] for k in sorted(arrows)]


TARGET = re.compile(r"add_(?:library|executable)\(\s*([\w.${}-]+)")
LINK = re.compile(r"target_link_libraries\(\s*([\w.${}-]+)([^)]*)\)", re.S)


def cmake_files(root):
    return sorted(p for p in tracked(root) if os.path.basename(p) == "CMakeLists.txt" or p.endswith(".cmake")
                  if not p.startswith(OUTSIDE) and os.path.exists(os.path.join(root, p)))


def check_picture(root):
    """docs/architecture.md's layer picture names exactly the layer folders, top to bottom."""
    path = os.path.join(root, "docs", "architecture.md")
    if not os.path.exists(path):
        return []
    text = open(path, encoding="utf-8").read()
    m = re.search(r"## Layers[^\n]*\n.*?```\n(.*?)```", text, re.S)
    drawn = re.findall(r"^ ([a-z_]+/(?:[a-z_]+/)*)\s", m.group(1), re.M) if m else []
    want = [prefixes[0] for _, prefixes in reversed(LAYERS)]
    if drawn != want:
        return [f"docs/architecture.md: the layer picture shows {drawn}, the layers are {want}"]
    return []


def check_folders(root, files):
    """Folder-level direction: every source file has a layer, and the libraries each folder links are
    built in its layer or below (a board's library is named for its board: mota_hal_<board>)."""
    bad = []
    for f in files:
        if not f.startswith(OUTSIDE) and layer_of(f)[0] is None:
            bad.append(f"{f}: in no layer's folder (give it a place in LAYERS and docs/architecture.md)")
    built, links = {}, []
    for c in cmake_files(root):
        text = re.sub(r"#[^\n]*", "", open(os.path.join(root, c), encoding="utf-8", errors="replace").read())
        for t in TARGET.findall(text):
            built.setdefault(t, c)
        for t, rest in LINK.findall(text):
            links.append((c, t, [w for w in rest.split() if w.startswith("mota_")]))
    for c, t, deps in links:
        fh, fname = layer_of(c)
        if fh is None:
            continue
        for d in deps:
            home = built.get(d) or ("ports/" if d.startswith("mota_hal_") else None)
            th, tname = layer_of(home) if home else (None, None)
            if th is not None and th > fh:
                bad.append(f"{c} ({fname}) links {d} ({home}, {tname}): upward")
    return bad


SPDX = "SPDX-License-Identifier: Apache-2.0"
SCRIPT_FILES = re.compile(r"(\.(c|h|py|sh|cmake|ld|in)|(^|/)CMakeLists\.txt|^\.ci/run)$")
OPENING = re.compile(r'^\s*(/\*|//|#(?!\s*(include|if|define|pragma)\b)|[rR]?"""|\'\'\')')


def check_hygiene(root):
    """Every source and script file: the licence line first (after a #! line), then a comment that says
    what the file holds. Fuzz corpora and fixtures are data, not sources."""
    files = [f for f in tracked(root) if SCRIPT_FILES.search(f) and "/corpus/" not in f
             and os.path.exists(os.path.join(root, f))]
    bad = []
    for f in sorted(files):
        lines = open(os.path.join(root, f), encoding="utf-8", errors="replace").read().split("\n")
        if lines and lines[0].startswith("#!"):
            lines = lines[1:]
        if not lines or SPDX not in lines[0]:
            bad.append(f"{f}: the first line (after #!) is not the licence line ({SPDX})")
            continue
        rest = [x for x in lines[1:] if x.strip()]
        if not rest or not OPENING.match(rest[0]):
            bad.append(f"{f}: no opening comment after the licence line")
    return files, bad


def hygiene_selftest(root):
    """The hygiene check refuses a file without its licence line and one without an opening comment."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="mota-hygiene-")
    try:
        os.makedirs(os.path.join(tmp, "agent/src"))
        with open(os.path.join(tmp, "agent/src/a.c"), "w") as out:
            out.write('#include "mota/agent.h"\n')
        with open(os.path.join(tmp, "agent/src/b.c"), "w") as out:
            out.write("/* " + SPDX + " */\n#include <string.h>\n")
        with open(os.path.join(tmp, "agent/src/c.sh"), "w") as out:
            out.write("#!/bin/sh\n# " + SPDX + "\n# Says what it does.\n")
        _, bad = check_hygiene(tmp)
        ok = (any(b.startswith("agent/src/a.c") and "licence" in b for b in bad) and
              any(b.startswith("agent/src/b.c") and "opening comment" in b for b in bad) and
              not any(b.startswith("agent/src/c.sh") for b in bad))
        print(f"hygiene selftest: {'a missing licence line and opening comment refused' if ok else 'FAIL ' + str(bad)}")
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_format(root):
    """clang-format --dry-run over every tracked C file; a file it would change is named. Its selftest: a
    copy of a file with its indentation broken must be refused."""
    files = [f for f in tracked(root) if f.endswith((".c", ".h")) and os.path.exists(os.path.join(root, f))]
    cmd = ["clang-format", "--style=file:" + os.path.join(root, ".clang-format"), "--dry-run", "-Werror"]
    bad = []
    for i in range(0, len(files), 64):
        r = subprocess.run(cmd + files[i:i + 64], cwd=root, capture_output=True, text=True)
        bad += sorted({line.split(":")[0] for line in r.stderr.splitlines() if ": error:" in line})
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=True) as t:
        t.write("int f(void)\n{\n        return 0;\n}\n")
        t.flush()
        planted = subprocess.run(cmd + [t.name], capture_output=True, text=True).returncode != 0
    return files, bad, planted


def strip(text):
    """Comments and literals blanked, newlines kept."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank, text, flags=re.S)


def functions(root):
    """(lines, path, name) for every function definition outside tests/."""
    out = []
    for f in sources(root):
        if not f.endswith(".c"):
            continue
        text = strip(open(os.path.join(root, f), encoding="utf-8", errors="replace").read())
        text = re.sub(r"^\s*#[^\n]*(\\\n[^\n]*)*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.M)
        depth, i = 0, 0
        while i < len(text):
            c = text[i]
            if c == "{":
                if depth == 0:
                    head = text[:i].rstrip()
                    if head.endswith(")"):
                        # walk back to the matching '(' and the name before it
                        j, d = len(head) - 1, 0
                        while j >= 0:
                            if head[j] == ")":
                                d += 1
                            elif head[j] == "(":
                                d -= 1
                                if d == 0:
                                    break
                            j -= 1
                        m = re.search(r"(\w+)\s*$", head[:j])
                        name = m.group(1) if m else "?"
                        start = head[:j].count("\n") + 1
                        # the body's end
                        k, d = i, 0
                        while k < len(text):
                            if text[k] == "{":
                                d += 1
                            elif text[k] == "}":
                                d -= 1
                                if d == 0:
                                    break
                            k += 1
                        end = text[:k].count("\n") + 1
                        if name not in ("if", "while", "for", "switch", "sizeof"):
                            out.append((end - start + 1, f, name))
                        i = k + 1
                        continue
                depth += 1
            elif c == "}":
                depth -= 1
            i += 1
    return out


PLANTED = [  # (file, line appended, what the check must say)
    ("agent/src/agent.c", '#include "../../host_tool/src/main.c"', "upward"),
    ("loader/src/nbin.c", '#include "../../agent/src/journal.h"', "upward"),
    ("loader/src/compat.c", '#include "mota/container.h"', "upward"),
    ("base/src/err.c", '#include "mota/crypto.h"', "upward"),
    ("decompress/src/lz4.c", '#include "mota/container.h"', "upward"),
    ("agent/src/link.c", '#include "mota/posix_device.h"', "upward"),
    ("container/src/manifest.c", '#include "../../hal/include/mota/port.h"', "port.h"),
    ("loader/src/install.c", "#include <cbor/data.h>", "libcbor"),
    ("container/src/cbor.c", "#include <psa/crypto.h>", "mbed TLS"),
    ("agent/src/link.c", "#include <mbedtls/sha256.h>", "mbed TLS"),
    ("host_tool/src/offline/cmd_pack.c", "#include <openssl/sha.h>", "OpenSSL"),
    ("agent/src/agent.c", "#include <lz4frame.h>", "liblz4"),
    ("loader/src/nbin.c", "#include <zlib.h>", "zlib"),
    ("loader/CMakeLists.txt", "target_link_libraries(mota_loader PUBLIC mota_agent)", "links mota_agent"),
    ("base/CMakeLists.txt", "target_link_libraries(mota_base PRIVATE mota_crypto)", "links mota_crypto"),
    ("agent/CMakeLists.txt", "target_link_libraries(mota_agent PRIVATE mota_hal_posix)", "links mota_hal_posix"),
    ("net/src/net.c", "/* a folder nobody placed */", "in no layer's folder"),
    # the folder grain: a port back inside hal/, a folder arrow running up, families reaching each other
    ("hal/ports/posix/stub.c", '#include "mota/agent.h"', "folder hal/ (port contract) -> agent/ (agent): upward"),
    ("hal/ports/posix/stub.c", '#include "mota/posix_device.h"', "folder hal/ (port contract) -> ports/posix/"),
    ("proto/src/stub.c", '#include "mota/journal.h"', "folder proto/ (proto) -> agent/ (agent): upward"),
    ("ports/arm/common/stub.c", '#include "mota/mps_layout.h"', "folder ports/arm/ (arm) -> ports/mps/ (ports): upward"),
    ("ports/mps/common/src/stub.c", '#include "mota/posix_flash.h"', "a family reaches another only"),
    ("ports/mps/common/src/stub.c", '#include "../../../arm/common/arm_int.h"', "a family reaches another only"),
    ("ports/firmware/stub.c", '#include "mota/mps_layout.h"', "a family reaches another only"),
]


def selftest(root):
    """The check itself: a copy of the tree with forbidden includes planted must be refused for each of them."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="mota-layers-")
    try:
        for f in sources(root) + cmake_files(root):
            os.makedirs(os.path.join(tmp, os.path.dirname(f)), exist_ok=True)
            shutil.copy(os.path.join(root, f), os.path.join(tmp, f))
        _, _, clean = check_layers(tmp)
        missed = [] if not clean else ["the unplanted copy: " + c for c in clean]
        for f, line, what in PLANTED:
            path = os.path.join(tmp, f)
            new = not os.path.exists(path)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "a", encoding="utf-8") as out:
                out.write("\n" + line + "\n")
            _, _, bad = check_layers(tmp)
            if not any((b.startswith(f) or f" ({f} includes " in b) and what in b for b in bad):
                missed.append(f"{f}: {line} not refused ({bad})")
            if new:
                os.remove(path)
                continue
            with open(path, encoding="utf-8") as src:
                text = src.read()
            with open(path, "w", encoding="utf-8") as out:
                out.write(text.replace("\n" + line + "\n", ""))
        # the picture: a copy of the docs whose picture lost a layer
        doc = os.path.join(root, "docs", "architecture.md")
        os.makedirs(os.path.join(tmp, "docs"), exist_ok=True)
        text = open(doc, encoding="utf-8").read()
        with open(os.path.join(tmp, "docs", "architecture.md"), "w", encoding="utf-8") as out:
            out.write(text.replace("\n decompress/ ", "\n            "))
        _, _, bad = check_layers(tmp)
        if not any("layer picture" in b for b in bad):
            missed.append(f"docs/architecture.md without decompress/ in its picture not refused ({bad})")
        for m in missed:
            print("FAIL " + m)
        print(f"selftest: {len(PLANTED) + 1} planted violations, {len(PLANTED) + 1 - len(missed)} refused")
        return 1 if missed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    sub = ap.add_subparsers(dest="cmd", required=True)
    fp = sub.add_parser("functions")
    fp.add_argument("--over", type=int, default=60)
    fp.add_argument("--top", type=int, default=10)
    fp.add_argument("--check", action="store_true", help="exit 1 when a function is over --over lines")
    sub.add_parser("layers")
    sub.add_parser("selftest")
    sub.add_parser("hygiene")
    sub.add_parser("format")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    if a.cmd == "functions":
        fs = sorted(functions(root), reverse=True)
        over = [x for x in fs if x[0] > a.over]
        total = sum(x[0] for x in fs)
        print(f"functions: {len(fs)}, lines in them: {total}, mean {total / max(1, len(fs)):.1f}, "
              f"over {a.over} lines: {len(over)}")
        for n, f, name in fs[:a.top]:
            print(f"  {n:4d}  {name}  ({f})")
        return 1 if a.check and over else 0
    if a.cmd == "selftest":
        return selftest(root)
    if a.cmd == "format":
        files, bad, planted = check_format(root)
        print(f"format: {len(files)} C files, {len(bad)} that clang-format would change; "
              f"a misformatted file {'refused' if planted else 'NOT refused'}")
        for b in bad:
            print("  " + b)
        return 1 if bad or not planted else 0
    if a.cmd == "hygiene":
        files, bad = check_hygiene(root)
        print(f"hygiene: {len(files)} source and script files, {len(bad)} without their licence line or "
              f"opening comment")
        for b in bad:
            print("  " + b)
        return 1 if bad or hygiene_selftest(root) else 0
    files, edges, bad = check_layers(root)
    print(f"layers: {len(files)} files in {len(LAYERS)} layers, {edges} includes of the tree's own headers, "
          f"{len(cmake_files(root))} build files, {len(bad)} forbidden")
    for b in bad:
        print("  " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
