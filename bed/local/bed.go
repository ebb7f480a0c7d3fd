package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/storage/chain"
)

// SiteNames are the bed's two sites; applications start on the first.
var SiteNames = []string{"site-a", "site-b"}

// Bed is a running local bed. It is not safe for concurrent use: a scenario
// drives it from one goroutine, and the applications write only while it
// runs one of the bed's methods.
type Bed struct {
	options Options
	dir     string
	ownDir  bool
	started time.Time
	net     *network
	ca      *authority
	sites   []*site

	// apps are the applications (bed/apps over b.platform()); they answer
	// the Bed's Deploy, Protect, Failover, Relocate, Verify, Where and Pod.
	// writes count their acknowledged operations per site since the last
	// timeline entry.
	apps *apps.Apps
	apps.Moves
	writes map[string]map[string]int
	// partitions are the paths cut (Partition, Heal, HealAll): the hub
	// (this process) does not reach a site while a path between them is
	// cut, and its wishes wait until it does.
	partitions *bed.Partitions
	bed.Partitioner
	// ramen is Ramen's hub and the sites' csi-addons controllers.
	ramen *ramen.Driver

	// The timeline and the violations (Timeline, Violations).
	bed.Journal
	checker   *chain.Checker
	lastCheck time.Time
	closeOnce sync.Once
	closeErr  error
}

var _ bed.Bed = (*Bed)(nil)

// New builds and starts a local bed: the network, then per site (in
// parallel) the API server and the operator, then the peers' registration,
// then per site the node agent and the CSI driver. It returns once every
// site serves volumes; on error whatever started is stopped again.
func New(options Options) (b *Bed, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the local bed needs root: network namespaces, loop devices, btrfs mounts")
	}
	b = &Bed{options: options.withDefaults(), started: time.Now(), writes: map[string]map[string]int{},
		checker: chain.NewChecker()}
	b.partitions = &bed.Partitions{Sites: SiteNames, Apply: b.applyCuts, Event: b.event, Violate: b.violate}
	b.Partitioner = b.partitions
	b.ramen = &ramen.Driver{Sites: SiteNames, Reaches: b.partitions.Reaches, Until: b.pump,
		Limit: b.options.ActionLimit, Event: b.event, Violate: b.violate, TellWishes: true}
	b.apps = apps.New(apps.Config{Platform: b.platform(), Ramen: b.ramen, Sites: SiteNames, Limit: b.options.ActionLimit})
	b.Moves = b.apps
	b.dir = b.options.Dir
	if b.dir == "" {
		if b.dir, err = os.MkdirTemp("", "baton-localbed-"); err != nil {
			return nil, err
		}
		b.ownDir = true
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, b.Close())
			b = nil
		}
	}()
	if err := b.findBinaries(); err != nil {
		return b, err
	}
	if b.ca, err = newAuthority(b.dir); err != nil {
		return b, err
	}
	if b.net, err = newNetwork(SiteNames); err != nil {
		return b, err
	}
	for _, name := range SiteNames {
		s := &site{name: name, dir: filepath.Join(b.dir, name), net: b.net.sites[name]}
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return b, err
		}
		b.sites = append(b.sites, s)
	}
	ctx := context.Background()
	if err := b.eachSite(func(i int, s *site) error {
		if err := b.startControlPlane(ctx, s, i); err != nil {
			return err
		}
		fmt.Fprintf(b.options.Log, "local bed: %s's API server serves at %s (%s)\n", s.name, s.cp.Config.Host,
			time.Since(b.started).Round(time.Millisecond))
		return b.startController(ctx, s)
	}); err != nil {
		return b, err
	}
	return b, b.eachSite(func(_ int, s *site) error {
		var file string
		if err := b.waitFor(ctx, s.controller, s.name+": the peers are registered in its CSI secret", func() (err error) {
			file, err = b.register(ctx, s)
			return err
		}); err != nil {
			return err
		}
		return b.startStorage(ctx, s, file)
	})
}

// eachSite runs f for every site in parallel and joins the errors.
func (b *Bed) eachSite(f func(i int, s *site) error) error {
	errs := make([]error, len(b.sites))
	var wg sync.WaitGroup
	for i, s := range b.sites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i, s)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// findBinaries builds the three binaries into the bed's directory unless
// Options.Binaries names where they are.
func (b *Bed) findBinaries() error {
	if b.options.Binaries != "" {
		dir, err := filepath.Abs(b.options.Binaries)
		if err != nil {
			return err
		}
		b.options.Binaries = dir
		for _, name := range []string{"baton-controller", "baton-node", "baton-csi"} {
			if _, err := os.Stat(filepath.Join(b.options.Binaries, name)); err != nil {
				return fmt.Errorf("the local bed's binaries: %w", err)
			}
		}
		return nil
	}
	b.options.Binaries = filepath.Join(b.dir, "bin")
	args := []string{"build", "-o", b.options.Binaries + "/"}
	if bugs.Carried { // the binaries carry the seeded bugs this process does
		args = append(args, "-tags", bugs.Tag)
	}
	cmd := exec.Command("go", append(args, "./cmd/baton-controller", "./cmd/baton-node", "./cmd/baton-csi")...)
	cmd.Dir = repositoryRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of the bed's binaries: %w: %s", err, out)
	}
	fmt.Fprintf(b.options.Log, "local bed: binaries built (%s)\n", time.Since(b.started).Round(time.Millisecond))
	return nil
}

func (b *Bed) binary(name string) string { return filepath.Join(b.options.Binaries, name) }

// repositoryRoot is found from this file's path, as bed/controlplane does.
func repositoryRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Close stops the applications, every process and API server, and removes
// the namespaces, the bridge, the mounts and loop devices under the bed's
// directory and (when the bed made it) the directory. It is safe to call
// after a failed New and more than once.
func (b *Bed) Close() error {
	b.closeOnce.Do(func() {
		var errs []error
		if b.apps != nil {
			errs = append(errs, b.apps.Close())
		}
		for _, s := range b.sites {
			errs = append(errs, s.stop())
		}
		if b.net != nil {
			errs = append(errs, b.net.close())
		}
		errs = append(errs, scrub(b.dir))
		if b.ownDir && errors.Join(errs...) == nil {
			errs = append(errs, os.RemoveAll(b.dir))
		}
		b.closeErr = errors.Join(errs...)
	})
	return b.closeErr
}

// Dir is where the bed keeps its files and the processes' logs.
func (b *Bed) Dir() string { return b.dir }

// Name is "local".
func (b *Bed) Name() string { return "local" }

// ReplicationInterval is the sites' snapshot interval, in wall time (the
// StorageClusters' replicationInterval the bed writes).
func (b *Bed) ReplicationInterval() (time.Duration, error) { return b.options.ReplicationInterval, nil }

// Sites are the two sites.
func (b *Bed) Sites() []string { return slices.Clone(SiteNames) }

// Now is the wall clock.
func (b *Bed) Now() time.Time { return time.Now() }

func (b *Bed) site(name string) (*site, error) {
	for _, s := range b.sites {
		if s.name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no site %q (the local bed has %s)", name, strings.Join(SiteNames, ", "))
}

// Nodes lists a site's storage nodes.
func (b *Bed) Nodes(site string) []string {
	if _, err := b.site(site); err != nil {
		return nil
	}
	return []string{nodeName}
}

// CSIEndpoint is where site's baton-csi serves CSI Identity, Controller and
// Node ("unix:///path"): its requests need no secrets, the driver reads the
// site's clusters file.
func (b *Bed) CSIEndpoint(site string) (string, error) {
	s, err := b.site(site)
	if err != nil {
		return "", err
	}
	return s.socket("csi.sock"), nil
}

// NetworkPrefix starts the names of the bed's bridge, veths and network
// namespaces.
func (b *Bed) NetworkPrefix() string { return b.net.prefix }
