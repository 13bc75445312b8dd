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
#   scripts/bench-board.sh --footprint         the footprint of every board's full build, of the min build
#                                              of those flagged min (and its LTO build where flagged
#                                              min-lto): by module, one "footprint VARIANT-BOARD: ..."
#                                              line each, the head check where the board has a QEMU machine
#   scripts/bench-board.sh --footprint --features [BOARD]
#                                              each MOTA_FEATURE_* option of cmake/features.cmake alone on
#                                              BOARD (default the harness board): the min build with it on, the full
#                                              build with it off, "feature NAME: min +N B flash +N B ram;
#                                              full -N B flash -N B ram" (ram without the RX ring and the
#                                              stack's reservation); two trees, reconfigured per feature
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
  fw() { echo "$build/firmware-$2/boards/$1/mota-$1.map"; } # the map of BOARD's tree firmware-NAME
  cross() { # BOARD NAME -D...: configure and build the tree $build/firmware-NAME's firmware (none without
    # ST's sources on an STM32 board: fw's map is then not there)
    local board=$1 dir=$build/firmware-$2
    shift 2
    cmake --no-warn-unused-cli -S . -B "$dir" -G Ninja \
          -DCMAKE_TOOLCHAIN_FILE="cmake/arm-none-eabi-$(board_field "$board" 3).cmake" \
          -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD="$board" "$@" >/dev/null
    if cmake --build "$dir" --target help | grep -q "^mota-$board\.elf:"; then
      cmake --build "$dir" --target "mota-$board.elf" >/dev/null # the firmware alone, not the tree's tests
    fi
  }
  if [ "${2:-}" = --features ]; then
    # each feature of cmake/features.cmake alone: the min build with it on, the full build with it off; the
    # two trees reused, every feature back to its variant's default (-U) before the one -D
    board=${3:-$harness}
    map "$board" >/dev/null
    mapfile -t features < <(sed -n 's/^option(MOTA_FEATURE_\([A-Za-z0-9_]*\) .*/\1/p' cmake/features.cmake)
    # those on in the min build too (a literal ON): measured there by turning them off
    mapfile -t in_min < <(sed -n 's/^option(MOTA_FEATURE_\([A-Za-z0-9_]*\) .* ON)$/\1/p' cmake/features.cmake)
    sizes() { # BOARD VARIANT [-D...]: "flash ram" of that build (ram without the RX ring and stack reservation)
      local variant=$2 b=$1
      shift 2
      cross "$b" "features-$variant-$b" -DMOTA_VARIANT="$variant" -U 'MOTA_FEATURE_*' "$@"
      if [ ! -f "$(fw "$b" "features-$variant-$b")" ]; then
        echo "bench-board.sh: no $b firmware (ST's sources not found, MOTA_STM32_SDK)" >&2; exit 1
      fi
      /usr/bin/python3 tests/bench/bench_footprint.py --sizes "$(fw "$b" "features-$variant-$b")"
    }
    s=$(sizes "$board" min)
    read -r min_flash min_ram <<<"$s"
    s=$(sizes "$board" full)
    read -r full_flash full_ram <<<"$s"
    echo "features on the $board: min build flash $min_flash B, ram $min_ram B; full build flash $full_flash B," \
         "ram $full_ram B"
    echo "  (each feature alone: the min build with it on, or off where min has it, the full build with it off;" \
         "ram without the RX ring and the stack)"
    for f in "${features[@]}"; do
      want=ON
      [[ " ${in_min[*]} " == *" $f "* ]] && want=OFF
      s=$(sizes "$board" min "-DMOTA_FEATURE_$f=$want")
      read -r mf mr <<<"$s"
      s=$(sizes "$board" full "-DMOTA_FEATURE_$f=OFF")
      read -r ff fr <<<"$s"
      printf 'feature %s: min %+d B flash %+d B ram; full %+d B flash %+d B ram\n' "$f" \
             $((mf - min_flash)) $((mr - min_ram)) $((ff - full_flash)) $((fr - full_ram))
    done
    exit 0
  fi
  # each board's min variant (cmake/features.cmake), that optimised whole at link time (-DMOTA_LTO=ON) on
  # the boards flagged min-lto, then its full build: by module, then one line each ("footprint
  # VARIANT-BOARD: flash N B, ram N B, stack N B, rx-ring N B", "head check: N instructions"); an STM32
  # board without ST's sources has no firmware (SKIPPED)
  specs=()
  for board in $(board_names); do
    flags=",$(board_field "$board" 5)," variants=()
    [[ $flags == *,min,* ]] && variants+=(min)
    [[ $flags == *,min-lto,* ]] && variants+=(min-lto)
    for v in "${variants[@]}" full; do
      case $v in
        min) cross "$board" "min-$board" -DMOTA_VARIANT=min; m=$(fw "$board" "min-$board") ;;
        min-lto) cross "$board" "min-lto-$board" -DMOTA_VARIANT=min -DMOTA_LTO=ON; m=$(fw "$board" "min-lto-$board") ;;
        full) m=$(map "$board") ;; # the release build's
      esac
      if [ ! -f "$m" ]; then
        echo "footprint $v-$board: SKIPPED (no firmware: $m)"
        continue
      fi
      specs+=("$v:$board:$m:$(board_field "$board" 4)")
    done
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
