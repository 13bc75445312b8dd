#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: install cost of the loader on QEMU's Cortex-M55 (mps3-an547), in
# instructions (-icount): per GOT entry, per REL entry, per KiB copied and per
# KiB zeroed, fitted over synthetic models installed in XIP and COPY mode.
# Method: tests/qemu/bench_install.py and docs/model-abi.md ("Install cost").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh test >/dev/null
scripts/fetch-cross-deps.sh
cmake -S . -B build/m55 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m55.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel >/dev/null
cmake --build build/m55 >/dev/null
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build build/release --target mota >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
/usr/bin/python3 tests/qemu/bench_install.py build/release/host_tool/mota \
  build/m55/tests/qemu/mota_qemu_models.elf "$w"
