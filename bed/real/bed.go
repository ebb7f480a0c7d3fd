package real

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/bed/real/infra"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/internal/syncio"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
)

// Options shape a scenario's run on the real bed.
type Options struct {
	// TimeScale is how many seconds of a scenario's time pass per second of
	// the wall clock, as on the local bed (Ramen's intervals scale with
	// it). Default 10: Run(3m) lasts 18 s.
	TimeScale float64
	// ActionLimit bounds each DR action in wall time. Default 4 minutes.
	ActionLimit time.Duration
	// Seed seeds the applications' workload models, or their HTTP
	// drivers' choices and content.
	Seed uint64
	// AppImages, when set, run the applications as themselves (WordPress
	// and Gitea, ReadAppImages); nil runs their workload models, writing
	// raw block devices.
	AppImages AppImages
	// Log receives a line per step; nil discards them.
	Log io.Writer
}

// DefaultTimeScale is the real bed's TimeScale unless told otherwise.
const DefaultTimeScale = 10

func (o Options) withDefaults() Options {
	if o.TimeScale <= 0 {
		o.TimeScale = DefaultTimeScale
	}
	if o.ActionLimit <= 0 {
		o.ActionLimit = 4 * time.Minute
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	o.Log = &syncio.Writer{W: o.Log} // the bed's goroutines log whole lines
	return o
}

func (o Options) wall(d time.Duration) time.Duration { return time.Duration(float64(d) / o.TimeScale) }

// Bed is a scenario's view of the running real bed (make realbed brought it
// up and installed baton's chart): the bed's own process plays the hub and
// Ramen, writing VolumeReplication objects into the sites in Ramen's order,
// which each site's csi-addons controller manager carries out through the
// sidecar next to baton's CSI controller; the applications' volumes are
// claims in the sites, their pods hold the devices kubelet publishes, and
// the workload models write those devices.
// It is not safe for concurrent use.
type Bed struct {
	options Options
	infra   *infra.Infra
	started time.Time
	sites   []*site
	run     string // names the run's namespaces and its chaos table

	// apps are the applications (bed/apps over b.platform()); they answer
	// Deploy, Protect, the moves, Verify, Where and Pod. held is the bed's
	// own part of each, by name.
	apps *apps.Apps
	apps.Moves
	held  map[string]*app
	ramen *ramen.Driver
	// partitions are the paths cut (Partition, Heal, HealAll).
	partitions *bed.Partitions
	bed.Partitioner

	// The timeline and the violations (Timeline, Violations).
	bed.Journal
	checker   *chain.Checker
	syncs     bed.SyncLog
	shippedAt map[chain.Ref]time.Time // when each source's last recorded shipment's snapshot was taken
	lastCheck time.Time
	// lastProgress is when the bed last said what it waits for.
	lastProgress time.Time
	// besides are the cuts the beds beside this one had made when it last
	// looked (observe).
	besides []bed.Path
	// heldBeside is how long the bed's waits were held by those cuts.
	heldBeside time.Duration
	// phases are the VRs' ways to what the bed asked of them (phaseLog).
	phases phaseLog
	// drills are the drills under way (Drill), which Close ends.
	drills    []*drill
	closeOnce sync.Once
	closeErr  error
}

var (
	_ bed.Bed         = (*Bed)(nil)
	_ bed.SharedSites = (*Bed)(nil)
)

// site is one site of the bed as the scenario reaches it.
type site struct {
	infra.Cluster
	// ID is the site's storage cluster's UUID, read from the site.
	ID      chain.ClusterID
	client  kubernetes.Interface
	objects client.Client // the site's objects, csi-addons' VolumeReplications among them
	store   *sitecontroller.Store
	nodeIP  string // the control plane's address: the NodePorts answer on it
	nodePID int    // the control-plane container's init process, whose root holds kubelet's paths for its pods
}

// New attaches to the running bed: it checks that baton runs in both sites
// with each registered as the other's peer and csi-addons' replication API
// there, and that no partition is left over from a crashed run.
func New(in *infra.Infra, options Options) (b *Bed, err error) {
	b = &Bed{options: options.withDefaults(), infra: in, started: time.Now(), held: map[string]*app{},
		checker: chain.NewChecker(), shippedAt: map[chain.Ref]time.Time{}, run: newRun()}
	b.partitions = &bed.Partitions{Sites: b.Sites(), Apply: b.applyCuts, Event: b.event, Violate: b.violate}
	b.Partitioner = b.partitions
	inForce.own(b.chaosTable())
	b.ramen = &ramen.Driver{Sites: b.Sites(), Reaches: b.reaches,
		Until: b.pump, Limit: b.options.ActionLimit, Event: b.event, Violate: b.violate, TellWishes: true}
	b.apps = apps.New(apps.Config{Platform: b.platform(), Ramen: b.ramen, Sites: b.Sites(), Limit: b.options.ActionLimit})
	b.Moves = b.apps
	defer func() {
		if err != nil {
			err = errors.Join(err, b.Close())
			b = nil
		}
	}()
	ctx := context.Background()
	for _, c := range infra.Sites() {
		s, err := b.attach(ctx, c)
		if err != nil {
			return b, err
		}
		b.sites = append(b.sites, s)
	}
	if err := b.leftoverPartitions(ctx); err != nil {
		return b, err
	}
	b.event("", reports.EventAction, "attached to the real bed (%s)", strings.Join(infra.SiteNames(), ", "))
	return b, nil
}

func (b *Bed) attach(ctx context.Context, c infra.Cluster) (*site, error) {
	clientset, host, err := b.infra.Client(c)
	if err != nil {
		return nil, err
	}
	if err := infra.WaitReadyz(ctx, clientset, host, readyLimit, infra.FailUnanswered); err != nil {
		return nil, fmt.Errorf("%s cannot be reached: is the real bed up? (make realbed): %w", c.Name, err)
	}
	if _, err := clientset.AppsV1().Deployments("baton-system").Get(ctx, "baton-controller", metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("%s: baton is not deployed there (make realbed deploys it): %w", c.Name, err)
	}
	doc, err := b.infra.CSISecret(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(doc.IDs()) < 2 {
		return nil, fmt.Errorf("%s: its CSI secret registers no peer site (batonctl realbed deploy registers them)", c.Name)
	}
	s := &site{Cluster: c, client: clientset}
	if s.objects, err = b.infra.Objects(c); err != nil {
		return nil, err
	}
	if s.ID, err = b.infra.StorageClusterID(ctx, c); err != nil {
		return nil, err
	}
	class := &unstructured.Unstructured{}
	class.SetGroupVersionKind(volumeReplicationKind.GroupVersion().WithKind("VolumeReplicationClass"))
	if err := s.objects.Get(ctx, client.ObjectKey{Name: replicationClass}, class); err != nil {
		return nil, fmt.Errorf("%s: no VolumeReplicationClass %s (baton's chart installs it with csi-addons; make realbed-down, then make realbed): %w",
			c.Name, replicationClass, err)
	}
	if s.store, err = b.infra.Store(ctx, c); err != nil {
		return nil, err
	}
	if s.nodeIP, s.nodePID, err = infra.NodeContainer(ctx, c); err != nil {
		return nil, err
	}
	return s, nil
}

// Close heals the partitions the bed made -- first, so that no cut keeps
// a site from unpublishing what a pod held or the hub from reaching it --
// stops the applications, deletes their protection as Ramen does
// (replication disabled wherever a VolumeReplication was), and deletes
// the run's namespaces and persistent volumes in both sites. The volumes'
// data stays in the sites' records: a chain's records are never dropped.
// Safe after a failed New and more than once.
func (b *Bed) Close() error {
	b.closeOnce.Do(func() {
		errs := []error{b.partitions.Clear()}
		if errs[0] == nil {
			inForce.release(b.chaosTable())
		}
		errs = append(errs, b.apps.Close(), b.endDrillsLeft())
		for _, a := range b.apps.All() {
			if err := b.ramen.Unprotect(a.Ramen); err != nil {
				errs = append(errs, err)
			}
		}
		for _, s := range b.sites {
			errs = append(errs, b.deleteNamespace(s))
		}
		b.releaseNodePorts()
		b.closeErr = errors.Join(errs...)
	})
	return b.closeErr
}

// Name is "real".
func (b *Bed) Name() string { return "real" }

// ReplicationInterval is the sites' snapshot interval as their pairings
// record it (the operator's default unless the chart's values set one): the
// longest, should the sites differ.
func (b *Bed) ReplicationInterval() (time.Duration, error) {
	var longest time.Duration
	for _, s := range b.sites {
		pairings, err := s.store.Pairings()
		if err != nil {
			return 0, err
		}
		for _, p := range pairings {
			longest = max(longest, p.Interval)
		}
	}
	if longest == 0 {
		return 0, errors.New("no pairing records a replication interval yet")
	}
	return longest, nil
}

// Sites are the two sites' scenario names.
func (b *Bed) Sites() []string { return []string{infra.SiteA.Site, infra.SiteB.Site} }

// Now is the wall clock.
func (b *Bed) Now() time.Time { return time.Now() }

// Nodes lists a site's storage nodes, those the bed's storage mode places:
// a btrfs site's one node, a zfs-drbd site's two workers.
func (b *Bed) Nodes(name string) []string {
	s, err := b.site(name)
	if err != nil {
		return nil
	}
	return b.infra.Storage.StorageNodes(s.Cluster)
}

func (b *Bed) site(name string) (*site, error) {
	for _, s := range b.sites {
		if s.Site == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no site %q (the real bed has %s)", name, strings.Join(b.Sites(), ", "))
}

// namespace holds the run's claims and pods in each site.
func (b *Bed) namespace() string { return "scenario-" + b.run }

// runs counts the beds this process made, so that beds made in the same
// second run apart.
var runs atomic.Uint32

// newRun names a bed's run: the time, in seconds mod 0xffffff, then the
// bed's count in the process, both in hex.
func newRun() string {
	return fmt.Sprintf("%06x-%x", time.Now().Unix()%0xffffff, runs.Add(1))
}

// chaosTable is the nftables table the bed's partitions live in.
func (b *Bed) chaosTable() string { return chaosTableOf(b.run) }

// reaches tells whether the hub reaches the site: neither the bed's own
// cuts nor those of a bed beside it in this process cut a path between
// them.
func (b *Bed) reaches(site string) bool {
	return b.partitions.Reaches(site) && reachedThrough(inForce.others(b.chaosTable()), site)
}

// readyLimit bounds how long attaching waits for a site's API server that
// answers not ready: on a loaded host its etcd check fails for moments
// (seen at a load of 50: "[-]etcd failed", and a story errored before its
// first step), which is no verdict on the story.
const readyLimit = 2 * time.Minute
