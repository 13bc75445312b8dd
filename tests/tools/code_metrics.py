#!/usr/bin/env python3
"""The tree's shape, measured: function lengths and the include graph.

  code_metrics.py [--root DIR] functions [--over N] [--top K]
  code_metrics.py [--root DIR] layers      exit 1 on an include the layers forbid

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
# headers only some folders may include: header -> folders allowed
RESTRICTED = [
    (re.compile(r"^mota/hal\.h$"), ["agent/", "hal/"], "only agent/ and the ports see hal.h"),
    (re.compile(r"^mbedtls/"), ["crypto/", "cmake/"], "only crypto/ sees mbed TLS"),
    (re.compile(r"^cbor\.h$"), ["container/src/cbor.c"], "only the CBOR decoder sees libcbor"),
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


def check_layers(root):
    files = sources(root)
    headers = {}  # "mota/x.h" -> repo path
    for f in files:
        m = re.search(r"/include/(mota/[^/]+\.h)$", f)
        if m:
            headers[m.group(1)] = f
    bad, edges = [], 0
    for f in files:
        if f.startswith("cmake/"):
            continue
        text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
        for kind, name in INCLUDE.findall(text):
            for rx, allowed, why in RESTRICTED:
                if rx.search(name) and not any(f.startswith(a) for a in allowed):
                    bad.append(f"{f}: includes {name}: {why}")
            target = headers.get(name)
            if target is None:
                continue  # a folder's private header or a system one
            edges += 1
            fh, fname = layer_of(f)
            th, tname = layer_of(target)
            if fh is not None and th is not None and th > fh:
                bad.append(f"{f} ({fname}) includes {name} ({tname}): upward")
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    sub = ap.add_subparsers(dest="cmd", required=True)
    fp = sub.add_parser("functions")
    fp.add_argument("--over", type=int, default=60)
    fp.add_argument("--top", type=int, default=10)
    sub.add_parser("layers")
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
    files, edges, bad = check_layers(root)
    print(f"layers: {len(files)} files, {edges} includes of module headers, {len(bad)} forbidden")
    for b in bad:
        print("  " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
