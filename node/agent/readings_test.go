package agent_test

import (
	"fmt"
	"testing"

	simzfs "github.com/baton-dr/baton/sim/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"
)

// readingPool counts how often a pass reads the pool, and lists every
// volume's snapshots at once as btrfs does (backend.SnapshotLister).
type readingPool struct {
	backend.Pool
	volume, volumes, snapshots, all int
}

func (p *readingPool) Volume(name string) (backend.VolumeInfo, error) {
	p.volume++
	return p.Pool.Volume(name)
}

func (p *readingPool) Volumes() ([]backend.VolumeInfo, error) {
	p.volumes++
	return p.Pool.Volumes()
}

func (p *readingPool) Snapshots(volume string) ([]backend.SnapshotInfo, error) {
	p.snapshots++
	return p.Pool.Snapshots(volume)
}

func (p *readingPool) AllSnapshots() (map[string][]backend.SnapshotInfo, error) {
	p.all++
	volumes, err := p.Pool.Volumes()
	if err != nil {
		return nil, err
	}
	all := map[string][]backend.SnapshotInfo{}
	for _, v := range volumes {
		if all[v.Name], err = p.Pool.Snapshots(v.Name); err != nil {
			return nil, err
		}
	}
	return all, nil
}

// TestAPassReadsThePoolOnceWhateverItHolds: a pass over volumes that are as
// their spec says reads the pool's volumes and snapshots a fixed number of
// times, not once or twice per volume -- on btrfs each reading is a command
// that lists the whole pool, and a node holding every earlier run's volumes
// spent seconds a pass on them -- and still reports every volume's snapshots.
func TestAPassReadsThePoolOnceWhateverItHolds(t *testing.T) {
	pool := &readingPool{Pool: simzfs.New(simzfs.Options{SizeBytes: 4 << 30, Seed: 1})}
	a := newAgent(t, pool, clusterA, loopback{})
	spec := core.NodeSpec{Node: "n1"}
	for i := range 20 {
		v := volumeSpec(fmt.Sprintf("vol-%d", i))
		v.Snapshots = []string{"baton-000001"}
		spec.Volumes = append(spec.Volumes, v)
	}
	if st := a.Reconcile(spec); len(st.Errors) > 0 {
		t.Fatal(st.Errors)
	}
	for i := range spec.Volumes {
		spec.Volumes[i].Snapshots = nil // taken: the next passes order none
	}
	*pool = readingPool{Pool: pool.Pool}
	st := a.Reconcile(spec)
	if len(st.Errors) > 0 {
		t.Fatal(st.Errors)
	}
	if pool.volume != 0 || pool.snapshots != 0 || pool.volumes != 2 || pool.all != 1 {
		t.Errorf("a pass over 20 volumes read Volume %d, Snapshots %d, Volumes %d and AllSnapshots %d times; want 0, 0, 2 (one to converge, one to report) and 1",
			pool.volume, pool.snapshots, pool.volumes, pool.all)
	}
	if len(st.Datasets) != 20 {
		t.Fatalf("the status reports %d datasets, want 20", len(st.Datasets))
	}
	for _, d := range st.Datasets {
		if len(d.Snapshots) != 1 || d.Snapshots[0].Name != "baton-000001" || d.Snapshots[0].GUID == "" {
			t.Errorf("the status reports %s's snapshots as %+v, want baton-000001 with its GUID", d.Name, d.Snapshots)
		}
	}
}
