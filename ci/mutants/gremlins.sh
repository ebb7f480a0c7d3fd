#!/usr/bin/env bash
# Builds gremlins (github.com/go-gremlins/gremlins, the mutation tool behind
# `make mutants`) from the Go module proxy into a cache outside the repository,
# and prints the binary's path.
#
#   ci/mutants/gremlins.sh        # build if missing, print the path
#
# Why a throwaway module: gremlins' dependencies (viper and its kin) have no
# place in baton's own go.mod, which every build of baton resolves. The
# gremlins.go.mod/.go.sum pair beside this script pins the version and what it
# resolves to; the binary's name carries their hash, so a new pin builds anew.
# Cold about a minute on 2 cores, warm well under a second.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${BATON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton}
bin=$cache/mutants/bin/gremlins-$(cat "$here/gremlins.go.mod" "$here/gremlins.go.sum" | sha256sum | cut -c1-12)

if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$here/gremlins.go.mod" "$stage/go.mod"
cp "$here/gremlins.go.sum" "$stage/go.sum"
mkdir -p "$(dirname "$bin")"
echo "mutants: building gremlins into $bin" >&2
(cd "$stage" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -trimpath -o "$bin.tmp" github.com/go-gremlins/gremlins/cmd/gremlins)
mv "$bin.tmp" "$bin"
echo "$bin"
