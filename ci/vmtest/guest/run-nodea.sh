# vmtest, guest nodea: runs the test binaries against real ZFS and DRBD and
# leaves each one's output and exit code in /share/results for the host.
# nodeb serves its commands to the integration tests (run-nodeb.sh).
. /share/env.sh
results=/share/results
mkdir -p "$results"
uptime_s() { cut -d' ' -f1 /proc/uptime; }
step() {
	name=$1
	shift
	start=$(uptime_s)
	"$@" >"$results/$name.out" 2>&1
	rc=$?
	echo "$rc" >"$results/$name.rc"
	echo "vmtest: $name exited $rc after $(awk "BEGIN { print $(uptime_s) - $start }") s"
}
modprobe zfs || echo "vmtest: modprobe zfs failed"
modprobe drbd || echo "vmtest: modprobe drbd failed"
echo "vmtest: $(head -1 /proc/drbd); zfs $(cat /sys/module/zfs/version)"
cd /share/pkg/zfs && step zfs env BATON_VMTEST_ZFS=/var/tmp/pooltest ./zfs.test -test.v -test.run="$BATON_RUN" -test.timeout 40m
cd /share/pkg/drbd && step drbd ./drbd.test -test.v -test.run="$BATON_RUN" -test.timeout 10m
cd /share/pkg/integration && step integration env BATON_VMTEST_PEER="$BATON_PEER_CONTROL" BATON_VMTEST_NODES="$BATON_NODES" \
	./integration.test -test.v -test.run="$BATON_RUN" -test.timeout 60m
/share/bin/guestd -exit "$BATON_PEER_CONTROL" || echo "vmtest: nodeb's guestd did not answer"
sync
