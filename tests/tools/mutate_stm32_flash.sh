#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Do the STM32 flash drivers' tests catch a broken driver? Each mutation below (a sed expression) is applied
# to a copy of one file of ports/stm32/common/src (a part's driver, flash_f4.c, flash_u5.c or flash_h7.c,
# or the interface they share, flash_if.c), which is built with that part's test and register model
# (tests/unit/test_stm32<part>_flash.c, stm32<part>_flash_model.c) and run for at most 20 s: "caught" if
# the test fails or hangs, "MISSED" if it passes, "NO-OP" if the expression no longer changes the source.
# A mutation of flash_if.c is run against each part that shares it. Exits 1 unless every mutation is
# caught. The tree is not touched. Needs cc and cmocka.
#   tests/tools/mutate_stm32_flash.sh [f4|u5|h7|n6]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
only=${1:-}
# part|file|what|sed expression (part "both": the shared interface, run against each part that uses it; or a
# list of parts)
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
  'u5 h7|flash_if.c|program a unit twice (no erased check)|s/return want != NULL ? MOTA_ERR_FLASH_IO : MOTA_ERR_FLASH_NOT_ERASED;/(void)0;/'
  'u5 h7|flash_if.c|erased check of the first bytes only|s/for (size_t i = 0; i < len; i += CHUNK)/for (size_t i = 0; i < CHUNK \&\& i < len; i += CHUNK)/'
  'u5 h7|flash_if.c|a unit unreadable in a read back taken as good|s/return want != NULL ? MOTA_ERR_FLASH_IO : ret;/return want != NULL ? MOTA_OK : ret;/'
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
  'u5|flash_u5.c|no read back|s/return ret == MOTA_OK ? stm32_flash_compare(checked_copy, c, c->base + off, src, len) : ret;/return ret;/'
  # h7 (flash_h7.c)
  'h7|flash_h7.c|no D-cache invalidation|s/mota_stm32_io_write32(SCB_DCIMVAC, a);//'
  'h7|flash_h7.c|only the first line invalidated|s/a < at + (uint32_t)len; a += DLINE/a < at + DLINE; a += DLINE/'
  'h7|flash_h7.c|no invalidation after a program|s/^    invalidate_caches(c, at, len);//'
  'h7|flash_h7.c|no barrier after the invalidation|s/mota_stm32_io_barrier(); \/\* the maintenance done/\/* the maintenance done/'
  'h7|flash_h7.c|no ECC check in read|s/return failed ? MOTA_ERR_FLASH_ECC : MOTA_OK;/return MOTA_OK;/'
  'h7|flash_h7.c|ECC flags not cleared before a read|s/mota_stm32_io_write32(regs + CCR, SR_ECC);/(void)regs;/'
  'h7|flash_h7.c|bus-fault hook accepts any ECC_FA address|s/if (!located \&\& (at < reading.from || at >= reading.to))/if (0)/'
  'h7|flash_h7.c|bus-fault hook accepts any BFAR|s/if (addr != 0 \&\& (addr < reading.from || addr >= reading.to))/if (0)/'
  'h7|flash_h7.c|bus-fault hook leaves DBECCERR set|s/mota_stm32_io_write32(regs + CCR, SR_ECC); \/\* both flags/\/\* both flags/'
  'h7|flash_h7.c|no barrier between PG and the array|s/mota_stm32_io_barrier(); \/\* PG set/\/\* PG set/'
  'h7|flash_h7.c|flash word written as 7 words|s/for (unsigned k = 0; k < WORD \/ 4u; k++)/for (unsigned k = 0; k < WORD \/ 4u - 1u; k++)/'
  'h7|flash_h7.c|words at +4|s/mota_stm32_io_write32(at + 4u \* k,/mota_stm32_io_write32(at + 4u + 4u * k,/'
  'h7|flash_h7.c|words in the wrong order|s/const uint8_t \*s = src + 4u \* k;/const uint8_t *s = src + 4u * (7u - k);/'
  'h7|flash_h7.c|bank 1 registers for bank 2|s/(at - MOTA_STM32H7_FLASH_BASE >= BANK ? BANK_REGS : 0u)/0u/'
  'h7|flash_h7.c|SNB off by one|s/snb << CR_SNB_POS/(snb + 1u) << CR_SNB_POS/'
  'h7|flash_h7.c|SNB counted from the array, not the bank|s/% BANK \/ SECTOR;/\/ SECTOR;/'
  'h7|flash_h7.c|PG not set|s/mota_stm32_io_write32(fi.cr, CR_PG | CR_PSIZE_X32);//'
  'h7|flash_h7.c|no erased check|s/if ((ret = stm32_flash_compare(checked_copy, c, c->base + off, NULL, len)) != MOTA_OK)/if (0)/'
  'h7|flash_h7.c|no read back|s/return ret == MOTA_OK ? stm32_flash_compare(checked_copy, c, c->base + off, src, len) : ret;/return ret;/'
  'h7|flash_h7.c|no wait for QW|s/.busy = SR_BSY | SR_QW | SR_WBNE,/.busy = SR_BSY | SR_WBNE,/'
  'h7|flash_h7.c|flags cleared by writing SR|s/.ccr = regs + CCR,//'
  'h7|flash_h7.c|a range across the banks in one bank|s/size_t n = len < in_bank ? len : in_bank;/size_t n = len;/'
  # n6 (flash_n6.c)
  'n6|flash_n6.c|the last bytes of a transfer written as a word|s/if (k->n - i >= 4u)/if (1)/'
  'n6|flash_n6.c|no write enable|s/int ret = simple(c, OCTAL_DTR, CMD_WREN);/int ret = MOTA_OK;/'
  'n6|flash_n6.c|write enable latch not checked|s/(sr \& (NOR_SR_WEL | NOR_SR_WIP)) != NOR_SR_WEL/0/'
  'n6|flash_n6.c|a program across a page boundary|s/size_t n = PAGE - (at + i) % PAGE;/size_t n = len - i;/'
  'n6|flash_n6.c|each page programmed at the range start|s/.at = at + (uint32_t)i,/.at = at,/'
  'n6|flash_n6.c|no busy poll after a program or an erase|s/int ret = wait_ready(c, limit_us);/int ret = MOTA_OK;/'
  'n6|flash_n6.c|no D-cache invalidation|s/mota_stm32_io_write32(SCB_DCIMVAC, a);//'
  'n6|flash_n6.c|no D-cache invalidation after a program|s/invalidate(c, c->base + off, len);//'
  'n6|flash_n6.c|no D-cache invalidation after an erase|s/invalidate(c, c->base + off, SECTOR);//'
  'n6|flash_n6.c|no barrier after the invalidation|s/mota_stm32_io_barrier();//'
  'n6|flash_n6.c|no return to memory-mapped mode|s/set_fmode(c, FMODE_MMAP);//'
  'n6|flash_n6.c|no abort before indirect mode|s/wr(c, CR, rd(c, CR) | CR_ABORT);//'
  'n6|flash_n6.c|no P_FAIL or E_FAIL check|s/if (ret == MOTA_OK \&\& (scur \& fail))/if (0)/'
  'n6|flash_n6.c|no read back|s/if (ret == MOTA_OK \&\& !reads_as(c, off, buf, len))/if (0)/'
  'n6|flash_n6.c|program over bytes not erased|s/return MOTA_ERR_FLASH_NOT_ERASED;/(void)0;/'
  'n6|flash_n6.c|3-byte address phase|s/#define CCR_ADSIZE_32 (3u << 12)/#define CCR_ADSIZE_32 (2u << 12)/'
  'n6|flash_n6.c|unbounded waits|s/return MOTA_ERR_TIMEOUT;/continue;/g'
  'n6|flash_n6.c|FIFO threshold not awaited|s/if ((ret = wait_sr(c, SR_FTF, SR_FTF, XSPI_MAX_US)) != MOTA_OK) {/if (0) {/'
  'n6|flash_n6.c|DLR one past the data|s/wr(c, DLR, (uint32_t)k->n - 1u);/wr(c, DLR, (uint32_t)k->n);/'
  'n6|flash_n6.c|6 dummy cycles for the read|s/#define READ_DUMMY 20u/#define READ_DUMMY 6u/'
  'n6|flash_n6.c|no DQS on octal DTR reads|s/ccr |= CCR_DQSE;/(void)0;/'
  'n6|flash_n6.c|memory type Micron|s/wr(c, DCR1, DCR1_MTYP_MACRONIX | /wr(c, DCR1, /'
  'n6|flash_n6.c|no octal DTR reset|s/{SPI, OCTAL_STR, OCTAL_DTR}/{SPI, OCTAL_STR, OCTAL_STR}/'
  'n6|flash_n6.c|ID not checked|s/== NOR_ID)/!= 0)/'
  'n6|flash_n6.c|block protection not cleared|s/|| !(sr \& NOR_SR_BP))/|| 1)/'
  'n6|flash_n6.c|block protection left set accepted|s/return (sr \& NOR_SR_BP) ? MOTA_ERR_FLASH_IO : MOTA_OK;/return MOTA_OK;/'
)
srcdir=$root/ports/stm32/common/src
missed=0
for m in "${mutations[@]}"; do
  IFS='|' read -r parts file name expr <<<"$m"
  [ "$parts" = both ] && parts="f4 u5 h7"
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
      "$tmp/src/flash_$part.c" "$tmp/src/flash_if.c" $(case $part in h7 | n6) echo "$root/tests/unit/dcache_model.c" ;; esac) \
      -lcmocka -o "$tmp/t" 2>"$tmp/cc.log"; then
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
