#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Download the Debian source packages that the Cortex-M cross build compiles
# (mbed TLS 2.28.3 from bookworm for SHA-256; libcbor, and mbed TLS 3.6.6 for
# its p256-m, from trixie), verify each tarball's
# pinned SHA-256 and unpack them into .deps/src. Uses a private deb-src list,
# so the machine's apt configuration is left untouched. Idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
src="$deps/src"

# name|source package=version|orig tarball|sha256
pins=(
  "mbedtls|mbedtls=2.28.3-1|mbedtls_2.28.3.orig.tar.gz|3b4953aa55a681e084d31892d9904cc5328d6b4958ea57b90ae4b4f94ae69a8d"
  "libcbor|libcbor=0.10.2-2|libcbor_0.10.2.orig.tar.gz|e75f712215d7b7e5c89ef322a09b701f7159f028b8b48978865725f00f79875b"
  "mbedtls36|mbedtls=3.6.6-0.1~deb13u1|mbedtls_3.6.6.orig.tar.bz2|8fb65fae8dcae5840f793c0a334860a411f884cc537ea290ce1c52bb64ca007a"
)

all_present=1
for p in "${pins[@]}"; do
  IFS='|' read -r name _ _ _ <<<"$p"
  [ -f "$src/$name/.unpacked" ] || all_present=0
done
[ "$all_present" = 1 ] && exit 0

apt_dir="$deps/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$src"
cat >"$apt_dir/sources.list" <<'LIST'
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
LIST
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
          -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
if [ "$(id -u)" != 0 ]; then apt_opts+=(-o "APT::Sandbox::User=$(id -un)"); fi
echo "fetch-cross-deps: updating the private deb-src index" >&2
apt-get "${apt_opts[@]}" -qq update

dl="$deps/download"
mkdir -p "$dl"
for p in "${pins[@]}"; do
  IFS='|' read -r name spec tarball sha <<<"$p"
  [ -f "$src/$name/.unpacked" ] && continue
  if [ ! -f "$dl/$tarball" ]; then
    # Only the orig tarball is needed; for libcbor the mirror serves it but
    # not the .dsc, so apt's overall status is ignored and the pin decides.
    (cd "$dl" && apt-get "${apt_opts[@]}" -qq source --download-only "$spec" >/dev/null 2>&1) || true
  fi
  if [ ! -f "$dl/$tarball" ]; then
    echo "fetch-cross-deps: could not download $tarball ($spec)" >&2
    exit 1
  fi
  got=$(sha256sum "$dl/$tarball" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    echo "fetch-cross-deps: $tarball has SHA-256 $got, expected $sha" >&2
    exit 1
  fi
  rm -rf "$src/$name" && mkdir -p "$src/$name"
  tar -xf "$dl/$tarball" -C "$src/$name" --strip-components=1
  touch "$src/$name/.unpacked"
  echo "fetch-cross-deps: $name ready ($tarball)" >&2
done
