#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: updates as each profile's flash takes them. `mota sim --profile P --flash-timing typ|max
# --baud 115200|921600` and `mota push` with default options, for ST's yolov8n (on the N6 board's profile) and a
# U5-sized model (every profile): the update's wall time from the first byte to the verdict, the
# physical bound (max(wire, flash busy), or their sum on a single-bank part), their ratio, the bytes
# sent twice and the bytes the simulated UART lost. Method: tests/bench/bench_flash.py. About 25 min;
# --quick: the two short cases CI runs (a U5-sized model at max flash timing, 921600 baud, on a dual-bank and a
# single-bank part). Build tree: $MOTA_BENCH_BUILD (default build/release).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${MOTA_BENCH_BUILD:-build/release}
scripts/setup.sh test >/dev/null
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build "$build" --target mota >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
/usr/bin/python3 tests/bench/bench_flash.py "$build"/host_tool/mota "$w/work" "$root/../shared/fixtures" "$@"
