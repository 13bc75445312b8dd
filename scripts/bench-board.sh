#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmarks of the mota firmware on the QEMU boards of ports/boards.txt
# (each with a QEMU machine),
# through mota commands: instruction counts under
# -icount shift=0 (signature check, SHA-256 per byte, install, self-test run,
# last byte to verdict; what ST's licence check costs when trapped: per access,
# and per inference of ST's U585 model on the Cortex-M33 board with and without the CRC
# callbacks, and with the unit granted), stack high-water mark per phase,
# UART goodput against the raw rate QEMU delivers, footprint by module from
# the linker map (and arm-none-eabi-size); then the loader's install cost per GOT and REL entry
# on the M55 (bench-loader.sh's fit). Method: docs/porting.md ("Measured on
# the QEMU boards"); then the decryption of encrypted payloads on the M55: instructions per byte of
# AES-CTR and AES-GCM, of a key unwrap and of an ES-DH key agreement (tests/bench/bench_cipher.py).
#   scripts/bench-board.sh [BOARD ...]         the boards to run (default every board with a QEMU machine)
#   scripts/bench-board.sh --quick [BOARD ...] CI's run: the harness board only, one UART round, fewer head checks
#   scripts/bench-board.sh --footprint         the footprint of every board's full build, and of the min
#                                              build of those flagged min: by module, one
#                                              "footprint VARIANT-BOARD: ..." line each, the head check
# Build trees: $MOTA_BENCH_BUILD (default build/release), $MOTA_BENCH_CROSS (Cortex-M55, default
# build/cross-BOARD: the harness board of ports/boards.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/boards.sh
harness=$(board_harness)
build=${MOTA_BENCH_BUILD:-build/release} cross=${MOTA_BENCH_CROSS:-build/cross-$harness}
scripts/setup.sh test >/dev/null
scripts/fetch-cross-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build "$build" >/dev/null # mota and, through it, every board's firmware ($build/firmware*)
map() { # the firmware map of a board in the release build
  if [ -z "$(board_field "$1" 1)" ]; then
    echo "bench-board.sh: no board $1 ($(board_names | paste -sd' '))" >&2; exit 2
  fi
  echo "$build/firmware-$1/boards/$1/mota-$1.map"
}
if [ "${1:-}" = --footprint ]; then
  # the min variant (cmake/features.cmake) of the boards flagged min beside their full build, then the
  # others' full builds: by module, then one line each
  # ("footprint VARIANT-BOARD: flash N B, ram N B, stack N B, rx-ring N B", "head check: N instructions")
  specs=()
  for board in $(board_flagged min); do
    dir=$build/firmware-min-$board
    cmake -S . -B "$dir" -G Ninja -DCMAKE_TOOLCHAIN_FILE="cmake/arm-none-eabi-$(board_field "$board" 3).cmake" \
          -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD="$board" -DMOTA_VARIANT=min >/dev/null
    cmake --build "$dir" >/dev/null
    lto=$build/firmware-min-lto-$board # the same, optimised whole at link time (-DMOTA_LTO=ON)
    cmake -S . -B "$lto" -G Ninja -DCMAKE_TOOLCHAIN_FILE="cmake/arm-none-eabi-$(board_field "$board" 3).cmake" \
          -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD="$board" -DMOTA_VARIANT=min -DMOTA_LTO=ON >/dev/null
    cmake --build "$lto" >/dev/null
    specs+=("min:$board:$dir/boards/$board/mota-$board.map:$(board_field "$board" 4)"
            "min-lto:$board:$lto/boards/$board/mota-$board.map:$(board_field "$board" 4)"
            "full:$board:$(map "$board"):$(board_field "$board" 4)")
  done
  # every other board's full build; an STM32 board without ST's sources has none (SKIPPED)
  for board in $(board_names); do
    [[ " $(board_flagged min | paste -sd' ') " == *" $board "* ]] && continue
    if [ ! -f "$(map "$board")" ]; then
      echo "footprint full-$board: SKIPPED (no firmware: $(map "$board"))"
      continue
    fi
    specs+=("full:$board:$(map "$board"):$(board_field "$board" 4)")
  done
  w=$(mktemp -d)
  trap 'rm -rf "$w"' EXIT
  /usr/bin/python3 tests/bench/bench_footprint.py "$build"/host_tool/mota "$root" "$w/fp" "${specs[@]}"
  exit 0
fi
quick=() boards=($(board_rows | awk '$4 != "-" {print $1}'))
if [ "${1:-}" = --quick ]; then quick=(--quick) boards=("$harness"); shift; fi
if [ $# -gt 0 ]; then boards=("$@"); fi
for board in "${boards[@]}"; do map "$board" >/dev/null; done # an unknown board: said, before any run
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
for board in "${boards[@]}"; do
  /usr/bin/python3 tests/bench/bench_board.py "$build"/host_tool/mota "$root" "$(map "$board")" \
    "$w/$board" "$board" "${quick[@]}"
done
cmake -S . -B "$cross" -G Ninja -DCMAKE_TOOLCHAIN_FILE="cmake/arm-none-eabi-$(board_field "$harness" 3).cmake" \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD="$harness" >/dev/null
cmake --build "$cross" >/dev/null
echo "Loader install cost on the Cortex-M55 (tests/qemu/bench_install.py):"
/usr/bin/python3 tests/qemu/bench_install.py "$build"/host_tool/mota \
  "$cross"/tests/qemu/mota_qemu_models.elf "$w/install" "${quick[@]}" | sed 's/^/  /'
echo "Decryption on the Cortex-M55 (tests/bench/bench_cipher.py, the cipher test firmware):"
/usr/bin/python3 tests/bench/bench_cipher.py "$cross"/tests/qemu/mota_qemu_cipher.elf
