#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Each format's numbers are defined once, in a header's X-macro tables:

    #define MOTA_..._KEYS(X) /* cddl: RULE */ \\
        X(NAME, value, "cddl-name") ...

and the CDDL in docs/ gives exactly those: every key line of the rule RULE
(`value => ...  ; cddl-name...` in a map, `RULE //= (value, ...) ; cddl-name`
for a choice) must be a table entry of that rule with the same number and
name, and every entry must be there. No table may use a number twice; a value
that is not a plain integer is an error, never skipped.

  check_keys.py HEADER DOC [HEADER DOC ...]
  check_keys.py --selftest HEADER DOC    the check refuses a header or doc spoiled in each way it guards
"""
import re
import sys

TABLE = re.compile(r"#define\s+(MOTA_\w+)\(X\)\s*/\*\s*cddl:\s*(\w+)\s*\*/\s*\\\n((?:[^\n]*\\\n)*[^\n]*)")
ENTRY = re.compile(r"X\(([^)]*)\)")
KEY_LINE = re.compile(r"(?:^|[\s{\[?])(-?\d+)\s*=>|//=\s*\(\s*(-?\d+)\s*,")
NAME = re.compile(r";\s*([a-z][a-z0-9-]*)")


def tables(header, bad):
    """{rule: [(table, NAME, value, cddl-name)]}"""
    text = open(header, encoding="utf-8").read()
    rules = {}
    for table, rule, body in TABLE.findall(text):
        for raw in ENTRY.findall(body):
            parts = [p.strip() for p in raw.split(",")]
            if len(parts) != 3 or not re.fullmatch(r'"[a-z][a-z0-9-]*"', parts[2]):
                bad.append(f"{header}: {table}: entry X({raw}) is not X(NAME, integer, \"cddl-name\")")
                continue
            value = parts[1].strip("()")
            if not re.fullmatch(r"-?\d+", value):
                bad.append(f"{header}: {table}: {parts[0]} = {parts[1]}: write the key as a plain integer")
                continue
            rules.setdefault(rule, []).append((table, parts[0], int(value), parts[2].strip('"')))
    if not rules:
        bad.append(f"{header}: no X-macro key tables with a /* cddl: RULE */ note")
    return rules


def rule_lines(doc_lines, rule):
    """The lines of a CDDL rule: a map `rule = {` up to its closing brace, or the choices `rule //= ...`."""
    choice = [l for l in doc_lines if l.lstrip().startswith(rule + " //=")]
    if choice:
        return choice
    for i, line in enumerate(doc_lines):
        if re.match(r"\s*%s\s*=\s*\{" % re.escape(rule), line):
            depth, out = 0, []
            for l in doc_lines[i:]:
                code = l.split(";")[0]
                out.append(l)
                depth += code.count("{") - code.count("}")
                if depth <= 0:
                    return out
            return out
    return None


def documented(line):
    m = KEY_LINE.search(line.split(";")[0])
    n = NAME.search(line)
    if not m:
        return None
    return int(m.group(1) or m.group(2)), (n.group(1) if n else None)


def selftest(header, doc):
    """Spoil a copy of the pair in each way the check guards against; each must be refused."""
    import os
    import tempfile
    h_text, d_text = open(header, encoding="utf-8").read(), open(doc, encoding="utf-8").read()
    entry = re.search(r'X\((\w+), (-?\d+), "([a-z0-9-]+)"\)', h_text)
    name, value, cddl = entry.group(1), entry.group(2), entry.group(3)
    other = str(int(value) + 100)
    spoils = {
        "a key written in hex": (h_text.replace(entry.group(0), 'X(%s, 0x%x, "%s")' % (name, int(value), cddl)), d_text),
        "a renumbered key": (h_text.replace(entry.group(0), 'X(%s, %s, "%s")' % (name, other, cddl)), d_text),
        "a renamed key": (h_text.replace(entry.group(0), 'X(%s, %s, "%s-x")' % (name, value, cddl)), d_text),
        "a number used twice": (h_text.replace(entry.group(0), entry.group(0) + ' X(%s_TWICE, %s, "twice")' % (name, value)), d_text),
        "a CDDL key the header lacks": (h_text, d_text.replace("; " + cddl, "; %s\n  %s => uint, ; not-in-the-header" % (cddl, other), 1)),
    }
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        for what, (h, d) in spoils.items():
            hp, dp = os.path.join(tmp, "h.h"), os.path.join(tmp, "d.md")
            open(hp, "w").write(h)
            open(dp, "w").write(d)
            import io
            import contextlib
            with contextlib.redirect_stdout(io.StringIO()):
                rc = main([hp, dp])
            if rc == 0:
                missed.append(what)
    for m in missed:
        print("FAIL not refused: " + m)
    print(f"selftest: {len(spoils)} spoiled copies, {len(spoils) - len(missed)} refused")
    return 1 if missed else 0


def main(argv):
    if len(argv) == 3 and argv[0] == "--selftest":
        return selftest(argv[1], argv[2])
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__)
        return 2
    bad, checked = [], 0
    for header, doc in zip(argv[0::2], argv[1::2]):
        text = open(doc, encoding="utf-8").read()
        doc_lines = [l for block in re.findall(r"```cddl\n(.*?)```", text, re.S) for l in block.splitlines()]
        for rule, entries in tables(header, bad).items():
            for table in {e[0] for e in entries}:
                values = [e[2] for e in entries if e[0] == table]
                dups = sorted({v for v in values if values.count(v) > 1})
                if dups:
                    bad.append(f"{header}: {table} uses {dups} twice")
            lines = rule_lines(doc_lines, rule)
            if lines is None:
                bad.append(f"{doc}: no CDDL rule {rule} (named by {header})")
                continue
            want = {(e[2], e[3]) for e in entries}
            have = {d for d in map(documented, lines) if d is not None}
            checked += len(entries)
            for v, n in sorted(want - have):
                bad.append(f"{doc}: rule {rule} lacks `{v} => ... ; {n}` ({header})")
            for v, n in sorted(have - want):
                bad.append(f"{doc}: rule {rule} has `{v} => ... ; {n}`, which {header} does not define")
    for b in bad:
        print("FAIL " + b)
    print(f"{checked} keys checked against their CDDL rules, {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
