#!/usr/bin/env bash
# The main job, end to end on this machine: build mota, make a signing key,
# wrap a real ST model into a signed container, inspect and verify it, and
# show that a tampered copy is refused with its reason.
# (The simulated-device part of the demo arrives with the device agent.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh build
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_TESTS=OFF >/dev/null
cmake --build build/release --target mota >/dev/null
mota=$root/build/release/host_tool/mota
w=$root/build/demo
rm -rf "$w" && mkdir -p "$w"

if [ -t 1 ]; then step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }; else step() { printf '\n== %s\n' "$*"; }; fi

model=$root/../shared/fixtures/st-n6/yolov8n_network_rel.bin
if [ -f "$model" ]; then
  params=()
else
  echo "(../shared/fixtures is absent: using a synthetic split model instead of the ST N6 yolov8n)"
  /usr/bin/python3 tests/tools/synth_nbin.py "$w/network_rel.bin" "$w/network_rel_params.bin" 65536
  model=$w/network_rel.bin
  params=(--params "$w/network_rel_params.bin")
fi

step "1. the model: mota info"
"$mota" info "$model"

step "2. a signing key: mota keygen"
"$mota" keygen "$w/signing.pem"

step "3. a signed container: mota pack"
"$mota" pack --key "$w/signing.pem" --vendor example.com --class stm32n6570-dk \
  --version 1.0.0 --seq 1 --description "demo: object detection" \
  "${params[@]}" -o "$w/model-v1.mota" "$model"

step "4. what the device will see: mota inspect"
"$mota" inspect "$w/model-v1.mota"

step "5. full check: mota verify"
"$mota" verify --quiet --key "$w/signing.pub.pem" "$w/model-v1.mota" && echo "model-v1.mota: valid"

step "6. one flipped bit in the payload, and a stranger's key"
cp "$w/model-v1.mota" "$w/tampered.mota"
/usr/bin/python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(-100, 2); b = f.read(1); f.seek(-100, 2); f.write(bytes([b[0] ^ 0x10]))' "$w/tampered.mota"
"$mota" verify --key "$w/signing.pub.pem" "$w/tampered.mota" && exit 1 || echo "(exit $?: refused, as it must be)"
"$mota" keygen "$w/stranger.pem" >/dev/null
"$mota" verify --key "$w/stranger.pub.pem" "$w/model-v1.mota" && exit 1 || echo "(exit $?: refused, as it must be)"

step "summary"
echo "container: $w/model-v1.mota ($(stat -c %s "$w/model-v1.mota") bytes), verified with $w/signing.pub.pem"
echo "tampered copy and foreign key: refused with MOTA_ERR_PAYLOAD_DIGEST and MOTA_ERR_KEY_UNKNOWN"
