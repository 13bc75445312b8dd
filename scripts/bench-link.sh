#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: goodput of `mota push` over an emulated serial line at 115200 and
# 921600 baud (fraction of the raw 8N1 rate; target >= 0.90), protocol overhead
# per MiB, and the time until an incompatible container is refused; then with
# compressed payloads (pack --compress) the effective goodput (image bytes
# installed per second / raw rate; goal >= 1.6 on yolov8n), and the decoder
# on QEMU's Cortex-M55: instructions per byte (-icount), code and RAM.
#   scripts/bench-link.sh [--quick]   --quick: 921600 baud only, small models, no yolov8n (CI runs it)
# Build trees: $MOTA_BENCH_BUILD (default build/release), $MOTA_BENCH_CROSS (Cortex-M55, default build/m55).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case "${1:-}" in "" | --quick) ;; *) echo "usage: $0 [--quick]" >&2; exit 2 ;; esac
build=${MOTA_BENCH_BUILD:-build/release} cross=${MOTA_BENCH_CROSS:-build/m55}
scripts/setup.sh test >/dev/null
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build "$build" --target mota >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
/usr/bin/python3 tests/link/bench_link.py "$build"/host_tool/mota "$w" "$root/../shared/fixtures" "$@"
scripts/fetch-cross-deps.sh >/dev/null
cmake -S . -B "$cross" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m55.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD=an547 >/dev/null
cmake --build "$cross" >/dev/null
echo
/usr/bin/python3 tests/qemu/bench_decompress.py "$build"/host_tool/mota "$cross"/tests/qemu/mota_qemu_decompress.elf \
  "$w/dz" "$root/../shared/fixtures" "$cross"/boards/an547/mota-an547.map "$@"
