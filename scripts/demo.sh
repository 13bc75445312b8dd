#!/usr/bin/env bash
# The main job on a simulated device: build mota, make a signing key, build a
# sample model, pack v1 and v2, start `mota sim`, push v1 and confirm it, push
# v2 whose self-test fails and watch the device keep v1, and print a summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh test
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build build/release --target mota >/dev/null
mota=$root/build/release/host_tool/mota
w=$root/build/demo
rm -rf "$w" && mkdir -p "$w"
if [ -t 1 ]; then step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }; else step() { printf '\n== %s\n' "$*"; }; fi
sim_pid=
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true; }
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

step "summary"
if [ "$v2" = 1 ] && grep -q "seq 1 v1.0.0" "$w/status.txt" && grep -q "MOTA_ERR_SELFTEST_OUTPUT" "$w/status.txt"; then
  echo "v1 installed and confirmed; v2 refused by its self-test (MOTA_ERR_SELFTEST_OUTPUT) and rolled back:"
  echo "the device kept running v1. Files: $w"
else
  echo "unexpected outcome (v2 exit $v2); see $w"
  exit 1
fi
