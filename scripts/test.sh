#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite on a fresh Debian machine:
#   1. installs the missing Debian packages (scripts/setup.sh),
#   2. cross-builds the device libraries and the firmware of every board of
#      the registry (ports/boards.txt), each for its CPU, against pinned Debian
#      sources (scripts/fetch-cross-deps.sh), the STM32 boards' against ST's
#      (MOTA_STM32_SDK, ../shared/stm32: scripts/build-firmware.sh),
#   3. builds the libFuzzer targets with clang,
#   4. builds everything for the host with ASan+UBSan and runs ctest, which
#      ends with the final count.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh test
scripts/fetch-cross-deps.sh

# cross NAME CPU BOARD [CMAKE ARGS]: a cross tree build/NAME, the device libraries and one board's firmware
cross() {
  cmake -S . -B "build/$1" -G Ninja -DCMAKE_TOOLCHAIN_FILE="cmake/arm-none-eabi-$2.cmake" \
        -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD="$3" "${@:4}" >/dev/null
  cmake --build "build/$1"
}
# every board of the registry (board family cpu qemu flags), and the min variant of those flagged min-tests
trees=()
while read -r board _ cpu _ flags; do
  echo "== cross build: device libraries and the $board firmware for ${cpu/cortex-m/Cortex-M}"
  cross "cross-$board" "$cpu" "$board"
  trees+=("-DMOTA_CROSS_DIR_$board=$root/build/cross-$board")
  if [[ ",$flags," == *,min-tests,* ]]; then
    echo "== cross build: the smallest variant (MOTA_VARIANT=min) of the $board firmware"
    cross "cross-$board-min" "$cpu" "$board" -DMOTA_VARIANT=min
    trees+=("-DMOTA_CROSS_DIR_MIN_$board=$root/build/cross-$board-min")
  fi
done < <(grep -v '^#' ports/boards.txt | awk 'NF == 5')
echo "== the STM32 boards' firmware for their programmers (build/fw; SKIPPED without ST's sources)"
bash scripts/build-firmware.sh

echo "== optimised host build (-O3: catches what the sanitizer build does not warn about)"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=ON >/dev/null
cmake --build build/release

echo "== fuzz targets (clang, libFuzzer)"
CC=clang cmake -S . -B build/fuzz -G Ninja -DMOTA_FUZZ=ON >/dev/null
cmake --build build/fuzz

echo "== host build with ASan+UBSan, and the tests"
cmake -S . -B build/asan -G Ninja -DMOTA_SANITIZE=ON -DMOTA_FUZZ_BIN_DIR="$root/build/fuzz/tests/fuzz" \
      "${trees[@]}" >/dev/null
cmake --build build/asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
ctest --test-dir build/asan --output-on-failure -j "$(nproc)"
