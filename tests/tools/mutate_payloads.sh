#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Do the tests of LZMA and delta payloads catch a broken decoder, patcher or sink? Each mutation below (a sed
# expression on one file: decompress/src/lzma.c, decompress/src/delta.c or agent/src/upload.c) is applied to a
# copy of the tree, whose tests test_decompress_lzma, test_decompress and test_agent_delta are built and run
# (at most 120 s): "caught" if one fails or hangs, "MISSED" if all pass, "NO-OP" if the expression no longer
# changes the source. Exits 1 unless every mutation is caught. The tree is not touched.
#   tests/tools/mutate_payloads.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# file|what|sed expression
mutations=(
  'decompress/src/lzma.c|no end check (code 0, every byte taken)|s/if (z->left != 0 || z->code != 0)/if (0)/'
  'decompress/src/lzma.c|a distance past the written bytes accepted|s/if (z->rep\[0\] >= pos(z))/if (0)/'
  'decompress/src/lzma.c|a match past the block accepted|s/if (len > z->block_end - pos(z))/if (0)/'
  'decompress/src/lzma.c|lc + lp up to 2 (models past the state)|s/z->lc + z->lp > 1/z->lc + z->lp > 2/'
  'decompress/src/lzma.c|the end marker accepted|s/if (d == 0xFFFFFFFFu)/if (0)/'
  'decompress/src/lzma.c|probability update off by one bit|s/(p + ((2048u - p) >> 5))/(p + ((2048u - p) >> 4))/g'
  'decompress/src/lzma.c|matched literal without its context byte|s/if (z->state >= 7) {/if (0) {/'
  'decompress/src/lzma.c|the state after a literal kept|s/z->state = after_literal\[z->state\];/(void)0;/'
  'decompress/src/lzma.c|rep1 not rotated|s/z->rep\[1\] = z->rep\[0\];\n        z->rep\[0\] = d;/z->rep[0] = d;/'
  'decompress/src/lzma.c|stored blocks of any length|s/if (p == STORED) {/if (p == STORED \&\& 0) {/'
  'decompress/src/lzma.c|a symbol decoded with fewer bytes than it may take|s/symbols(z, \&r, all ? 0 : MOTA_LZMA_AHEAD, sink)/symbols(z, \&r, all ? 0 : 2, sink)/'
  'decompress/src/delta.c|overlapping regions accepted|s/n == 0 || start < end ||/n == 0 ||/'
  'decompress/src/delta.c|a region past the source accepted|s/|| (uint64_t)src + n > src_size//'
  'decompress/src/delta.c|more than 64 regions accepted|s/len \/ MOTA_DELTA_REGION_LEN > MOTA_DELTA_MAX_REGIONS ||//'
  'decompress/src/delta.c|the prediction subtracted instead of added|s/buf\[k + j\] = (uint8_t)(buf\[k + j\] + s\[j\]);/buf[k + j] = (uint8_t)(buf[k + j] - s[j]);/'
  'decompress/src/delta.c|a read back before the last region not looked up|s/i = 0; \/\* a read back/(void)0; \/* a read back/'
  'agent/src/upload.c|bytes read back by a match left in image terms|s/(ret = z_delta(a, src, to, m, false)) != MOTA_OK/0/'
  'agent/src/upload.c|a matched literal context left in image terms|s/return delta ? z_delta(a, src, b, 1, false) : MOTA_OK;/return MOTA_OK;/'
  'agent/src/upload.c|the source not checked before the erase|s/else if ((ret = delta_sources(a, m)) == MOTA_OK)/else if (1)/'
  'agent/src/upload.c|a compressed component after a delta patched too (both switches)|s/a->up.delta_on = comp->delta;/a->up.delta_on |= comp->delta;/;s/a->up.delta_on = false;/(void)0;/'
  'agent/src/upload.c|the delta sink for every payload|s/    if (a->up.delta_on)\n        return (struct mota_decomp_sink){zd_write/    if (1)\n        return (struct mota_decomp_sink){zd_write/'
)
mkdir -p "$tmp/src"
(cd "$root" && git ls-files -co --exclude-standard | grep -v '^build/' | tar -cf - -T -) | tar -xf - -C "$tmp/src"
ln -s "$root/.deps" "$tmp/src/.deps" 2>/dev/null || true
cmake -S "$tmp/src" -B "$tmp/b" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMOTA_FIRMWARE=OFF >/dev/null || exit 2
tests=(test_decompress_lzma test_decompress test_agent_delta)
if ! cmake --build "$tmp/b" --target "${tests[@]}" >/dev/null; then
  echo "the unmutated tests do not build" >&2
  exit 2
fi
for t in "${tests[@]}"; do
  "$tmp/b/tests/$t" >/dev/null 2>&1 || { echo "the unmutated $t fails" >&2; exit 2; }
done
missed=0 caught=0
for m in "${mutations[@]}"; do
  IFS='|' read -r file what expr <<<"$m"
  cp "$root/$file" "$tmp/src/$file"
  sed -z -i "$expr" "$tmp/src/$file"
  if cmp -s "$root/$file" "$tmp/src/$file"; then
    echo "NO-OP   $file: $what"
    missed=$((missed + 1))
    continue
  fi
  verdict=MISSED
  if ! cmake --build "$tmp/b" --target "${tests[@]}" >/dev/null 2>&1; then
    verdict=caught # (it does not build)
  else
    for t in "${tests[@]}"; do
      if ! timeout 120 "$tmp/b/tests/$t" >/dev/null 2>&1; then
        verdict="caught"
        break
      fi
    done
  fi
  echo "$verdict $file: $what"
  [ "$verdict" = caught ] && caught=$((caught + 1)) || missed=$((missed + 1))
  cp "$root/$file" "$tmp/src/$file"
done
echo "$caught caught, $missed missed or no-op, of ${#mutations[@]}"
[ "$missed" = 0 ]
