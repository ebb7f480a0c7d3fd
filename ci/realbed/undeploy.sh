#!/usr/bin/env bash
# Takes baton out of one site of the real bed, in the order that leaves no loop
# device behind: the proof's pods and claims first (the driver unmounts and
# deletes their volumes), then the node agent, which closes its pool on SIGTERM
# (unmounting it and detaching its loop devices).
#   ci/realbed/undeploy.sh baton-site-a
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

site=${1:?usage: undeploy.sh SITE}
kubectl() { "$run/kubectl" --kubeconfig "$run/$site.kubeconfig" "$@"; }
kubectl delete namespace baton-proof --ignore-not-found --timeout=120s >/dev/null
# A claim's volume is deleted after the claim, by the CSI controller; the node
# agent must outlive that.
start=$SECONDS
while kubectl get pv -o jsonpath='{.items[*].spec.storageClassName}' | grep -qw baton; do
	[ $((SECONDS - start)) -lt 120 ] || die "$site: baton's persistent volumes are still there after 120 s"
	sleep 1
done
kubectl -n baton-system delete daemonset baton-node --ignore-not-found --cascade=foreground --timeout=120s >/dev/null
log "$site: baton's node agent and the proof's volumes are gone"
