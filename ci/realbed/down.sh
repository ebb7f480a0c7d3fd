#!/usr/bin/env bash
# Tears the real bed down (`make realbed-down`): `batonctl realbed down`
# takes baton out of the sites (so each node agent closes its pool), deletes
# the bed's kind clusters -- only baton-hub, baton-site-a and baton-site-b,
# never another user's on the same dockerd -- and its network, takes down
# zfs-drbd mode's DRBD resources and exports its pools in the host's kernel
# (only the bed's: named after its storage nodes), and detaches
# every loop device the sites' node agents attached, pools and volumes alike,
# whatever claims users left and however sysfs now shows their paths; it
# exits 1 naming anything it could not release. Then the private dockerd is
# stopped (BATON_REALBED_KEEP_DOCKERD=1 keeps it, for a dockerd others share)
# and the run directory removed. What is cached (images, tools, the dockerd's
# data-root) stays; the host's docker0 is never touched. Safe to run when
# nothing is up.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$realbed_dir/batonctl.sh"
need_root "tearing the real bed down"

status=0
"$(batonctl)" realbed down || status=1
if [ "${BATON_REALBED_KEEP_DOCKERD:-}" = 1 ]; then
	log "the private dockerd stays up (BATON_REALBED_KEEP_DOCKERD=1)"
else
	bash "$realbed_dir/dockerd.sh" stop || status=1
fi
# The run directory holds the pools' images; keep it if anything is still
# mounted there rather than delete under a mount.
if grep -q " $run" /proc/self/mountinfo; then
	log "something is still mounted under $run; leaving it"
	status=1
else
	rm -rf "$run"
fi
if [ "$status" = 0 ]; then log "real bed down"; else log "real bed down, with the failures above"; fi
exit "$status"
