# Shared by the ci/realbed/apps scripts (sourced, not run): the application
# images' cache layout, their debootstrapped trees and their docker builds.
# Sources ../lib.sh for the pins, logging, the lock and DOCKER_HOST.
#
#   $cache/apps/rootfs/NAME        a debootstrapped tree, NAME.stamp its inputs
#   $cache/apps/gitea-VERSION/     Gitea's binary and its templates/options/public
#   $cache/apps/context/NAME/      an image's docker build context (throwaway)
#   $cache/apps/images.txt         name=image lines of the last build (images.sh)
# shellcheck shell=bash disable=SC2034 # its variables are for the scripts that source it

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

GITEA_VERSION=v1.24.0
apps_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
apps=$cache/apps

# app_tree NAME PACKAGES: debootstraps $apps/rootfs/NAME (minbase plus
# PACKAGES, comma-separated) unless its stamp says it holds exactly that.
# The caller holds the lock. Prints nothing; logs what it does.
app_tree() {
	local name=$1 packages=$2 dir=$apps/rootfs/$1
	local want="$SUITE $MIRROR $packages"
	if [ -f "$dir.stamp" ] && [ "$(cat "$dir.stamp")" = "$want" ]; then return 0; fi
	need_root "debootstrap"
	command -v debootstrap >/dev/null || apt_install debootstrap
	log "debootstrap $SUITE ($name) into $dir -- minutes when cold"
	local start=$SECONDS
	rm -rf "$dir" "$dir.stamp" && mkdir -p "$dir"
	nice debootstrap --variant=minbase --include="$packages" "$SUITE" "$dir" "$MIRROR" >"$dir.log" 2>&1 ||
		{ tail -20 "$dir.log" >&2; return 1; }
	chroot "$dir" apt-get clean
	rm -rf "$dir"/var/lib/apt/lists/* "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/usr/share/info/* \
		"$dir"/usr/share/locale/* "$dir"/var/cache/debconf/*-old "$dir"/var/log/* "$dir"/tmp/* "$dir"/var/tmp/*
	echo "$want" >"$dir.stamp"
	log "rootfs $name: $((SECONDS - start)) s"
}

# app_image NAME TREE CONTEXT [EXCLUDE...]: builds baton.local/NAME:<hash> from CONTEXT (a
# Dockerfile starting FROM scratch and ADD rootfs.tar /, and the files it
# copies) with TREE as rootfs.tar, unless that image exists, and prints the
# image's name. The tag hashes the tree's stamp and the context, so a
# rebuilt tree or a changed entrypoint is a new image. EXCLUDE are tar
# patterns of the tree left out of the image (what the package scripts made
# that a volume replaces).
app_image() {
	local name=$1 tree=$2 ctx=$3
	shift 3
	local excludes=(--exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*')
	for e in "$@"; do excludes+=(--exclude="$e"); done
	local tag
	tag=$( (cat "$tree.stamp" && echo "$*" && cd "$ctx" && find . -type f ! -name rootfs.tar -print0 | sort -z | xargs -0 sha256sum) |
		sha256sum | cut -c1-12)
	local image=baton.local/$name:$tag
	if ! docker image inspect "$image" >/dev/null 2>&1; then
		local start=$SECONDS
		tar -C "$tree" --numeric-owner "${excludes[@]}" -cf "$ctx/rootfs.tar" .
		DOCKER_BUILDKIT=0 docker build -q -t "$image" "$ctx" >"$ctx.build.log" 2>&1 || { cat "$ctx.build.log" >&2; return 1; }
		rm -f "$ctx/rootfs.tar"
		log "built $image in $((SECONDS - start)) s ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%d MB", $1/1e6}'))"
	fi
	echo "$image"
}
