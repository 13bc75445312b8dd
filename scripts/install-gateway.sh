#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install mota on a Linux gateway as Mender's update module for artifact type `mota` (docs/fleet.md):
# mota itself, the module and inventory wrappers, and an example /etc/mota/gateway.conf (kept if present).
# Usage: scripts/install-gateway.sh [--root DIR] [--mota BUILT_MOTA]
#   --root DIR     install under DIR instead of / (a staging tree, an image)
#   --mota PATH    a mota already built (default: build it in build/gateway)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
root="" mota=""
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=${2:?}; shift 2 ;;
    --mota) mota=${2:?}; shift 2 ;;
    *) echo "usage: $0 [--root DIR] [--mota BUILT_MOTA]" >&2; exit 2 ;;
  esac
done
if [ -z "$mota" ]; then
  "$src/scripts/setup.sh" gateway
  cmake -S "$src" -B "$src/build/gateway" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOTA_FIRMWARE=OFF >/dev/null
  cmake --build "$src/build/gateway" --target mota >/dev/null
  mota="$src/build/gateway/host_tool/mota"
fi
bin=/usr/local/bin/mota
install -D -m 0755 "$mota" "$root$bin"
for f in modules/v3/mota inventory/mender-inventory-mota; do
  mkdir -p "$root/usr/share/mender/$(dirname "$f")"
  sed "s|@MOTA@|$bin|" "$src/host_tool/mender/$(basename "$f")" >"$root/usr/share/mender/$f"
  chmod 0755 "$root/usr/share/mender/$f"
done
if [ ! -e "$root/etc/mota/gateway.conf" ]; then
  install -D -m 0644 "$src/host_tool/mender/gateway.conf" "$root/etc/mota/gateway.conf"
fi
echo "installed: $bin, /usr/share/mender/modules/v3/mota, /usr/share/mender/inventory/mender-inventory-mota"
echo "next: list the MCUs in /etc/mota/gateway.conf (docs/fleet.md)"
