package storageapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// The storage API's operations, each declared once: its name, its route,
// its request and answer, what the server refuses before it runs, and how
// the site's control plane makes it (Local, by deciding in the core). The
// client's calls, the server's routes, Local's calls and the simulation's
// are all driven from these (operation.go); API gives them their typed
// methods. Adding an operation is a declaration here, a method of API, and
// its decision in storage/core.
//
// The request's fields the path carries are tagged json:"-": the rest is the
// JSON body, when the declaration says the request has one.

// operations lists every declaration, for the server's routes.
var operations = []Operation{
	createVolume, deleteVolume, expandVolume, volume, attach, recordFilesystem, capacity,
	createSnapshot, deleteSnapshot, listSnapshots, members, holdings,
	enable, disable, failover, demote, resync, status, handover, learnSuccessor, prepareReceive,
	spec, report,
}

// CreateVolumeBody asks for a volume, a clone when Source is set.
type CreateVolumeBody struct {
	Request core.CreateRequest
	Source  *core.CloneSource `json:",omitempty"`
}

var createVolume = &op[CreateVolumeBody, core.Volume]{
	name: "CreateVolume", pattern: "POST /v1/volumes", body: true,
	renamed: func(b CreateVolumeBody) string {
		if b.Source != nil {
			return "CreateVolumeFrom"
		}
		return "CreateVolume"
	},
	check: func(_ *http.Request, b CreateVolumeBody) error {
		if b.Source == nil {
			return nil
		}
		if !b.Source.Volume.IsZero() {
			if err := validRef("source volume", b.Source.Volume); err != nil {
				return err
			}
		}
		if !b.Source.Snapshot.Member.IsZero() {
			if _, err := core.ParseSnapshotRef(b.Source.Snapshot.String()); err != nil {
				return err
			}
		}
		return nil
	},
	run: func(ctx context.Context, l *Local, b CreateVolumeBody) (core.Volume, error) {
		if b.Source == nil {
			return run(ctx, l, need(Need{Allocation: true}), untold(func(d core.Decisions) (core.Volume, core.Effects, error) {
				return d.CreateVolume(b.Request)
			}))
		}
		member := b.Source.Volume
		if member.IsZero() {
			member = b.Source.Snapshot.Member
		}
		return run(ctx, l, l.onChain(member, true), untold(func(d core.Decisions) (core.Volume, core.Effects, error) {
			return d.CreateVolumeFrom(b.Request, *b.Source)
		}))
	},
}

var deleteVolume = &op[chain.Ref, struct{}]{
	name: "DeleteVolume", pattern: "DELETE /v1/volumes/{ref}", at: refAt(itself),
	run: func(ctx context.Context, l *Local, ref chain.Ref) (struct{}, error) {
		return run(ctx, l, l.onChain(ref, false), untold(func(d core.Decisions) (struct{}, core.Effects, error) {
			return d.DeleteVolume(ref)
		}))
	},
}

type expandRequest struct {
	Volume    chain.Ref `json:"-"`
	SizeBytes uint64
}

var expandVolume = &op[expandRequest, core.Volume]{
	name: "ExpandVolume", pattern: "POST /v1/volumes/{ref}/expand", body: true,
	at: refAt(func(r *expandRequest) *chain.Ref { return &r.Volume }),
	run: func(ctx context.Context, l *Local, r expandRequest) (core.Volume, error) {
		return run(ctx, l, l.onChain(r.Volume, true), untold(func(d core.Decisions) (core.Volume, core.Effects, error) {
			return d.ExpandVolume(r.Volume, r.SizeBytes)
		}))
	},
}

var volume = &op[chain.Ref, core.Volume]{
	name: "Volume", pattern: "GET /v1/volumes/{ref}", at: refAt(itself),
	run: func(ctx context.Context, l *Local, ref chain.Ref) (core.Volume, error) {
		return read(ctx, l, func(s *core.Site) (core.Volume, error) { return s.Volume(ref) })
	},
}

type attachRequest struct {
	Member chain.Ref `json:"-"`
	Node   string
}

var attach = &op[attachRequest, core.Volume]{
	name: "Attach", pattern: "POST /v1/volumes/{ref}/attach", body: true,
	at: refAt(func(r *attachRequest) *chain.Ref { return &r.Member }),
	run: func(ctx context.Context, l *Local, r attachRequest) (core.Volume, error) {
		return run(ctx, l, l.onChain(r.Member, false), untold(func(d core.Decisions) (core.Volume, core.Effects, error) {
			return d.Attach(r.Member, r.Node)
		}))
	},
}

type filesystemRequest struct {
	Member chain.Ref `json:"-"`
	FsType string
}

var recordFilesystem = &op[filesystemRequest, struct{}]{
	name: "RecordFilesystem", pattern: "POST /v1/volumes/{ref}/filesystem", body: true,
	at: refAt(func(r *filesystemRequest) *chain.Ref { return &r.Member }),
	run: func(ctx context.Context, l *Local, r filesystemRequest) (struct{}, error) {
		return run(ctx, l, l.onChain(r.Member, false), untold(func(d core.Decisions) (struct{}, core.Effects, error) {
			return d.RecordFilesystem(r.Member, r.FsType)
		}))
	},
}

type capacityAnswer struct{ Bytes uint64 }

var capacity = &op[int, capacityAnswer]{
	name: "Capacity", pattern: "GET /v1/capacity",
	at: &address[int]{wildcard: "place_count", query: true,
		get: strconv.Itoa,
		set: func(placeCount *int, value string) (err error) {
			if *placeCount, err = strconv.Atoi(value); err != nil {
				return fmt.Errorf("%w: place_count must be an integer", core.ErrInvalid)
			}
			return nil
		}},
	run: func(ctx context.Context, l *Local, placeCount int) (capacityAnswer, error) {
		return read(ctx, l, func(s *core.Site) (capacityAnswer, error) {
			bytes, err := s.Capacity(placeCount)
			return capacityAnswer{Bytes: bytes}, err
		})
	},
}

type snapshotRequest struct {
	Member chain.Ref
	Name   string
}

// createSnapshot holds the allocation's lock too: a snapshot's name is
// unique across the site's volumes.
var createSnapshot = &op[snapshotRequest, core.Snapshot]{
	name: "CreateSnapshot", pattern: "POST /v1/snapshots", body: true,
	check: func(_ *http.Request, r snapshotRequest) error { return validRef("member", r.Member) },
	run: func(ctx context.Context, l *Local, r snapshotRequest) (core.Snapshot, error) {
		return run(ctx, l, l.onChain(r.Member, true), untold(func(d core.Decisions) (core.Snapshot, core.Effects, error) {
			return d.CreateSnapshot(r.Member, r.Name)
		}))
	},
}

var deleteSnapshot = &op[core.SnapshotRef, struct{}]{
	name: "DeleteSnapshot", pattern: "DELETE /v1/snapshots/{id}",
	at: &address[core.SnapshotRef]{wildcard: "id",
		get: core.SnapshotRef.String,
		set: func(ref *core.SnapshotRef, value string) (err error) {
			*ref, err = core.ParseSnapshotRef(value)
			return err
		}},
	run: func(ctx context.Context, l *Local, ref core.SnapshotRef) (struct{}, error) {
		return run(ctx, l, l.onChain(ref.Member, false), untold(func(d core.Decisions) (struct{}, core.Effects, error) {
			return d.DeleteSnapshot(ref)
		}))
	},
}

var listSnapshots = &op[struct{}, []core.Snapshot]{
	name: "ListSnapshots", pattern: "GET /v1/snapshots",
	run: func(ctx context.Context, l *Local, _ struct{}) ([]core.Snapshot, error) {
		return read(ctx, l, func(s *core.Site) ([]core.Snapshot, error) { return s.ListSnapshots() })
	},
}

var members = &op[chain.Ref, []chain.Member]{
	name: "Members", pattern: "GET /v1/chains/{ref}/members", at: refAt(itself),
	run: func(ctx context.Context, l *Local, root chain.Ref) ([]chain.Member, error) {
		return read(ctx, l, func(s *core.Site) ([]chain.Member, error) { return s.Members(root) })
	},
}

var holdings = &op[chain.Ref, []string]{
	name: "Holdings", pattern: "GET /v1/chains/{ref}/holdings", at: refAt(itself),
	run: func(ctx context.Context, l *Local, root chain.Ref) ([]string, error) {
		return read(ctx, l, func(s *core.Site) ([]string, error) { return s.Holdings(root) })
	},
}

type enableRequest struct {
	Member chain.Ref `json:"-"`
	Target chain.ClusterID
}

var enable = &op[enableRequest, struct{}]{
	name: "Enable", pattern: "POST /v1/volumes/{ref}/enable", body: true,
	at:    refAt(func(r *enableRequest) *chain.Ref { return &r.Member }),
	check: func(_ *http.Request, r enableRequest) error { return validCluster("target", r.Target) },
	run: func(ctx context.Context, l *Local, r enableRequest) (struct{}, error) {
		return nothing(run(ctx, l, l.onChain(r.Member, false), func(d core.Decisions, told *core.Told) (core.Pairing, core.Effects, error) {
			return d.Enable(r.Member, r.Target, told)
		}))
	},
}

var disable = &op[chain.Ref, struct{}]{
	name: "Disable", pattern: "POST /v1/volumes/{ref}/disable", at: refAt(itself),
	run: func(ctx context.Context, l *Local, member chain.Ref) (struct{}, error) {
		return run(ctx, l, l.onChain(member, false), untold(func(d core.Decisions) (struct{}, core.Effects, error) {
			return d.Disable(member)
		}))
	},
}

type failoverRequest struct {
	Source chain.Ref `json:"-"`
	Force  bool
}

var failover = &op[failoverRequest, core.Volume]{
	name: "Failover", pattern: "POST /v1/volumes/{ref}/failover", body: true,
	at: refAt(func(r *failoverRequest) *chain.Ref { return &r.Source }),
	run: func(ctx context.Context, l *Local, r failoverRequest) (core.Volume, error) {
		return run(ctx, l, l.onChain(r.Source, true), func(d core.Decisions, told *core.Told) (core.Volume, core.Effects, error) {
			return d.Failover(r.Source, r.Force, told)
		})
	},
}

var demote = &op[chain.Ref, struct{}]{
	name: "Demote", pattern: "POST /v1/volumes/{ref}/demote", at: refAt(itself),
	run: func(ctx context.Context, l *Local, member chain.Ref) (struct{}, error) {
		return nothing(run(ctx, l, l.onChain(member, false), untold(func(d core.Decisions) (core.Volume, core.Effects, error) {
			return d.Demote(member)
		})))
	},
}

type resyncRequest struct {
	End            chain.Ref `json:"-"`
	FailbackSource chain.ClusterID
}
type resyncAnswer struct{ Ready bool }

var resync = &op[resyncRequest, resyncAnswer]{
	name: "Resync", pattern: "POST /v1/volumes/{ref}/resync", body: true,
	at: refAt(func(r *resyncRequest) *chain.Ref { return &r.End }),
	check: func(_ *http.Request, r resyncRequest) error {
		return validCluster("fail-back source", r.FailbackSource)
	},
	run: func(ctx context.Context, l *Local, r resyncRequest) (resyncAnswer, error) {
		ready, err := run(ctx, l, l.onChain(r.End, false), func(d core.Decisions, told *core.Told) (bool, core.Effects, error) {
			return d.Resync(r.End, r.FailbackSource, told)
		})
		return resyncAnswer{Ready: ready}, err
	},
}

var status = &op[chain.Ref, core.Status]{
	name: "Status", pattern: "GET /v1/volumes/{ref}/status", at: refAt(itself),
	run: func(ctx context.Context, l *Local, member chain.Ref) (core.Status, error) {
		return read(ctx, l, func(s *core.Site) (core.Status, error) { return s.Status(member) })
	},
}

var handover = &op[chain.Ref, core.Handover]{
	name: "Handover", pattern: "GET /v1/volumes/{ref}/handover", at: refAt(itself),
	run: func(ctx context.Context, l *Local, member chain.Ref) (core.Handover, error) {
		return read(ctx, l, func(s *core.Site) (core.Handover, error) { return s.Handover(member) })
	},
}

type successorRequest struct {
	Member    chain.Ref `json:"-"`
	Successor chain.Ref
}

var learnSuccessor = &op[successorRequest, struct{}]{
	name: "LearnSuccessor", pattern: "POST /v1/volumes/{ref}/successor", body: true,
	at:    refAt(func(r *successorRequest) *chain.Ref { return &r.Member }),
	check: func(_ *http.Request, r successorRequest) error { return validRef("successor", r.Successor) },
	run: func(ctx context.Context, l *Local, r successorRequest) (struct{}, error) {
		return run(ctx, l, l.onChain(r.Member, false), untold(func(d core.Decisions) (struct{}, core.Effects, error) {
			return d.LearnSuccessor(r.Member, r.Successor)
		}))
	},
}

// prepareReceive places a replica: the allocation's lock too.
var prepareReceive = &op[core.ReceiveRequest, []core.Receiver]{
	name: "PrepareReceive", pattern: "POST /v1/replicas", body: true,
	check: func(_ *http.Request, r core.ReceiveRequest) error {
		return errors.Join(validRef("source", r.Source), validRef("root", r.Root))
	},
	run: func(ctx context.Context, l *Local, r core.ReceiveRequest) ([]core.Receiver, error) {
		return run(ctx, l, need(Need{Chains: []chain.Ref{r.Root}, Allocation: true}),
			untold(func(d core.Decisions) ([]core.Receiver, core.Effects, error) { return d.PrepareReceive(r) }))
	},
}

var spec = &op[string, core.NodeSpec]{
	name: "Spec", pattern: "GET /v1/nodes/{node}/spec",
	at: &address[string]{wildcard: "node",
		get: func(node string) string { return node },
		set: func(node *string, value string) error { *node = value; return nil }},
	run: func(ctx context.Context, l *Local, node string) (core.NodeSpec, error) {
		return read(ctx, l, func(s *core.Site) (core.NodeSpec, error) { return s.Spec(node) })
	},
}

// report takes a node's report in: its own record under the allocation's
// lock (its usage is what placement counts), then chain by chain. The body
// names the node too, and must name the path's.
var report = &op[core.NodeStatus, struct{}]{
	name: "Report", pattern: "POST /v1/nodes/{node}/report", body: true,
	at: &address[core.NodeStatus]{wildcard: "node",
		get: func(s core.NodeStatus) string { return s.Node },
		set: func(*core.NodeStatus, string) error { return nil }},
	check: func(r *http.Request, s core.NodeStatus) error {
		if s.Node != r.PathValue("node") {
			return fmt.Errorf("%w: the report of node %q was sent for node %q", core.ErrInvalid, clip(s.Node, 60), clip(r.PathValue("node"), 60))
		}
		return nil
	},
	run: func(ctx context.Context, l *Local, status core.NodeStatus) (struct{}, error) {
		s, err := l.site(ctx)
		if err != nil {
			return struct{}{}, err
		}
		if _, err := runOn(ctx, l, s, need(Need{Allocation: true}), untold(func(d core.Decisions) (struct{}, core.Effects, error) {
			return d.ReportNode(status)
		})); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, chainwise(ctx, l, s, func(d core.Decisions) (struct{}, core.Effects, error) { return d.ReportChains(status) },
			func(d core.Decisions, root chain.Ref) (struct{}, core.Effects, error) {
				return d.ReportChain(status, root)
			})
	},
}
