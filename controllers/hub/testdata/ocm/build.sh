#!/usr/bin/env bash
# Builds Open Cluster Management's work agent (open-cluster-management.io/ocm
# v1.0.0, cmd/work) for the hub's end-to-end test, into a cache outside the
# repository, and prints the binary's path:
#
#   controllers/hub/testdata/ocm/build.sh     # build if missing, print the path
#   controllers/hub/testdata/ocm/build.sh --warm-only  # print the path if built, else fail
#   BATON_OCM_WORK_AGENT=$(controllers/hub/testdata/ocm/build.sh) \
#     go test -run TestEndToEndWithTheOCMWorkAgent ./controllers/hub/
#
# Why a throwaway module (as ci/controlplane/build.sh does for Kubernetes): the
# ocm module is a main module of its own and is not in baton's go.mod. The pinned
# work-agent.go.mod/.go.sum beside this script fix what it resolves to.
#
# One module, sigs.k8s.io/about-api at the pseudo-version ocm v1.0.0 requires, is
# served by the module proxy but unknown to the checksum database (404); its sum
# is taken from the pinned go.sum (GONOSUMDB for that module alone).
#
# Cold: about 11 minutes on 2 busy cores; warm: instant.
set -euo pipefail

OCM_VERSION=v1.0.0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${BATON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton}
out=$cache/ocm/$OCM_VERSION
bin=$out/work
stamp=$out/.stamp
want="ocm=$OCM_VERSION inputs=$(cat "$here"/work-agent.go.mod "$here"/work-agent.go.sum | sha256sum | cut -c1-16)"

if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then echo "$bin"; exit 0; fi
if [ "${1:-}" = "--warm-only" ]; then exit 1; fi

mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$here/work-agent.go.mod" "$stage/go.mod"
cp "$here/work-agent.go.sum" "$stage/go.sum"
printf '//go:build tools\n\npackage tools\n\nimport _ "open-cluster-management.io/ocm/cmd/work"\n' >"$stage/tools.go"
echo "ocm: building the work agent ($OCM_VERSION) -- minutes when cold" >&2
(cd "$stage" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod GONOSUMDB=sigs.k8s.io/about-api \
	go build -trimpath -ldflags "-s -w" -o "$stage/work" open-cluster-management.io/ocm/cmd/work)
mv "$stage/work" "$bin"
echo "$want" >"$stamp"
echo "$bin"
