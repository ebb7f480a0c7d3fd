package local_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/baton-dr/baton/bed/controlplane"
	"github.com/baton-dr/baton/bed/local"
	"github.com/baton-dr/baton/internal/syncio"
	"github.com/baton-dr/baton/node/leftovers"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
)

// needs skips the test where the local bed cannot run: it needs root
// (namespaces, loop devices, mounts) and the control-plane binaries.
func needs(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts two API servers, six processes and two network namespaces; skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("the local bed needs root: network namespaces, loop devices, btrfs mounts (CI runs as root)")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		// Without the cache controlplane.Assets would build the control
		// plane from source (about 12 minutes): not a test's business.
		cache := os.Getenv("BATON_CACHE")
		if cache == "" {
			base, err := os.UserCacheDir()
			if err != nil {
				t.Skipf("no cache directory: %v", err)
			}
			cache = filepath.Join(base, "baton")
		}
		if _, err := os.Stat(filepath.Join(cache, "k8s")); err != nil {
			t.Skipf("no control-plane binaries in %s: run `make controlplane` (or set KUBEBUILDER_ASSETS) first", cache)
		}
	}
	if _, err := controlplane.Assets(); err != nil {
		t.Skipf("no control-plane binaries: %v", err)
	}
}

// startBed starts a local bed in a directory of t's, seeded 1, and returns it
// with its directory and its log.
func startBed(t *testing.T) (*local.Bed, string, *syncio.Buffer) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctrllog.SetLogger(logr.Discard()) // envtest's; the bed's own log is kept
	log := &syncio.Buffer{}
	started := time.Now()
	b, err := local.New(local.Options{Dir: dir, Seed: 1, Log: log})
	if err != nil {
		t.Fatalf("the bed did not start: %v\n%s", err, log.String())
	}
	t.Logf("the bed started in %s", time.Since(started).Round(time.Millisecond))
	return b, dir, log
}

// TestRelocateOnTheLocalBed runs wordpress/relocate on real API servers,
// binaries and network namespaces -- deploy on site-a, protect, write,
// relocate to site-b and back without losing an acknowledged write -- and
// checks that Close leaves no namespace, mount or loop device behind.
func TestRelocateOnTheLocalBed(t *testing.T) {
	needs(t)
	b, dir, log := startBed(t)
	closed := false
	t.Cleanup(func() {
		if !closed {
			b.Close()
		}
	})
	sc, err := scenarios.Find("wordpress/relocate")
	if err != nil {
		t.Fatal(err)
	}
	ran := time.Now()
	result := sc.Run(b, scenarios.Options{Seed: 1})
	t.Logf("wordpress/relocate: %s in %s", result.Verdict, time.Since(ran).Round(time.Millisecond))
	if result.Verdict != reports.Passed {
		t.Errorf("wordpress/relocate %s: %s\nphases: %+v\nviolations: %+v\nthe bed's log:\n%s", result.Verdict, result.Error,
			result.Phases, result.Violations, log.String())
	}
	t.Logf("the bed's log:\n%s", log.String())
	for _, p := range result.Phases {
		t.Logf("phase %-28s %s", p.Name, p.End.Sub(p.Start).Round(time.Millisecond))
	}
	if len(result.Chains) == 0 {
		t.Errorf("no chains drawn")
	}
	for _, c := range result.Chains {
		// Two relocations: site-a's root, site-b's clone, site-a's clone.
		if len(c.Members) != 3 || c.Members[2].Site != "site-a" || c.Members[2].State != "Active" {
			t.Errorf("chain %s: %+v, want three members ending Active on site-a", c.Handle, c.Members)
		}
	}
	prefix := b.NetworkPrefix()
	closed = true
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if namespaces, err := local.NamespacesWithPrefix(prefix); err != nil || len(namespaces) > 0 {
		t.Errorf("network namespaces left behind: %v (%v)", namespaces, err)
	}
	if loops, err := leftovers.Loops(context.Background(), dir); err != nil || len(loops) > 0 {
		t.Errorf("loop devices left behind: %v (%v)", loops, err)
	}
	if mounts, err := leftovers.Mounts(dir); err != nil || len(mounts) > 0 {
		t.Errorf("mounts left behind: %v (%v)", mounts, err)
	}
}
