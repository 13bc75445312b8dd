#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CI recipe of docs/ci.md, as commands: a model update tested on a
# simulated device in a CI job. A test (ci_example_script_runs_as_documented)
# runs it, so the recipe cannot rot.
#
#   MOTA            the mota binary (default: mota on PATH)
#   MOTA_CI_MODEL   the model to ship (network_rel.bin); default: the sample
#                   model, built with `mota build-model` (arm-none-eabi-gcc)
#   MOTA_CI_PARAMS  its params file, for a split model
#   MOTA_CI_WORK    a scratch directory (default: a new temporary one)
#   MOTA_CI_DEVICE  how the simulated device is described (default: --like
#                   the model, a profile that accepts it; for your board:
#                   --profile NAME, see docs/device-profiles.md)
#
# Exit 0 when v1 installed and confirmed, a v2 on trial was rolled back, and
# a v3 whose self-test fails was refused with the device left on v1.
set -euo pipefail
mota=${MOTA:-mota}
py=/usr/bin/python3
root=$(cd "$(dirname "$0")/.." && pwd)
w=${MOTA_CI_WORK:-$(mktemp -d)}
mkdir -p "$w"
sim_pid=
stop_sim() {
  # SIGTERM: the simulator removes its throw-away flash and its port file
  if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
  sim_pid=
}
trap stop_sim EXIT
say() { printf '== %s\n' "$*"; }

# The last line of `push --json` is the result: {"event": "result", "status": ..., "installed": ...}.
# $1: the push's stdout, $2: the status wanted, $3: installed wanted (true/false).
expect_result() {
  "$py" - "$1" "$2" "$3" <<'PY'
import json, sys
out, status, installed = open(sys.argv[1]).read().splitlines(), sys.argv[2], sys.argv[3] == "true"
r = json.loads(out[-1])
ok = r.get("event") == "result" and r.get("status") == status and r.get("installed") is installed
print("result: status %s, installed %s%s" % (r.get("status"), r.get("installed"), "" if ok else "  UNEXPECTED"))
sys.exit(0 if ok else 1)
PY
}

say "1. a signing key (in a real job: a secret, or pack --unsigned and mota sign --signer, docs/host-tool.md#sign)"
"$mota" keygen "$w/signing.pem" >/dev/null

say "2. the model"
model=${MOTA_CI_MODEL:-}
params=${MOTA_CI_PARAMS:-}
if [ -z "$model" ]; then
  "$py" "$root/tests/models/gen_weights.py" dense "$w/gen"
  "$mota" build-model -o "$w/dense_rel.bin" "$root/tests/models/dense.c" "$w/gen/dense_weights.c"
  model=$w/dense_rel.bin
fi
params_opt=()
[ -n "$params" ] && params_opt=(--params "$params")
c_name=$("$mota" info --json "$model" | "$py" -c 'import json, sys; print(json.load(sys.stdin)["c_name"])')
echo "model $model ($c_name)"

say "3. v1, v2, v3: --seq from the semantic version; v3's expected self-test output is wrong"
head -c 64 /dev/urandom >"$w/selftest.in"
"$mota" sim-output --input "$w/selftest.in" 16 "$w/selftest.out" # what the simulated inference answers
head -c 16 /dev/zero >"$w/wrong.out"
pack=("$mota" pack --key "$w/signing.pem" --vendor example.com --class ci-board --seq from-version
      --selftest-input "$w/selftest.in" --selftest-max-latency-us 100000 "${params_opt[@]}")
"${pack[@]}" --version 1.0.0 --selftest-output "$w/selftest.out" -o "$w/v1.mota" "$model"
"${pack[@]}" --version 1.1.0 --selftest-output "$w/selftest.out" -o "$w/v2.mota" "$model"
"${pack[@]}" --version 1.2.0 --selftest-output "$w/wrong.out" -o "$w/v3.mota" "$model"
"$mota" verify --quiet --key "$w/signing.pub.pem" "$w/v1.mota"

say "4. a simulated device: a throw-away flash, its port in a file once it serves"
# shellcheck disable=SC2206
device=(${MOTA_CI_DEVICE:---like $model ${params:+--params $params}})
rm -f "$w/port"
"$mota" sim --tcp 127.0.0.1:0 --port-file "$w/port" --key "$w/signing.pub.pem" --vendor example.com \
  --class ci-board --model "$c_name" "${device[@]}" >"$w/sim.out" 2>"$w/sim.log" &
sim_pid=$!
for _ in $(seq 100); do [ -s "$w/port" ] && break; kill -0 "$sim_pid" || { cat "$w/sim.log"; exit 1; }; sleep 0.1; done
port=$(cat "$w/port")
echo "device at $port"

say "5. push v1 and confirm it"
"$mota" push --json --confirm "$port" "$w/v1.mota" >"$w/v1.json"
expect_result "$w/v1.json" MOTA_OK true

say "6. push v2, leave it on trial, roll it back"
"$mota" push --json "$port" "$w/v2.mota" >"$w/v2.json"
expect_result "$w/v2.json" MOTA_OK true
"$mota" rollback "$port"
# nothing is on trial any more: the device runs v1 again
if "$mota" confirm "$port" 2>"$w/confirm.err"; then echo "v2 was still on trial"; exit 1; fi
grep -q MOTA_ERR_NOT_TESTING "$w/confirm.err"

say "7. push v3: its self-test fails on the device, which keeps v1"
rc=0
"$mota" push --json "$port" "$w/v3.mota" >"$w/v3.json" 2>"$w/v3.err" || rc=$?
[ "$rc" = 1 ] # refused by the device
expect_result "$w/v3.json" MOTA_ERR_SELFTEST_OUTPUT false

say "8. stop the device"
stop_sim
echo "ci-example: v1 confirmed, v2 rolled back, v3 refused by its self-test; the device kept v1"
