#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job on a simulated device: build mota, make a signing key, build a
# sample model, pack v1 and v2, start `mota sim`, push v1 and confirm it, push
# v2 whose self-test fails and watch the device keep v1. Then the same agent
# as firmware on a QEMU Cortex-M55 board (`mota sim --target an547`): v1
# confirmed, v3 running on trial and never confirmed, reverted to v1 by the
# trial-boot count, and `mota status` saying why. Prints a summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh test
scripts/fetch-cross-deps.sh >/dev/null # the board's firmware is cross-built with the host build
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build build/release >build/release/build.log 2>&1 || { tail -40 build/release/build.log; echo "demo: the build failed (build/release/build.log)" >&2; exit 1; }
mota=$root/build/release/host_tool/mota
w=$root/build/demo
rm -rf "$w" && mkdir -p "$w"
if [ -t 1 ]; then step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }; else step() { printf '\n== %s\n' "$*"; }; fi
sim_pid= board_pid=
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  [ -n "$board_pid" ] && kill "$board_pid" 2>/dev/null || true
}
trap cleanup EXIT

step "1. a signing key"
"$mota" keygen "$w/signing.pem"

step "2. a sample model: an int8 dense network, built for Cortex-M55 by mota build-model"
/usr/bin/python3 tests/models/gen_weights.py dense "$w/gen"
"$mota" build-model -o "$w/dense_rel.bin" tests/models/dense.c "$w/gen/dense_weights.c"
"$mota" info "$w/dense_rel.bin" | head -6

step "3. v1 and v2: signed containers with a self-test"
head -c 64 /dev/urandom >"$w/selftest.in"
# the simulated device's inference output for this input: v1 expects it ...
"$mota" sim-output --input "$w/selftest.in" 10 "$w/expected.out"
# ... v2 expects something else, so its self-test will fail on the device
head -c 10 /dev/zero >"$w/wrong.out"
common=(--key "$w/signing.pem" --vendor example.com --class demo-board --selftest-input "$w/selftest.in"
        --selftest-max-latency-us 50000)
"$mota" pack "${common[@]}" --version 1.0.0 --seq 1 --selftest-output "$w/expected.out" -o "$w/v1.mota" "$w/dense_rel.bin"
"$mota" pack "${common[@]}" --version 2.0.0 --seq 2 --selftest-output "$w/wrong.out" -o "$w/v2.mota" "$w/dense_rel.bin"

step "4. a simulated device (the agent on a file-backed flash), listening on TCP"
"$mota" sim --tcp 127.0.0.1:0 --key "$w/signing.pub.pem" --vendor example.com --class demo-board \
  --model dense --flash "$w/device.flash" >"$w/sim.out" 2>"$w/sim.log" &
sim_pid=$!
for _ in $(seq 50); do grep -q listening "$w/sim.out" 2>/dev/null && break; sleep 0.1; done
port=$(grep -o 'tcp:[0-9.]*:[0-9]*' "$w/sim.out")
echo "device at $port"

step "5. push v1 and confirm it"
"$mota" push --confirm "$port" "$w/v1.mota"

step "6. push v2: its self-test fails on the device"
set +e
"$mota" push "$port" "$w/v2.mota"
v2=$?
set -e

step "7. the device after v2: still v1, and it says why"
"$mota" status "$port" | tee "$w/status.txt"
inp="$w/selftest.in"
"$mota" invoke --input "$inp" --output-size 10 "$port"

step "8. the same agent as firmware: a Cortex-M55 board on QEMU (mps3-an547), provisioned with the key"
"$mota" sim --target an547 --key "$w/signing.pub.pem" --vendor example.com --class demo-board \
  --name demo-board-1 --model dense --trial-boots 2 --flash "$w/board.flash" >"$w/board.out" 2>"$w/board.err" &
board_pid=$!
for _ in $(seq 100); do grep -q listening "$w/board.out" 2>/dev/null && break; sleep 0.1; done
bport=$(grep -o 'tcp:[0-9.]*:[0-9]*' "$w/board.out")
for _ in $(seq 50); do "$mota" status --timeout 2 "$bport" >/dev/null 2>&1 && break; sleep 0.2; done
echo "board at $bport (console: $w/board.flash.log)"
# on the board the self-test executes the model: v1 and v3 expect the host reference's output
bcommon=(--key "$w/signing.pem" --vendor example.com --class demo-board --selftest-input "$w/gen/dense_in_0.bin"
         --selftest-output "$w/gen/dense_out_0.bin" --selftest-max-latency-us 200000)
"$mota" pack "${bcommon[@]}" --version 1.0.0 --seq 1 -o "$w/b1.mota" "$w/dense_rel.bin" >/dev/null
"$mota" pack "${bcommon[@]}" --version 3.0.0 --seq 3 -o "$w/b3.mota" "$w/dense_rel.bin" >/dev/null

step "9. push v1 to the board and confirm it"
"$mota" push --confirm "$bport" "$w/b1.mota"

step "10. push v3 and do not confirm it: it runs on trial"
"$mota" push "$bport" "$w/b3.mota"
"$mota" status "$bport" | tee "$w/board-trial.txt"
"$mota" invoke --input "$w/gen/dense_in_1.bin" --output-size 10 "$bport"

step "11. nobody confirms v3: the board reboots three times (2 trial boots allowed)"
for i in 1 2 3; do
  "$mota" reboot "$bport" >/dev/null
  sleep 0.5
  "$mota" status --timeout 10 "$bport" | grep "active:" | sed "s/^ */after reboot $i: /"
done

step "12. the board after the trial: v1 again, and it says why"
"$mota" status "$bport" | tee "$w/board-status.txt"
grep "mota-an547:" "$w/board.flash.log" | tail -4

step "summary"
if [ "$v2" = 1 ] && grep -q "seq 1 v1.0.0" "$w/status.txt" && grep -q "MOTA_ERR_SELFTEST_OUTPUT" "$w/status.txt" &&
   grep -q "seq 3 v3.0.0.*ON TRIAL" "$w/board-trial.txt" && grep -q "seq 1 v1.0.0.*confirmed" "$w/board-status.txt" &&
   grep -q "MOTA_ERR_TRIAL_EXPIRED" "$w/board-status.txt"; then
  echo "simulated device: v1 installed and confirmed; v2 refused by its self-test (MOTA_ERR_SELFTEST_OUTPUT)"
  echo "  and rolled back: the device kept running v1."
  echo "QEMU Cortex-M55 board: v1 self-tested (the model executed) and confirmed; v3 ran on trial, was never"
  echo "  confirmed, and the trial-boot count reverted it to v1 (MOTA_ERR_TRIAL_EXPIRED). Files: $w"
else
  echo "unexpected outcome (v2 exit $v2); see $w"
  exit 1
fi
