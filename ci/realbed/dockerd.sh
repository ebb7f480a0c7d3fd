#!/usr/bin/env bash
# Starts or stops the real bed's private dockerd, which lives entirely under
# $cache/dockerd (see lib.sh): its own data-root, exec-root, socket and pidfile.
#
#   ci/realbed/dockerd.sh start     # idempotent: a running one is left alone
#   ci/realbed/dockerd.sh stop      # stops it by its pidfile, removes its bridge
#
# Why a private one: kind runs its nodes --privileged, which this VM refuses
# (no CAP_SYS_RESOURCE anywhere), so its default runtime is a wrapper that drops
# that capability (runc-nocapsysresource). It manages no iptables rules and uses
# a bridge of its own, created here. Never --bridge=none: a dockerd started so
# deletes the host's docker0.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

up() { docker version >/dev/null 2>&1; }

start() {
	need_root "the private dockerd"
	if ! command -v dockerd >/dev/null || ! [ -x /usr/sbin/runc ]; then
		log "installing docker.io (dockerd and runc)"
		apt_install docker.io
	fi
	if up; then return 0; fi
	mkdir -p "$dockerd_dir"
	install -m 0755 "$realbed_dir/runc-nocapsysresource" "$dockerd_dir/runc-nocapsysresource"
	cat >"$dockerd_dir/daemon.json" <<JSON
{
  "runtimes": {"runc-nocapsysresource": {"path": "$dockerd_dir/runc-nocapsysresource"}},
  "default-runtime": "runc-nocapsysresource",
  "storage-driver": "overlay2"
}
JSON
	if ! ip link show "$DOCKERD_BRIDGE" >/dev/null 2>&1; then
		ip link add "$DOCKERD_BRIDGE" type bridge
		ip addr add "$DOCKERD_BRIDGE_CIDR" dev "$DOCKERD_BRIDGE"
		ip link set "$DOCKERD_BRIDGE" up
	fi
	# setsid: the daemon outlives this script and is not in its process group.
	setsid /usr/sbin/dockerd --config-file "$dockerd_dir/daemon.json" \
		--data-root "$dockerd_dir/data" --exec-root "$dockerd_dir/exec" --pidfile "$dockerd_dir/docker.pid" \
		-H "$DOCKER_HOST" --bridge="$DOCKERD_BRIDGE" --iptables=false --ip-masq=false \
		>"$dockerd_dir/dockerd.log" 2>&1 </dev/null &
	local start=$SECONDS
	until up; do
		if [ $((SECONDS - start)) -ge 60 ]; then
			tail -20 "$dockerd_dir/dockerd.log" >&2
			die "the private dockerd did not answer within 60 s; its log: $dockerd_dir/dockerd.log"
		fi
		sleep 0.5
	done
	log "private dockerd up in $((SECONDS - start)) s (pid $(cat "$dockerd_dir/docker.pid"), $DOCKER_HOST)"
}

stop() {
	local pidfile=$dockerd_dir/docker.pid others
	if up; then
		others=$(docker ps --format '{{.Names}}' | grep -v -x -E 'baton-(hub|site-a|site-b)-control-plane' | tr '\n' ' ' || true)
		[ -z "$others" ] || log "stopping the private dockerd stops other users' containers too: $others"
	fi
	if [ -f "$pidfile" ]; then
		local pid
		pid=$(cat "$pidfile")
		if kill "$pid" 2>/dev/null; then
			local start=$SECONDS
			while kill -0 "$pid" 2>/dev/null; do
				[ $((SECONDS - start)) -lt 30 ] || die "the private dockerd (pid $pid) did not stop within 30 s"
				sleep 0.5
			done
			log "private dockerd (pid $pid) stopped"
		fi
		rm -f "$pidfile"
	fi
	if ip link show "$DOCKERD_BRIDGE" >/dev/null 2>&1; then
		ip link del "$DOCKERD_BRIDGE"
		log "removed bridge $DOCKERD_BRIDGE"
	fi
}

case ${1:-} in
start) start ;;
stop) stop ;;
*) die "usage: $0 start|stop" ;;
esac
