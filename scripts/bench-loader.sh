#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: install cost of the loader on QEMU's Cortex-M55 (the harness board of ports/boards.txt), in
# instructions (-icount): per GOT entry, per REL entry, per KiB copied and per
# KiB zeroed, fitted over synthetic models installed in XIP and COPY mode.
# Method: tests/qemu/bench_install.py and docs/model-abi.md ("Install cost").
#   scripts/bench-loader.sh [--quick]   --quick: one model of each kind instead of two (CI runs it)
# Build trees: $MOTA_BENCH_BUILD (default build/release), $MOTA_BENCH_CROSS (Cortex-M55, default build/cross-BOARD: the harness board of ports/boards.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case "${1:-}" in "" | --quick) ;; *) echo "usage: $0 [--quick]" >&2; exit 2 ;; esac
source scripts/boards.sh
harness=$(board_harness) # the Cortex-M55 board of ports/boards.txt with the QEMU harness
build=${MOTA_BENCH_BUILD:-build/release} cross=${MOTA_BENCH_CROSS:-build/cross-$harness}
scripts/setup.sh test >/dev/null
scripts/fetch-cross-deps.sh
cmake -S . -B "$cross" -G Ninja -DCMAKE_TOOLCHAIN_FILE="cmake/arm-none-eabi-$(board_field "$harness" 3).cmake" \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD="$harness" >/dev/null
cmake --build "$cross" >/dev/null
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build "$build" --target mota >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
/usr/bin/python3 tests/qemu/bench_install.py "$build"/host_tool/mota \
  "$cross"/tests/qemu/mota_qemu_models.elf "$w" "$@"
