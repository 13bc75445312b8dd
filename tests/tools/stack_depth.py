#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Worst-case stack depth from GCC's -fcallgraph-info=su files (.ci).

usage: stack_depth.py BUILD_DIR ROOT [ROOT ...]
Joins every .ci file under BUILD_DIR into one call graph, then prints, for
each root function, the deepest path (sum of static frames). Indirect calls
(the HAL callbacks, the self-test callback) and libc are not in the graph:
their own stack comes on top. Recursion, if any, is reported and cut.
"""
import os
import re
import sys

build, roots = sys.argv[1], sys.argv[2:]
node_re = re.compile(r'node: \{ title: "([^"]+)" label: "([^"\\]+)\\n[^"]*?(?:\\n(\d+) bytes \((\w+)\))?"')
edge_re = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
frame, edges, names = {}, {}, {}
for dirpath, _, files in os.walk(build):
    for f in files:
        if not f.endswith(".ci"):
            continue
        for line in open(os.path.join(dirpath, f), errors="replace"):
            m = node_re.search(line)
            if m:
                title, name, size = m.group(1), m.group(2), m.group(3)
                if size is not None:
                    frame[title] = int(size)
                    names.setdefault(name, set()).add(title)
                continue
            m = edge_re.search(line)
            if m:
                edges.setdefault(m.group(1), set()).add(m.group(2))


def resolve(t):
    """An external name in one file is the defining node in another."""
    if t in frame:
        return t
    cands = names.get(t, set())
    return sorted(cands)[0] if cands else None


memo = {}


def depth(t, stack=()):
    if t in stack:
        return 0, [t + " (recursion)"]
    if t in memo:
        return memo[t]
    best, path = 0, []
    for callee in edges.get(t, ()):
        r = resolve(callee)
        if r is None:
            continue
        d, p = depth(r, stack + (t,))
        if d > best:
            best, path = d, p
    res = (frame.get(t, 0) + best, [t] + path)
    memo[t] = res
    return res


for root in roots:
    r = resolve(root)
    if r is None:
        print("%s: not found" % root)
        continue
    d, path = depth(r)
    short = [p.split(":")[-1] for p in path]
    print("%-24s %5d bytes  via %s" % (root, d, " > ".join(short)))
