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

echo "== cross build: device libraries and the an547 firmware for Cortex-M55"
cmake -S . -B build/m55 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m55.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD=an547 >/dev/null
cmake --build build/m55

echo "== cross build: the smallest variant (MOTA_VARIANT=min) of the an547 firmware"
cmake -S . -B build/min55 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m55.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD=an547 -DMOTA_VARIANT=min >/dev/null
cmake --build build/min55

echo "== cross build: device libraries and the an505 firmware for Cortex-M33"
cmake -S . -B build/m33 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m33.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD=an505 >/dev/null
cmake --build build/m33

echo "== cross build: device libraries and the an386 firmware for Cortex-M4"
cmake -S . -B build/m4 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m4.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD=an386 >/dev/null
cmake --build build/m4

echo "== cross build: device libraries and the an500 firmware for Cortex-M7"
cmake -S . -B build/m7 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m7.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD=an500 >/dev/null
cmake --build build/m7

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
