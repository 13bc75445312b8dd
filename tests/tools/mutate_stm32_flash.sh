#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Do the STM32 flash drivers' tests catch a broken driver? Each mutation below (a sed expression) is applied
# to a copy of one file of ports/stm32/common/src (a part's driver, flash_f4.c or flash_u5.c, or the
# interface both share, flash_if.c), which is built with that part's test and register model
# (tests/unit/test_stm32<part>_flash.c, stm32<part>_flash_model.c) and run for at most 20 s: "caught" if
# the test fails or hangs, "MISSED" if it passes, "NO-OP" if the expression no longer changes the source.
# A mutation of flash_if.c is run against both parts. Exits 1 unless every mutation is caught. The tree
# is not touched. Needs cc and cmocka.
#   tests/tools/mutate_stm32_flash.sh [f4|u5]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
only=${1:-}
# part|file|what|sed expression (part "both": the shared interface, run against each part)
mutations=(
  'both|flash_if.c|skip the unlock|s/mota_stm32_io_write32(f->keyr, KEY[12]);//'
  'both|flash_if.c|no check that the keys unlocked|s/return MOTA_ERR_FLASH_IO;/(void)0;/'
  'both|flash_if.c|skip the relock|s/mota_stm32_io_write32(f->cr, f->lock);/(void)f;/'
  'both|flash_if.c|error flags ignored|s/return (sr \& f->errors) ? MOTA_ERR_FLASH_IO : MOTA_OK;/return MOTA_OK;/'
  'both|flash_if.c|stale flags not cleared first|s/(void)take_errors(f);/(void)0;/'
  'both|flash_if.c|no wait for the part|s/while (mota_stm32_io_read32(f->sr) \& f->busy)/while (0)/'
  'both|flash_if.c|unbounded wait|s/return MOTA_ERR_TIMEOUT;/continue;/'
  'f4|flash_f4.c|program twice (no erased check)|s/return MOTA_ERR_FLASH_NOT_ERASED;/(void)0;/'
  'f4|flash_f4.c|erased check on the first word only|s/for (size_t i = 0; i < len; i++) \/\*/for (size_t i = 0; i < WORD; i++) \/\*/'
  'f4|flash_f4.c|PG not set|s/wr(c, CR, CR_PSIZE_X32 | CR_PG);//'
  'f4|flash_f4.c|program width x8 (PSIZE)|s/wr(c, CR, CR_PSIZE_X32 | CR_PG);/wr(c, CR, CR_PG);/'
  'f4|flash_f4.c|words at +4|s/mota_stm32_io_write32(c->base + off + (uint32_t)i, w);/mota_stm32_io_write32(c->base + off + (uint32_t)i + 4u, w);/'
  'f4|flash_f4.c|no read back|s/if (memcmp(now, src + i, WORD) != 0)/if (0)/'
  'f4|flash_f4.c|SNB off by one|s/snb << CR_SNB_POS | CR_STRT/(snb + 1u) << CR_SNB_POS | CR_STRT/'
  'f4|flash_f4.c|no data cache reset after an erase|s/| ACR_ICRST | ACR_DCRST);/);/'
  'f4|flash_f4.c|caches reset while enabled|s/wr(c, ACR, (acr \& ~(ACR_ICEN | ACR_DCEN)) | ACR_ICRST | ACR_DCRST);/wr(c, ACR, acr | ACR_ICRST | ACR_DCRST);/'
  'u5|flash_u5.c|program a unit twice (no erased check)|s/return MOTA_ERR_FLASH_NOT_ERASED;/(void)0;/'
  'u5|flash_u5.c|words in the wrong order|s/write32(at + 4u \* k, w\[k\])/write32(at + 4u * (3u - k), w[3u - k])/'
  'u5|flash_u5.c|words at +4|s/write32(at + 4u \* k,/write32(at + 4u + 4u * k,/'
  'u5|flash_u5.c|PG not set|s/wr(c, NSCR, NSCR_PG);//'
  'u5|flash_u5.c|interrupts not masked|s/primask = mota_stm32_io_irq_off();/primask = 0;/'
  'u5|flash_u5.c|no ECC check in read|s/return failed ? MOTA_ERR_FLASH_ECC : MOTA_OK;/return MOTA_OK;/'
  'u5|flash_u5.c|ECC flags not cleared before a read|s/wr(c, ECCR, eccie | ECCR_ECCC | ECCR_ECCD);/(void)eccie;/'
  'u5|flash_u5.c|no ICACHE invalidation|s/mota_stm32_io_write32(c->icache + ICACHE_CR, cr | ICACHE_CR_CACHEINV);//'
  'u5|flash_u5.c|no ICACHE invalidation after a program|0,/int inv = invalidate_icache(c);/s//int inv = MOTA_OK;/'
  'u5|flash_u5.c|no wait for the ICACHE|s/while (mota_stm32_io_read32(c->icache + ICACHE_SR) \& ICACHE_SR_BUSYF)/while (0)/'
  'u5|flash_u5.c|wrong BKER for bank 2|s/(page >= BANK_PAGES ? NSCR_BKER : 0u)/0u/'
  'u5|flash_u5.c|PNB off by one|s/(page % BANK_PAGES) << NSCR_PNB_POS/((page + 1u) % BANK_PAGES) << NSCR_PNB_POS/'
  'u5|flash_u5.c|no read back|s/return ret == MOTA_OK ? read_back(c, off, src, len) : ret;/return ret;/'
)
srcdir=$root/ports/stm32/common/src
missed=0
for m in "${mutations[@]}"; do
  IFS='|' read -r parts file name expr <<<"$m"
  [ "$parts" = both ] && parts="f4 u5"
  for part in $parts; do
    [ -n "$only" ] && [ "$only" != "$part" ] && continue
    mkdir -p "$tmp/src"
    cp "$srcdir/flash_$part.c" "$srcdir/flash_if.c" "$tmp/src/"
    sed -e "$expr" "$srcdir/$file" >"$tmp/src/$file"
    if cmp -s "$srcdir/$file" "$tmp/src/$file"; then
      echo "NO-OP    $part $name"
      missed=1
      continue
    fi
    if ! cc -std=c11 -w -DMOTA_STM32_IO_MODEL -I"$root/base/include" -I"$root/hal/include" -I"$root/loader/include" \
      -I"$root/ports/stm32/common/include" -I"$srcdir" -I"$root/tests/unit" \
      "$root/tests/unit/test_stm32${part}_flash.c" "$root/tests/unit/stm32${part}_flash_model.c" \
      "$tmp/src/flash_$part.c" "$tmp/src/flash_if.c" -lcmocka -o "$tmp/t" 2>"$tmp/cc.log"; then
      echo "NO-BUILD $part $name"
      missed=1
      continue
    fi
    timeout 20 "$tmp/t" >"$tmp/out" 2>&1
    rc=$?
    failing=$(sed -n 's/^\[  FAILED  \] \([a-z_0-9]*\)$/\1/p' "$tmp/out" | sort -u)
    if [ "$rc" -eq 0 ]; then
      echo "MISSED   $part $name"
      missed=1
    else
      [ -n "$failing" ] && failing="by $(echo "$failing" | wc -l) test(s): $(echo "$failing" | tr '\n' ' ')"
      echo "caught   $part $name (${failing:-timed out})"
    fi
  done
done
exit $missed
