#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: install cost of the loader on QEMU's Cortex-M55 (mps3-an547), in
# instructions (-icount): per GOT entry, per REL entry, per KiB copied and per
# KiB zeroed, fitted over synthetic models installed in XIP and COPY mode.
# Method: tests/qemu/bench_install.py and docs/model-abi.md ("Install cost").
#   scripts/bench-loader.sh [--quick]   --quick: one model of each kind instead of two (CI runs it)
# Build trees: $MOTA_BENCH_BUILD (default build/release), $MOTA_BENCH_CROSS (Cortex-M55, default build/m55).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case "${1:-}" in "" | --quick) ;; *) echo "usage: $0 [--quick]" >&2; exit 2 ;; esac
build=${MOTA_BENCH_BUILD:-build/release} cross=${MOTA_BENCH_CROSS:-build/m55}
scripts/setup.sh test >/dev/null
scripts/fetch-cross-deps.sh
cmake -S . -B "$cross" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m55.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD=an547 >/dev/null
cmake --build "$cross" >/dev/null
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build "$build" --target mota >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
/usr/bin/python3 tests/qemu/bench_install.py "$build"/host_tool/mota \
  "$cross"/tests/qemu/mota_qemu_models.elf "$w" "$@"
