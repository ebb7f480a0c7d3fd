# Sourced by the ci/realbed scripts after lib.sh: batonctl, the real bed's Go
# side (kind's API, the deployment's peers, teardown, the scenarios).
# (Not in lib.sh: the node image's key hashes lib.sh, and this changes with
# batonctl, not with the image.)
# shellcheck shell=bash

# batonctl: builds batonctl into $cache/bin and prints its path.
batonctl() {
	mkdir -p "$cache/bin"
	(cd "$repo_root" && go build -o "$cache/bin/batonctl" ./cmd/batonctl) || die "building batonctl failed"
	echo "$cache/bin/batonctl"
}
