#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install the Debian packages mota needs that are missing (and nothing else).
# Usage: scripts/setup.sh [build|test|coverage|gateway|all]   (default: all; coverage: test's and llvm-cov;
#        gateway: build's and Mender's client and artifact tool, for scripts/install-gateway.sh)
set -euo pipefail
what=${1:-all}

build_pkgs=(cmake ninja-build gcc libc6-dev libmbedtls-dev libcbor-dev libssl-dev liblz4-dev zlib1g-dev liblzma-dev libdivsufsort-dev openssl ca-certificates)
test_pkgs=(libcmocka-dev clang libclang-rt-14-dev python3 python3-cbor2 python3-cryptography
           gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi qemu-system-arm xz-utils
           debian-archive-keyring coreutils clang-format mender-client mender-artifact)

case "$what" in
  build) pkgs=("${build_pkgs[@]}") ;;
  test|all) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
  coverage) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}" llvm) ;;
  gateway) pkgs=("${build_pkgs[@]}" mender-client mender-artifact) ;;
  *) echo "usage: $0 [build|test|coverage|gateway|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
