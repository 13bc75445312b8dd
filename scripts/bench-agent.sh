#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: one update of a 1 MiB model through the agent on the posix flash
# simulator (flash operations, bytes programmed, sectors erased, bytes read),
# the agent's RAM, and its stack: measured on the host (painted stack) and
# computed for Cortex-M55 from GCC's call-graph and frame-size output.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh test >/dev/null
scripts/fetch-cross-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release --target bench_agent >/dev/null
build/release/tests/bench/bench_agent
cmake -S . -B build/m55 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m55.cmake \
      -DCMAKE_BUILD_TYPE=MinSizeRel >/dev/null
cmake --build build/m55 >/dev/null
echo "Cortex-M55 (-Os), worst-case stack by call graph (add the HAL and self-test callbacks' own use):"
/usr/bin/python3 tests/tools/stack_depth.py build/m55 mota_agent_init mota_agent_write mota_agent_confirm \
  mota_agent_rollback | sed 's/  via .*//; s/^/  /'
echo "Cortex-M55 code size (-Os):"
arm-none-eabi-size -t build/m55/agent/libmota_agent.a build/m55/container/libmota_container.a build/m55/decompress/libmota_decompress.a \
  build/m55/loader/libmota_loader.a build/m55/crypto/libmota_crypto.a build/m55/base/libmota_base.a \
  build/m55/libmota_dep_mbedtls_lib.a build/m55/libmota_dep_cbor_lib.a | tail -1 |
  awk '{print "  all device libraries: text " $1 " bytes, data " $2 ", bss " $3 " (before the linker drops unused code)"}'
arm-none-eabi-size build/m55/boards/an547/mota-an547.elf | tail -1 |
  awk '{print "  the an547 firmware (hal/ports/mps/an547, by module: scripts/bench-board.sh): text " $1 " bytes, data " $2 ", bss " $3}'
