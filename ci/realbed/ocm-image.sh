#!/usr/bin/env bash
# Builds Open Cluster Management's image for the real bed in the private
# dockerd, offline, and prints its name (baton.local/ocm:<hash>):
#   ci/realbed/ocm-image.sh            # build if missing, print the image
#   ci/realbed/ocm-image.sh --warm-only  # print the image if built, else fail
#   ci/realbed/ocm-image.sh --binaries   # build the binaries only, print their directory
#
# What is in it: the two commands of open-cluster-management.io/ocm v1.0.0
# that a hub and a klusterlet in its Default mode run, built from the module
# proxy --
#   /registration  `controller` on the hub (ManagedClusters, the cluster
#                  namespaces and the agents' roles there, leases, CSR
#                  renewals) and `agent` on each site (bootstrap, CSR, the hub
#                  kubeconfig, the lease, ClusterClaims);
#   /work          `agent` on each site (applies the ManifestWorks of its
#                  cluster namespace, reports status and feedback).
# The paths are the ones OCM's own Deployment manifests run (bed/real/ocm
# renders those manifests). The image is FROM scratch with the user OCM's
# images run as (10001): the binaries are static (CGO_ENABLED=0).
#
# Not built: the cluster-manager and klusterlet operators (bed/real/ocm does
# what they would, from the same manifests), the webhooks (admission checks
# only), placement, the add-on manager and ManifestWorkReplicaSets (baton
# uses none of them).
#
# Why a throwaway module: ocm is a main module of its own, on Kubernetes
# libraries older than baton's. ocm.go.mod/.go.sum beside this script pin what
# it resolves to (the same pins as controllers/hub/testdata/ocm). One module,
# sigs.k8s.io/about-api at the pseudo-version ocm requires, is served by the
# proxy but unknown to the checksum database: its sum is the pinned go.sum's
# (GONOSUMDB for that module alone).
#
# Cold: the Go build takes minutes (the work agent alone about 11 on 2 busy
# cores); warm: instant.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OCM_VERSION=$(awk '$1 == "require" && $2 == "open-cluster-management.io/ocm" {print $3}' "$realbed_dir/ocm.go.mod")
[ -n "$OCM_VERSION" ] || die "ocm.go.mod pins no open-cluster-management.io/ocm"
work=$cache/ocm-image
bin=$work/bin-$OCM_VERSION-$(cat "$realbed_dir/ocm.go.mod" "$realbed_dir/ocm.go.sum" | sha256sum | cut -c1-12)
ctx=$work/context

image_of() { echo "baton.local/ocm:$(cat "$1"/registration "$1"/work "$1"/Dockerfile | sha256sum | cut -c1-12)"; }

if [ "${1:-}" = "--warm-only" ]; then
	[ -x "$bin/registration" ] && [ -x "$bin/work" ] && [ -f "$ctx/Dockerfile" ] || exit 1
	image=$(image_of "$ctx")
	docker image inspect "$image" >/dev/null 2>&1 || exit 1
	echo "$image"
	exit 0
fi
lock ocm-image

if ! [ -x "$bin/registration" ] || ! [ -x "$bin/work" ]; then
	stage=$work/module
	rm -rf "$stage" "$bin.tmp" && mkdir -p "$stage" "$bin.tmp"
	cp "$realbed_dir/ocm.go.mod" "$stage/go.mod"
	cp "$realbed_dir/ocm.go.sum" "$stage/go.sum"
	log "ocm: building registration and work ($OCM_VERSION) -- minutes when cold"
	start=$SECONDS
	(cd "$stage" && GOFLAGS=-mod=mod CGO_ENABLED=0 GONOSUMDB=sigs.k8s.io/about-api nice go build -trimpath \
		-ldflags "-s -w -X open-cluster-management.io/ocm/pkg/version.versionFromGit=$OCM_VERSION" \
		-o "$bin.tmp/" open-cluster-management.io/ocm/cmd/registration open-cluster-management.io/ocm/cmd/work)
	mv "$bin.tmp" "$bin"
	log "ocm: registration and work built in $((SECONDS - start)) s"
fi
if [ "${1:-}" = "--binaries" ]; then echo "$bin"; exit 0; fi
need_root "building OCM's image (the private dockerd)"
bash "$realbed_dir/dockerd.sh" start

rm -rf "$ctx" && mkdir -p "$ctx"
cp "$bin/registration" "$bin/work" "$ctx/"
printf 'FROM scratch\nCOPY registration work /\nUSER 10001\n' >"$ctx/Dockerfile"
image=$(image_of "$ctx")
if ! docker image inspect "$image" >/dev/null 2>&1; then
	DOCKER_BUILDKIT=0 docker build -q -t "$image" "$ctx" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
	log "built $image"
fi
echo "$image"
