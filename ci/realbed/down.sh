#!/usr/bin/env bash
# Tears the real bed down: deletes the kind clusters and their network,
# removes the firewall rule, stops the private dockerd and removes its bridge.
# What is cached (images, tools, the dockerd's data-root) stays; the host's
# docker0 is never touched.
# Safe to run when nothing is up.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root "tearing the real bed down"

if docker version >/dev/null 2>&1; then
	for c in $("$tools/kind" get clusters 2>/dev/null); do
		start=$SECONDS
		"$tools/kind" delete cluster --name "$c" >/dev/null 2>&1 || die "kind delete cluster --name $c failed"
		log "$c: deleted in $((SECONDS - start)) s"
	done
	if docker network inspect kind >/dev/null 2>&1; then docker network rm kind >/dev/null; fi
fi

while iptables -D FORWARD -i "$KIND_BRIDGE" -o "$KIND_BRIDGE" -j ACCEPT 2>/dev/null; do :; done
bash "$realbed_dir/dockerd.sh" stop
# The run directory holds the pools' images; keep it if anything is still
# mounted there rather than delete under a mount.
if grep -q " $run" /proc/self/mountinfo; then
	log "something is still mounted under $run; leaving it"
else
	rm -rf "$run"
fi
log "real bed down"
