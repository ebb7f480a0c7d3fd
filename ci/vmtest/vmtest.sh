#!/usr/bin/env bash
# `make vmtest`: the backend suites and integration tests on real ZFS 2.1 and
# DRBD 8.4, in two qemu guests.
#
#   1. image.sh builds or finds the cached guest image (~/.cache/baton/vmtest)
#   2. the test binaries (go test -c of node/zfs, node/drbd and
#      ci/vmtest/integration) and guestd are built here, CGO_ENABLED=0, into
#      the run's 9p share
#   3. nodeb, then nodea, boot under qemu TCG -- /dev/kvm on these machines
#      cannot run a stock kernel -- on two private socket networks over
#      loopback: data (10.99.0.0/24, DRBD) and control (10.98.0.0/24, guestd)
#   4. nodea runs the binaries (guest/run-nodea.sh) and drives nodeb through
#      its guestd; each binary's output and exit code land in the share
#   5. the host prints them and fails unless every binary passed
#
# No qemu outlives the script: an EXIT trap kills the guests it started, by
# pid, and each runs under timeout(1) should the script die unseen.
# BATON_VMTEST_KEEP=1 keeps the run directory for a look at the consoles;
# BATON_VMTEST_RUN=<regexp> runs only the tests it matches (go test -run).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${BATON_VMTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/vmtest}
memory_mib=${BATON_VMTEST_MEMORY_MIB:-1024}
timeout_s=${BATON_VMTEST_TIMEOUT_S:-3600}
started=$(date +%s)
log() { echo "vmtest: $* ($(($(date +%s) - started)) s)" >&2; }

image=$(bash "$here/image.sh")
log "image $image: $(tr '\n' ' ' <"$image/versions")"

mkdir -p "$cache/runs"
run=$(mktemp -d "$cache/runs/run.XXXXXX")
share=$run/share
mkdir -p "$share/bin" "$share/results"

pids=()
cleanup() {
	for pid in "${pids[@]}"; do
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
		fi
	done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [ "${BATON_VMTEST_KEEP:-}" = 1 ]; then
		echo "vmtest: kept $run" >&2
	else
		rm -rf "$run"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "building the test binaries"
(
	cd "$repo"
	export CGO_ENABLED=0
	# Each test binary runs in a directory of its own with its package's
	# testdata, as go test runs it in the package's directory.
	for pkg in node/zfs node/drbd ci/vmtest/integration; do
		dir=$share/pkg/$(basename "$pkg")
		mkdir -p "$dir"
		go test -c -o "$dir/$(basename "$pkg").test" "./$pkg"
		if [ -d "$pkg/testdata" ]; then cp -r "$pkg/testdata" "$dir/"; fi
	done
	go build -o "$share/bin/guestd" ./ci/vmtest/guestd
)
cp "$here/guest/run-nodea.sh" "$here/guest/run-nodeb.sh" "$share/"
cat >"$share/env.sh" <<ENV
BATON_NODES=nodea=10.99.0.1,nodeb=10.99.0.2
case \$(hostname) in
nodea) BATON_SELF_CONTROL=10.98.0.1:7070 BATON_PEER_CONTROL=10.98.0.2:7070 ;;
nodeb) BATON_SELF_CONTROL=10.98.0.2:7070 BATON_PEER_CONTROL=10.98.0.1:7070 ;;
esac
export BATON_NODES BATON_SELF_CONTROL BATON_PEER_CONTROL
ENV
# BATON_VMTEST_RUN narrows every binary to the tests its -test.run matches.
printf 'BATON_RUN=%q\nexport BATON_RUN\n' "${BATON_VMTEST_RUN:-}" >>"$share/env.sh"

# free_port finds a loopback TCP port nobody listens on.
free_port() {
	local port
	for _ in $(seq 50); do
		port=$((20000 + RANDOM % 20000))
		if ! ss -Hltn "sport = :$port" | grep -q .; then echo "$port"; return 0; fi
	done
	return 1
}
data_port=$(free_port)
control_port=$(free_port)

# start_guest NAME INDEX SOCKET-MODE: boots one guest, its disk a qcow2
# overlay of the cached image, its NICs on the two socket networks, and
# leaves its pid in $guest_pid. Not called in $(...): a subshell's pids+=
# would never reach the trap.
start_guest() {
	local name=$1 index=$2 mode=$3
	qemu-img create -q -f qcow2 -b "$image/base.img" -F raw "$run/$name.qcow2"
	# timeout is the last line of defence: a guest dies at the run's deadline
	# even if this script is killed with a signal no trap sees.
	timeout -k 30 "$((timeout_s + 120))" qemu-system-x86_64 -accel tcg,thread=multi,tb-size=64 -cpu qemu64 -smp 1 -m "$memory_mib" \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
		-append "console=ttyS0 quiet mitigations=off root=/dev/vda rw net.ifnames=0 init=/sbin/baton-init baton.host=$name baton.net=52:54:00:99:00:0$index,10.99.0.$index/24 baton.net=52:54:00:98:00:0$index,10.98.0.$index/24 baton.script=run-$name.sh" \
		-drive "file=$run/$name.qcow2,if=virtio,format=qcow2,cache=unsafe" \
		-virtfs "local,path=$share,mount_tag=share,security_model=none,id=share" \
		-netdev "socket,id=data,$mode=127.0.0.1:$data_port" -device "virtio-net-pci,netdev=data,mac=52:54:00:99:00:0$index" \
		-netdev "socket,id=control,$mode=127.0.0.1:$control_port" -device "virtio-net-pci,netdev=control,mac=52:54:00:98:00:0$index" \
		-serial "file:$run/$name.console" -serial "unix:$run/$name.ttyS1,server,nowait" \
		>"$run/$name.qemu" 2>&1 &
	guest_pid=$!
	pids+=("$guest_pid")
}

# await_listen PORT PID: the listening guest must be up before the other connects.
await_listen() {
	for _ in $(seq 100); do
		ss -Hltn "sport = :$1" | grep -q . && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

log "booting nodeb and nodea (data port $data_port, control port $control_port)"
start_guest nodeb 2 listen
nodeb=$guest_pid
await_listen "$data_port" "$nodeb" && await_listen "$control_port" "$nodeb" ||
	{ cat "$run/nodeb.qemu" >&2; exit 1; }
start_guest nodea 1 connect
nodea=$guest_pid

# Wait for nodea to power off when its tests are done, then for nodeb, which
# nodea told to stop; past the timeout both are killed by the trap.
deadline=$((started + timeout_s))
while kill -0 "$nodea" 2>/dev/null; do
	if [ "$(date +%s)" -gt "$deadline" ]; then log "nodea still running after ${timeout_s} s; killing the guests"; break; fi
	sleep 2
done
for _ in $(seq 60); do kill -0 "$nodeb" 2>/dev/null || break; sleep 1; done
log "guests stopped"

grep -a -h '^vmtest:' "$run/nodea.console" "$run/nodeb.console" >&2 || true
failed=0
passed_binaries=0
failed_binaries=0
for binary in zfs drbd integration; do
	out=$share/results/$binary.out
	rc=$(cat "$share/results/$binary.rc" 2>/dev/null || echo missing)
	echo "=== $binary.test: exit $rc"
	if [ -f "$out" ]; then
		grep -E '^(=== RUN|\s*--- (PASS|FAIL|SKIP)|PASS|FAIL|ok|panic:|\s+\S+_test\.go:[0-9]+:)' "$out" | grep -v '^=== RUN' || true
	else
		echo "(no output: see the consoles; BATON_VMTEST_KEEP=1 keeps them)"
		tail -30 "$run/nodea.console" || true
	fi
	if [ "$rc" = 0 ]; then
		passed_binaries=$((passed_binaries + 1))
	else
		failed=1
		failed_binaries=$((failed_binaries + 1))
	fi
done
echo "vmtest: $passed_binaries passed, $failed_binaries failed"
if [ "$failed" = 1 ] && [ "${BATON_VMTEST_KEEP:-}" != 1 ]; then
	mkdir -p "$cache/failed"
	rm -rf "$cache/failed/last"
	mkdir -p "$cache/failed/last"
	cp -r "$share/results" "$run"/*.console "$cache/failed/last/" 2>/dev/null || true
	echo "vmtest: the failed run's results and consoles are in $cache/failed/last" >&2
fi
log "done"
exit "$failed"
