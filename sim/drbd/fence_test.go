package drbd

import (
	"bytes"
	"errors"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// TestFencedDeviceRefusesWrites follows the node agent's demotion of a
// Primary whose device a writer still holds: the fence refuses the writer's
// next write -- through the handle opened before it -- before any disk sees
// it, so no disk is detached and no peer takes it; the demotion waits for
// the close; the flag outlives the roles until a Primary's fence is lifted.
func TestFencedDeviceRefusesWrites(t *testing.T) {
	site := newSimSite(t, 2, nil)
	res := newSimResource(t, site, "r0", 2)
	res.start()
	res.must(res.r[0].Primary("r0", false))
	dev, err := res.r[0].Open("r0")
	res.must(err)
	_, err = dev.WriteAt(fill(1, 4096), 0)
	res.must(err)
	res.must(dev.Sync())

	fencer := res.r[0].(backend.DeviceFencer)
	res.must(fencer.FenceDevice("r0", true))
	if _, err := dev.WriteAt(fill(2, 4096), 0); !errors.Is(err, backend.ErrRefused) {
		t.Fatalf("a fenced device took a write: %v", err)
	}
	res.must(dev.Sync()) // a flush writes no data: the kernel lets it through
	if got := res.read(0, 0, 4096); !bytes.Equal(got, fill(1, 4096)) {
		t.Fatal("a fenced device does not read what it held")
	}
	for _, node := range []string{"node-0", "node-1"} {
		if got := res.onVolume(node, 0, 4096); !bytes.Equal(got, fill(1, 4096)) {
			t.Errorf("%s's volume took the refused write", node)
		}
	}
	if st := res.status(0); st.Disk != backend.UpToDate || st.Role != backend.Primary {
		t.Fatalf("the fence changed the replica: %s, %s", st.Role, st.Disk)
	}
	if err := res.r[0].Secondary("r0"); !errors.Is(err, backend.ErrBusy) {
		t.Fatalf("demoted with the device open: %v", err)
	}
	res.must(dev.Close())
	res.must(res.r[0].Secondary("r0"))
	res.must(fencer.FenceDevice("r0", false)) // a Secondary's: nothing to do

	res.must(res.r[0].Primary("r0", false))
	dev, err = res.r[0].Open("r0")
	res.must(err)
	defer dev.Close()
	if _, err := dev.WriteAt(fill(3, 4096), 0); !errors.Is(err, backend.ErrRefused) {
		t.Fatalf("the fence did not outlive the roles: %v", err)
	}
	res.must(fencer.FenceDevice("r0", false))
	if _, err := dev.WriteAt(fill(3, 4096), 0); err != nil {
		t.Fatalf("a lifted fence still refuses: %v", err)
	}
}
