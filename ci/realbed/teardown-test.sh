#!/usr/bin/env bash
# Issue 16's end-to-end check of teardown, on a running bed (make realbed):
# a user's two claims are left in site A, held by a running pod -- one
# mounted, one a raw block device, which kubelet maps by attaching a loop
# device of its own over the published device node (the scenarios' pods
# hold their volumes so); then `make realbed-down` (the private dockerd
# kept: others may share it) must exit 0 and leave attached none of the
# loop devices the bed's sites had before -- the pools, the volumes, the
# user's among them, and kubelet's map.
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
kind: PersistentVolumeClaim
metadata: {name: raw, namespace: user-left-this}
spec: {accessModes: [ReadWriteOnce], volumeMode: Block, storageClassName: baton, resources: {requests: {storage: 64Mi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: holder, namespace: user-left-this}
spec:
  containers:
  - {name: holder, image: $image, imagePullPolicy: Never, command: [sh, -c, 'echo mine >/data/f && sleep infinity'],
     volumeMounts: [{name: data, mountPath: /data}], volumeDevices: [{name: raw, devicePath: /dev/raw}]}
  volumes: [{name: data, persistentVolumeClaim: {claimName: mine}}, {name: raw, persistentVolumeClaim: {claimName: raw}}]
YAML
kubectl -n user-left-this wait --for=condition=Ready pod/holder --timeout=180s >/dev/null ||
	die "the user's pod did not start"

# The sites' devices now, while the nodes' namespaces still show whole
# paths: the pools and volumes under the sites' directories, kubelet's maps
# under its block volumes' directory.
devices=$(losetup --list --noheadings --output NAME,BACK-FILE)
before=$(awk '$2 ~ /baton-realbed\/baton-site-/ || $2 ~ /kubernetes.io\/csi\/volumeDevices\// {print $1}' <<<"$devices")
maps=$(awk '$2 ~ /kubernetes.io\/csi\/volumeDevices\// {print $1}' <<<"$devices")
[ "$(wc -w <<<"$before")" -ge 5 ] && [ -n "$maps" ] ||
	die "expected the two pools, the user's two volumes and kubelet's map of the raw one attached, found: $before"
log "attached before teardown: $(tr '\n' ' ' <<<"$before")"

BATON_REALBED_KEEP_DOCKERD=1 bash "$realbed_dir/down.sh" || die "make realbed-down failed"
left=""
for d in $before; do
	if losetup "$d" >/dev/null 2>&1; then left="$left $d($(losetup --list --noheadings --output BACK-FILE "$d"))"; fi
done
[ -z "$left" ] || die "still attached after teardown:$left"
log "teardown test passed: none of $(wc -w <<<"$before") devices left (losetup -a shows none of them)"
