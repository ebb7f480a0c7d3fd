package daemon_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/baton-dr/baton/node/btrfs"
	"github.com/baton-dr/baton/node/daemon"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi/storageapitest"
)

// BenchmarkPass times one pass of a node holding N volumes, each linked for
// the CSI node plugin, against its site's storage API over HTTPS: Spec,
// Reconcile on btrfs (every volume checked, fenced or not, its snapshots
// listed) and Report.
func BenchmarkPass(b *testing.B) {
	for _, volumes := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("volumes=%d", volumes), func(b *testing.B) { benchmarkPass(b, volumes) })
	}
}

func benchmarkPass(b *testing.B, volumes int) {
	needRoot(b)
	ca, err := storageapitest.NewCA()
	if err != nil {
		b.Fatal(err)
	}
	s := newTestSite(b, ca, clusterA)
	dir := tempDir(b)
	pool, err := btrfs.New(btrfs.Options{Dir: dir, SizeBytes: poolBytes})
	if err != nil {
		b.Fatal(err)
	}
	d, err := daemon.New(daemon.Config{Node: "n1", Cluster: clusterA, API: s.client, Pool: pool,
		DeviceDir: filepath.Join(dir, "devices"), Interval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := d.Close(); err != nil {
			b.Error(err)
		}
		assertNothingLeft(b, dir)
	})
	ctx := context.Background()
	pass := func() daemon.PassResult {
		r := d.Pass(ctx)
		if r.Err != nil || len(r.Problems) > 0 {
			b.Fatalf("pass: %v %v", r.Err, r.Problems)
		}
		return r
	}
	pass() // the node reports its pool before volumes can be placed on it
	for i := range volumes {
		if _, err := s.client.CreateVolume(ctx, core.CreateRequest{Name: fmt.Sprintf("pvc-%d", i),
			Shape: core.Shape{SizeBytes: 16 << 20, Provisioning: backend.Thin, PlaceCount: 1, VolumeMode: core.Block}}); err != nil {
			b.Fatal(err)
		}
	}
	pass() // creates and links them
	if r := pass(); r.Volumes != volumes {
		b.Fatalf("the spec holds %d volumes, want %d", r.Volumes, volumes)
	}
	for b.Loop() {
		pass()
	}
}
