package agent_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	simzfs "github.com/baton-dr/baton/sim/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"

	"github.com/baton-dr/baton/node/agent"
)

// fencingReplicator is the replicator double with a device fence
// (backend.DeviceFencer), as DRBD's is: it logs its fences and demotions in
// one log with the pool's fences, so a test sees their order.
type fencingReplicator struct {
	*replicator
	log          *[]string
	fenceErr     error
	secondaryErr error
}

func (r *fencingReplicator) FenceDevice(_ string, fenced bool) error {
	if fenced {
		*r.log = append(*r.log, "fence device")
	} else {
		*r.log = append(*r.log, "lift device")
	}
	return r.fenceErr
}

func (r *fencingReplicator) Secondary(string) error {
	*r.log = append(*r.log, "secondary")
	return r.secondaryErr
}

// loggingPool logs the zvol's fence in the same log.
type loggingPool struct {
	*simzfs.Pool
	log *[]string
}

func (p loggingPool) SetReadOnly(name string, readOnly bool) error {
	if readOnly {
		*p.log = append(*p.log, "fence zvol")
	}
	return p.Pool.SetReadOnly(name, readOnly)
}

func fencingAgent(t *testing.T, status backend.ResourceStatus) (*agent.Agent, *fencingReplicator, *simzfs.Pool) {
	t.Helper()
	log := &[]string{}
	r := &fencingReplicator{replicator: &replicator{status: status}, log: log}
	sim := simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 1})
	a, err := agent.New(agent.Options{Node: "n1", Cluster: clusterA, Pool: loggingPool{Pool: sim, log: log},
		Replicator: r, Transport: loopback{}, Clock: &clock{}})
	if err != nil {
		t.Fatal(err)
	}
	return a, r, sim
}

var primaryUpToDate = backend.ResourceStatus{Role: backend.Primary, Disk: backend.UpToDate,
	Peers: []backend.PeerStatus{{Node: "n2", Connection: backend.Connected, Disk: backend.UpToDate}}}

func fencedVolume() core.VolumeSpec {
	v := drbdVolume(backend.Secondary, "baton-000001")
	v.ReadOnly = true
	return v
}

// A demoted Primary's device is fenced before DRBD is asked to demote it:
// the file system mounted from it stops writing (and replicating) first,
// and the zvol's fence, which holds only over a fenced holder, comes last.
func TestADemotionFencesTheDeviceFirst(t *testing.T) {
	a, r, sim := fencingAgent(t, primaryUpToDate)
	st := a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{fencedVolume()}})
	if len(st.Errors) != 0 {
		t.Fatal(st.Errors)
	}
	if want := []string{"fence device", "secondary", "fence zvol"}; !slices.Equal(*r.log, want) {
		t.Fatalf("calls %q, want %q", *r.log, want)
	}
	if info, err := sim.Volume("vol-1"); err != nil || !info.ReadOnly {
		t.Fatalf("zvol %+v %v: want it fenced", info, err)
	}
}

// A demotion DRBD refuses after the fence (the file system is still mounted:
// the CSI unstage unmounts it) is reported as what it is -- fenced, still
// Primary -- on every pass, the zvol fenced as well, and no snapshot taken.
func TestADemotionRefusedAfterTheFenceIsReportedFenced(t *testing.T) {
	a, r, sim := fencingAgent(t, primaryUpToDate)
	r.secondaryErr = backend.Refusal(backend.ErrBusy, "drbdsetup", "State change failed: (-12) Device is held open by someone")
	for pass := 1; pass <= 2; pass++ {
		*r.log = nil
		st := a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{fencedVolume()}})
		want := "vol-1 is fenced on n1 but stays Primary while its device is open"
		if len(st.Errors) != 1 || !strings.HasPrefix(st.Errors[0], want) || !strings.Contains(st.Errors[0], "held open") {
			t.Fatalf("pass %d: errors %q, want one starting %q with DRBD's words", pass, st.Errors, want)
		}
		if want := []string{"fence device", "secondary", "fence zvol"}; !slices.Equal(*r.log, want) {
			t.Fatalf("pass %d: calls %q, want %q", pass, *r.log, want)
		}
	}
	if snaps, err := sim.Snapshots("vol-1"); err != nil || len(snaps) != 0 {
		t.Fatalf("snapshots %v %v: want none of a member still Primary", snaps, err)
	}
}

// A device fence that fails stops the demotion: DRBD is not asked, and the
// status names the fence.
func TestAFailedDeviceFenceStopsTheDemotion(t *testing.T) {
	a, r, _ := fencingAgent(t, primaryUpToDate)
	r.fenceErr = errors.New("failed to fence /dev/drbd1 (vol-1): a file system mounted read-write from the device cannot be shut down")
	st := a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{fencedVolume()}})
	if len(st.Errors) != 1 || !strings.HasPrefix(st.Errors[0], "not demoting vol-1 on n1: failed to fence /dev/drbd1") {
		t.Fatalf("errors %q, want the failed fence", st.Errors)
	}
	if want := []string{"fence device"}; !slices.Equal(*r.log, want) {
		t.Fatalf("calls %q, want %q", *r.log, want)
	}
}

// A Primary's device fence is lifted on every pass: the flag a demotion's
// fence set outlives the role, and a file system it shut down and still
// mounted is reported, not taken for writable.
func TestAPrimaryLiftsItsDeviceFence(t *testing.T) {
	a, r, _ := fencingAgent(t, primaryUpToDate)
	st := a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{drbdVolume(backend.Primary)}})
	if len(st.Errors) != 0 {
		t.Fatal(st.Errors)
	}
	if want := []string{"lift device"}; !slices.Equal(*r.log, want) {
		t.Fatalf("calls %q, want %q", *r.log, want)
	}
	r.fenceErr = errors.New("a file system the fence shut down is still mounted")
	st = a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{drbdVolume(backend.Primary)}})
	if len(st.Errors) != 1 || !strings.Contains(st.Errors[0], "still mounted") {
		t.Fatalf("errors %q, want the shut-down file system", st.Errors)
	}
}
