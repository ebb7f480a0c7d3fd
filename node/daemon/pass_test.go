package daemon_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/baton-dr/baton/internal/metrictest"
	"github.com/baton-dr/baton/node/daemon"
	simzfs "github.com/baton-dr/baton/sim/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// These tests run the loop over the simulated pool: no root needed.

// closablePool is the simulated pool with the Close the daemon calls.
type closablePool struct {
	*simzfs.Pool
	closed bool
}

func (p *closablePool) Close() error { p.closed = true; return nil }

// fakeAPI answers Spec with spec (or specErr) and records reports, failing
// them while reportErr is set.
type fakeAPI struct {
	mu        sync.Mutex
	spec      core.NodeSpec
	specErr   error
	reportErr error
	reports   []core.NodeStatus
}

func (f *fakeAPI) Spec(context.Context, string) (core.NodeSpec, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.spec, f.specErr
}

func (f *fakeAPI) Report(_ context.Context, status core.NodeStatus) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reportErr != nil {
		return f.reportErr
	}
	f.reports = append(f.reports, status)
	return nil
}

func newSimDaemon(t *testing.T, api *fakeAPI) (*daemon.Daemon, *closablePool, *prometheus.Registry) {
	t.Helper()
	pool := &closablePool{Pool: simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 1})}
	registry := prometheus.NewRegistry()
	d, err := daemon.New(daemon.Config{Node: "n1", Cluster: clusterA, API: api, Pool: pool, Interval: time.Second,
		Registry: registry})
	if err != nil {
		t.Fatal(err)
	}
	return d, pool, registry
}

var errUnreachable = errors.New("connection refused: " + chain.ErrUnreachable.Error())

// TestAFailedSpecKeepsWhatTheNodeHas: with the storage API errUnreachable the
// pass changes nothing on the node -- not even a volume the last spec no
// longer lists -- and reports nothing.
func TestAFailedSpecKeepsWhatTheNodeHas(t *testing.T) {
	api := &fakeAPI{spec: core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{{Dataset: "vol-1", SizeBytes: 1 << 20, Up: true}}}}
	d, pool, registry := newSimDaemon(t, api)
	if r := d.Pass(ctx); r.Err != nil || !r.Reported {
		t.Fatalf("first pass: %+v", r)
	}
	api.spec, api.specErr = core.NodeSpec{Node: "n1", Destroy: []string{"vol-1"}}, errUnreachable
	r := d.Pass(ctx)
	if r.Reconciled || r.Reported || r.Err == nil || !strings.Contains(r.Err.Error(), "keeping what the node has") {
		t.Fatalf("a pass without a spec: %+v", r)
	}
	if _, err := pool.Volume("vol-1"); err != nil {
		t.Fatalf("a pass without a spec changed the node: %v", err)
	}
	if len(api.reports) != 1 {
		t.Fatalf("%d reports, want the first pass's alone", len(api.reports))
	}
	if got := metrictest.Value(t, registry, "baton_node_passes_total", map[string]string{"result": "spec_failed"}); got != 1 {
		t.Fatalf("spec_failed passes: %v", got)
	}
	if err := d.Close(); err != nil || !pool.closed {
		t.Fatalf("Close: %v, pool closed %v", err, pool.closed)
	}
}

// TestAFailedReportLosesNoFinishedStream: the streams that finished in a
// pass whose report failed travel with the next report that gets through.
func TestAFailedReportLosesNoFinishedStream(t *testing.T) {
	volume := core.VolumeSpec{Dataset: "vol-1", SizeBytes: 1 << 20, Up: true, Role: backend.Primary, Snapshots: []string{"baton-000001"}}
	api := &fakeAPI{spec: core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{volume}}}
	d, _, _ := newSimDaemon(t, api)
	d.Pass(ctx)
	// Without peer CAs every send fails at once: a finished stream each pass.
	api.spec.Sends = []core.SendSpec{{Dataset: "vol-1", Snapshot: "baton-000001", Target: clusterB, TargetDataset: "rep-1",
		Receivers: []core.Receiver{{Node: "n1", Address: "127.0.0.1:1", Token: "t"}}}}
	api.reportErr = errUnreachable
	if r := d.Pass(ctx); r.Reported || len(r.Sent) != 1 || !strings.Contains(r.Sent[0].Error, "ships no streams") {
		t.Fatalf("a pass whose report failed: %+v", r)
	}
	api.reportErr = nil
	r := d.Pass(ctx)
	if !r.Reported || len(r.Sent) != 2 {
		t.Fatalf("the next pass reported %d sends, want the earlier one and its own: %+v", len(r.Sent), r.Sent)
	}
	last := api.reports[len(api.reports)-1]
	if len(last.Sent) != 2 || !strings.Contains(last.Sent[0].Error, "ships no streams") {
		t.Fatalf("the site heard %+v", last.Sent)
	}
	if r := d.Pass(ctx); len(r.Sent) != 1 {
		t.Fatalf("a reported send is reported again: %+v", r.Sent)
	}
}

func TestASpecForAnotherNodeIsRefused(t *testing.T) {
	api := &fakeAPI{spec: core.NodeSpec{Node: "n2", Volumes: []core.VolumeSpec{{Dataset: "vol-1", SizeBytes: 1 << 20, Up: true}}}}
	d, pool, _ := newSimDaemon(t, api)
	if r := d.Pass(ctx); r.Reconciled || r.Err == nil {
		t.Fatalf("n1 took n2's spec: %+v", r)
	}
	if _, err := pool.Volume("vol-1"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("n1 made n2's volume: %v", err)
	}
}

func TestNewRefusesWhatCannotRun(t *testing.T) {
	pool := &closablePool{Pool: simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 1})}
	for _, c := range []struct {
		name   string
		config daemon.Config
		want   string
	}{
		{"no node", daemon.Config{Cluster: clusterA, API: &fakeAPI{}, Pool: pool, Interval: time.Second}, "no node name"},
		{"no interval", daemon.Config{Node: "n1", Cluster: clusterA, API: &fakeAPI{}, Pool: pool}, "interval"},
		{"cluster", daemon.Config{Node: "n1", Cluster: "A", API: &fakeAPI{}, Pool: pool, Interval: time.Second}, "UUID"},
		{"links without device paths", daemon.Config{Node: "n1", Cluster: clusterA, API: &fakeAPI{}, Pool: pool,
			Interval: time.Second, DeviceDir: t.TempDir()}, "names its devices"},
	} {
		if _, err := daemon.New(c.config); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
