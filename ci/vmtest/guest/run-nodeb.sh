# vmtest, guest nodeb: loads the modules and serves nodea's integration tests
# until they are done (guestd -exit), then the guest powers off.
. /share/env.sh
modprobe zfs || echo "vmtest: modprobe zfs failed"
modprobe drbd || echo "vmtest: modprobe drbd failed"
/share/bin/guestd "$BATON_SELF_CONTROL" >/share/results/guestd-nodeb.out 2>&1
echo "vmtest: guestd exited $?"
