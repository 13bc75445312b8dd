#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: one update of a 1 MiB model through the agent on the posix flash
# simulator (flash operations, bytes programmed, sectors erased, bytes read),
# the agent's RAM, and its stack: measured on the host (painted stack) and
# computed for Cortex-M55 from GCC's call-graph and frame-size output.
#   scripts/bench-agent.sh [--quick]   --quick: the same run, which takes a second (CI runs it)
# Build trees: $MOTA_BENCH_BUILD (default build/release), $MOTA_BENCH_CROSS (Cortex-M55, default build/cross-BOARD: the harness board of ports/boards.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case "${1:-}" in "" | --quick) ;; *) echo "usage: $0 [--quick]" >&2; exit 2 ;; esac
source scripts/boards.sh
harness=$(board_harness) # the Cortex-M55 board of ports/boards.txt with the QEMU harness
build=${MOTA_BENCH_BUILD:-build/release} cross=${MOTA_BENCH_CROSS:-build/cross-$harness}
scripts/setup.sh test >/dev/null
scripts/fetch-cross-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build "$build" --target bench_agent >/dev/null
"$build"/tests/bench/bench_agent
cmake -S . -B "$cross" -G Ninja -DCMAKE_TOOLCHAIN_FILE="cmake/arm-none-eabi-$(board_field "$harness" 3).cmake" \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DMOTA_BOARD="$harness" >/dev/null
cmake --build "$cross" >/dev/null
echo "Cortex-M55 (-Os), worst-case stack by call graph (add the HAL and self-test callbacks' own use):"
/usr/bin/python3 tests/tools/stack_depth.py "$cross" mota_agent_init mota_agent_write mota_agent_confirm \
  mota_agent_rollback | sed 's/  via .*//; s/^/  /'
echo "Cortex-M55 code size (-Os):"
arm-none-eabi-size -t "$cross"/agent/libmota_agent.a "$cross"/container/libmota_container.a \
  "$cross"/decompress/libmota_decompress.a "$cross"/loader/libmota_loader.a "$cross"/crypto/libmota_crypto.a \
  "$cross"/base/libmota_base.a "$cross"/libmota_dep_mbedtls_lib.a "$cross"/libmota_dep_cbor_lib.a | tail -1 |
  awk '{print "  all device libraries: text " $1 " bytes, data " $2 ", bss " $3 " (before the linker drops unused code)"}'
arm-none-eabi-size "$cross/boards/$harness/mota-$harness.elf" | tail -1 |
  awk -v b="$harness" '{print "  the " b " firmware (ports/mps/" b ", by module: scripts/bench-board.sh): text " $1 " bytes, data " $2 ", bss " $3}'
