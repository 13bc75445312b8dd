#!/usr/bin/env bash
# Long fuzzing runs:
#   scripts/fuzz.sh TARGET [seconds]   one of fuzz_container fuzz_nbin fuzz_agent fuzz_link fuzz_decompress
#   scripts/fuzz.sh all [seconds]      every target in turn, then one summary table
# Builds the clang/libFuzzer tree in build/fuzz, seeds a persistent corpus in
# build/fuzz/corpus/TARGET (kept between runs) and fuzzes for the given time
# per target (default 600 s). Crashes are written to build/fuzz/artifacts/;
# each run's output to build/fuzz/logs/TARGET.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-fuzz_container}
secs=${2:-600}
targets=(fuzz_container fuzz_nbin fuzz_agent fuzz_link fuzz_decompress)
cd "$root"
scripts/setup.sh test
CC=clang cmake -S . -B build/fuzz -G Ninja -DMOTA_FUZZ=ON >/dev/null
cmake --build build/fuzz >/dev/null
cmake -S . -B build/host -G Ninja >/dev/null
cmake --build build/host --target mota >/dev/null
mkdir -p build/fuzz/artifacts build/fuzz/logs

# The seeds: what the smoke runs use (tests/fuzz/smoke.py), made once into the persistent corpus.
seed() {
  local target=$1 corpus=build/fuzz/corpus/$1
  mkdir -p "$corpus"
  [ -n "$(ls -A "$corpus")" ] && return 0
  local tmp
  tmp=$(/usr/bin/python3 tests/fuzz/smoke.py build/fuzz/tests/fuzz build/host/host_tool/mota "$root" \
        "$root/../shared/fixtures" "$target" 0 | tail -1)
  cp "$tmp"/* "$corpus"/ 2>/dev/null || true
  rm -rf "$(dirname "$tmp")"
}

# One target for $secs seconds; its libFuzzer output in build/fuzz/logs/TARGET.log.
run() {
  local target=$1 max_len=16384 extra=()
  case "$target" in
    fuzz_nbin) max_len=65536; extra=(-dict=tests/fuzz/nbin.dict) ;;
    fuzz_decompress) max_len=65536 ;;
  esac
  seed "$target"
  build/fuzz/tests/fuzz/"$target" -max_total_time="$secs" -max_len=$max_len -timeout=10 \
    -artifact_prefix=build/fuzz/artifacts/"$target"- -print_final_stats=1 "${extra[@]}" \
    build/fuzz/corpus/"$target" >build/fuzz/logs/"$target".log 2>&1
}

if [ "$what" != all ]; then
  run "$what" || { tail -40 build/fuzz/logs/"$what".log; exit 1; }
  tail -12 build/fuzz/logs/"$what".log
  exit 0
fi
failed=0
printf "%-18s %8s %14s %12s %8s %10s %8s\n" target seconds executions exec/s edges corpus crashes
for t in "${targets[@]}"; do
  rc=0
  run "$t" || rc=$?
  log=build/fuzz/logs/$t.log
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  crashes=$(ls build/fuzz/artifacts/ | grep -c "^$t-" || true)
  [ "$rc" != 0 ] && failed=1
  printf "%-18s %8s %14s %12s %8s %10s %8s\n" "$t" "$secs" "${execs:-?}" "${rate:-?}" "${edges:-?}" \
    "$(ls build/fuzz/corpus/"$t" | wc -l)" "$crashes"
done
echo "logs: build/fuzz/logs/; crashes, leaks and timeouts: build/fuzz/artifacts/ (none when every count is 0)"
exit $failed
