#!/usr/bin/env python3
"""The tree's shape, measured: function lengths and the include graph.

  code_metrics.py [--root DIR] functions [--over N] [--top K]
  code_metrics.py [--root DIR] layers      exit 1 on an include the layers forbid
  code_metrics.py [--root DIR] selftest    the layer check refuses includes planted in a copy of the tree

The layers (docs/architecture.md), lowest first. A file may include headers of
its own layer or a lower one, never one above; on top of that, only agent/ and
the ports see hal.h, only crypto/ sees mbed TLS, only container/ sees libcbor.
"""
import argparse
import os
import re
import subprocess
import sys

# (layer name, path prefixes it owns); index = height
LAYERS = [
    ("base", ["hal/include/mota/err.h", "hal/include/mota/crc32.h", "hal/include/mota/le.h", "hal/src/"]),
    ("crypto", ["crypto/"]),
    ("loader", ["loader/"]),
    ("container", ["container/"]),
    ("hal interfaces", ["hal/include/"]),
    ("proto", ["agent/proto/"]),
    ("agent", ["agent/"]),
    ("ports", ["hal/posix/", "hal/mps/", "hal/an547/", "hal/an505/"]),
    ("host_tool", ["host_tool/"]),
]
# what only some folders may include: (pattern on the resolved path or the <system> name, folders allowed, why)
RESTRICTED = [
    (re.compile(r"^hal/include/mota/hal\.h$"), ["agent/", "hal/"], "only agent/ and the ports see hal.h"),
    (re.compile(r"^<(mbedtls|psa)/"), ["crypto/", "cmake/"], "only crypto/ sees mbed TLS"),
    (re.compile(r"^<openssl/"), ["crypto/src/sha256_openssl.c"], "only crypto/'s host SHA-256 sees OpenSSL"),
    (re.compile(r"^<cbor[./]"), ["container/src/cbor.c"], "only the CBOR decoder sees libcbor"),
    (re.compile(r"^<zlib\.h>$"), ["hal/src/crc32.c", "host_tool/src/compress.c", "tests/unit/encoders.h"],
     "only the host's CRC-32 and deflate encoder (and the tests' encoders) see zlib"),
    (re.compile(r"^<lz4"), ["host_tool/src/compress.c", "tests/unit/encoders.h"],
     "only the host's encoder (and the decoder's test) sees liblz4: devices decode with container/src/lz4.c"),
]
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def sources(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file but the builds
        out = [os.path.relpath(os.path.join(d, f), root) for d, ds, fs in os.walk(root)
               for f in fs if not os.path.relpath(d, root).startswith(("build", ".git"))]
    return sorted(p for p in out if p.endswith((".c", ".h")) and not p.startswith(("tests/", ".deps/"))
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
    return files, edges, bad


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


PLANTED = [  # (file, include line, what the check must say)
    ("agent/src/agent.c", '#include "../../host_tool/src/util.h"', "upward"),
    ("loader/src/nbin.c", '#include "../../agent/src/journal.h"', "upward"),
    ("loader/src/compat.c", '#include "mota/container.h"', "upward"),
    ("container/src/container.c", '#include "../../hal/include/mota/hal.h"', "hal.h"),
    ("loader/src/install.c", "#include <cbor/data.h>", "libcbor"),
    ("container/src/cbor.c", "#include <psa/crypto.h>", "mbed TLS"),
    ("agent/src/link.c", "#include <mbedtls/sha256.h>", "mbed TLS"),
    ("host_tool/src/cmd_pack.c", "#include <openssl/sha.h>", "OpenSSL"),
    ("agent/src/agent.c", "#include <lz4frame.h>", "liblz4"),
    ("loader/src/nbin.c", "#include <zlib.h>", "zlib"),
]


def selftest(root):
    """The check itself: a copy of the tree with forbidden includes planted must be refused for each of them."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="mota-layers-")
    try:
        for f in sources(root):
            os.makedirs(os.path.join(tmp, os.path.dirname(f)), exist_ok=True)
            shutil.copy(os.path.join(root, f), os.path.join(tmp, f))
        _, _, clean = check_layers(tmp)
        missed = [] if not clean else ["the unplanted copy: " + c for c in clean]
        for f, line, what in PLANTED:
            with open(os.path.join(tmp, f), "a", encoding="utf-8") as out:
                out.write("\n" + line + "\n")
            _, _, bad = check_layers(tmp)
            if not any(b.startswith(f) and what in b for b in bad):
                missed.append(f"{f}: {line} not refused ({bad})")
            with open(os.path.join(tmp, f), encoding="utf-8") as src:
                text = src.read()
            with open(os.path.join(tmp, f), "w", encoding="utf-8") as out:
                out.write(text.replace("\n" + line + "\n", ""))
        for m in missed:
            print("FAIL " + m)
        print(f"selftest: {len(PLANTED)} planted includes, {len(PLANTED) - len(missed)} refused")
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
    sub.add_parser("layers")
    sub.add_parser("selftest")
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
        return 0
    if a.cmd == "selftest":
        return selftest(root)
    files, edges, bad = check_layers(root)
    print(f"layers: {len(files)} files, {edges} includes of the tree's own headers, {len(bad)} forbidden")
    for b in bad:
        print("  " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
