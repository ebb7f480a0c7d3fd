#!/usr/bin/env bash
# Debootstraps the two Debian trees the real bed's images are made of, into
# $cache/rootfs (see lib.sh):
#   node/   the kind node's base: systemd, iptables, nftables, conntrack, mount
#           tools -- what kind's own base image (images/base/Dockerfile) installs
#   tools/  a minbase tree with iptables and the storage tools: kube-proxy's image
#           and baton's image are made from it (btrfs-progs, e2fsprogs, xfsprogs,
#           util-linux and kmod are what baton-node and baton-csi run)
# Each tree is keyed by its package list; cold about a minute each, warm instant.
#
# BATON_REALBED_STORAGE=zfs-drbd (docs/realbed.md, "ZFS+DRBD mode") adds ZFS's and
# DRBD's tools to both trees: baton-node runs zpool, zfs, drbdadm and udevadm in
# baton's image (the tools tree), and the node has them for whoever looks inside it.
# zfsutils-linux is in Debian's contrib, so that mode debootstraps main and contrib.
# `rootfs.sh --packages` prints the components and both lists, and builds nothing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NODE_PACKAGES=systemd,systemd-sysv,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,fuse-overlayfs,e2fsprogs,bash,ca-certificates,curl,jq,procps,socat,ebtables,libcap2-bin,iputils-ping
TOOLS_PACKAGES=iptables,conntrack,nftables,ebtables,ipset,kmod,iproute2,util-linux,mount,btrfs-progs,e2fsprogs,xfsprogs,ca-certificates
ZFS_DRBD_PACKAGES=zfsutils-linux,drbd-utils,udev
COMPONENTS=main

case ${BATON_REALBED_STORAGE:-btrfs} in
btrfs) ;;
zfs-drbd)
	COMPONENTS=main,contrib
	NODE_PACKAGES=$NODE_PACKAGES,$ZFS_DRBD_PACKAGES
	TOOLS_PACKAGES=$TOOLS_PACKAGES,$ZFS_DRBD_PACKAGES
	;;
*) die "BATON_REALBED_STORAGE=$BATON_REALBED_STORAGE: want btrfs or zfs-drbd" ;;
esac

if [ "${1:-}" = --packages ]; then
	printf 'components %s\nnode %s\ntools %s\n' "$COMPONENTS" "$NODE_PACKAGES" "$TOOLS_PACKAGES"
	exit 0
fi

# tree NAME PACKAGES: debootstraps $cache/rootfs/NAME unless the stamp says it holds PACKAGES.
tree() {
	local name=$1 packages=$2 dir=$cache/rootfs/$1
	local want="$SUITE $MIRROR $packages"
	# main alone keeps the stamps btrfs mode wrote before the modes existed.
	[ "$COMPONENTS" = main ] || want="$want $COMPONENTS"
	if [ -f "$dir.stamp" ] && [ "$(cat "$dir.stamp")" = "$want" ]; then return 0; fi
	need_root "debootstrap"
	command -v debootstrap >/dev/null || apt_install debootstrap
	log "debootstrap $SUITE into $dir -- about a minute"
	rm -rf "$dir" "$dir.stamp" && mkdir -p "$dir"
	debootstrap --variant=minbase --components="$COMPONENTS" --include="$packages" "$SUITE" "$dir" "$MIRROR" >"$dir.log" 2>&1 ||
		{ tail -20 "$dir.log" >&2; return 1; }
	chroot "$dir" apt-get clean
	rm -rf "$dir"/var/lib/apt/lists/* "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/usr/share/info/* \
		"$dir"/usr/share/locale/* "$dir"/var/cache/debconf/*-old "$dir"/var/log/* "$dir"/tmp/* "$dir"/var/tmp/*
	echo "$want" >"$dir.stamp"
}

lock rootfs
timed "rootfs node" tree node "$NODE_PACKAGES"
timed "rootfs tools" tree tools "$TOOLS_PACKAGES"
