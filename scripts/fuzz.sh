#!/usr/bin/env bash
# Long fuzzing runs: scripts/fuzz.sh [fuzz_container|fuzz_nbin|fuzz_agent|fuzz_link|fuzz_decompress] [seconds]
# Builds the clang/libFuzzer tree in build/fuzz, seeds a persistent corpus in
# build/fuzz/corpus/TARGET (kept between runs) and fuzzes for the given time
# (default 600 s). Crashes are written to build/fuzz/artifacts/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${1:-fuzz_container}
secs=${2:-600}
cd "$root"
scripts/setup.sh test
CC=clang cmake -S . -B build/fuzz -G Ninja -DMOTA_FUZZ=ON >/dev/null
cmake --build build/fuzz >/dev/null
cmake -S . -B build/host -G Ninja >/dev/null
cmake --build build/host --target mota >/dev/null
corpus=build/fuzz/corpus/$target
mkdir -p "$corpus" build/fuzz/artifacts
if [ -z "$(ls -A "$corpus")" ]; then
  # seed from the smoke-test corpus builder (a zero-run pass leaves the seeds)
  python3 - "$root" "$corpus" "$target" <<'PY'
import os, shutil, subprocess, sys, tempfile, struct
root, corpus, target = sys.argv[1:4]
mota = os.path.join(root, "build/host/host_tool/mota")
fix = os.path.join(root, "..", "shared", "fixtures")
if target == "fuzz_container":
    d = tempfile.mkdtemp()
    subprocess.run([mota, "keygen", d + "/k.pem"], check=True, capture_output=True)
    subprocess.run(["/usr/bin/python3", root + "/tests/vectors/malformed.py", mota, d + "/k.pem", d + "/k.pub.pem",
                    corpus], check=True, capture_output=True)
    if os.path.exists(fix + "/suit/example0.suit"):
        shutil.copy(fix + "/suit/example0.suit", corpus)
elif target == "fuzz_nbin":  # the small models kept in the repository: 145x the executions of a yolov8n seed
    for f in os.listdir(root + "/tests/fuzz/corpus/fuzz_nbin"):
        shutil.copy(root + "/tests/fuzz/corpus/fuzz_nbin/" + f, corpus)
PY
fi
max_len=16384
extra=()
if [ "$target" = fuzz_nbin ]; then max_len=65536; extra=(-dict=tests/fuzz/nbin.dict); fi
exec build/fuzz/tests/fuzz/"$target" -max_total_time="$secs" -max_len=$max_len -timeout=10 \
  -artifact_prefix=build/fuzz/artifacts/ -print_final_stats=1 "${extra[@]}" "$corpus"
