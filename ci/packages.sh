#!/usr/bin/env bash
# Installs the Debian packages whose commands the build and the tests use and
# this machine lacks (as root, with apt-get), or fails naming them. make test
# and .ci/run call it; each pair is command:package.
set -euo pipefail

pairs=(make:make git:git flock:util-linux losetup:mount mkfs.ext4:e2fsprogs mkfs.xfs:xfsprogs
	mkfs.btrfs:btrfs-progs chromium:chromium ip:iproute2 nsenter:util-linux)

missing=()
for pair in "${pairs[@]}"; do
	command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "the tests need these packages, missing here: ${missing[*]} (install them, or run as root on Debian to have them installed)" >&2
	exit 1
fi
echo "installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
