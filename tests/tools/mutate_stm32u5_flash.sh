#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Do the U5 flash driver's tests catch a broken driver? Each mutation below (a sed expression) is applied
# to a copy of ports/stm32/common/src/flash_u5.c, which is built with the test and its register model
# (tests/unit/test_stm32u5_flash.c, stm32u5_flash_model.c) and run for at most 20 s: "caught" if the test
# fails or hangs, "MISSED" if it passes, "NO-OP" if the expression no longer changes the source. Exits 1
# unless every mutation is caught. The tree is not touched. Needs cc and cmocka.
#   tests/tools/mutate_stm32u5_flash.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$root/ports/stm32/common/src/flash_u5.c
mutations=(
  'skip the unlock|s/wr(c, NSKEYR, KEY[12]);//'
  'skip the relock|s/wr(c, NSCR, NSCR_LOCK);/(void)c;/'
  'program a unit twice (no erased check)|s/return MOTA_ERR_FLASH_NOT_ERASED;/(void)0;/'
  'words in the wrong order|s/write32(at + 4u \* k, w\[k\])/write32(at + 4u * (3u - k), w[3u - k])/'
  'words at +4|s/write32(at + 4u \* k,/write32(at + 4u + 4u * k,/'
  'PG not set|s/wr(c, NSCR, NSCR_PG);//'
  'interrupts not masked|s/primask = mota_stm32_io_irq_off();/primask = 0;/'
  'error flags ignored|s/return (sr \& NSSR_ERRORS) ? MOTA_ERR_FLASH_IO : MOTA_OK;/return MOTA_OK;/'
  'stale flags not cleared first|s/(void)take_errors(c);/(void)0;/'
  'no wait for BSY and WDW|s/while (rd(c, NSSR) \& (NSSR_BSY | NSSR_WDW))/while (0)/'
  'unbounded wait|0,/return MOTA_ERR_TIMEOUT;/s//continue;/'
  'no ECC check in read|s/return failed ? MOTA_ERR_FLASH_ECC : MOTA_OK;/return MOTA_OK;/'
  'ECC flags not cleared before a read|s/wr(c, ECCR, eccie | ECCR_ECCC | ECCR_ECCD);/(void)eccie;/'
  'no ICACHE invalidation|s/mota_stm32_io_write32(c->icache + ICACHE_CR, cr | ICACHE_CR_CACHEINV);//'
  'no ICACHE invalidation after a program|0,/int inv = invalidate_icache(c);/s//int inv = MOTA_OK;/'
  'no wait for the ICACHE|s/while (mota_stm32_io_read32(c->icache + ICACHE_SR) \& ICACHE_SR_BUSYF)/while (0)/'
  'wrong BKER for bank 2|s/(page >= BANK_PAGES ? NSCR_BKER : 0u)/0u/'
  'PNB off by one|s/(page % BANK_PAGES) << NSCR_PNB_POS/((page + 1u) % BANK_PAGES) << NSCR_PNB_POS/'
  'no read back|s/return ret == MOTA_OK ? read_back(c, off, src, len) : ret;/return ret;/'
)
missed=0
for m in "${mutations[@]}"; do
  name=${m%%|*} expr=${m#*|}
  sed -e "$expr" "$src" >"$tmp/flash_u5.c"
  if cmp -s "$src" "$tmp/flash_u5.c"; then
    echo "NO-OP   $name"
    missed=1
    continue
  fi
  if ! cc -std=c11 -w -DMOTA_STM32_IO_MODEL -I"$root/base/include" -I"$root/hal/include" -I"$root/loader/include" \
    -I"$root/ports/stm32/common/include" -I"$root/ports/stm32/common/src" -I"$root/tests/unit" \
    "$root/tests/unit/test_stm32u5_flash.c" "$root/tests/unit/stm32u5_flash_model.c" "$tmp/flash_u5.c" \
    -lcmocka -o "$tmp/t" 2>"$tmp/cc.log"; then
    echo "NO-BUILD $name"
    missed=1
    continue
  fi
  timeout 20 "$tmp/t" >"$tmp/out" 2>&1
  rc=$?
  failing=$(sed -n 's/^\[  FAILED  \] \([a-z_0-9]*\)$/\1/p' "$tmp/out" | sort -u)
  if [ "$rc" -eq 0 ]; then
    echo "MISSED  $name"
    missed=1
  else
    [ -n "$failing" ] && failing="by $(echo "$failing" | wc -l) test(s): $(echo "$failing" | tr '\n' ' ')"
    echo "caught  $name (${failing:-timed out})"
  fi
done
exit $missed
