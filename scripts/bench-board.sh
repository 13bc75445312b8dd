#!/usr/bin/env bash
# Benchmarks of the mota firmware on QEMU mps3-an547 (Cortex-M55), through
# mota commands: instruction counts under -icount shift=0 (signature check,
# SHA-256 per byte, install, self-test run, last byte to verdict), stack
# high-water mark per phase, UART goodput against the raw rate QEMU delivers,
# footprint by module from the linker map; then the loader's install cost per
# GOT and REL entry (bench-loader.sh's fit). Method: docs/porting.md
# ("Measured on the QEMU board").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh test >/dev/null
scripts/fetch-cross-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build build/release >/dev/null # mota and, through it, the firmware (build/release/firmware)
cmake -S . -B build/m55 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m55.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel >/dev/null
cmake --build build/m55 >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
/usr/bin/python3 tests/bench/bench_board.py build/release/host_tool/mota "$root" \
  build/release/firmware/hal/an547/mota-an547.map "$w/board"
echo "Loader install cost on the same CPU (tests/qemu/bench_install.py):"
/usr/bin/python3 tests/qemu/bench_install.py build/release/host_tool/mota \
  build/m55/tests/qemu/mota_qemu_models.elf "$w/install" | sed 's/^/  /'
