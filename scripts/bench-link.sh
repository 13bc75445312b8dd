#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: goodput of `mota push` over an emulated serial line at 115200 and
# 921600 baud (fraction of the raw 8N1 rate; target >= 0.90), protocol overhead
# per MiB, and the time until an incompatible container is refused; then with
# compressed payloads (pack --compress) the effective goodput (image bytes
# installed per second / raw rate; goal >= 1.6 on yolov8n), and the decoder
# on QEMU's Cortex-M55: instructions per byte (-icount), code and RAM.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh test >/dev/null
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release --target mota >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
/usr/bin/python3 tests/link/bench_link.py build/release/host_tool/mota "$w" "$root/../shared/fixtures"
scripts/fetch-cross-deps.sh >/dev/null
cmake -S . -B build/m55 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m55.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD=an547 >/dev/null
cmake --build build/m55 >/dev/null
echo
/usr/bin/python3 tests/qemu/bench_decompress.py build/release/host_tool/mota build/m55/tests/qemu/mota_qemu_decompress.elf "$w/dz" \
  "$root/../shared/fixtures" build/m55/boards/an547/mota-an547.map
