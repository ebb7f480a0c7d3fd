#!/usr/bin/env bash
# Builds kind's node image for Kubernetes $K8S_VERSION inside the private
# dockerd, without pulling anything:
#   1. the base image: the node tree (rootfs.sh) made into what kind's
#      images/base/Dockerfile makes, with containerd, runc, crictl and the CNI
#      plugins from tools.sh, and two fixes this VM needs (below);
#   2. every image a node runs, under the names kubeadm and kind ask for:
#      kube-apiserver, -controller-manager, -scheduler, -proxy, etcd, CoreDNS,
#      pause, local-path-provisioner and its helper, kindnetd (a placeholder:
#      the bed disables kind's CNI, see up.sh);
#   3. kubernetes-server-linux-amd64.tar.gz in the layout `kind build
#      node-image --type file` reads, and that build.
# Needs the private dockerd running (dockerd.sh start). Keyed by its inputs;
# cold about 2 minutes, warm instant.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

k8s_bin=$1 # from ci/controlplane/build.sh with the node's COMPONENTS
images=$cache/images
key=$(cat "$realbed_dir/images.sh" "$realbed_dir/lib.sh" "$realbed_dir"/files/* "$k8s_bin/.stamp" "$tools/.stamp" \
	"$cache"/rootfs/*.stamp | sha256sum | cut -c1-16)
warm() { [ "$(cat "$images/node.stamp" 2>/dev/null)" = "$key" ] && docker image inspect "$NODE_IMAGE" >/dev/null 2>&1; }
if warm; then exit 0; fi
lock images
if warm; then exit 0; fi
need_root "building the node image (chroot)"

kind_src=$(go env GOMODCACHE)/sigs.k8s.io/kind@$KIND_VERSION
[ -d "$kind_src/images/base/files" ] || die "kind's module is not in $(go env GOMODCACHE); run tools.sh"
export DOCKER_BUILDKIT=0 # the legacy builder never pulls a FROM it has locally
rm -rf "$images" && mkdir -p "$images"
work=$images/work
trap 'rm -rf "$work"' EXIT

# Image names kubeadm $K8S_VERSION and kind $KIND_VERSION expect ("kubeadm config
# images list", kind's nodeimage constants, the sandbox image of its containerd config).
IMG_APISERVER=registry.k8s.io/kube-apiserver:$K8S_VERSION
IMG_KCM=registry.k8s.io/kube-controller-manager:$K8S_VERSION
IMG_SCHEDULER=registry.k8s.io/kube-scheduler:$K8S_VERSION
IMG_PROXY=registry.k8s.io/kube-proxy:$K8S_VERSION
IMG_ETCD=registry.k8s.io/etcd:3.7.0-0
IMG_COREDNS=registry.k8s.io/coredns/coredns:$COREDNS_VERSION
IMG_PAUSE=registry.k8s.io/pause:3.10
IMG_PAUSE_KUBEADM=registry.k8s.io/pause:3.10.2
IMG_KINDNET=docker.io/kindest/kindnetd:v20260820-69b56db7
IMG_LOCAL_PATH=docker.io/kindest/local-path-provisioner:v20260820-69b56db7
IMG_LOCAL_PATH_HELPER=docker.io/kindest/local-path-helper:v20260131-7181c60a

# build ARGS...: docker build, quiet unless it fails (the legacy builder warns
# on stderr that it is deprecated at every call).
build() {
	docker build -q "$@" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; return 1; }
}

base_image() {
	local root=$work/base
	mkdir -p "$work"
	cp -a "$cache/rootfs/node" "$root"
	local f=$kind_src/images/base/files
	install -d -m 0755 "$root/kind" "$root/kind/bin" "$root/LICENSES" "$root/etc/containerd" \
		"$root/etc/systemd/system/kubelet.service.d" "$root/usr/local/sbin" "$root/opt/cni/bin" "$root/etc/kubernetes/manifests"
	install -m 0755 "$f"/usr/local/bin/* "$root/usr/local/bin/"
	install -m 0644 "$f/kind/README.txt" "$root/kind/"
	install -m 0755 "$f"/kind/bin/* "$root/kind/bin/"
	install -m 0644 "$f"/LICENSES/* "$root/LICENSES/"
	install -m 0644 "$f/etc/crictl.yaml" "$root/etc/"
	install -m 0644 "$f"/etc/containerd/* "$root/etc/containerd/"
	install -m 0644 "$f"/etc/default/* "$root/etc/default/"
	install -m 0644 "$f"/etc/sysctl.d/* "$root/etc/sysctl.d/"
	install -m 0644 "$f"/etc/systemd/system/*.service "$f"/etc/systemd/system/*.slice "$root/etc/systemd/system/"
	install -m 0644 "$f"/etc/systemd/system/kubelet.service.d/* "$root/etc/systemd/system/kubelet.service.d/"
	# The systemd trimming of kind's Dockerfile.
	find "$root/lib/systemd/system/sysinit.target.wants/" -name systemd-tmpfiles-setup.service -delete
	rm -f "$root"/lib/systemd/system/multi-user.target.wants/* "$root"/etc/systemd/system/*.wants/* \
		"$root"/lib/systemd/system/local-fs.target.wants/* "$root"/lib/systemd/system/sockets.target.wants/*udev* \
		"$root"/lib/systemd/system/sockets.target.wants/*initctl* "$root"/lib/systemd/system/basic.target.wants/*
	echo ReadKMsg=no >>"$root/etc/systemd/journald.conf"
	ln -sf /usr/lib/systemd/systemd "$root/sbin/init"
	# This VM: nothing may lower oom_score_adj below 0 (no CAP_SYS_RESOURCE), so
	# containerd must clamp the pods' (the knob kind flips for rootless); and
	# kubelet >= 1.35 refuses cgroup v1 unless told not to.
	sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' "$root/etc/containerd/config.toml"
	sed -i 's|^KUBELET_EXTRA_ARGS=.*|KUBELET_EXTRA_ARGS=--runtime-cgroups=/system.slice/containerd.service --fail-cgroupv1=false|' \
		"$root/etc/default/kubelet"
	grep -q 'restrict_oom_score_adj = true' "$root/etc/containerd/config.toml" || die "kind's containerd config changed: restrict_oom_score_adj not set"
	install -m 0755 "$tools"/containerd/* "$tools"/crictl/crictl "$root/usr/local/bin/"
	install -m 0755 "$tools/runc/runc" "$root/usr/local/sbin/runc"
	install -m 0755 "$tools"/cni/* "$root/opt/cni/bin/"
	"$tools/containerd/ctr" oci spec |
		jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' |
		jq 'del(.process.rlimits)' >"$root/etc/containerd/cri-base.json"
	chroot "$root" systemctl enable kubelet.service containerd.service undo-mount-hacks.service >/dev/null 2>&1
	chroot "$root" systemctl mask systemd-binfmt.service >/dev/null 2>&1
	: >"$root/etc/machine-id" # kind's entrypoint makes one per node
	tar -C "$root" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . |
		docker import --change 'ENV container=docker' \
			--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
			--change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' - "$BASE_IMAGE-flat" >/dev/null
	# docker import cannot set STOPSIGNAL; a build with no layers can.
	mkdir -p "$work/stopsignal"
	printf 'FROM %s\nSTOPSIGNAL SIGRTMIN+3\n' "$BASE_IMAGE-flat" >"$work/stopsignal/Dockerfile"
	build -t "$BASE_IMAGE" "$work/stopsignal"
	docker rmi "$BASE_IMAGE-flat" >/dev/null
	rm -rf "$root"
}

# image NAME TAG... < Dockerfile: builds $work/NAME (its files copied in before).
image() {
	local dir=$work/$1
	shift
	mkdir -p "$dir"
	cat >"$dir/Dockerfile"
	local tags=()
	for t in "$@"; do tags+=(-t "$t"); done
	build "${tags[@]}" "$dir"
}

# copy NAME FILE...: puts FILE... into $work/NAME, the context of image NAME.
copy() {
	local dir=$work/$1
	shift
	mkdir -p "$dir"
	cp "$@" "$dir/"
}

component_images() {
	# A distroless-like base for the static binaries, and the tools tree
	# (iptables for kube-proxy; baton's image is made from it too).
	local static=$work/static-root
	mkdir -p "$static/etc/ssl/certs" "$static/tmp" "$static/home/nonroot" "$static/root"
	chmod 1777 "$static/tmp"
	cp "$realbed_dir/files/passwd" "$realbed_dir/files/group" "$realbed_dir/files/nsswitch.conf" "$static/etc/"
	cp /etc/ssl/certs/ca-certificates.crt "$static/etc/ssl/certs/"
	tar -C "$static" --numeric-owner -c . | docker import --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' - baton.local/static >/dev/null
	tar -C "$cache/rootfs/tools" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . |
		docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - baton.local/debian-tools >/dev/null

	for c in kube-apiserver kube-controller-manager kube-scheduler etcd; do copy "$c" "$k8s_bin/$c"; done
	printf 'FROM baton.local/static\nCOPY kube-apiserver /usr/local/bin/\n' | image kube-apiserver "$IMG_APISERVER"
	printf 'FROM baton.local/static\nCOPY kube-controller-manager /usr/local/bin/\n' | image kube-controller-manager "$IMG_KCM"
	printf 'FROM baton.local/static\nCOPY kube-scheduler /usr/local/bin/\n' | image kube-scheduler "$IMG_SCHEDULER"
	printf 'FROM baton.local/static\nCOPY etcd /usr/local/bin/\n' | image etcd "$IMG_ETCD"
	copy kube-proxy "$k8s_bin/kube-proxy" "$realbed_dir/files/iptables-wrapper"
	image kube-proxy "$IMG_PROXY" <<'DOCKERFILE'
FROM baton.local/debian-tools
COPY kube-proxy /usr/local/bin/
COPY iptables-wrapper /usr/sbin/
RUN for t in iptables ip6tables; do for s in "" -save -restore; do ln -sf /usr/sbin/iptables-wrapper /usr/sbin/$t$s; done; done
DOCKERFILE
	copy coredns "$tools/coredns/coredns"
	printf 'FROM baton.local/static\nCOPY coredns /coredns\nEXPOSE 53 53/udp\nENTRYPOINT ["/coredns"]\n' | image coredns "$IMG_COREDNS"
	mkdir -p "$work/pause"
	gcc -Os -static -o "$work/pause/pause" "$realbed_dir/files/pause.c"
	strip "$work/pause/pause"
	# kindnetd's tag carries the pause program: kind's node-image build insists
	# on the image, but the bed's clusters never run it (disableDefaultCNI).
	printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' |
		image pause "$IMG_PAUSE" "$IMG_PAUSE_KUBEADM" "$IMG_KINDNET"
	copy local-path "$tools/lpp/local-path-provisioner"
	printf 'FROM baton.local/static\nCOPY local-path-provisioner /usr/local/bin/\nENTRYPOINT ["/usr/local/bin/local-path-provisioner"]\n' |
		image local-path "$IMG_LOCAL_PATH"
	printf 'FROM baton.local/debian-tools\n' | image local-path-helper "$IMG_LOCAL_PATH_HELPER"
}

server_tarball() {
	local stage=$work/stage/kubernetes
	mkdir -p "$stage/server/bin"
	echo "$K8S_VERSION" >"$stage/version"
	cp "$k8s_bin/kubeadm" "$k8s_bin/kubelet" "$k8s_bin/kubectl" "$stage/server/bin/"
	docker save -o "$stage/server/bin/kube-apiserver.tar" "$IMG_APISERVER"
	docker save -o "$stage/server/bin/kube-controller-manager.tar" "$IMG_KCM"
	docker save -o "$stage/server/bin/kube-scheduler.tar" "$IMG_SCHEDULER"
	# kind reads one archive's tags from its "repositories" file when that comes
	# first in the tar, otherwise from manifest.json's first entry only; so
	# kube-proxy.tar carries every other image, "repositories" first, with fully
	# qualified names (kind would otherwise pull the ones it does not see).
	local x=$work/extra
	mkdir -p "$x"
	docker save "$IMG_PROXY" "$IMG_ETCD" "$IMG_COREDNS" "$IMG_PAUSE" "$IMG_PAUSE_KUBEADM" "$IMG_KINDNET" \
		"$IMG_LOCAL_PATH" "$IMG_LOCAL_PATH_HELPER" | tar -C "$x" -x
	local qualify='(split("/")[0] | test("[.:]")) or . == "localhost"'
	jq "with_entries(.key |= (if $qualify then . else \"docker.io/\" + . end))" "$x/repositories" >"$x/r" && mv "$x/r" "$x/repositories"
	jq "map(.RepoTags |= map(if $qualify then . else \"docker.io/\" + . end))" "$x/manifest.json" >"$x/m" && mv "$x/m" "$x/manifest.json"
	local layers=()
	for f in "$x"/*; do
		case ${f##*/} in repositories | manifest.json) ;; *) layers+=("${f##*/}") ;; esac
	done
	(cd "$x" && tar --numeric-owner -cf "$stage/server/bin/kube-proxy.tar" repositories manifest.json "${layers[@]}")
	tar -C "$work/stage" -c kubernetes | gzip -1 >"$images/kubernetes-server-linux-amd64.tar.gz"
}

node_image() {
	"$tools/kind" build node-image --type file "$images/kubernetes-server-linux-amd64.tar.gz" \
		--base-image "$BASE_IMAGE" --image "$NODE_IMAGE" >"$images/node-image.log" 2>&1 ||
		{ tail -20 "$images/node-image.log" >&2; die "kind build node-image failed; its log: $images/node-image.log"; }
}

timed "base image" base_image
timed "component images" component_images
timed "server tarball" server_tarball
timed "node image" node_image
echo "$key" >"$images/node.stamp"
log "node image $NODE_IMAGE ready ($(docker image inspect -f '{{.Size}}' "$NODE_IMAGE" | awk '{printf "%d MB", $1/1e6}'))"
