#!/usr/bin/env python3
"""Each format's numbers are defined once, in a header's X-macro tables
(X(NAME, value, "cddl-name")); the CDDL in docs/ must give every one of them
with the same number and name, and no table may use a number twice.

  check_keys.py HEADER DOC [HEADER DOC ...]

A CDDL line names a key as `value => ...  ; cddl-name...` (map members) or
`(value, ...) ; cddl-name` (SUIT commands), inside a ```cddl block.
"""
import re
import sys

TABLE = re.compile(r"#define\s+(MOTA_\w+)\(X\)((?:[^\n]*\\\n)+[^\n]*)")
ENTRY = re.compile(r'X\(\s*(\w+)\s*,\s*(-?\d+)\s*,\s*"([^"]+)"\s*\)')


def tables(header):
    text = open(header, encoding="utf-8").read()
    out = {}
    for name, body in TABLE.findall(text):
        entries = [(n, int(v), c) for n, v, c in ENTRY.findall(body)]
        if entries:
            out[name] = entries
    return out


def cddl_lines(doc):
    text = open(doc, encoding="utf-8").read()
    return [line for block in re.findall(r"```cddl\n(.*?)```", text, re.S) for line in block.splitlines()]


def documented(lines, value, cddl):
    key = re.compile(r"(?:^|[\s{\[(?])%d\s*(?:=>|,)" % value)
    name = re.compile(r";\s*%s(?![\w-])" % re.escape(cddl))
    return any(key.search(line.split(";")[0]) and name.search(line) for line in lines)


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__)
        return 2
    bad, checked = [], 0
    for header, doc in zip(argv[0::2], argv[1::2]):
        lines = cddl_lines(doc)
        found = tables(header)
        if not found:
            bad.append(f"{header}: no X-macro key tables")
        for table, entries in found.items():
            values = [v for _, v, _ in entries]
            dups = sorted({v for v in values if values.count(v) > 1})
            if dups:
                bad.append(f"{header}: {table} uses {dups} twice")
            for name, value, cddl in entries:
                checked += 1
                if not documented(lines, value, cddl):
                    bad.append(f"{doc}: no CDDL line `{value} => ... ; {cddl}` ({table} {name})")
    for b in bad:
        print("FAIL " + b)
    print(f"{checked} keys checked against the CDDL, {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
