#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite on a fresh Debian machine:
#   1. installs the missing Debian packages (scripts/setup.sh),
#   2. cross-builds the device libraries and the boards' firmware for
#      Cortex-M55 (an547), Cortex-M33 (an505), Cortex-M4 (an386) and
#      Cortex-M7 (an500) from pinned Debian sources (scripts/fetch-cross-deps.sh),
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
echo "== cross build: device libraries and the an547 firmware for Cortex-M55"
cross m55 cortex-m55 an547
echo "== cross build: the smallest variant (MOTA_VARIANT=min) of the an547 firmware"
cross min55 cortex-m55 an547 -DMOTA_VARIANT=min
echo "== cross build: device libraries and the an505 firmware for Cortex-M33"
cross m33 cortex-m33 an505
echo "== cross build: device libraries and the an386 firmware for Cortex-M4"
cross m4 cortex-m4 an386
echo "== cross build: device libraries and the an500 firmware for Cortex-M7"
cross m7 cortex-m7 an500

echo "== optimised host build (-O3: catches what the sanitizer build does not warn about)"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=ON >/dev/null
cmake --build build/release

echo "== fuzz targets (clang, libFuzzer)"
CC=clang cmake -S . -B build/fuzz -G Ninja -DMOTA_FUZZ=ON >/dev/null
cmake --build build/fuzz

echo "== host build with ASan+UBSan, and the tests"
cmake -S . -B build/asan -G Ninja -DMOTA_SANITIZE=ON -DMOTA_FUZZ_BIN_DIR="$root/build/fuzz/tests/fuzz" \
      -DMOTA_CROSS_BUILD_DIR="$root/build/m55" -DMOTA_CROSS_BUILD_DIR_M33="$root/build/m33" \
      -DMOTA_CROSS_BUILD_DIR_M4="$root/build/m4" -DMOTA_CROSS_BUILD_DIR_M7="$root/build/m7" \
      -DMOTA_CROSS_BUILD_DIR_MIN="$root/build/min55" >/dev/null
cmake --build build/asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
ctest --test-dir build/asan --output-on-failure -j "$(nproc)"
