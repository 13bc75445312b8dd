#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Long fuzzing runs:
#   scripts/fuzz.sh TARGET [seconds [runs]]   one of fuzz_container fuzz_nbin fuzz_agent fuzz_link
#                                             fuzz_decompress fuzz_delta fuzz_gateway fuzz_answers fuzz_encinfo; runs: stop
#                                             after that many executions
#   scripts/fuzz.sh all [seconds [runs]]      every target, as many at once as there are cores
#                                             (MOTA_FUZZ_JOBS), then one summary table
#   scripts/fuzz.sh coverage           the line coverage the corpora reach (llvm-cov): each target's
#                                      persistent corpus replayed by a coverage build, a table of the
#                                      files it fuzzes and an HTML report in build/fuzz-cov/html
# Builds the clang/libFuzzer tree in build/fuzz, seeds a persistent corpus in
# build/fuzz/corpus/TARGET (kept between runs) and fuzzes for the given time
# per target (default 600 s), or until the given number of executions.
# Crashes are written to build/fuzz/artifacts/; each run's output to
# build/fuzz/logs/TARGET.log. The fuzz build's signature check is a stand-in
# (docs/architecture.md, "Fuzzing past the signature").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-fuzz_container}
secs=${2:-600}
runs=${3:-0}
targets=(fuzz_container fuzz_nbin fuzz_agent fuzz_link fuzz_decompress fuzz_delta fuzz_gateway fuzz_answers fuzz_encinfo)
jobs=${MOTA_FUZZ_JOBS:-$(nproc)}
cd "$root"
scripts/setup.sh "$([ "$what" = coverage ] && echo coverage || echo test)"
CC=clang cmake -S . -B build/fuzz -G Ninja -DMOTA_FUZZ=ON >/dev/null
cmake --build build/fuzz >/dev/null
cmake -S . -B build/host -G Ninja >/dev/null
cmake --build build/host --target mota >/dev/null
mkdir -p build/fuzz/artifacts build/fuzz/logs

# The seeds: what the smoke runs use (tests/fuzz/smoke.py), put into the persistent corpus anew each time
# (a corpus kept from an older harness still holds inputs of the current one's format).
seed() {
  local target=$1 corpus=build/fuzz/corpus/$1
  mkdir -p "$corpus"
  local tmp
  tmp=$(/usr/bin/python3 tests/fuzz/smoke.py build/fuzz/tests/fuzz build/host/host_tool/mota "$root" \
        "$root/../shared/fixtures" "$target" 0 | tail -1)
  cp "$tmp"/* "$corpus"/ 2>/dev/null || true
  rm -rf "$(dirname "$tmp")"
}

# One target for $secs seconds (or $runs executions); its libFuzzer output in build/fuzz/logs/TARGET.log,
# the seconds it ran in TARGET.secs.
run() {
  local target=$1 max_len=16384 extra=() t0
  case "$target" in
    fuzz_nbin) max_len=65536; extra=(-dict=tests/fuzz/nbin.dict) ;;
    fuzz_decompress) max_len=65536 ;;
    fuzz_agent|fuzz_link) max_len=32768 ;;
    fuzz_gateway|fuzz_answers) max_len=8192 ;;
    fuzz_encinfo) max_len=1024 ;;
  esac
  [ "$runs" != 0 ] && extra+=(-runs="$runs")
  seed "$target"
  t0=$(date +%s)
  build/fuzz/tests/fuzz/"$target" -max_total_time="$secs" -max_len=$max_len -timeout=10 \
    -artifact_prefix=build/fuzz/artifacts/"$target"- -print_final_stats=1 "${extra[@]}" \
    build/fuzz/corpus/"$target" >build/fuzz/logs/"$target".log 2>&1
  local rc=$?
  echo $(($(date +%s) - t0)) >build/fuzz/logs/"$target".secs
  return $rc
}

# Every target's corpus replayed once by the coverage build; one report over them all.
coverage() {
  CC=clang cmake -S . -B build/fuzz-cov -G Ninja -DMOTA_FUZZ=ON -DMOTA_FUZZ_COVERAGE=ON >/dev/null
  cmake --build build/fuzz-cov >/dev/null
  rm -rf build/fuzz-cov/prof && mkdir -p build/fuzz-cov/prof
  local objs=()
  for t in "${targets[@]}"; do
    seed "$t"
    LLVM_PROFILE_FILE=build/fuzz-cov/prof/$t.profraw build/fuzz-cov/tests/fuzz/"$t" -runs=0 \
      -rss_limit_mb=4096 build/fuzz/corpus/"$t" >build/fuzz/logs/"$t".cov.log 2>&1
    objs+=(-object build/fuzz-cov/tests/fuzz/"$t")
  done
  llvm-profdata merge -o build/fuzz-cov/all.profdata build/fuzz-cov/prof/*.profraw
  local files=(agent/src/agent.c agent/src/upload.c agent/src/journal.c agent/src/link.c agent/src/link_replies.c
               loader/src/install.c loader/src/nbin.c container/src/cose.c container/src/manifest.c
               container/src/payload.c container/src/cbor.c container/src/encinfo.c decompress/src/lz4.c
               decompress/src/inflate.c decompress/src/lzma.c decompress/src/delta.c)
  echo "line coverage of the fuzzed code by the corpora in build/fuzz/corpus (every target):"
  printf "%-28s %7s %7s %8s\n" file lines missed covered
  llvm-cov report -instr-profile=build/fuzz-cov/all.profdata "${objs[@]:1}" "${files[@]}" |
    awk 'NR > 2 && NF >= 13 && $1 !~ /^-/ {printf "%-28s %7s %7s %8s\n", $1, $(NF-5), $(NF-4), $(NF-3)}'
  llvm-cov show -format=html -output-dir=build/fuzz-cov/html -instr-profile=build/fuzz-cov/all.profdata \
    "${objs[@]:1}" "${files[@]}" >/dev/null
  echo "report: build/fuzz-cov/html/index.html"
}

if [ "$what" = coverage ]; then
  coverage
  exit 0
fi
if [ "$what" != all ]; then
  run "$what" || { tail -40 build/fuzz/logs/"$what".log; exit 1; }
  tail -12 build/fuzz/logs/"$what".log
  exit 0
fi
# The slowest targets first, $jobs at a time.
for t in fuzz_link fuzz_agent fuzz_container fuzz_nbin fuzz_decompress fuzz_delta fuzz_gateway fuzz_answers fuzz_encinfo; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  (rc=0; run "$t" || rc=$?; echo $rc >build/fuzz/logs/"$t".rc) &
done
wait
failed=0
printf "%-18s %8s %14s %12s %8s %10s %8s\n" target seconds executions exec/s edges corpus crashes
for t in "${targets[@]}"; do
  log=build/fuzz/logs/$t.log
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  crashes=$(ls build/fuzz/artifacts/ | grep -c "^$t-" || true)
  [ "$(cat build/fuzz/logs/"$t".rc)" != 0 ] && failed=1
  printf "%-18s %8s %14s %12s %8s %10s %8s\n" "$t" "$(cat build/fuzz/logs/"$t".secs)" "${execs:-?}" "${rate:-?}" \
    "${edges:-?}" "$(ls build/fuzz/corpus/"$t" | wc -l)" "$crashes"
done
echo "logs: build/fuzz/logs/; crashes, leaks and timeouts: build/fuzz/artifacts/ (none when every count is 0)"
exit $failed
