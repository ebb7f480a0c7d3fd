#!/usr/bin/env bash
# Builds (or finds cached) the vmtest guest: a Debian bookworm root file system
# with a pinned kernel, OpenZFS 2.1 modules built by zfs-dkms for that kernel,
# drbd-utils (DRBD 8.4 is the kernel's own module) and nftables, packed into a
# sparse ext4 image, plus the kernel and a small initramfs to boot it with
# qemu -kernel. Prints the directory that holds vmlinuz, initrd.img and
# base.img.
#
#   ci/vmtest/image.sh                      # build if missing, print the directory
#   BATON_VMTEST_CACHE=/some/dir ci/vmtest/image.sh
#
# Everything lives outside the repository, under ~/.cache/baton/vmtest:
#   zfs-kmod-$KVER-$ZFS.tar.gz  the dkms build (300-470 s on 2 cores), kept
#                               across image rebuilds: it depends only on the
#                               kernel and zfs-dkms versions
#   image-$KEY/                 the image; KEY hashes this script, the guest's
#                               init and the pins, so editing either rebuilds
# Root is needed (debootstrap, chroot). The host's apt sources are not
# touched: contrib (for ZFS) is enabled inside the guest only.
set -euo pipefail

# The kernel is pinned by ABI name: a newer bookworm kernel may break the
# zfs-dkms 2.1.11 build, so moving the pin is a deliberate change. When the
# mirror drops this ABI (a point release supersedes it), the build stops and
# says so; pick the ABI `apt-cache show linux-image-amd64` depends on.
KERNEL_ABI=${BATON_VMTEST_KERNEL_ABI:-6.1.0-47}
MIRROR=${BATON_VMTEST_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
GUEST_PACKAGES="linux-image-$KERNEL_ABI-amd64 initramfs-tools drbd-utils zfsutils-linux nftables udev kmod iproute2 procps util-linux e2fsprogs"
HOST_PACKAGES="qemu-system-x86 qemu-utils debootstrap e2fsprogs iproute2 coreutils"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${BATON_VMTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/vmtest}
key=$(cat "$here/image.sh" "$here/guest/init" | { cat; echo "$KERNEL_ABI $MIRROR $GUEST_PACKAGES"; } | sha256sum | cut -c1-12)
image=$cache/image-$key
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

log() { echo "vmtest image: $*" >&2; }
warm() { [ -f "$image/.done" ]; }

if warm; then echo "$image"; exit 0; fi
[ "$(id -u)" = 0 ] || { log "building the guest image needs root (debootstrap, chroot)"; exit 1; }

mkdir -p "$cache"
exec 9>"$cache/.lock"
if ! flock -n 9; then log "another build holds $cache/.lock; waiting for it"; flock 9; fi
if warm; then echo "$image"; exit 0; fi

work=$cache/work-$key
bind_mounts() { for d in proc sys dev dev/pts; do mountpoint -q "$1/$d" || mount --bind "/$d" "$1/$d"; done; }
unbind_mounts() { for d in dev/pts dev sys proc; do if mountpoint -q "$1/$d"; then umount "$1/$d"; fi; done; }
cleanup() {
	for tree in "$work/rootfs" "$work/builder"; do [ -d "$tree" ] && unbind_mounts "$tree"; done
	return 0
}
trap cleanup EXIT

started=$(date +%s)
phase() { log "$1 ($(($(date +%s) - started)) s so far)"; }

host_packages() {
	local missing=""
	for p in $HOST_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
	[ -z "$missing" ] && return 0
	phase "installing host packages:$missing"
	apt-get update -q >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >/dev/null
}

rootfs() {
	local r=$work/rootfs
	phase "debootstrap $SUITE"
	rm -rf "$work"; mkdir -p "$work"
	debootstrap --variant=minbase --components=main,contrib "$SUITE" "$r" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
		{ tail -20 "$work/debootstrap.log" >&2; return 1; }
	echo "deb $MIRROR $SUITE main contrib" >"$r/etc/apt/sources.list"
	# No service starts inside the chroot; no recommends keeps the guest small.
	printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"; chmod +x "$r/usr/sbin/policy-rc.d"
	printf 'APT::Install-Recommends "false";\n' >"$r/etc/apt/apt.conf.d/90baton"
	bind_mounts "$r"
	chroot "$r" apt-get update -q >/dev/null
	if ! chroot "$r" apt-cache show "linux-image-$KERNEL_ABI-amd64" >/dev/null 2>&1; then
		log "the mirror no longer has linux-image-$KERNEL_ABI-amd64; move KERNEL_ABI in $here/image.sh to what linux-image-amd64 depends on now"
		return 1
	fi
	phase "installing guest packages"
	# shellcheck disable=SC2086
	chroot "$r" apt-get install -y -q $GUEST_PACKAGES >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log" >&2; return 1; }
	chroot "$r" apt-get clean
	unbind_mounts "$r"
}

kver() { ls "$work/rootfs/lib/modules" | head -1; }

zfs_modules() {
	local r=$work/rootfs k zfs tarball
	k=$(kver)
	zfs=$(chroot "$r" dpkg-query -W -f '${Version}' zfsutils-linux)
	tarball=$cache/zfs-kmod-$k-$zfs.tar.gz
	if [ ! -s "$tarball" ]; then
		phase "building zfs $zfs for $k with dkms (5-8 minutes, once)"
		rm -rf "$work/builder"; cp -a "$r" "$work/builder"
		bind_mounts "$work/builder"
		# zfs-dkms builds for every kernel whose headers are present; the host's
		# running kernel has none in the chroot, so only the guest's is built.
		chroot "$work/builder" apt-get install -y -q "linux-headers-$k" zfs-dkms >"$work/dkms.log" 2>&1 ||
			{ tail -30 "$work/dkms.log" >&2; return 1; }
		chroot "$work/builder" dkms status | grep -q "$k.*installed" ||
			{ chroot "$work/builder" dkms status >&2; return 1; }
		tar -C "$work/builder" -czf "$tarball.tmp" "lib/modules/$k/updates/dkms"
		mv "$tarball.tmp" "$tarball"
		unbind_mounts "$work/builder"; rm -rf "$work/builder"
	fi
	tar -C "$r" -xzf "$tarball"
}

configure() {
	local r=$work/rootfs k
	k=$(kver)
	phase "configuring the guest"
	# A storage node needs no graphics, sound, wireless or USB (~235 MB less).
	(cd "$r/lib/modules/$k/kernel" && rm -rf drivers/gpu drivers/media drivers/net/wireless drivers/net/ethernet \
		drivers/infiniband drivers/staging drivers/bluetooth drivers/iio drivers/isdn drivers/usb sound \
		net/wireless net/mac80211 net/bluetooth drivers/hid drivers/mmc drivers/thunderbolt drivers/video \
		drivers/platform drivers/hwmon)
	rm -rf "$r"/usr/share/doc/* "$r"/usr/share/man/* "$r"/usr/share/locale/*
	chroot "$r" depmod "$k"
	# The guests have 1 GiB; an uncapped ARC would take half of it.
	echo 'options zfs zfs_arc_max=134217728' >"$r/etc/modprobe.d/zfs.conf"
	printf 'blacklist %s\n' kvm kvm_amd kvm_intel ata_piix pata_acpi ata_generic floppy pcspkr \
		acpi_cpufreq i2c_piix4 serio_raw evdev button joydev psmouse parport_pc sg qemu_fw_cfg \
		>"$r/etc/modprobe.d/baton-blacklist.conf"
	install -m 755 "$here/guest/init" "$r/sbin/baton-init"
	mkdir -p "$r/share" "$r/etc/drbd.d"
	echo baton-guest >"$r/etc/hostname"
	# The initramfs needs only what mounts the root disk.
	printf 'virtio_pci\nvirtio_blk\next4\n' >>"$r/etc/initramfs-tools/modules"
	sed -i -e 's/^MODULES=.*/MODULES=list/' -e 's/^COMPRESS=.*/COMPRESS=gzip/' "$r/etc/initramfs-tools/initramfs.conf"
	bind_mounts "$r"
	chroot "$r" mkinitramfs -o /boot/baton-initrd.img "$k"
	unbind_mounts "$r"
}

pack() {
	local r=$work/rootfs k
	k=$(kver)
	phase "packing the image"
	mkdir -p "$image.tmp"
	cp "$r/boot/vmlinuz-$k" "$image.tmp/vmlinuz"
	mv "$r/boot/baton-initrd.img" "$image.tmp/initrd.img"
	rm -f "$r"/boot/initrd.img-*
	truncate -s 4G "$image.tmp/base.img"
	mkfs.ext4 -q -F -L batonroot -d "$r" "$image.tmp/base.img"
	{
		echo "kernel $k"
		chroot "$r" dpkg-query -W -f '${Package} ${Version}\n' zfsutils-linux drbd-utils nftables
	} >"$image.tmp/versions"
	rm -rf "$image"; mv "$image.tmp" "$image"
	rm -rf "$work"
	touch "$image/.done"
}

host_packages
rootfs
zfs_modules
configure
pack
phase "image ready in $image: $(tr '\n' ' ' <"$image/versions")"
# Older images are dead weight once a new one is built.
for old in "$cache"/image-*; do [ "$old" = "$image" ] || rm -rf "$old"; done
echo "$image"
