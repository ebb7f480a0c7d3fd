package placement

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// Probe is what is known about one volume when its storage is adopted: the
// control plane's record, and what each node's agent found on the node.
type Probe struct {
	Volume string
	// Record is the control plane's allocation for the volume's resource; nil
	// when the control plane has none. Port and minor are 0 when the record does
	// not keep them (LINSTOR keeps no ports in its custom resources).
	Record *Allocation
	// Initialized is the record's mark that the resource holds data. Records
	// converted from another control plane may lack it although they do.
	Initialized bool
	// ChainKnown: a chain member or tombstone names the volume, so it exists
	// whatever the control plane's record says.
	ChainKnown bool
	// PlaceCount is the replica count the volume's class asks for; 0 = no opinion.
	PlaceCount int
	// Replicas holds one probe per node that has or should have a replica.
	Replicas []ReplicaProbe
}

// ReplicaProbe is what one node's agent found for the volume.
type ReplicaProbe struct {
	Node string
	// Diskless replicas have no backing volume and no metadata of their own.
	Diskless bool
	// PoolProvisioning is how the node's pool is declared.
	PoolProvisioning backend.Provisioning
	// Volume describes the backing volume; nil when the pool has none.
	Volume *backend.VolumeInfo
	// HasMetadata: `drbdadm dump-md` found DRBD metadata on the backing volume.
	HasMetadata bool
	// GenerationID is the current generation identifier in that metadata.
	GenerationID string
	// Filesystem is what blkid found on the device ("ext4", "xfs"); "" = none.
	Filesystem string
	// Live is the configuration the kernel runs (`drbdsetup show`, through
	// AllocationOf); nil when the resource is not up on the node.
	Live *Allocation
}

// Action is one thing adoption decides to do, or not to do.
type Action uint8

const (
	// ActionAdoptMetadata: keep the node's DRBD metadata, skip create-md, and
	// seed the generation identifier it holds (Decision.Value) so that peers with
	// the same data skip a full resync.
	ActionAdoptMetadata Action = iota + 1
	// ActionCreateMetadata: the resource is new on the node; create-md.
	ActionCreateMetadata
	// ActionMarkInitialized: metadata exists although the record lacks the
	// initialized mark; mark it, so the resource is never treated as new again.
	ActionMarkInitialized
	// ActionKeepFilesystem: the device carries a filesystem (Decision.Value):
	// never mkfs it, and remember its type.
	ActionKeepFilesystem
	// ActionCorrectRecord: the kernel runs other values than the record holds;
	// the live values win and the record is corrected (Adoption.Discrepancies).
	ActionCorrectRecord
	// ActionAllocate: neither the record nor a running kernel has a port or
	// minor; allocate them (nothing runs on old values to collide with).
	ActionAllocate
	// ActionCarryOverThin: a pool declared thick holds a sparse volume; carry it
	// over as thin and claim no reservation, or adoption fills the pool.
	ActionCarryOverThin
	// ActionHoldTopUp: the volume has fewer replicas than its placeCount; no
	// replica is added while adopting. Ask for a top-up once adoption is done.
	ActionHoldTopUp
)

// String names the action as reports print it.
func (a Action) String() string {
	switch a {
	case ActionAdoptMetadata:
		return "AdoptMetadata"
	case ActionCreateMetadata:
		return "CreateMetadata"
	case ActionMarkInitialized:
		return "MarkInitialized"
	case ActionKeepFilesystem:
		return "KeepFilesystem"
	case ActionCorrectRecord:
		return "CorrectRecord"
	case ActionAllocate:
		return "Allocate"
	case ActionCarryOverThin:
		return "CarryOverThin"
	case ActionHoldTopUp:
		return "HoldTopUp"
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Decision is one action with its reason.
type Decision struct {
	Node   string // "" for the volume as a whole
	Action Action
	Value  string // the generation identifier to seed, or the filesystem type
	Reason string
}

// String reads "node: Action: reason" ("volume" for volume-wide decisions).
func (d Decision) String() string {
	subject := d.Node
	if subject == "" {
		subject = "volume"
	}
	return fmt.Sprintf("%s: %s: %s", subject, d.Action, d.Reason)
}

// Adoption is what Decide decided for one volume.
type Adoption struct {
	Volume string
	// Decisions come volume-wide first, then per node in name order.
	Decisions []Decision
	// Record is the allocation to persist (through Allocator.Adopt when it has
	// a port and minor): the record corrected with the live values.
	Record        Allocation
	Discrepancies []Discrepancy
	// Initialized is the initialized mark the record must carry afterwards.
	Initialized bool
	// Filesystem is the filesystem the volume carries ("" = none found).
	Filesystem string
}

// Has reports whether a decision takes the action for the node ("" = volume).
func (a Adoption) Has(node string, action Action) bool {
	return slices.ContainsFunc(a.Decisions, func(d Decision) bool { return d.Node == node && d.Action == action })
}

// Decide turns what was probed for one volume into adoption decisions. It
// never starts a volume that holds data afresh: a volume without a record
// whose chain or traces exist is ErrWouldReprovision, and an initialized
// resource (by record or by metadata found anywhere) whose diskful replica
// lacks metadata is ErrDataNotFound. Other errors: ErrInvalidInput,
// ErrNothingToAdopt, ErrProbesDisagree, ErrNodeIDTaken.
func Decide(probe Probe) (Adoption, error) {
	replicas, err := sortedReplicaProbes(probe)
	if err != nil {
		return Adoption{}, err
	}
	if probe.Record == nil {
		return Adoption{}, refuseWithoutRecord(probe, replicas)
	}
	if probe.Record.Resource != probe.Volume {
		return Adoption{}, fmt.Errorf("%w: probe of %q carries the record of %q", ErrInvalidInput, probe.Volume, probe.Record.Resource)
	}
	adoption := Adoption{Volume: probe.Volume}
	if err := decideRecord(&adoption, probe, replicas); err != nil {
		return Adoption{}, err
	}
	decideInitialized(&adoption, probe, replicas)
	decideTopUp(&adoption, probe, replicas)
	if err := decideReplicas(&adoption, replicas); err != nil {
		return Adoption{}, err
	}
	assertf(adoption.Record.Resource == probe.Volume, "adoption of %q records %q", probe.Volume, adoption.Record.Resource)
	return adoption, nil
}

func sortedReplicaProbes(probe Probe) ([]ReplicaProbe, error) {
	if probe.Volume == "" {
		return nil, fmt.Errorf("%w: probe names no volume", ErrInvalidInput)
	}
	replicas := slices.Clone(probe.Replicas)
	slices.SortFunc(replicas, func(a, b ReplicaProbe) int { return cmp.Compare(a.Node, b.Node) })
	for i, r := range replicas {
		if r.Node == "" || (i > 0 && replicas[i-1].Node == r.Node) {
			return nil, fmt.Errorf("%w: volume %q: probe node %q is empty or repeated", ErrInvalidInput, probe.Volume, r.Node)
		}
		if r.Live != nil && r.Live.Resource != probe.Volume {
			return nil, fmt.Errorf("%w: volume %q: node %q reports live resource %q", ErrInvalidInput, probe.Volume, r.Node, r.Live.Resource)
		}
	}
	return replicas, nil
}

// refuseWithoutRecord explains why a volume without a record is not provisioned.
func refuseWithoutRecord(probe Probe, replicas []ReplicaProbe) error {
	var traces []string
	if probe.ChainKnown {
		traces = append(traces, "its chain or tombstone exists")
	}
	for _, r := range replicas {
		switch {
		case r.Live != nil:
			traces = append(traces, r.Node+" runs it in the kernel")
		case r.HasMetadata:
			traces = append(traces, r.Node+" has DRBD metadata")
		case r.Volume != nil:
			traces = append(traces, r.Node+" has its backing volume")
		}
	}
	if len(traces) == 0 {
		return fmt.Errorf("%w: volume %q has no record and no trace", ErrNothingToAdopt, probe.Volume)
	}
	return fmt.Errorf("%w: volume %q has no record, but %s", ErrWouldReprovision, probe.Volume, strings.Join(traces, "; "))
}

// decideRecord corrects the record with the values the kernel runs.
func decideRecord(adoption *Adoption, probe Probe, replicas []ReplicaProbe) error {
	live, running, err := agreedLive(probe.Volume, replicas)
	if err != nil {
		return err
	}
	adoption.Record = probe.Record.clone()
	if running {
		adoption.Record, adoption.Discrepancies, err = mergeLive(probe.Record, live)
		if err != nil {
			return err
		}
	}
	if len(adoption.Discrepancies) > 0 {
		found := make([]string, 0, len(adoption.Discrepancies))
		for _, d := range adoption.Discrepancies {
			found = append(found, d.String())
		}
		adoption.Decisions = append(adoption.Decisions, Decision{Action: ActionCorrectRecord,
			Reason: "the kernel's values win over the record: " + strings.Join(found, "; ")})
	}
	if adoption.Record.Port == 0 || adoption.Record.Minor == 0 {
		adoption.Decisions = append(adoption.Decisions, Decision{Action: ActionAllocate,
			Reason: "neither the record nor a running kernel has a port and minor"})
	}
	return nil
}

// agreedLive merges the nodes' views of the running resource. Port and minor
// are one value per resource, and a node's node-id is the same in every view:
// nodes that see it otherwise disagree, and nothing is decided.
func agreedLive(volume string, replicas []ReplicaProbe) (Allocation, bool, error) {
	agreed := Allocation{Resource: volume}
	running := false
	for _, r := range replicas {
		if r.Live == nil {
			continue
		}
		if running && (r.Live.Port != agreed.Port || r.Live.Minor != agreed.Minor) {
			return Allocation{}, false, fmt.Errorf("%w: volume %q runs on port %d minor %d on %q, but port %d minor %d elsewhere",
				ErrProbesDisagree, volume, r.Live.Port, r.Live.Minor, r.Node, agreed.Port, agreed.Minor)
		}
		agreed.Port, agreed.Minor, running = r.Live.Port, r.Live.Minor, true
		for _, peer := range r.Live.Replicas {
			if err := addAgreedReplica(&agreed, peer, r.Node); err != nil {
				return Allocation{}, false, err
			}
		}
	}
	return agreed.clone(), running, nil
}

func addAgreedReplica(agreed *Allocation, peer Replica, seenBy string) error {
	for _, known := range agreed.Replicas {
		if known == peer {
			return nil
		}
		if known.Node == peer.Node || known.NodeID == peer.NodeID {
			return fmt.Errorf("%w: volume %q: %q sees %s as node-id %d, another node sees %s as node-id %d",
				ErrProbesDisagree, agreed.Resource, seenBy, peer.Node, peer.NodeID, known.Node, known.NodeID)
		}
	}
	agreed.Replicas = append(agreed.Replicas, peer)
	return nil
}

// decideInitialized: metadata found, or the resource running, on any diskful
// node means the resource holds data, whatever the record says.
func decideInitialized(adoption *Adoption, probe Probe, replicas []ReplicaProbe) {
	adoption.Initialized = probe.Initialized
	var evidence []string
	for _, r := range replicas {
		switch {
		case r.Diskless:
		case r.HasMetadata:
			evidence = append(evidence, r.Node+" holds DRBD metadata")
		case r.Live != nil:
			evidence = append(evidence, r.Node+" runs it in the kernel")
		}
	}
	if probe.Initialized || len(evidence) == 0 {
		return
	}
	adoption.Initialized = true
	adoption.Decisions = append(adoption.Decisions, Decision{Action: ActionMarkInitialized,
		Reason: "the record lacks the initialized mark, but " + strings.Join(evidence, ", ") +
			": the resource holds data and is never treated as new"})
}

func decideTopUp(adoption *Adoption, probe Probe, replicas []ReplicaProbe) {
	diskful := 0
	for _, r := range replicas {
		if !r.Diskless {
			diskful++
		}
	}
	if diskful >= probe.PlaceCount {
		return
	}
	adoption.Decisions = append(adoption.Decisions, Decision{Action: ActionHoldTopUp,
		Reason: fmt.Sprintf("%d of %d replicas: no replica is added while adopting; ask for a top-up once adoption is done",
			diskful, probe.PlaceCount)})
}

// decideReplicas decides per node: metadata, filesystem, provisioning.
func decideReplicas(adoption *Adoption, replicas []ReplicaProbe) error {
	var lacking []string
	for _, r := range replicas {
		if r.Diskless {
			continue
		}
		switch {
		case r.HasMetadata:
			adoption.Decisions = append(adoption.Decisions, Decision{Node: r.Node, Action: ActionAdoptMetadata, Value: r.GenerationID,
				Reason: "DRBD metadata exists: adopt it, no create-md, seed generation identifier " + quoteOrNone(r.GenerationID) + " (no full resync)"})
		case adoption.Initialized:
			lacking = append(lacking, r.Node)
		default:
			adoption.Decisions = append(adoption.Decisions, Decision{Node: r.Node, Action: ActionCreateMetadata,
				Reason: "no DRBD metadata and the resource is not initialized: it is new"})
		}
		if err := decideFilesystem(adoption, r); err != nil {
			return err
		}
		if r.PoolProvisioning == backend.Thick && r.Volume != nil && r.Volume.Provisioning == backend.Thin {
			adoption.Decisions = append(adoption.Decisions, Decision{Node: r.Node, Action: ActionCarryOverThin,
				Reason: "the pool is declared thick but the volume is sparse: carried over as thin, no reservation claimed"})
		}
	}
	if len(lacking) > 0 {
		return fmt.Errorf("%w: volume %q: dump-md found no DRBD metadata on %s; find the data, never start afresh",
			ErrDataNotFound, adoption.Volume, strings.Join(lacking, ", "))
	}
	return nil
}

func decideFilesystem(adoption *Adoption, r ReplicaProbe) error {
	if r.Filesystem == "" {
		return nil
	}
	if adoption.Filesystem != "" && adoption.Filesystem != r.Filesystem {
		return fmt.Errorf("%w: volume %q carries %s on %q but %s elsewhere",
			ErrProbesDisagree, adoption.Volume, r.Filesystem, r.Node, adoption.Filesystem)
	}
	adoption.Filesystem = r.Filesystem
	adoption.Decisions = append(adoption.Decisions, Decision{Node: r.Node, Action: ActionKeepFilesystem, Value: r.Filesystem,
		Reason: "the device carries " + r.Filesystem + ": no mkfs, the type is remembered"})
	return nil
}

func quoteOrNone(s string) string {
	if s == "" {
		return "(none recorded)"
	}
	return fmt.Sprintf("%q", s)
}
