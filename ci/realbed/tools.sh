#!/usr/bin/env bash
# Builds kind and the node's container runtime from the Go module proxy into
# $cache/tools (see lib.sh): kind, containerd/ctr/shim, runc (cgo, with seccomp),
# crictl, the CNI plugins, CoreDNS and local-path-provisioner -- the programs
# kind's base and node images carry, none of which can be downloaded here.
# Idempotent with a stamp; cold about 6 minutes on 2 cores, warm instant.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

want="kind=$KIND_VERSION containerd=$CONTAINERD_VERSION runc=$RUNC_VERSION crictl=$CRICTL_VERSION cni=$CNI_PLUGINS_VERSION coredns=$COREDNS_VERSION lpp=$LOCAL_PATH_VERSION"
stamp=$tools/.stamp
warm() { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; }
if warm; then exit 0; fi
lock tools
if warm; then exit 0; fi

# runc links libseccomp (cgo); the node image is bookworm, as is this host.
if ! dpkg -s libseccomp-dev gcc libc6-dev pkg-config >/dev/null 2>&1; then
	need_root "installing libseccomp-dev and gcc"
	apt_install libseccomp-dev gcc libc6-dev pkg-config
fi

rm -rf "$tools" && mkdir -p "$tools"
install_to() { # install_to DIR CGO TAGS LDFLAGS PKG...
	local dir=$1 cgo=$2 tags=$3 ldflags=$4
	shift 4
	GOBIN=$tools/$dir CGO_ENABLED=$cgo go install -trimpath -tags "$tags" -ldflags "-s -w $ldflags" "$@"
}
timed kind install_to . 0 "" "" sigs.k8s.io/kind@$KIND_VERSION
timed containerd install_to containerd 0 "no_aufs no_zfs no_btrfs no_devmapper" \
	"-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
	github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION \
	github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD_VERSION \
	github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION
timed runc install_to runc 1 "seccomp urfave_cli_no_docs" "-X main.version=${RUNC_VERSION#v}" \
	github.com/opencontainers/runc@$RUNC_VERSION
timed crictl install_to crictl 0 "" "-X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION" \
	sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION
timed cni install_to cni 0 "" "" \
	github.com/containernetworking/plugins/plugins/ipam/host-local@$CNI_PLUGINS_VERSION \
	github.com/containernetworking/plugins/plugins/main/loopback@$CNI_PLUGINS_VERSION \
	github.com/containernetworking/plugins/plugins/main/ptp@$CNI_PLUGINS_VERSION \
	github.com/containernetworking/plugins/plugins/main/bridge@$CNI_PLUGINS_VERSION \
	github.com/containernetworking/plugins/plugins/meta/portmap@$CNI_PLUGINS_VERSION
timed coredns install_to coredns 0 "" "" github.com/coredns/coredns@$COREDNS_VERSION
timed local-path-provisioner install_to lpp 0 "" "-X main.VERSION=$LOCAL_PATH_VERSION" \
	github.com/rancher/local-path-provisioner@$LOCAL_PATH_VERSION
# kind's base image files (entrypoint, units, containerd config) come from its module.
go mod download sigs.k8s.io/kind@$KIND_VERSION
echo "$want" >"$stamp"
log "tools ready in $tools"
