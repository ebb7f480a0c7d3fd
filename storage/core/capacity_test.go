package core_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/core/coretest"
)

const gib = uint64(1) << 30

// thinSite is site A with two nodes of 2 GiB pools declared pool, none of
// them written, overcommitted up to percent.
func thinSite(t *testing.T, percent uint64, pool backend.Provisioning) (*core.Site, *coretest.World) {
	t.Helper()
	w := coretest.NewWorld()
	w.NodeBytes = 2 * gib
	store := core.NewMemoryStore()
	s, err := core.New(core.Config{Cluster: clusterA, ThinOvercommitPercent: percent, NewVolumeID: coretest.VolumeIDs(clusterA)},
		store, coretest.Peers{Self: clusterA, Sites: func(chain.ClusterID) *core.Site { return nil }}, w.Clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddSite(clusterA, s, 2, func(node string) string { return node }); err != nil {
		t.Fatal(err)
	}
	nodes, err := store.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		n.Provisioning = pool // as the node's StorageNode declares it
		if err := store.PutNode(n); err != nil {
			t.Fatal(err)
		}
	}
	return s, w
}

func create(s *core.Site, name string, size uint64, provisioning backend.Provisioning) error {
	_, err := s.CreateVolume(core.CreateRequest{Name: name, Shape: core.Shape{SizeBytes: size, PlaceCount: 2,
		Provisioning: provisioning, VolumeMode: core.Block}})
	return err
}

// TestThinPoolsOvercommitUpToTheRatio: a thin pool reserves nothing, so 2 GiB
// pools take 1 GiB volumes until their provisioned bytes reach 2 GiB x 4;
// the next is refused as ErrNoCapacity (CSI's ResourceExhausted) naming the
// ratio, and Capacity says as much beforehand.
func TestThinPoolsOvercommitUpToTheRatio(t *testing.T) {
	s, w := thinSite(t, 400, backend.Thin)
	for i := range 8 {
		if room, err := s.Capacity(2); err != nil || room != uint64(8-i)*gib {
			t.Fatalf("before volume %d: capacity %d (%v), want %d GiB", i, room, err, 8-i)
		}
		if err := create(s, fmt.Sprintf("pvc-%d", i), gib, backend.Thin); err != nil {
			t.Fatalf("thin volume %d of 8 on 2 GiB pools at ratio 4: %v", i, err)
		}
		if err := w.Run(time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if room, _ := s.Capacity(2); room != 0 {
		t.Errorf("capacity with the ratio reached: %d, want 0", room)
	}
	err := create(s, "pvc-8", gib, backend.Thin)
	if !errors.Is(err, core.ErrNoCapacity) {
		t.Fatalf("a ninth 1 GiB volume: %v, want ErrNoCapacity", err)
	}
	for _, want := range []string{"thin pool overcommitted", "8589934592 of 8589934592 bytes provisioned",
		"overcommit ratio 4 (thinOvercommitPercent 400)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
}

// TestWithoutOvercommitAThinPoolHoldsItsSize: at 100% a thin pool is
// provisioned no more than it holds, written or not.
func TestWithoutOvercommitAThinPoolHoldsItsSize(t *testing.T) {
	s, _ := thinSite(t, 100, backend.Thin)
	for i := range 2 {
		if err := create(s, fmt.Sprintf("pvc-%d", i), gib, backend.Thin); err != nil {
			t.Fatal(err)
		}
	}
	if err := create(s, "pvc-2", 1, backend.Thin); !errors.Is(err, core.ErrNoCapacity) {
		t.Fatalf("a byte beyond the pool at 100%%: %v, want ErrNoCapacity", err)
	}
}

// TestThickVolumesReserveTheirSize: a thick volume needs its full size free,
// on a thin pool as on a thick one, and a thick pool reserves a thin
// volume's size too: overcommit loosens none of it.
func TestThickVolumesReserveTheirSize(t *testing.T) {
	t.Run("thick volume on a thin pool", func(t *testing.T) {
		s, _ := thinSite(t, 400, backend.Thin)
		if err := create(s, "thick-1", 2*gib, backend.Thick); err != nil {
			t.Fatalf("a thick volume the size of the pool: %v", err)
		}
		err := create(s, "thick-2", 1, backend.Thick)
		if !errors.Is(err, core.ErrNoCapacity) || !strings.Contains(err.Error(), "thick pool full (0 bytes free)") {
			t.Fatalf("a second thick volume on full pools: %v, want ErrNoCapacity saying the pools are full", err)
		}
		// The reserved pools still take thin volumes within the ratio: 2 GiB
		// provisioned of 8.
		if err := create(s, "thin-1", 6*gib, backend.Thin); err != nil {
			t.Fatalf("a thin volume within the ratio: %v", err)
		}
	})
	t.Run("thin volume on a thick pool", func(t *testing.T) {
		s, _ := thinSite(t, 400, backend.Thick)
		if err := create(s, "pvc-1", 2*gib, backend.Thin); err != nil {
			t.Fatal(err)
		}
		if err := create(s, "pvc-2", 1, backend.Thin); !errors.Is(err, core.ErrNoCapacity) {
			t.Fatalf("a thick pool full of thin volumes took another: %v, want ErrNoCapacity", err)
		}
	})
}
