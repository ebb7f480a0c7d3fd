# Shared by the ci/realbed scripts (sourced, not run): the pins, the cache layout,
# logging and the lock. Everything slow is cached under $cache; nothing goes into
# the repository.
#
#   $cache/tools/       kind and the node's runtime, built from the Go module proxy
#   $cache/rootfs/      debootstrapped trees (the node base, the tools image)
#   $cache/images/      the Kubernetes server tarball kind builds its node image from
#   $cache/dockerd/     the private dockerd: data-root, exec-root, socket, log
#   $cache/baton-image/ baton's image context and external-provisioner
#   $cache/run/         what a running bed writes: kubeconfigs, the pools, state
# shellcheck shell=bash disable=SC2034 # its variables are for the scripts that source it

KIND_VERSION=v0.33.0
K8S_VERSION=v1.37.2
CONTAINERD_VERSION=v2.3.4
RUNC_VERSION=v1.4.3
CRICTL_VERSION=v1.37.0
CNI_PLUGINS_VERSION=v1.9.1
COREDNS_VERSION=v1.14.6
LOCAL_PATH_VERSION=v0.0.30
SUITE=bookworm
MIRROR=${BATON_REALBED_MIRROR:-http://deb.debian.org/debian}

# The node image's name and the clusters; kind names a cluster's node <cluster>-control-plane.
NODE_IMAGE=baton.local/kind-node:$K8S_VERSION
BASE_IMAGE=baton.local/kind-base:$KIND_VERSION
CLUSTERS="baton-hub baton-site-a baton-site-b"
SITES="baton-site-a baton-site-b"

# The private dockerd's default bridge and the bridge of kind's "kind" network:
# fixed names so teardown can find them, and so one firewall rule can let the
# nodes reach each other.
DOCKERD_BRIDGE=batonrb0
DOCKERD_BRIDGE_CIDR=10.254.253.1/24
KIND_BRIDGE=br-batonrb

realbed_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$realbed_dir/../.." && pwd)
cache=${BATON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton}/realbed
tools=$cache/tools
run=$cache/run
dockerd_dir=$cache/dockerd
export DOCKER_HOST=unix://$dockerd_dir/docker.sock
export GOTOOLCHAIN=local LC_ALL=C DEBIAN_FRONTEND=noninteractive

log() { echo "realbed: $*" >&2; }
die() { log "$*"; exit 1; }

# timed NAME CMD...: runs CMD and logs how long it took.
timed() {
	local name=$1 start=$SECONDS
	shift
	"$@"
	log "$name: $((SECONDS - start)) s"
}

# lock NAME: serialises builders of one part of the cache; a second caller
# waits for the first and then finds the part warm.
lock() {
	mkdir -p "$cache"
	exec 8>"$cache/.$1.lock"
	if ! flock -n 8; then
		log "another run holds $cache/.$1.lock; waiting for it"
		flock 8
	fi
}

# apt_install PACKAGE...: installs Debian packages; on a fresh machine apt's
# lists are empty or stale, so a failed install updates them and tries again.
apt_install() {
	apt-get install -y -q "$@" >/dev/null 2>&1 && return 0
	apt-get update -q >/dev/null
	apt-get install -y -q "$@" >/dev/null
}

need_root() { [ "$(id -u)" = 0 ] || die "$1 needs root"; }
