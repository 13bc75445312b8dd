#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmarks of the mota firmware on the QEMU boards (mps3-an547, Cortex-M55;
# mps2-an505, Cortex-M33; mps2-an386, Cortex-M4; mps2-an500, Cortex-M7),
# through mota commands: instruction counts under
# -icount shift=0 (signature check, SHA-256 per byte, install, self-test run,
# last byte to verdict; what ST's licence check costs when trapped: per access,
# and per inference of ST's U585 model on the an505 with and without the CRC
# callbacks, and with the unit granted), stack high-water mark per phase,
# UART goodput against the raw rate QEMU delivers, footprint by module from
# the linker map (and arm-none-eabi-size); then the loader's install cost per GOT and REL entry
# on the M55 (bench-loader.sh's fit). Method: docs/porting.md ("Measured on
# the QEMU boards"); then the decryption of encrypted payloads on the M55: instructions per byte of
# AES-CTR and AES-GCM, of a key unwrap and of an ES-DH key agreement (tests/bench/bench_cipher.py).
#   scripts/bench-board.sh [an547|an505|an386|an500 ...]   the boards to run (default all four)
#   scripts/bench-board.sh --quick [BOARD ...] CI's run: the an547 only, one UART round, fewer head checks
#   scripts/bench-board.sh --footprint         the footprint of the an547's and an505's min and full builds
#                                              and of the an386's and an500's full ones: by module, one
#                                              "footprint VARIANT-BOARD: ..." line each, the head check
# Build trees: $MOTA_BENCH_BUILD (default build/release), $MOTA_BENCH_CROSS (Cortex-M55, default build/m55).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${MOTA_BENCH_BUILD:-build/release} cross=${MOTA_BENCH_CROSS:-build/m55}
scripts/setup.sh test >/dev/null
scripts/fetch-cross-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build "$build" >/dev/null # mota and, through it, every board's firmware ($build/firmware*)
map() { # the firmware map of a board in the release build
  case $1 in an547) echo "$build"/firmware/boards/an547/mota-an547.map ;;
             an505) echo "$build"/firmware-m33/boards/an505/mota-an505.map ;;
             an386) echo "$build"/firmware-m4/boards/an386/mota-an386.map ;;
             an500) echo "$build"/firmware-m7/boards/an500/mota-an500.map ;;
             *) echo "bench-board.sh: no board $1 (an547, an505, an386, an500)" >&2; exit 2 ;; esac
}
if [ "${1:-}" = --footprint ]; then
  # the an547's and an505's min variant (cmake/features.cmake) beside their full one, and the an386's and
  # an500's full builds: by module, then one line each
  # ("footprint VARIANT-BOARD: flash N B, ram N B, stack N B, rx-ring N B", "head check: N instructions")
  specs=()
  for b in an547:cortex-m55 an505:cortex-m33; do
    board=${b%%:*} cpu=${b##*:} dir=$build/firmware-min-${b%%:*}
    cmake -S . -B "$dir" -G Ninja -DCMAKE_TOOLCHAIN_FILE="cmake/arm-none-eabi-$cpu.cmake" \
          -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD="$board" -DMOTA_VARIANT=min >/dev/null
    cmake --build "$dir" >/dev/null
    specs+=("min:$board:$dir/boards/$board/mota-$board.map" "full:$board:$(map "$board")")
  done
  specs+=("full:an386:$(map an386)" "full:an500:$(map an500)") # the Armv7-M boards: their full builds
  w=$(mktemp -d)
  trap 'rm -rf "$w"' EXIT
  /usr/bin/python3 tests/bench/bench_footprint.py "$build"/host_tool/mota "$root" "$w/fp" "${specs[@]}"
  exit 0
fi
quick=() boards=(an547 an505 an386 an500)
if [ "${1:-}" = --quick ]; then quick=(--quick) boards=(an547); shift; fi
if [ $# -gt 0 ]; then boards=("$@"); fi
for board in "${boards[@]}"; do map "$board" >/dev/null; done # an unknown board: said, before any run
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
for board in "${boards[@]}"; do
  /usr/bin/python3 tests/bench/bench_board.py "$build"/host_tool/mota "$root" "$(map "$board")" \
    "$w/$board" "$board" "${quick[@]}"
done
cmake -S . -B "$cross" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m55.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD=an547 >/dev/null
cmake --build "$cross" >/dev/null
echo "Loader install cost on the Cortex-M55 (tests/qemu/bench_install.py):"
/usr/bin/python3 tests/qemu/bench_install.py "$build"/host_tool/mota \
  "$cross"/tests/qemu/mota_qemu_models.elf "$w/install" "${quick[@]}" | sed 's/^/  /'
echo "Decryption on the Cortex-M55 (tests/bench/bench_cipher.py, the cipher test firmware):"
/usr/bin/python3 tests/bench/bench_cipher.py "$cross"/tests/qemu/mota_qemu_cipher.elf
