#!/usr/bin/env bash
# Benchmark: goodput of `mota push` over an emulated serial line at 115200 and
# 921600 baud (fraction of the raw 8N1 rate; target >= 0.90), protocol overhead
# per MiB, and the time until an incompatible container is refused.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh test >/dev/null
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release --target mota >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
/usr/bin/python3 tests/link/bench_link.py build/release/host_tool/mota "$w"
