package core

import (
	"errors"
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
)

// Effects are what one operation leaves its shell to do, in order, as
// etcd/raft's Ready leaves its caller: write the records -- while the shell
// still holds the locks the operation was decided under -- then send the
// requests to the peer sites once it released them, and feed each answer
// back through Decisions.Answer. The operation itself reads records and
// nothing else: it never waits for a peer.
//
// A multi-record change is ordered so that any prefix of its writes is a
// state the same operation, run again, completes rather than repeats -- its
// records are keyed by what the operation is about (a fail-over's successor
// is named after its source; see failover.go) -- and that readers take for
// no change or the whole one: a shell whose write k fails returns the error,
// and the caller's retry finishes the change.
type Effects struct {
	Writes   []Write
	Requests []Request
	// Ask, when set, is a question the operation cannot decide without. The
	// shell asks it outside every lock and runs the operation again with the
	// answer (Told); nothing else is set then.
	Ask *Question
}

// WriteKind is what a Write does to the store.
type WriteKind uint8

const (
	// VolumePut stores Write.Volume.
	VolumePut WriteKind = iota + 1
	// VolumeRemove removes the volume Write.Ref.
	VolumeRemove
	// ReplicaPut stores Write.Replica.
	ReplicaPut
	// PairingPut stores Write.Pairing.
	PairingPut
	// PairingRemove removes the pairing of the source Write.Ref.
	PairingRemove
	// NodePut stores Write.Node.
	NodePut
)

func (k WriteKind) String() string {
	switch k {
	case VolumePut:
		return "put volume"
	case VolumeRemove:
		return "remove volume"
	case ReplicaPut:
		return "put replica"
	case PairingPut:
		return "put pairing"
	case PairingRemove:
		return "remove pairing"
	case NodePut:
		return "put node"
	}
	return fmt.Sprintf("WriteKind(%d)", uint8(k))
}

// Write is one record to write: the record its kind names is set, a copy
// nobody else holds.
type Write struct {
	Kind    WriteKind
	Volume  *Volume
	Replica *Replica
	Pairing *Pairing
	Node    *Node
	Ref     chain.Ref
	// Root is the chain the record belongs to; zero for a node's.
	Root chain.Ref
}

func (w Write) String() string {
	switch w.Kind {
	case VolumePut:
		return w.Kind.String() + " " + w.Volume.Ref.String()
	case ReplicaPut:
		return w.Kind.String() + " of " + w.Replica.Source.String()
	case PairingPut:
		return w.Kind.String() + " of " + w.Pairing.Source.String()
	case NodePut:
		return w.Kind.String() + " " + w.Node.Name
	}
	return w.Kind.String() + " " + w.Ref.String()
}

// record names the record w writes: its kind of record and its key.
func (w Write) record() (kind string, key chain.Ref, name string) {
	switch w.Kind {
	case VolumePut:
		return "volume", w.Volume.Ref, ""
	case VolumeRemove:
		return "volume", w.Ref, ""
	case ReplicaPut:
		return "replica", w.Replica.Source, ""
	case PairingPut:
		return "pairing", w.Pairing.Source, ""
	case PairingRemove:
		return "pairing", w.Ref, ""
	case NodePut:
		return "node", chain.Ref{}, w.Node.Name
	}
	panic(fmt.Sprintf("core: write of unknown kind %s", w.Kind))
}

// sameRecord tells whether w and other write one record: two such writes in
// a row are one.
func (w Write) sameRecord(other Write) bool {
	k1, r1, n1 := w.record()
	k2, r2, n2 := other.record()
	return k1 == k2 && r1 == r2 && n1 == n2
}

// Apply performs w on store. Removing a record that is gone already is done.
func (w Write) Apply(store Store) error {
	var err error
	switch w.Kind {
	case VolumePut:
		err = store.PutVolume(*w.Volume)
	case VolumeRemove:
		err = store.RemoveVolume(w.Ref)
	case ReplicaPut:
		err = store.PutReplica(*w.Replica)
	case PairingPut:
		err = store.PutPairing(*w.Pairing)
	case PairingRemove:
		err = store.RemovePairing(w.Ref)
	case NodePut:
		err = store.PutNode(*w.Node)
	default:
		panic(fmt.Sprintf("core: write of unknown kind %s", w.Kind))
	}
	if errors.Is(err, ErrStoreNotFound) && (w.Kind == VolumeRemove || w.Kind == PairingRemove) {
		return nil
	}
	return err
}

// Commit performs writes on store in order and stops at the first that
// fails: the ones before it stay, and running the operation again completes
// the change.
func Commit(store Store, writes []Write) error {
	for i, w := range writes {
		if err := w.Apply(store); err != nil {
			return fmt.Errorf("failed to %s (write %d of %d): %w", w, i+1, len(writes), err)
		}
	}
	return nil
}

// RequestKind is what a Request asks of a peer site.
type RequestKind uint8

const (
	// AnnounceSuccessor tells Member's site that a fail-over here appended
	// Successor after it (Peers.LearnSuccessor).
	AnnounceSuccessor RequestKind = iota + 1
	// AskReceivers asks Target to keep a replica of Receive.Source and name
	// the nodes that receive its streams (Peers.PrepareReceive).
	AskReceivers
)

func (k RequestKind) String() string {
	switch k {
	case AnnounceSuccessor:
		return "announce successor"
	case AskReceivers:
		return "ask receivers"
	}
	return fmt.Sprintf("RequestKind(%d)", uint8(k))
}

// Request is one call to a peer site that no caller waits for: its answer is
// fed back (Decisions.Answer), and while none came Tick sends it again.
type Request struct {
	Kind              RequestKind
	Member, Successor chain.Ref
	Target            chain.ClusterID
	Receive           ReceiveRequest
	// Root is the chain the request is about, whose lock its answer takes.
	Root chain.Ref
}

// Cluster is the peer site the request goes to.
func (r Request) Cluster() chain.ClusterID {
	if r.Kind == AnnounceSuccessor {
		return r.Member.Cluster
	}
	return r.Target
}

// Local is the local member the request is about: the successor announced,
// or the source whose receivers are asked for.
func (r Request) Local() chain.Ref {
	if r.Kind == AnnounceSuccessor {
		return r.Successor
	}
	return r.Receive.Source
}

func (r Request) String() string {
	if r.Kind == AnnounceSuccessor {
		return fmt.Sprintf("%s %s to %s", r.Kind, r.Successor, r.Member)
	}
	return fmt.Sprintf("%s of %s from %s", r.Kind, r.Receive.Source, r.Target)
}

// ByChain splits effects by the chain each write and request belongs to, in
// their order; a write of no chain (a node's) is under the zero root.
func (e Effects) ByChain() map[chain.Ref]Effects {
	out := map[chain.Ref]Effects{}
	for _, w := range e.Writes {
		group := out[w.Root]
		group.Writes = append(group.Writes, w)
		out[w.Root] = group
	}
	for _, r := range e.Requests {
		group := out[r.Root]
		group.Requests = append(group.Requests, r)
		out[r.Root] = group
	}
	return out
}

// Answer is a peer's answer to a Request, or the error that took its place.
type Answer struct {
	Request
	Receivers []Receiver
	Err       error
}

// Deliver makes request through peers and returns the answer.
func Deliver(peers Peers, request Request) Answer {
	a := Answer{Request: request}
	switch request.Kind {
	case AnnounceSuccessor:
		a.Err = peers.LearnSuccessor(request.Member, request.Successor)
	case AskReceivers:
		a.Receivers, a.Err = peers.PrepareReceive(request.Target, request.Receive)
	default:
		panic(fmt.Sprintf("core: request of unknown kind %s", request.Kind))
	}
	return a
}

// QuestionKind is what a Question asks.
type QuestionKind uint8

const (
	// AskHandover asks Member's site whether it handed over (Peers.Handover).
	AskHandover QuestionKind = iota + 1
	// AskHoldings asks Cluster which snapshots of Root's chain it holds
	// (Peers.Holdings).
	AskHoldings
)

func (k QuestionKind) String() string {
	switch k {
	case AskHandover:
		return "ask handover"
	case AskHoldings:
		return "ask holdings"
	}
	return fmt.Sprintf("QuestionKind(%d)", uint8(k))
}

// Question is what an operation must learn from a peer site before it can
// decide.
type Question struct {
	Kind    QuestionKind
	Member  chain.Ref
	Cluster chain.ClusterID
	Root    chain.Ref
}

func (q Question) String() string {
	if q.Kind == AskHandover {
		return fmt.Sprintf("%s of %s", q.Kind, q.Member)
	}
	return fmt.Sprintf("%s of chain %s on %s", q.Kind, q.Root, q.Cluster)
}

// Told is a peer's answer to a Question, or the error asking gave.
type Told struct {
	Question
	Handover Handover
	Holdings []string
	Err      error
}

// Ask puts q to peers.
func Ask(peers Peers, q Question) Told {
	t := Told{Question: q}
	switch q.Kind {
	case AskHandover:
		t.Handover, t.Err = peers.Handover(q.Member)
	case AskHoldings:
		t.Holdings, t.Err = peers.Holdings(q.Cluster, q.Root)
	default:
		panic(fmt.Sprintf("core: question of unknown kind %s", q.Kind))
	}
	return t
}

// answerTo returns told if it answers q.
func answerTo(told *Told, q Question) (Told, bool) {
	if told == nil || told.Question != q {
		return Told{}, false
	}
	return *told, true
}
