#!/usr/bin/env bash
# Tears the real bed down: takes baton out of the sites first (so each node
# agent closes its pool), deletes the kind clusters and their network, releases
# any loop device still backed by a site's pool, removes the firewall rule,
# stops the private dockerd and removes its bridge. What is cached (images,
# tools, the dockerd's data-root) stays; the host's docker0 is never touched.
# Safe to run when nothing is up.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root "tearing the real bed down"

if docker version >/dev/null 2>&1; then
	for c in $SITES; do
		kubeconfig=$run/$c.kubeconfig
		if [ -f "$kubeconfig" ] && "$run/kubectl" --kubeconfig "$kubeconfig" get ns baton-system >/dev/null 2>&1; then
			bash "$realbed_dir/undeploy.sh" "$c" || log "$c: taking baton out failed; the loop sweep below releases what is left"
		fi
	done
	for c in $("$tools/kind" get clusters 2>/dev/null); do
		start=$SECONDS
		"$tools/kind" delete cluster --name "$c" >/dev/null 2>&1 || die "kind delete cluster --name $c failed"
		log "$c: deleted in $((SECONDS - start)) s"
	done
	if docker network inspect kind >/dev/null 2>&1; then docker network rm kind >/dev/null; fi
fi

# Loop devices the sites' node agents left attached (a crash, a failed
# undeploy): the volumes' first, then the pools', whose file systems the
# volumes' backing files keep busy. Their backing files are under the
# nodes' /var/lib/baton-realbed.
for pass in volumes pools; do
	for f in /sys/block/loop*/loop/backing_file; do
		[ -e "$f" ] || continue
		backing=$(cat "$f")
		case $backing in */baton-realbed/*) ;; *) continue ;; esac
		pool=no
		case $backing in */pool.img*) pool=yes ;; esac
		if [ "$pass" = volumes ] && [ "$pool" = yes ]; then continue; fi
		if [ "$pass" = pools ] && [ "$pool" = no ]; then continue; fi
		dev=/dev/$(basename "$(dirname "$(dirname "$f")")")
		if losetup -d "$dev"; then log "detached $dev ($backing)"; else log "could not detach $dev ($backing)"; fi
	done
done

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
