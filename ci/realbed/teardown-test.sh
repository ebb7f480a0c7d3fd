#!/usr/bin/env bash
# Issue 16's end-to-end check of teardown, on a running bed (make realbed):
# a user's claim is left in site A, mounted by a running pod; then
# `make realbed-down` (the private dockerd kept: others may share it) must
# exit 0 and leave attached none of the loop devices the bed's sites had
# before -- the pools and the volumes, the user's among them.
#   ci/realbed/teardown-test.sh IMAGE
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root "the teardown test"
image=${1:?usage: teardown-test.sh IMAGE}
kubectl() { "$run/kubectl" --kubeconfig "$run/baton-site-a.kubeconfig" "$@"; }

kubectl create namespace user-left-this --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: mine, namespace: user-left-this}
spec: {accessModes: [ReadWriteOnce], storageClassName: baton, resources: {requests: {storage: 128Mi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: holder, namespace: user-left-this}
spec:
  containers:
  - {name: holder, image: $image, imagePullPolicy: Never, command: [sh, -c, 'echo mine >/data/f && sleep infinity'],
     volumeMounts: [{name: data, mountPath: /data}]}
  volumes: [{name: data, persistentVolumeClaim: {claimName: mine}}]
YAML
kubectl -n user-left-this wait --for=condition=Ready pod/holder --timeout=180s >/dev/null ||
	die "the user's pod did not start"

# The sites' devices now, while the nodes' namespaces still show whole paths.
before=$(losetup --list --noheadings --output NAME,BACK-FILE | awk '$2 ~ /baton-realbed\/baton-site-/ {print $1}')
[ "$(wc -w <<<"$before")" -ge 3 ] || die "expected the two pools and the user's volume attached, found: $before"
log "attached before teardown: $(tr '\n' ' ' <<<"$before")"

BATON_REALBED_KEEP_DOCKERD=1 bash "$realbed_dir/down.sh" || die "make realbed-down failed"
left=""
for d in $before; do
	if losetup "$d" >/dev/null 2>&1; then left="$left $d($(losetup --list --noheadings --output BACK-FILE "$d"))"; fi
done
[ -z "$left" ] || die "still attached after teardown:$left"
log "teardown test passed: none of $(wc -w <<<"$before") devices left (losetup -a shows none of them)"
