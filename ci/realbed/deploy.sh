#!/usr/bin/env bash
# Deploys baton into one site of the real bed (up.sh first):
#   ci/realbed/deploy.sh baton-site-a IMAGE
# loads IMAGE (baton-image.sh) into the site's node, applies the CRDs
# (deploy/crds) and the operator's generated roles (deploy/rbac), makes the
# storage API's TLS secret and the CA secret, applies site.yaml, and waits
# until the site's storage node is Ready and kubelet knows the CSI driver.
# Re-running it updates what it applied.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

site=${1:?usage: deploy.sh SITE IMAGE}
image=${2:?usage: deploy.sh SITE IMAGE}
node=$site-control-plane
kubeconfig=$run/$site.kubeconfig
kubectl() { "$run/kubectl" --kubeconfig "$kubeconfig" "$@"; }
case $site in
baton-site-a) cluster_id=0000000a-0000-4000-8000-00000000000a ;;
baton-site-b) cluster_id=0000000b-0000-4000-8000-00000000000b ;;
*) die "deploy.sh: $site is not one of the sites ($SITES)" ;;
esac
started=$SECONDS
node_ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$node")

"$tools/kind" load docker-image "$image" --name "$site" >"$run/$site.load.log" 2>&1 ||
	{ cat "$run/$site.load.log" >&2; die "$site: kind load docker-image $image failed"; }

kubectl apply --server-side -f "$repo_root/deploy/crds" >/dev/null
kubectl wait --for=condition=Established crd --all --timeout=60s >/dev/null
kubectl create namespace baton-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl apply -f "$repo_root/deploy/rbac" >/dev/null

# One CA for the bed signs every site's storage API certificate; the
# certificate names the Service the CSI driver and the node agent reach.
# The sites deploy at once: the CA and its serial file are made and used
# under one lock.
exec 9>"$run/.ca.lock"
flock 9
if ! [ -f "$run/ca.crt" ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj /CN=baton-realbed-ca \
		-keyout "$run/ca.key" -out "$run/ca.crt" 2>/dev/null
fi
# issue NAME CN SANS: a certificate and key signed by the bed's CA, in a
# kubernetes.io/tls Secret NAME of baton-system.
issue() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$2" \
		-keyout "$run/$site.$1.key" -out "$run/$site.$1.csr" 2>/dev/null
	openssl x509 -req -in "$run/$site.$1.csr" -CA "$run/ca.crt" -CAkey "$run/ca.key" -CAcreateserial -days 30 \
		-extfile <(printf 'subjectAltName=%s\n' "$3") -out "$run/$site.$1.crt" 2>/dev/null
	kubectl -n baton-system create secret tls "$1" --cert "$run/$site.$1.crt" --key "$run/$site.$1.key" \
		--dry-run=client -o yaml | kubectl apply -f - >/dev/null
}
# The storage API's certificate names the node's address, where the other
# site and this site's CSI driver reach it (a NodePort), and the Service;
# the stream server's names the address its node agent advertises.
issue baton-controller-tls "baton-controller.$site" \
	"DNS:baton-controller.baton-system.svc,DNS:baton-controller.baton-system.svc.cluster.local,IP:$node_ip"
issue baton-node-stream-tls "baton-node-stream.$site" "IP:$node_ip"
kubectl -n baton-system create secret generic baton-ca --from-file ca.crt="$run/ca.crt" \
	--dry-run=client -o yaml | kubectl apply -f - >/dev/null
flock -u 9

sed -e "s|@IMAGE@|$image|g" -e "s|@SITE@|$site|g" -e "s|@CLUSTER_ID@|$cluster_id|g" \
	-e "s|@NODE@|$node|g" -e "s|@NODE_IP@|$node_ip|g" "$realbed_dir/site.yaml" >"$run/$site.baton.yaml"
kubectl apply -f "$run/$site.baton.yaml" >/dev/null

# until WHAT SECONDS CMD...: polls CMD every second until it succeeds.
until_ready() {
	local what=$1 limit=$2 start=$SECONDS
	shift 2
	until "$@" >/dev/null 2>&1; do
		if [ $((SECONDS - start)) -ge "$limit" ]; then
			kubectl -n baton-system get pods -o wide >&2 || true
			die "$site: $what: not within $limit s"
		fi
		sleep 1
	done
}
ready_nodes() { [ "$(kubectl -n baton-system get storagecluster "$site" -o jsonpath='{.status.readyNodeCount}')" -ge 1 ]; }
driver_registered() { kubectl get csinode "$node" -o jsonpath='{.spec.drivers[*].name}' | grep -qw csi.baton-dr.io; }
until_ready "the operator is ready" 180 kubectl -n baton-system wait --for=condition=Available deployment/baton-controller --timeout=1s
until_ready "the storage node is Ready" 180 ready_nodes
until_ready "kubelet has registered csi.baton-dr.io" 120 driver_registered
until_ready "the CSI controller is ready" 120 kubectl -n baton-system wait --for=condition=Available deployment/baton-csi-controller --timeout=1s
log "$site: baton deployed in $((SECONDS - started)) s (cluster $cluster_id, node $node at $node_ip)"
