#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build the mota firmware of STM32 boards for their programmers:
#   bash scripts/build-firmware.sh [BOARD...]    (no BOARD: every board of the stm32 family, ports/boards.txt)
# For each: the cross tree build/cross-BOARD (the same as scripts/test.sh's), then build/fw/BOARD/mota.elf,
# mota.bin (the bytes from the image's first address) and mota.hex (Intel HEX), and one line:
#   firmware BOARD: flash N B, ram N B
# flash: code and initialised data in flash; ram: everything the firmware holds in RAM (data, bss, the
# guard's stack and I/O, the main stack), not the models' exec RAM. ST's sources come from MOTA_STM32_SDK
# (default ../shared/stm32, or an STM32Cube package); without them each board says SKIPPED and what is
# missing, and the script succeeds. docs/porting.md says how to flash each board.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. scripts/boards.sh
scripts/setup.sh build
scripts/fetch-cross-deps.sh >/dev/null

boards=("$@")
if [[ ${#boards[@]} -eq 0 ]]; then
  mapfile -t boards < <(board_rows | awk '$2 == "stm32" {print $1}')
fi
sdk=${MOTA_STM32_SDK:-$(cd .. && pwd)/shared/stm32}
for board in "${boards[@]}"; do
  cpu=$(board_field "$board" 3)
  if [[ -z "$cpu" ]]; then
    echo "build-firmware: $board is not a board of ports/boards.txt ($(board_names | tr '\n' ' '))" >&2
    exit 2
  fi
  tree=build/cross-$board
  log=$(mktemp)
  if ! cmake -S . -B "$tree" -G Ninja -DCMAKE_TOOLCHAIN_FILE="cmake/arm-none-eabi-$cpu.cmake" \
       -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD="$board" -DMOTA_STM32_SDK="$sdk" >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
  fi
  if grep -q "SKIPPED" "$log"; then
    echo "firmware $board: SKIPPED: $(grep -o "ST's sources are not in.*" "$log" | head -1)"
    rm -f "$log"
    continue
  fi
  rm -f "$log"
  cmake --build "$tree" >/dev/null
  dir=$tree/boards/$board
  out=build/fw/$board
  mkdir -p "$out"
  cp "$dir/mota-$board.elf" "$out/mota.elf"
  # the image's load addresses, not the RAM ones: what a programmer writes
  # (an F401 image spans the journal's sectors 1 and 2: its .bin would rewrite them, erased; program its .hex)
  arm-none-eabi-objcopy -O binary --gap-fill 0xFF "$out/mota.elf" "$out/mota.bin"
  arm-none-eabi-objcopy -O ihex "$out/mota.elf" "$out/mota.hex"
  read -r text data bss _ < <(arm-none-eabi-size "$out/mota.elf" | tail -1)
  echo "firmware $board: flash $((text + data)) B, ram $((data + bss)) B"
done
