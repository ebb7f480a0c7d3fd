#!/usr/bin/env bash
# Builds baton's image in the private dockerd, offline, and prints its name
# (`make images` runs it; so does `make realbed`):
#   - the tools tree (rootfs.sh: Debian minbase with btrfs-progs, e2fsprogs,
#     xfsprogs, util-linux, kmod), imported as the base;
#   - the five binaries `make build` makes and the registrar stand-in
#     (registrar/), built with CGO_ENABLED=0;
#   - external-provisioner, and the csi-addons controller manager (cmd/manager)
#     and sidecar (sidecar/), built from the module proxy in throwaway modules
#     pinned by provisioner.go.mod/.sum and csi-addons.go.mod/.sum beside this
#     script (external-provisioner's go.mod has replace directives, so `go
#     install pkg@version` is refused; csi-addons follows the same pattern so
#     both are pinned the same way). They are built once per version.
# The binaries in the image: baton-controller, baton-csi, baton-hub,
# baton-node, batonctl, registrar, csi-provisioner, csi-addons-manager,
# csi-addons-sidecar (the names the chart's containers run).
# The tag hashes the binaries, the base tree's stamp and the Dockerfile, so a
# rebuilt binary is a new image; a stamp keyed by the build's inputs (the
# Go sources, the toolchain, GOFLAGS) skips the build when they are
# unchanged. Root: debootstrap and the dockerd.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root "building baton's image (debootstrap, the private dockerd)"

PROVISIONER_VERSION=v5.3.0
CSI_ADDONS_VERSION=$(awk '$1 == "require" && $2 == "github.com/csi-addons/kubernetes-csi-addons" {print $3}' "$realbed_dir/csi-addons.go.mod")
[ -n "$CSI_ADDONS_VERSION" ] || die "csi-addons.go.mod pins no github.com/csi-addons/kubernetes-csi-addons"
work=$cache/baton-image
mkdir -p "$work"

timed "root file systems" bash "$realbed_dir/rootfs.sh"
bash "$realbed_dir/dockerd.sh" start
lock baton-image

# throwaway NAME GOMOD OUT LDFLAGS PACKAGE...: builds PACKAGEs from the module
# proxy in a module of their own, pinned by GOMOD and its .sum, into OUT.
throwaway() {
	local name=$1 gomod=$2 out=$3 ldflags=$4 dir=$work/$1
	shift 4
	rm -rf "$dir" "$out" "$out.tmp" && mkdir -p "$dir" "$out.tmp"
	cp "$realbed_dir/$gomod.go.mod" "$dir/go.mod"
	cp "$realbed_dir/$gomod.go.sum" "$dir/go.sum"
	local start=$SECONDS
	(cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 nice go build -trimpath -ldflags "-s -w $ldflags" -o "$out.tmp/" "$@")
	mv "$out.tmp" "$out"
	log "$name built in $((SECONDS - start)) s"
}

provisioner=$work/csi-provisioner-$PROVISIONER_VERSION
if ! [ -x "$provisioner" ]; then
	throwaway provisioner provisioner "$work/provisioner-bin" "-X main.version=$PROVISIONER_VERSION" \
		github.com/kubernetes-csi/external-provisioner/v5/cmd/csi-provisioner
	mv "$work/provisioner-bin/csi-provisioner" "$provisioner" && rm -rf "$work/provisioner-bin"
fi

addons=$work/csi-addons-$CSI_ADDONS_VERSION
[ -x "$addons/manager" ] && [ -x "$addons/sidecar" ] ||
	throwaway csi-addons csi-addons "$addons" \
		"-X github.com/csi-addons/kubernetes-csi-addons/internal/version.Version=$CSI_ADDONS_VERSION" \
		github.com/csi-addons/kubernetes-csi-addons/cmd/manager github.com/csi-addons/kubernetes-csi-addons/sidecar

# The base: the tools tree, imported under a tag of its stamp.
base=baton.local/baton-base:$(sha256sum <"$cache/rootfs/tools.stamp" | cut -c1-12)
if ! docker image inspect "$base" >/dev/null 2>&1; then
	tar -C "$cache/rootfs/tools" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . |
		docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$base" >/dev/null
	log "imported $base"
fi

# The build's inputs: every Go source of the module (tests aside) and what
# it embeds, go.mod and go.sum, the toolchain and GOFLAGS (-tags=baton_bugs
# is another image), the binaries built from the proxy and the base. When an image was
# built from the same inputs and the dockerd still has it, it is the image:
# nothing is compiled (a warm `go build` of the five binaries still links
# them, 1-2 minutes under this machine's load).
inputs=$(
	{
		go version
		echo "GOFLAGS=${GOFLAGS:-} CGO_ENABLED=0 $base"
		sha256sum "$provisioner" "$addons/manager" "$addons/sidecar"
		# what the binaries embed: the chart (batonctl) and the report's template
		cd "$repo_root" && git ls-files -z -c -o --exclude-standard -- '*.go' go.mod go.sum deploy/chart/baton '*.tmpl' |
			grep -z -v '_test\.go$' | sort -z | xargs -0 sha256sum
	} | sha256sum | cut -c1-16
)
stamp=$work/inputs-$inputs
if [ -s "$stamp" ] && docker image inspect "$(cat "$stamp")" >/dev/null 2>&1; then
	log "baton's image is up to date with its inputs ($inputs)"
	cat "$stamp"
	exit 0
fi

ctx=$work/context
rm -rf "$ctx" && mkdir -p "$ctx/bin"
(cd "$repo_root" && CGO_ENABLED=0 go build -o "$ctx/bin/" ./cmd/... ./ci/realbed/registrar)
cp "$provisioner" "$ctx/bin/csi-provisioner"
cp "$addons/manager" "$ctx/bin/csi-addons-manager"
cp "$addons/sidecar" "$ctx/bin/csi-addons-sidecar"
printf 'FROM %s\nCOPY bin/ /usr/local/bin/\n' "$base" >"$ctx/Dockerfile"
image=baton.local/baton:$(cat "$ctx"/bin/* "$ctx/Dockerfile" | sha256sum | cut -c1-12)
if ! docker image inspect "$image" >/dev/null 2>&1; then
	DOCKER_BUILDKIT=0 docker build -q -t "$image" "$ctx" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
	log "built $image"
fi
echo "$image" >"$stamp"
echo "$image"
