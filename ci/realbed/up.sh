#!/usr/bin/env bash
# Brings the real bed's clusters up: builds (or finds cached) everything they
# need, starts the private dockerd, and creates three single-node kind clusters,
# baton-hub, baton-site-a and baton-site-b, with their kubeconfigs in
# $cache/run/<cluster>.kubeconfig. Idempotent: a cluster that exists is kept.
# Root (debootstrap, chroot, the dockerd, a firewall rule). down.sh undoes it.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root "the real bed"

started=$SECONDS
# What a kind node image needs, besides etcd which the script always builds.
k8s_bin=$(COMPONENTS="kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubeadm kubectl" \
	bash "$repo_root/ci/controlplane/build.sh")
timed "tools (kind, containerd, runc, crictl, CNI plugins, CoreDNS, local-path)" bash "$realbed_dir/tools.sh"
timed "root file systems" bash "$realbed_dir/rootfs.sh"
bash "$realbed_dir/dockerd.sh" start
timed "node image" bash "$realbed_dir/images.sh" "$k8s_bin"
mkdir -p "$run"
ln -sfn "$k8s_bin/kubectl" "$run/kubectl"

# kind's network, made before kind would make it, to fix its bridge's name
# (the options and IPv6 subnet are the ones kind itself uses for "kind").
if ! docker network inspect kind >/dev/null 2>&1; then
	docker network create -d bridge -o com.docker.network.bridge.enable_ip_masquerade=true \
		-o com.docker.network.bridge.name="$KIND_BRIDGE" --ipv6 --subnet fc00:f853:ccd:e793::/64 kind >/dev/null
fi
# With bridge-nf-call-iptables on, node-to-node traffic on that bridge crosses
# the host's FORWARD chain, whose policy a host dockerd sets to DROP; this rule
# lets the nodes (and so the clusters) reach each other whatever the policy.
if ! iptables -C FORWARD -i "$KIND_BRIDGE" -o "$KIND_BRIDGE" -j ACCEPT 2>/dev/null; then
	iptables -I FORWARD -i "$KIND_BRIDGE" -o "$KIND_BRIDGE" -j ACCEPT
fi

# The pods' network: the bed's clusters are single-node, so a static ptp
# conflist over the node's pod CIDR is all the CNI they need (kind's kindnet is
# not served here; its route syncing matters only with several nodes).
cat >"$run/10-baton-realbed.conflist" <<'JSON'
{
  "cniVersion": "0.4.0",
  "name": "baton-realbed",
  "plugins": [
    {"type": "ptp", "ipMasq": true, "mtu": 1500,
     "ipam": {"type": "host-local", "dataDir": "/run/cni-ipam-state",
              "routes": [{"dst": "0.0.0.0/0"}], "ranges": [[{"subnet": "10.244.0.0/24"}]]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
JSON

# config CLUSTER: kind's cluster config. A site's node also gets the host's
# /dev (baton-node attaches loop devices; a privileged container's /dev is a
# copy made at its start and would lack the new ones) and a host directory for
# the btrfs pool, so that down.sh can find and release both.
config() {
	cat <<YAML
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
networking:
  ipFamily: ipv4
  podSubnet: 10.244.0.0/16
  disableDefaultCNI: true
nodes:
- role: control-plane
  extraMounts:
  - hostPath: $run/10-baton-realbed.conflist
    containerPath: /etc/cni/net.d/10-baton-realbed.conflist
    readOnly: true
YAML
	case " $SITES " in *" $1 "*)
		mkdir -p "$run/$1/baton"
		cat <<YAML
  - hostPath: /dev
    containerPath: /dev
  - hostPath: $run/$1/baton
    containerPath: /var/lib/baton-realbed
YAML
		;;
	esac
}

existing=$("$tools/kind" get clusters 2>/dev/null || true)
for c in $CLUSTERS; do
	kubeconfig=$run/$c.kubeconfig
	if grep -qx "$c" <<<"$existing"; then
		"$tools/kind" get kubeconfig --name "$c" >"$kubeconfig"
		log "$c: exists"
		continue
	fi
	config "$c" >"$run/$c.kind.yaml"
	start=$SECONDS
	"$tools/kind" create cluster --name "$c" --image "$NODE_IMAGE" --config "$run/$c.kind.yaml" \
		--kubeconfig "$kubeconfig" --wait 5m >"$run/$c.create.log" 2>&1 ||
		{ tail -20 "$run/$c.create.log" >&2; die "kind create cluster $c failed; its log: $run/$c.create.log"; }
	log "$c: created in $((SECONDS - start)) s"
done
for c in $CLUSTERS; do
	"$run/kubectl" --kubeconfig "$run/$c.kubeconfig" wait --for=condition=Ready node --all --timeout=120s >/dev/null
	"$run/kubectl" --kubeconfig "$run/$c.kubeconfig" -n kube-system wait --for=condition=Ready pod --all --timeout=180s >/dev/null ||
		{ "$run/kubectl" --kubeconfig "$run/$c.kubeconfig" get pods -A >&2; die "$c: kube-system pods not Ready"; }
done
log "clusters up in $((SECONDS - started)) s"
