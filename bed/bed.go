// Package bed defines what every test bed offers the scenarios: two sites and
// a hub, applications with their volumes, the DR actions in Ramen's order,
// faults, and observation. The simulation (bed/sim), the local bed and the
// real kind bed implement it; scenarios talk to nothing else, so one scenario
// text runs on every bed.
//
// A DR action returns when it completed -- the bed lets time pass (simulated
// or real) until the action's end condition holds -- or with an error when it
// could not complete within its limit, which a scenario treats as a liveness
// failure, not as a safety violation.
package bed

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// Kind names an application model.
type Kind string

const (
	// WordPress: a database volume and an uploads volume.
	WordPress Kind = "wordpress"
	// Gitea: a repository volume and a database volume.
	Gitea Kind = "gitea"
)

// Model is a new instance of the kind's workload model, drawing on rng.
func (k Kind) Model(name string, rng *rand.Rand) (workload.Workload, error) {
	switch k {
	case WordPress:
		return workload.NewWordPress(name, rng), nil
	case Gitea:
		return workload.NewGitea(name, rng), nil
	}
	return nil, fmt.Errorf("unknown application kind %q", k)
}

// App is an application to deploy.
type App struct {
	Name string
	Kind Kind
	Site string // where it starts
}

// Needs is what a scenario asks of the bed it runs on, when the bed is made.
type Needs struct {
	// Objects: the sites keep their records in Kubernetes objects, as the
	// site operator does (the hub reads them back through its views).
	Objects bool
	// Undeployed: the sites' storage clusters are not deployed yet; the
	// scenario deploys them (from the hub).
	Undeployed bool
	// Claims: the applications hold their volumes through
	// PersistentVolumes and claims, as a Kubernetes site's pods do -- their
	// files (workload.VolumeSpec.Files) on XFS filesystems, their databases
	// raw block devices -- restored without fsType on the site a move goes
	// to, as the seed saw Ramen restore one; a drill's bubbles are claims
	// the site operator's TestFailover makes. It needs Objects.
	Claims bool
}

// StorageRequest asks the hub for a site's storage cluster: a
// StorageSiteDeployment. The bed sizes the cluster as its sites are built
// (their pools, their replication interval).
type StorageRequest struct {
	Site string
	// Nodes scope the discovery to these nodes; empty: every node.
	Nodes []string
	// Approved approves the site's draft once it names nodes and shows the
	// sizing. One-way.
	Approved bool
}

// Storage is a site's storage cluster, as the hub's request reports it
// (RequestedStorage) or as the site's API server holds it (SiteStorage).
type Storage struct {
	// Phase and Reason are the request's: Pending, Discovering, Drafted,
	// Deploying, Online, or Failed with the site's reason.
	Phase, Reason string
	// Run is the discovery run the request is on; on the site, Runs are
	// every run there.
	Run  string
	Runs []string
	// Drafted are the nodes the run's draft names; Approved says whether it
	// is approved.
	Drafted  []string
	Approved bool
	// The storage cluster: its name, UUID and pool, its nodes (sorted) and
	// how many of them are Ready.
	Cluster, ClusterID, Pool string
	Nodes                    []string
	ReadyNodes               int
}

// ErrNoRequest: the hub holds no storage request for the site.
var ErrNoRequest = errors.New("no storage request for the site")

// Degradation is a slow, unreliable link between the sites.
type Degradation struct {
	ExtraLatency             time.Duration
	BandwidthBytesPerSecond  uint64
	Loss, Duplicate, Reorder float64 // probabilities per message
}

// Bed is a hub and two sites a scenario drives: what every bed offers. What
// only some beds offer -- drills, the hub's storage requests, and the faults
// beyond partitions -- are the capabilities below, which a scenario asks for
// with Can.
type Bed interface {
	// Name is "sim", "local" or "real".
	Name() string
	// Sites are the two sites' names, the first one where applications start.
	Sites() []string
	// Now is the bed's time: simulated, or the wall clock.
	Now() time.Time
	// Run lets time pass while the applications keep writing.
	Run(d time.Duration) error

	// Deploy creates the application's volumes on its site and starts it.
	Deploy(app App) error
	// Protect enables replication of every volume toward the other site and
	// returns once each has shipped a first snapshot.
	Protect(app string) error
	// Failover moves the application to site after an unplanned loss of its
	// current site: promote there (forcing on FailedPrecondition); the old
	// site is made secondary whenever the hub reaches it again. The verdict is
	// what the application found on site when it started there: the writes it
	// lost are the fail-over's measured RPO.
	Failover(app, site string) (workload.Verdict, error)
	// Relocate moves the application to site in a planned way: stop it, make
	// its site secondary and wait until its data is protected, promote there.
	// The verdict is what the application found on site; it must have lost
	// no acknowledged write.
	Relocate(app, site string) (workload.Verdict, error)
	// Verify reads the application's volumes where it runs now.
	Verify(app string) (workload.Verdict, error)
	// Where tells on which site the application runs now.
	Where(app string) (string, error)
	// Pod tells on which node of its site the application's pod runs.
	Pod(app string) (node string, err error)
	// Nodes lists a site's storage nodes.
	Nodes(site string) []string

	// Partition, Heal and HealAll: the one fault every bed makes.
	Partitioner

	// Chains draws every volume's chain as every site records it.
	Chains() ([]reports.Chain, error)
	// Violations are the invariants broken so far, checked continuously.
	Violations() []reports.Violation
	// Timeline is what happened so far, for reports.
	Timeline() []reports.Event
}

// Partitioner cuts and heals the paths between a bed's endpoints.
type Partitioner interface {
	// Partition cuts a from b (scoped names: "site-a", "site-a/node-1",
	// "hub"), one way or both.
	Partition(a, b string, bothWays bool)
	// Heal restores both paths between a and b.
	Heal(a, b string)
	// HealAll restores every path.
	HealAll()
}

// Driller runs test fail-overs.
type Driller interface {
	// Drill runs a test fail-over on site: the newest replica cloned into a
	// bubble volume that is verified and removed, replication undisturbed.
	Drill(app, site string) (workload.Verdict, error)
}

// StorageHub deploys the sites' storage from the hub.
type StorageHub interface {
	// RequestStorage creates the hub's request for a site's storage, or
	// changes it (a changed discovery, the approval).
	RequestStorage(r StorageRequest) error
	// RequestedStorage reads the request's status on the hub, or
	// ErrNoRequest.
	RequestedStorage(site string) (Storage, error)
	// WithdrawStorage deletes the request and returns once the hub has
	// released it; what it deployed stays.
	WithdrawStorage(site string) error
	// SiteStorage reads the site's storage cluster, its nodes and its
	// discovery runs on the site's API server.
	SiteStorage(site string) (Storage, error)
}

// LinkDegrader makes the sites' link slow and unreliable.
type LinkDegrader interface {
	// Degrade makes the path between the two sites slow and unreliable until
	// Restore: extra latency, a bandwidth cap, lost, duplicated and reordered
	// messages (API calls time out; streams are lost, repeated, overtaken).
	Degrade(d Degradation)
	Restore()
}

// NodeCrasher crashes storage nodes.
type NodeCrasher interface {
	// CrashNode cuts a storage node's power. A pod on it is lost; once the
	// node is known down (tainted out-of-service) the pod starts on another
	// node of its site, which must hold every acknowledged write.
	// RestartNode brings the node back and takes the taint off.
	CrashNode(site, node string)
	RestartNode(site, node string) error
}

// ControllerCrasher crashes a site's operator.
type ControllerCrasher interface {
	CrashController(site string)
	RestartController(site string)
}

// ControlPlaneReplacer replaces a site's operator under live volumes: it is
// stopped (ControllerCrasher), its store loses what the nodes run, and it
// starts again while the applications keep writing.
type ControlPlaneReplacer interface {
	ControllerCrasher
	// ForgetResources empties the stopped operator's store of every
	// volume's DRBD values (port, minor, node-ids) and initialized mark,
	// and marks each record's adoption pending, as a store restored from a
	// backup, or converted from a control plane that keeps none, holds
	// them. The nodes keep running what they run.
	ForgetResources(site string) error
	// ProvisionAgain asks the site's CSI controller to create each of the
	// application's volumes again, by name, as a provisioner that keeps
	// reconciling during the switch does.
	ProvisionAgain(app string) ([]Provisioned, error)
	// Resources are the DRBD values each volume of the site runs with on
	// its nodes ("port P minor M node-1:0 node-2:1"), by dataset.
	Resources(site string) (map[string]string, error)
	// Adoption is the site's operator's adoption: the volumes still
	// undecided, and the datasets it refused, each with why.
	Adoption(site string) (undecided, refused []string)
	// Resyncs counts the DRBD resyncs the site's nodes started.
	Resyncs(site string) int
}

// Provisioned is one CreateVolume of ProvisionAgain.
type Provisioned struct {
	Volume string // the volume's name in its application
	// Held is the handle the application holds; Answered the one
	// CreateVolume answered, "" when the call failed with Err.
	Held, Answered string
	Err            error
	// Retryable: the error says try again later (Unavailable), nothing
	// was created.
	Retryable bool
}

// PoolFiller fills storage nodes' pools.
type PoolFiller interface {
	// FillPool makes a storage node's pool full until FreePool, as a runaway
	// writer on the same pool would: it takes every free block and every
	// block freed later. Writes that need a new block fail as I/O errors (the
	// application stops and restarts; what it wrote unacknowledged may be
	// lost), snapshots, receives and clones that need space are refused;
	// acknowledged writes stay, and everything resumes once the space is back.
	FillPool(site, node string)
	FreePool(site, node string)
}

// APIFailer makes APIs fail calls.
type APIFailer interface {
	// FailAPI makes an endpoint's APIs answer a share of calls (rate, 0 to 1)
	// with transient errors until HealAPI: a site's storage API and, where
	// the bed keeps records in Kubernetes objects, its API server; "hub" the
	// hub's API server. The errors are what a server or a proxy in front of
	// it answers under load -- 500, 503, 429, 409 conflicts, and an answer
	// lost after the call took effect -- which every caller must retry.
	FailAPI(endpoint string, rate float64)
	HealAPI(endpoint string)
}

// StoreFailer makes a site's record store fail writes.
type StoreFailer interface {
	// FailStore makes a site's record store fail a share of its writes
	// (rate, 0 to 1) until HealStore, half of them after the write took
	// effect: an operation that writes several records stops at the failed
	// one, and the caller's retry must complete it without repeating it.
	FailStore(site string, rate float64)
	HealStore(site string)
}

// SharedSites is a bed whose sites other runs use at the same time: the
// real bed's runs side by side (batonctl scenario run --side-by-side). Their
// faults hold this run's sites too, yet they are no part of its story, and
// its verdict must not depend on them: its waits do not count the time they
// held it (WallPump's Held), and its RPO bound counts their spans as faults
// that disturbed replication.
type SharedSites interface {
	// FaultsBeside are the spans in which runs beside this one held faults
	// on the shared sites since it began.
	FaultsBeside() []Window
	// HeldBeside is how long this run's waits were held up by them.
	HeldBeside() time.Duration
}

// TailKeeper is a bed that reads an old primary's kept diverged tail back
// after a fail-back and counts its writes (reports.KeptTail); a write in
// neither the new chain nor the kept tail is a violation it records.
type TailKeeper interface {
	KeptTails() []reports.KeptTail
}

// ErrNotSupported: the bed lacks a capability a scenario asked for.
var ErrNotSupported = errors.New("not supported on this bed")

// Can is b as the capability C, or ErrNotSupported saying what the bed
// lacks: the one place a scenario learns that a bed cannot do something.
// It asks the bed's type only, so a nil bed of a type answers too.
func Can[C any](b Bed, what string) (C, error) {
	c, ok := b.(C)
	if !ok {
		return c, fmt.Errorf("%s: %w (the %s bed)", what, ErrNotSupported, b.Name())
	}
	return c, nil
}

// Declined are the stories (the part of a scenario's name after the slash)
// a bed does not tell although it has every capability they call, each
// with why: what a story calls and a bed lacks, Can says.
type Declined map[string]string

// Of says why the scenario's story is declined; nil when it is told.
func (d Declined) Of(scenario string) error {
	_, story, _ := strings.Cut(scenario, "/")
	if why, ok := d[story]; ok {
		return fmt.Errorf("%s: %s", scenario, why)
	}
	return nil
}
