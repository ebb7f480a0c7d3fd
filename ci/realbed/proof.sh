#!/usr/bin/env bash
# The real bed's proof that baton serves a site's workloads: a claim of the
# StorageClass baton is bound, a pod mounts it and writes a token, the pod is
# deleted, a second pod mounts the same claim and must read the token back.
#   ci/realbed/proof.sh baton-site-a IMAGE
# Exits 1, naming the step, when any of it fails. The pods run baton's image
# (no registry here; it has a shell).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

site=${1:?usage: proof.sh SITE IMAGE}
image=${2:?usage: proof.sh SITE IMAGE}
kubectl() { "$run/kubectl" --kubeconfig "$run/$site.kubeconfig" "$@"; }
fail() {
	kubectl -n baton-proof get pvc,pods -o wide >&2 || true
	kubectl -n baton-proof describe pvc proof >&2 || true
	die "$site: proof failed: $*"
}
started=$SECONDS
token=$site-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')

# pod NAME SCRIPT: a pod that mounts the claim at /data and runs SCRIPT once.
pod() {
	cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: baton-proof}
spec:
  restartPolicy: Never
  containers:
  - name: $1
    image: $image
    imagePullPolicy: Never
    command: [sh, -c, '$2']
    volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: proof}}]
YAML
}

kubectl delete namespace baton-proof --ignore-not-found --timeout=120s >/dev/null
kubectl create namespace baton-proof >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: proof, namespace: baton-proof}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: baton
  resources: {requests: {storage: 256Mi}}
YAML
kubectl -n baton-proof wait --for=jsonpath='{.status.phase}'=Bound pvc/proof --timeout=120s >/dev/null ||
	fail "the claim was not bound within 120 s"
pv=$(kubectl -n baton-proof get pvc proof -o jsonpath='{.spec.volumeName}')
handle=$(kubectl get pv "$pv" -o jsonpath='{.spec.csi.volumeHandle}')

pod writer "echo $token >/data/token && sync && df -hT /data | tail -1" | kubectl apply -f - >/dev/null
kubectl -n baton-proof wait --for=jsonpath='{.status.phase}'=Succeeded pod/writer --timeout=180s >/dev/null ||
	{ kubectl -n baton-proof describe pod writer >&2; fail "the writer did not finish within 180 s"; }
mounted=$(kubectl -n baton-proof logs writer | tr -s ' ')
kubectl -n baton-proof delete pod writer --timeout=120s >/dev/null

pod reader "cat /data/token" | kubectl apply -f - >/dev/null
kubectl -n baton-proof wait --for=jsonpath='{.status.phase}'=Succeeded pod/reader --timeout=180s >/dev/null ||
	{ kubectl -n baton-proof describe pod reader >&2; fail "the reader did not finish within 180 s"; }
read_back=$(kubectl -n baton-proof logs reader)
[ "$read_back" = "$token" ] || fail "the second pod read '$read_back', the first wrote '$token'"
# Its namespace goes now, in the background: deleted at the next proof's
# start instead, it cost that proof 20-25 s (the reader, the claim and its
# DeleteVolume) before anything was proved. A failed proof leaves it to be
# looked at; the next one deletes it first either way.
kubectl delete namespace baton-proof --wait=false >/dev/null
log "$site: proof passed in $((SECONDS - started)) s: claim proof bound to $pv (handle $handle), mounted as '$mounted', written by one pod and read back by another"
