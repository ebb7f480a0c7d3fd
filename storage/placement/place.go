package placement

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// MaxReplicas is the most replicas one DRBD resource can have: node-ids 0..15.
const MaxReplicas = 16

// Candidate is one node of the site as placement sees it.
type Candidate struct {
	Node string
	// SizeBytes is the pool's capacity.
	SizeBytes uint64
	// FreeBytes is what the node's pool can still give: capacity minus what is
	// used -- written data, and the full size of every volume that reserves
	// it (a thick volume, or any volume of a thick pool).
	FreeBytes uint64
	// ProvisionedBytes is the sum of the sizes of the volumes on the pool,
	// thin and thick: what they may come to use once written.
	ProvisionedBytes uint64
	// Provisioning is how the pool is declared: a thick pool reserves every
	// volume's full size, a thin pool only a thick volume's.
	Provisioning backend.Provisioning
	// Schedulable is false for nodes that take no new replicas (cordoned,
	// draining, or not yet approved); their existing replicas stay.
	Schedulable bool
	// HasReplica is true when the node already holds a replica of the volume.
	// Every node that does must be listed, schedulable or not: an unlisted
	// replica is invisible to placement.
	HasReplica bool
}

// Request asks for the replicas of one volume.
type Request struct {
	Volume     string
	SizeBytes  uint64
	PlaceCount int // replicas wanted, 1..MaxReplicas
	// Provisioning is the volume's: a thick volume reserves its full size
	// wherever it goes.
	Provisioning backend.Provisioning
	// ThinOvercommitPercent bounds what a thin pool is promised: a thin
	// volume fits while the pool's provisioned bytes, the volume's included,
	// are at most its size times this percentage (400: an overcommit ratio of
	// 4; 100: no overcommit). Below 100 is ErrInvalidInput.
	ThinOvercommitPercent uint64
	// AddReplicas asks for additions: set it when creating a volume or when an
	// operator asks for a top-up. Unset, Place adds nothing and only reports
	// under-replication, which is what a continuous reconcile should do.
	AddReplicas bool
	// Adopting marks a volume whose storage is being taken over from another
	// control plane: no replica is ever added to it (ErrAdopting).
	Adopting bool
}

// RejectReason says why a candidate cannot take a new replica.
type RejectReason uint8

const (
	// ReasonUnschedulable: the node takes no new replicas.
	ReasonUnschedulable RejectReason = iota + 1
	// ReasonThickPoolFull: a thick pool must have the volume's full size free.
	ReasonThickPoolFull
	// ReasonThinPoolOvercommitted: with the volume, a thin pool's provisioned
	// bytes would exceed its size times the overcommit ratio.
	ReasonThinPoolOvercommitted
)

// String names the reason as reports print it.
func (r RejectReason) String() string {
	switch r {
	case ReasonUnschedulable:
		return "unschedulable"
	case ReasonThickPoolFull:
		return "thick pool full"
	case ReasonThinPoolOvercommitted:
		return "thin pool overcommitted"
	}
	return fmt.Sprintf("RejectReason(%d)", uint8(r))
}

// Rejection is one candidate that cannot take a new replica, and why.
type Rejection struct {
	Node      string
	Reason    RejectReason
	FreeBytes uint64
	// For ReasonThinPoolOvercommitted: the pool's provisioned bytes, its
	// size, and the overcommit bound that refused the volume.
	ProvisionedBytes  uint64
	PoolBytes         uint64
	OvercommitPercent uint64
}

// String reads like "node-c: thick pool full (5368709120 bytes free)", or
// "node-a: thin pool overcommitted (8589934592 of 8589934592 bytes
// provisioned: pool 2147483648 bytes x overcommit ratio 4
// (thinOvercommitPercent 400))".
func (r Rejection) String() string {
	switch r.Reason {
	case ReasonUnschedulable:
		return r.Node + ": unschedulable"
	case ReasonThinPoolOvercommitted:
		return fmt.Sprintf("%s: %s (%d of %d bytes provisioned: pool %d bytes x overcommit ratio %s (thinOvercommitPercent %d))",
			r.Node, r.Reason, r.ProvisionedBytes, overcommitLimit(r.PoolBytes, r.OvercommitPercent), r.PoolBytes,
			strconv.FormatFloat(float64(r.OvercommitPercent)/100, 'f', -1, 64), r.OvercommitPercent)
	}
	return fmt.Sprintf("%s: %s (%d bytes free)", r.Node, r.Reason, r.FreeBytes)
}

// Plan is where a volume's replicas are to be. The caller applies Add; Place
// itself changes nothing.
type Plan struct {
	Volume string
	// Keep lists the nodes that already hold replicas, sorted by name. They are
	// kept whatever their space or schedulability: a replica is never moved.
	Keep []string
	// Add lists the nodes to receive new replicas, most free space first.
	Add []string
	// MissingReplicas is how many replicas short of PlaceCount the volume stays
	// after the plan (non-zero only when additions were not asked for or not
	// allowed): the under-replication to report.
	MissingReplicas int
	// Rejected lists the candidates without a replica that cannot take one,
	// sorted by name, so that a report can say why the volume is short.
	Rejected []Rejection
}

// NotEnoughNodesError is ErrNotEnoughNodes with what was missing.
type NotEnoughNodesError struct {
	Volume     string
	SizeBytes  uint64
	PlaceCount int
	Placed     int // replicas kept plus those that could be added
	Rejected   []Rejection
}

// Error names the volume, the shortfall and every rejected candidate.
func (e *NotEnoughNodesError) Error() string {
	reasons := make([]string, 0, len(e.Rejected))
	for _, r := range e.Rejected {
		reasons = append(reasons, r.String())
	}
	return fmt.Sprintf("volume %q (%d bytes) needs %d replicas, found room for %d: %s",
		e.Volume, e.SizeBytes, e.PlaceCount, e.Placed, strings.Join(reasons, "; "))
}

// Unwrap lets errors.Is match ErrNotEnoughNodes.
func (e *NotEnoughNodesError) Unwrap() error { return ErrNotEnoughNodes }

// Place plans the replicas of one volume over the candidates of one site. It
// is deterministic: eligible candidates are taken by most free bytes, then by
// name. Errors: ErrInvalidInput, ErrAdopting (additions needed while
// adopting), *NotEnoughNodesError.
func Place(request Request, candidates []Candidate) (Plan, error) {
	if err := validateRequest(request, candidates); err != nil {
		return Plan{}, err
	}
	plan := Plan{Volume: request.Volume, Keep: []string{}, Add: []string{}}
	var eligible []Candidate
	for _, c := range candidates {
		if c.HasReplica {
			plan.Keep = append(plan.Keep, c.Node)
			continue
		}
		if reason, ok := rejects(request, c); ok {
			r := Rejection{Node: c.Node, Reason: reason, FreeBytes: c.FreeBytes}
			if reason == ReasonThinPoolOvercommitted {
				r.ProvisionedBytes, r.PoolBytes, r.OvercommitPercent = c.ProvisionedBytes, c.SizeBytes, request.ThinOvercommitPercent
			}
			plan.Rejected = append(plan.Rejected, r)
			continue
		}
		eligible = append(eligible, c)
	}
	slices.Sort(plan.Keep)
	slices.SortFunc(plan.Rejected, func(a, b Rejection) int { return cmp.Compare(a.Node, b.Node) })
	slices.SortFunc(eligible, byFreeBytesThenName)

	missing := max(0, request.PlaceCount-len(plan.Keep))
	if missing == 0 || !request.AddReplicas {
		plan.MissingReplicas = missing
		return plan, nil
	}
	if request.Adopting {
		return Plan{}, fmt.Errorf("volume %q has %d of %d replicas: %w",
			request.Volume, len(plan.Keep), request.PlaceCount, ErrAdopting)
	}
	if len(eligible) < missing {
		return Plan{}, &NotEnoughNodesError{Volume: request.Volume, SizeBytes: request.SizeBytes,
			PlaceCount: request.PlaceCount, Placed: len(plan.Keep) + len(eligible), Rejected: plan.Rejected}
	}
	for _, c := range eligible[:missing] {
		plan.Add = append(plan.Add, c.Node)
	}
	assertf(len(plan.Keep)+len(plan.Add) == request.PlaceCount, "plan for %q has %d+%d replicas, want %d",
		request.Volume, len(plan.Keep), len(plan.Add), request.PlaceCount)
	return plan, nil
}

func validateRequest(request Request, candidates []Candidate) error {
	switch {
	case request.Volume == "":
		return fmt.Errorf("%w: request names no volume", ErrInvalidInput)
	case request.PlaceCount < 1 || request.PlaceCount > MaxReplicas:
		return fmt.Errorf("%w: volume %q: placeCount %d outside 1..%d", ErrInvalidInput, request.Volume, request.PlaceCount, MaxReplicas)
	case request.SizeBytes == 0:
		return fmt.Errorf("%w: volume %q has no size", ErrInvalidInput, request.Volume)
	case request.ThinOvercommitPercent < 100:
		return fmt.Errorf("%w: volume %q: thin overcommit %d%% is below 100%%", ErrInvalidInput, request.Volume, request.ThinOvercommitPercent)
	}
	seen := make(map[string]bool, len(candidates))
	for _, c := range candidates {
		if c.Node == "" || seen[c.Node] {
			return fmt.Errorf("%w: volume %q: candidate node %q is empty or listed twice", ErrInvalidInput, request.Volume, c.Node)
		}
		seen[c.Node] = true
	}
	return nil
}

// rejects says why a candidate without a replica cannot take one.
func rejects(request Request, c Candidate) (RejectReason, bool) {
	switch {
	case !c.Schedulable:
		return ReasonUnschedulable, true
	case request.SizeBytes <= Room(c, request.Provisioning, request.ThinOvercommitPercent):
		return 0, false
	case reserves(c, request.Provisioning):
		return ReasonThickPoolFull, true
	}
	return ReasonThinPoolOvercommitted, true
}

// reserves tells whether a volume of provisioning takes its full size from
// c's pool up front.
func reserves(c Candidate, provisioning backend.Provisioning) bool {
	return provisioning == backend.Thick || c.Provisioning == backend.Thick
}

// Room is the largest volume of provisioning that c's pool takes: a volume
// that reserves its size needs it free; a thin one needs the pool's
// provisioned bytes to stay within its size times overcommitPercent.
// Schedulability is not its concern.
func Room(c Candidate, provisioning backend.Provisioning, overcommitPercent uint64) uint64 {
	if reserves(c, provisioning) {
		return c.FreeBytes
	}
	limit := overcommitLimit(c.SizeBytes, overcommitPercent)
	if limit <= c.ProvisionedBytes {
		return 0
	}
	return limit - c.ProvisionedBytes
}

// overcommitLimit is poolBytes*percent/100, computed in 128 bits and capped
// at the largest uint64, so that no pool size overflows it.
func overcommitLimit(poolBytes, percent uint64) uint64 {
	high, low := bits.Mul64(poolBytes, percent)
	if high >= 100 {
		return math.MaxUint64
	}
	quotient, _ := bits.Div64(high, low, 100)
	return quotient
}

func byFreeBytesThenName(a, b Candidate) int {
	if c := cmp.Compare(b.FreeBytes, a.FreeBytes); c != 0 {
		return c
	}
	return cmp.Compare(a.Node, b.Node)
}
