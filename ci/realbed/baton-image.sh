#!/usr/bin/env bash
# Builds baton's image in the private dockerd and prints its name: the tools
# tree (rootfs.sh: Debian minbase with btrfs-progs, e2fsprogs, xfsprogs,
# util-linux, kmod) plus the five binaries `make build` makes, the registrar
# stand-in (registrar/) and external-provisioner, built from the module proxy
# in a throwaway module pinned by provisioner.go.mod/.sum (its go.mod has
# replace directives, so `go install pkg@version` is refused). The tag hashes
# the binaries, so a rebuilt binary is a new image.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PROVISIONER_VERSION=v5.3.0
work=$cache/baton-image
mkdir -p "$work"
lock baton-image

provisioner=$work/csi-provisioner-$PROVISIONER_VERSION
if ! [ -x "$provisioner" ]; then
	dir=$work/provisioner
	rm -rf "$dir" && mkdir -p "$dir"
	cp "$realbed_dir/provisioner.go.mod" "$dir/go.mod"
	cp "$realbed_dir/provisioner.go.sum" "$dir/go.sum"
	start=$SECONDS
	(cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$PROVISIONER_VERSION" \
		-o "$provisioner" github.com/kubernetes-csi/external-provisioner/v5/cmd/csi-provisioner)
	log "external-provisioner $PROVISIONER_VERSION built in $((SECONDS - start)) s"
fi

ctx=$work/context
rm -rf "$ctx" && mkdir -p "$ctx/bin"
(cd "$repo_root" && CGO_ENABLED=0 go build -o "$ctx/bin/" ./cmd/... ./ci/realbed/registrar)
cp "$provisioner" "$ctx/bin/csi-provisioner"
printf 'FROM baton.local/debian-tools\nCOPY bin/ /usr/local/bin/\n' >"$ctx/Dockerfile"
image=baton.local/baton:$(cat "$ctx"/bin/* "$ctx/Dockerfile" | sha256sum | cut -c1-12)
if ! docker image inspect "$image" >/dev/null 2>&1; then
	DOCKER_BUILDKIT=0 docker build -q -t "$image" "$ctx" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
	log "built $image"
fi
echo "$image"
