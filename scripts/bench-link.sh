#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: goodput of `mota push` over an emulated serial line at 115200 and
# 921600 baud (fraction of the raw 8N1 rate; target >= 0.90), protocol overhead
# per MiB, and the time until an incompatible container is refused; then with
# compressed payloads (pack --compress) the effective goodput (image bytes
# installed per second / raw rate; goal >= 1.6 on yolov8n), and the decoder
# on QEMU's Cortex-M55: instructions per byte (-icount), code and RAM.
#   scripts/bench-link.sh [--quick]   --quick: 921600 baud only, small models, no yolov8n (CI runs it)
# Build trees: $MOTA_BENCH_BUILD (default build/release), $MOTA_BENCH_CROSS (Cortex-M55, default build/cross-BOARD: the harness board of ports/boards.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case "${1:-}" in "" | --quick) ;; *) echo "usage: $0 [--quick]" >&2; exit 2 ;; esac
source scripts/boards.sh
harness=$(board_harness) # the Cortex-M55 board of ports/boards.txt with the QEMU harness
build=${MOTA_BENCH_BUILD:-build/release} cross=${MOTA_BENCH_CROSS:-build/cross-$harness}
scripts/setup.sh test >/dev/null
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build "$build" --target mota >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
/usr/bin/python3 tests/link/bench_link.py "$build"/host_tool/mota "$w" "$root/../shared/fixtures" "$@"
scripts/fetch-cross-deps.sh >/dev/null
cmake -S . -B "$cross" -G Ninja -DCMAKE_TOOLCHAIN_FILE="cmake/arm-none-eabi-$(board_field "$harness" 3).cmake" \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD="$harness" >/dev/null
cmake --build "$cross" >/dev/null
echo
/usr/bin/python3 tests/qemu/bench_decompress.py "$build"/host_tool/mota "$cross"/tests/qemu/mota_qemu_decompress.elf \
  "$w/dz" "$root/../shared/fixtures" "$cross/boards/$harness/mota-$harness.map" "$@"
