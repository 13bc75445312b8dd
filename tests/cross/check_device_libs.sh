#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fails if a device library (ours or the cross-built mbed TLS/libcbor parts)
# has an undefined reference to the heap or to stdio. Prints code sizes.
set -eu
dir=$1
libs=$(find "$dir" -name '*.a' | sort)
[ -n "$libs" ] || { echo "no libraries under $dir"; exit 1; }
bad=0
for a in $libs; do
  hits=$(arm-none-eabi-nm -u "$a" | awk '{print $2}' | grep -xE '(_?(malloc|calloc|realloc|free|printf|fprintf|puts|fopen|fwrite|_malloc_r|_calloc_r|_free_r|_realloc_r))' | sort -u | tr '\n' ' ' || true)
  if [ -n "$hits" ]; then
    echo "FAIL $(basename "$a"): $hits"
    bad=1
  else
    echo "ok   $(basename "$a")"
  fi
done
arm-none-eabi-size -t $libs | tail -1 | awk '{print "device code total: text " $1 " data " $2 " bss " $3 " bytes"}'
exit $bad
