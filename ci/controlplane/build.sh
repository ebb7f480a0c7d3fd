#!/usr/bin/env bash
# Builds the test control plane -- kube-apiserver, kubectl and etcd -- from source
# through the Go module proxy into a cache outside the repository, and prints the
# directory that holds them (what KUBEBUILDER_ASSETS names).
#
#   ci/controlplane/build.sh            # build if missing, print the bin directory
#   BATON_CACHE=/some/dir ci/controlplane/build.sh
#   COMPONENTS="kube-apiserver kubelet ..." ci/controlplane/build.sh
#
# COMPONENTS names the k8s.io/kubernetes/cmd/* programs to build (etcd is always
# built). Left unset it is what the test control plane needs, in bin/; any other
# set (ci/realbed asks for what a kind node image needs) goes to a directory of its
# own, bin-<hash of the set>, so it never changes or rebuilds what the tests use.
#
# Why from source: this machine reaches only the Go module proxy. Why a throwaway
# module per component: k8s.io/kubernetes and go.etcd.io/etcd/server/v3 carry replace
# directives, so `go install pkg@version` is refused; a main module that requires them
# (and, for Kubernetes, replaces every staging module with its published release)
# builds. The go.mod/go.sum pairs beside this script pin what they resolve to.
#
# Idempotent (a stamp records what was built) and safe to run concurrently (flock):
# a second caller waits for the first and then finds the cache warm. Cold ~12 min on
# 2 cores, warm well under a second.
set -euo pipefail

K8S_VERSION=v1.37.2
ETCD_VERSION=v3.7.3
DEFAULT_COMPONENTS="kube-apiserver kubectl"
COMPONENTS=${COMPONENTS:-$DEFAULT_COMPONENTS}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${BATON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton}
root=$cache/k8s/$K8S_VERSION
bin=$root/bin
if [ "$COMPONENTS" != "$DEFAULT_COMPONENTS" ]; then
	bin=$root/bin-$(tr ' ' '\n' <<<"$COMPONENTS" | sed '/^$/d' | sort -u | sha256sum | cut -c1-12)
fi
stamp=$bin/.stamp
want="kubernetes=$K8S_VERSION etcd=$ETCD_VERSION components=$COMPONENTS inputs=$(cat "$here"/*.go.mod "$here"/*.go.sum | sha256sum | cut -c1-16)"

log() { echo "controlplane: $*" >&2; }

warm() { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; }

if warm; then echo "$bin"; exit 0; fi

mkdir -p "$root"
exec 9>"$root/.lock"
if ! flock -n 9; then
	log "another build holds $root/.lock; waiting for it"
	flock 9
fi
if warm; then echo "$bin"; exit 0; fi

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
stage=$root/stage.$$
rm -rf "$root"/stage.* && mkdir -p "$stage/out"
trap 'rm -rf "$stage"' EXIT

# build MODULE-NAME PKG OUT [LDFLAGS]: builds PKG inside a throwaway module whose
# go.mod/go.sum are the pinned copies beside this script.
build() {
	local name=$1 pkg=$2 out=$3 ldflags=${4:-}
	local dir=$stage/$name
	mkdir -p "$dir"
	cp "$here/$name.go.mod" "$dir/go.mod"
	cp "$here/$name.go.sum" "$dir/go.sum"
	local start=$SECONDS
	log "building $(basename "$out") ($pkg) -- minutes when cold"
	(cd "$dir" && go build -trimpath -tags selinux,notest,grpcnotrace \
		-ldflags "-s -w $ldflags" -o "$out" "$pkg")
	log "built $(basename "$out") in $((SECONDS - start))s"
}

# The version stamps hack/lib/version.sh would set; the git commit is not in the
# proxy's metadata, so it stays unset.
minor=$(sed -E 's/^v[0-9]+\.([0-9]+)\..*/\1/' <<<"$K8S_VERSION")
ld=""
for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
	ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done

for c in $COMPONENTS; do
	build kubernetes "k8s.io/kubernetes/cmd/$c" "$stage/out/$c" "$ld"
done
build etcd go.etcd.io/etcd/server/v3 "$stage/out/etcd"

if [ -x "$stage/out/kube-apiserver" ]; then "$stage/out/kube-apiserver" --version >&2; fi
# sed reads all of it: head -1 may exit first, and under pipefail the
# SIGPIPE etcd gets then fails the whole build without a word.
"$stage/out/etcd" --version | sed -n 1p >&2

# Publish atomically: readers see either the old directory or the complete new one.
echo "$want" >"$stage/out/.stamp"
rm -rf "$bin.old"
[ -d "$bin" ] && mv "$bin" "$bin.old"
mv "$stage/out" "$bin"
rm -rf "$bin.old"
log "control plane ready in $bin"
echo "$bin"
