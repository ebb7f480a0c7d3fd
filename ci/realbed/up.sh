#!/usr/bin/env bash
# Brings the real bed's clusters up: builds (or finds cached) everything they
# need, starts the private dockerd, and has `batonctl realbed up` create three
# single-node kind clusters, baton-hub, baton-site-a and baton-site-b, with
# their kubeconfigs in $cache/run/<cluster>.kubeconfig. Idempotent: a cluster
# that exists under a running dockerd is kept. Root (debootstrap, chroot, the dockerd, a firewall
# rule). down.sh undoes it. A failed bring-up takes away what it made unless
# BATON_REALBED_RETAIN=1 keeps it for inspection.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$realbed_dir/batonctl.sh"
need_root "the real bed"

started=$SECONDS
# What a kind node image needs, besides etcd which the script always builds.
k8s_bin=$(COMPONENTS="kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubeadm kubectl" \
	bash "$repo_root/ci/controlplane/build.sh")
timed "tools (kind, containerd, runc, crictl, CNI plugins, CoreDNS, local-path)" bash "$realbed_dir/tools.sh"
timed "root file systems" bash "$realbed_dir/rootfs.sh"
# Clusters that outlived their dockerd (it ends with the session that
# started it, or the machine) are torn down first: kind's nodes do not come
# back whole under a new daemon -- seen: etcd, CoreDNS and an API server not
# Ready 3 minutes after, and the bring-up failed. Down and up again costs
# about 3 minutes; a bed whose dockerd kept running is kept as it is.
daemon_was_up=0
docker version >/dev/null 2>&1 && daemon_was_up=1
bash "$realbed_dir/dockerd.sh" start
if [ "$daemon_was_up" = 0 ] && docker ps -a --format '{{.Names}}' | grep -qx -E 'baton-(hub|site-a|site-b)-control-plane'; then
	log "the bed's clusters outlived their dockerd: tearing them down to bring them up anew"
	BATON_REALBED_KEEP_DOCKERD=1 bash "$realbed_dir/down.sh"
fi
timed "node image" bash "$realbed_dir/images.sh" "$k8s_bin"
mkdir -p "$run"
ln -sfn "$k8s_bin/kubectl" "$run/kubectl"

# The clusters, through kind's Go API (bed/real/infra): the host's addressing
# checked first, then the bed's network and firewall rule, then each cluster
# on its own pod and service ranges.
"$(batonctl)" realbed up || die "bringing the clusters up failed"
log "clusters up in $((SECONDS - started)) s"
