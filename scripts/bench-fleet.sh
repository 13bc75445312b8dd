#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: one Mender artifact to 1, 4 and 16 simulated MCUs behind one gateway (`mota sim --baud 115200`),
# installed and committed by Debian's mender client (standalone mode, as root) through `mota mender-module`:
# the wall time of install+commit and its ratio to one MCU's push in the same run. Method:
# tests/bench/bench_fleet.py. About 2 min; --quick: 1 and 4 MCUs and 16 KiB of params (CI's short case).
# Build tree: $MOTA_BENCH_BUILD (default build/release).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${MOTA_BENCH_BUILD:-build/release}
scripts/setup.sh test >/dev/null
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build "$build" --target mota >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
/usr/bin/python3 tests/bench/bench_fleet.py "$build"/host_tool/mota "$w/work" "$@"
