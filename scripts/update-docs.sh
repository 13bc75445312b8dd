#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerate the generated sections of docs/ (the tests check they are current):
#   docs/reason-codes.md      <- mota errors --markdown
#   docs/container-format.md  <- tests/tools/walkthrough.py
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release --target mota >/dev/null
mota=$root/build/release/host_tool/mota
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
"$mota" errors --markdown >"$w/errors.md"
/usr/bin/python3 tests/tools/walkthrough.py "$mota" "$w/wt" >"$w/walk.txt"
{ echo '```'; cat "$w/walk.txt"; echo '```'; } >"$w/walk.md"
/usr/bin/python3 - "$w" <<'PY'
import sys
w = sys.argv[1]
def splice(path, name, body):
    s = open(path).read()
    b, e = "<!-- BEGIN %s -->\n" % name, "<!-- END %s -->" % name
    head, rest = s.split(b, 1)
    _, tail = rest.split(e, 1)
    open(path, "w").write(head + b + body + e + tail)
splice("docs/reason-codes.md", "mota errors --markdown", open(w + "/errors.md").read())
splice("docs/container-format.md", "walkthrough", open(w + "/walk.md").read())
PY
echo "docs updated"
