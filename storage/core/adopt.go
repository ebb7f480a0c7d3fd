package core

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/placement"
)

// ErrAdopting: the volume's record lacks its DRBD values (port, minor,
// node-ids) and adoption has not yet read them from the nodes. Calls on it,
// and any new allocation on the site, wait: a volume that cannot be found is
// never created anew, and a fresh allocation may take a port a live resource
// runs on. The storage API answers it as retryable (Unavailable in CSI).
var ErrAdopting = errors.New("adoption of the volume is undecided")

// Undecided: the record lost its DRBD values, so what the nodes run is
// unknown until Adopt reads it. Only the mark says so: a volume without
// DRBD (a btrfs site's) has port 0 and is decided. A volume being deleted
// is not adopted: its nodes destroy what they hold.
func (v Volume) Undecided() bool { return v.AdoptionPending && !v.Deleting }

// WithoutDRBDValues is the record as a store restored from a backup that
// predates them, or converted from a control plane that keeps none, holds
// it: no port, minor or node-ids, not known to hold data, and its adoption
// pending. It is the one way such a record is made.
func (v Volume) WithoutDRBDValues() Volume {
	v.Allocation = placement.Allocation{}
	v.Initialized, v.AdoptionPending = false, true
	return v
}

// Inventory is what one node's agent found on its node when the operator
// adopts: every volume of its pool, and each one's DRBD state.
type Inventory struct {
	Node string
	// Provisioning is how the node's pool is declared.
	Provisioning backend.Provisioning
	Found        []Found
}

// Found is one dataset of a node's pool.
type Found struct {
	Volume backend.VolumeInfo
	// HasMetadata: DRBD metadata exists on it (drbdadm dump-md).
	HasMetadata bool
	// GenerationID is the current generation in that metadata, if read.
	GenerationID string
	// Live is what the kernel runs for it (drbdsetup show); nil when down.
	Live *backend.ResourceConfig
	// Filesystem is what blkid found on the device; "" = none or unread.
	Filesystem string
}

// Adopted is one volume adoption decided, with its decisions' reasons.
type Adopted struct {
	Ref      chain.Ref
	Adoption placement.Adoption
}

// Refused is a volume adoption would not take, and why; nothing of it was
// created, changed or deleted.
type Refused struct {
	Dataset string
	Err     error
}

// AdoptionReport is what Adopt did: what the operator's status and events
// show.
type AdoptionReport struct {
	Adopted []Adopted
	Refused []Refused
	// Undecided are the volumes still lacking their DRBD values.
	Undecided []chain.Ref
}

// Undecided lists the volumes whose adoption is undecided.
func (s *Site) Undecided() ([]chain.Ref, error) {
	volumes, err := lendOrList(s.store, Lender.LendVolumes, s.store.Volumes)
	if err != nil {
		return nil, err
	}
	var out []chain.Ref
	for _, v := range volumes {
		if v.Undecided() {
			out = append(out, v.Ref)
		}
	}
	return out, nil
}

// Adopt decides every undecided volume from what the nodes found
// (placement.Decide), and records the values the kernel runs
// (placement.Allocator.Adopt): live ports, minors and node-ids win, existing
// metadata is kept (no create-md, no resync), a sparse volume stays thin,
// and no replica is added. A pool volume the site has no record of is
// refused (placement.ErrWouldReprovision), never provisioned. inventories
// must hold every node of the site: a node not heard from may hold a
// replica, and its absence would be decided as the replica's.
func (s *Site) Adopt(inventories []Inventory) (AdoptionReport, error) {
	return perform(s, func(d Decisions, _ *Told) (AdoptionReport, Effects, error) { return d.Adopt(inventories) })
}

// Adopt decides Site.Adopt.
func (d Decisions) Adopt(inventories []Inventory) (AdoptionReport, Effects, error) {
	return decide(d.s, func(op *Site) (AdoptionReport, error) { return op.adopt(inventories) })
}

func (s *Site) adopt(inventories []Inventory) (AdoptionReport, error) {
	volumes, err := s.store.Volumes()
	if err != nil {
		return AdoptionReport{}, err
	}
	var decided []placement.Allocation
	for _, v := range volumes {
		if !v.Undecided() && v.Allocation.Resource != "" {
			decided = append(decided, v.Allocation)
		}
	}
	allocator, err := placement.NewAllocator(s.config.Placement, decided)
	if err != nil {
		return AdoptionReport{}, err
	}
	probes := probesOf(inventories)
	var report AdoptionReport
	// Live resources first: a value allocated before would take a port the
	// kernel runs on, and the live one would then be refused.
	for _, v := range volumes {
		if !v.Undecided() {
			continue
		}
		probe := placement.Probe{Volume: v.Dataset(), Record: &placement.Allocation{Resource: v.Dataset(),
			Port: v.Allocation.Port, Minor: v.Allocation.Minor, Replicas: v.Allocation.Replicas},
			Initialized: v.Initialized, ChainKnown: true, PlaceCount: v.PlaceCount, Replicas: probes[v.Dataset()]}
		adopted, err := adoptOne(allocator, &v, probe)
		if err != nil {
			report.Refused = append(report.Refused, Refused{Dataset: v.Dataset(), Err: err})
			report.Undecided = append(report.Undecided, v.Ref)
			continue
		}
		if err := s.store.PutVolume(v); err != nil {
			return AdoptionReport{}, err
		}
		report.Adopted = append(report.Adopted, Adopted{Ref: v.Ref, Adoption: adopted})
	}
	for _, dataset := range slices.Sorted(maps.Keys(probes)) {
		if !strings.HasPrefix(dataset, "vol-") || slices.ContainsFunc(volumes, func(v Volume) bool { return v.Dataset() == dataset }) {
			continue // a replica's dataset (rep-), or a volume decided above
		}
		_, err := placement.Decide(placement.Probe{Volume: dataset, Replicas: probes[dataset]})
		report.Refused = append(report.Refused, Refused{Dataset: dataset, Err: err})
	}
	return report, nil
}

// adoptOne decides one volume and sets what its record keeps afterwards.
func adoptOne(allocator *placement.Allocator, v *Volume, probe placement.Probe) (placement.Adoption, error) {
	if len(probe.Replicas) == 0 {
		return placement.Adoption{}, fmt.Errorf("%w: no node holds %s: its data must be found, never started afresh",
			placement.ErrDataNotFound, probe.Volume)
	}
	adoption, err := placement.Decide(probe)
	if err != nil {
		return placement.Adoption{}, err
	}
	record := adoption.Record
	if adoption.Has("", placement.ActionAllocate) {
		// Nothing runs on old values: new ones collide with nothing, and the
		// nodes' metadata is still adopted (no create-md).
		var nodes []string
		for _, r := range probe.Replicas {
			nodes = append(nodes, r.Node)
		}
		record, err = allocator.Allocate(probe.Volume, nodes)
	} else {
		record, err = allocator.Adopt(record)
	}
	if err != nil {
		return placement.Adoption{}, fmt.Errorf("volume %s: %w", probe.Volume, err)
	}
	adoption.Record = record
	v.Allocation, v.Initialized, v.AdoptionPending = record, adoption.Initialized, false
	if v.FsFound == "" {
		v.FsFound = adoption.Filesystem
	}
	if v.Primary == "" || !slices.ContainsFunc(record.Replicas, func(r placement.Replica) bool { return r.Node == v.Primary }) {
		v.Primary = livePrimary(probe)
	}
	for _, r := range probe.Replicas {
		if !r.Diskless && r.Volume != nil && !slices.Contains(v.Present, r.Node) {
			v.Present = append(v.Present, r.Node)
		}
	}
	slices.Sort(v.Present)
	return adoption, nil
}

// livePrimary is the first node that runs the resource; "" if none does.
func livePrimary(probe placement.Probe) string {
	for _, r := range probe.Replicas {
		if r.Live != nil {
			return r.Node
		}
	}
	return ""
}

// probesOf turns the nodes' inventories into one probe per node per dataset.
func probesOf(inventories []Inventory) map[string][]placement.ReplicaProbe {
	probes := map[string][]placement.ReplicaProbe{}
	for _, inv := range inventories {
		for _, f := range inv.Found {
			volume := f.Volume
			r := placement.ReplicaProbe{Node: inv.Node, PoolProvisioning: inv.Provisioning, Volume: &volume,
				HasMetadata: f.HasMetadata, GenerationID: f.GenerationID, Filesystem: f.Filesystem}
			if f.Live != nil {
				live := placement.AllocationOf(*f.Live)
				r.Live = &live
			}
			probes[f.Volume.Name] = append(probes[f.Volume.Name], r)
		}
	}
	return probes
}

// String reads like the operator's events: one line per volume.
func (r AdoptionReport) String() string {
	var lines []string
	for _, a := range r.Adopted {
		var did []string
		for _, d := range a.Adoption.Decisions {
			did = append(did, d.String())
		}
		lines = append(lines, fmt.Sprintf("adopted %s port %d minor %d %v: %s", a.Ref.Volume, a.Adoption.Record.Port,
			a.Adoption.Record.Minor, a.Adoption.Record.Replicas, strings.Join(did, "; ")))
	}
	for _, f := range r.Refused {
		lines = append(lines, fmt.Sprintf("refused %s: %v", f.Dataset, f.Err))
	}
	return strings.Join(lines, "\n")
}
