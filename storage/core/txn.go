package core

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/baton-dr/baton/storage/chain"
)

// txn is the store one operation decides against: reads see the store
// beneath -- read once per kind of record, under the locks the shell holds
// -- with the operation's own writes applied, and the writes themselves are
// held back as the operation's effects, for the shell to commit. Two writes
// of one record in a row are one (a node's report touches a volume's record
// several times).
type txn struct {
	base     Store
	writes   []Write
	requests []Request
	ask      *Question
	// read caches what the operation read of the store beneath: it reads
	// each kind of record once (an API server's list call in production).
	read struct {
		volumes  []Volume
		replicas []Replica
		pairings []Pairing
		nodes    []Node
		kinds    [4]bool // volumes, replicas, pairings, nodes read
	}
}

// root names the chain of every write, once the operation made them all (a
// fail-over writes its member's pairing before the member).
func (t *txn) root() {
	for i := range t.writes {
		w := &t.writes[i]
		switch w.Kind {
		case VolumePut:
			w.Root = w.Volume.Root
		case ReplicaPut:
			w.Root = w.Replica.Root
		case VolumeRemove, PairingRemove:
			w.Root = t.rootOf(w.Ref)
		case PairingPut:
			w.Root = t.rootOf(w.Pairing.Source)
		}
	}
}

// rootOf is the chain of the member ref, as the operation sees the store.
func (t *txn) rootOf(ref chain.Ref) chain.Ref {
	for i := len(t.writes) - 1; i >= 0; i-- {
		if w := t.writes[i]; w.Kind == VolumePut && w.Volume.Ref == ref {
			return w.Volume.Root
		}
	}
	if t.read.kinds[0] {
		if i := slices.IndexFunc(t.read.volumes, func(v Volume) bool { return v.Ref == ref }); i >= 0 {
			return t.read.volumes[i].Root
		}
	}
	return chain.Ref{}
}

// cached reads one kind of record from the store beneath once, and hands
// out a copy of what it read each time (callers change what they get). A
// Lender is read each time instead, as a MemoryStore's lists always were:
// what it lends is the store as it is, costs no copy to read, and is only
// read here (rootOf reads its refs and roots); the callers get copies.
func cached[R any](base Store, read *bool, records *[]R, list func() ([]R, error), lend func(Lender) []R, clone func(R) R) ([]R, error) {
	if l, lender := base.(Lender); lender {
		*records, *read = lend(l), true
	} else if !*read {
		got, err := list()
		if err != nil {
			return nil, err
		}
		*records, *read = got, true
	}
	out := make([]R, len(*records))
	for i, r := range *records {
		out[i] = clone(r)
	}
	return out, nil
}

var _ Store = (*txn)(nil)

func (t *txn) write(w Write) {
	if n := len(t.writes); n > 0 && t.writes[n-1].sameRecord(w) {
		t.writes[n-1] = w
		return
	}
	t.writes = append(t.writes, w)
}

func (t *txn) Volumes() ([]Volume, error) {
	volumes, err := cached(t.base, &t.read.kinds[0], &t.read.volumes, t.base.Volumes, Lender.LendVolumes, Volume.clone)
	if err != nil {
		return nil, err
	}
	return overlay(volumes, t.writes, func(v Volume) chain.Ref { return v.Ref }, chain.CompareRefs,
		func(w Write) (Volume, chain.Ref, bool) {
			switch w.Kind {
			case VolumePut:
				return w.Volume.clone(), w.Volume.Ref, true
			case VolumeRemove:
				return Volume{}, w.Ref, false
			}
			return Volume{}, chain.Ref{}, false
		}, VolumePut, VolumeRemove), nil
}

func (t *txn) PutVolume(v Volume) error {
	c := v.clone()
	t.write(Write{Kind: VolumePut, Volume: &c})
	return nil
}

func (t *txn) RemoveVolume(ref chain.Ref) error {
	return holdRemove(t, VolumeRemove, ref, t.Volumes, func(v Volume) bool { return v.Ref == ref })
}

// holdRemove holds back the removal of the record ref, which must be stored.
func holdRemove[R any](t *txn, kind WriteKind, ref chain.Ref, list func() ([]R, error), is func(R) bool) error {
	records, err := list()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(records, is) {
		return ErrStoreNotFound
	}
	t.write(Write{Kind: kind, Ref: ref})
	return nil
}

func (t *txn) Replicas() ([]Replica, error) {
	replicas, err := cached(t.base, &t.read.kinds[1], &t.read.replicas, t.base.Replicas, Lender.LendReplicas, Replica.clone)
	if err != nil {
		return nil, err
	}
	return overlay(replicas, t.writes, func(r Replica) chain.Ref { return r.Source }, chain.CompareRefs,
		func(w Write) (Replica, chain.Ref, bool) { return w.Replica.clone(), w.Replica.Source, true },
		ReplicaPut, 0), nil
}

func (t *txn) PutReplica(r Replica) error {
	c := r.clone()
	t.write(Write{Kind: ReplicaPut, Replica: &c})
	return nil
}

// RemoveReplica is not an operation's: replicas stay (a tombstone's origin).
func (t *txn) RemoveReplica(source chain.Ref) error {
	panic(fmt.Sprintf("core: an operation removed the replica of %s", source))
}

func (t *txn) Pairings() ([]Pairing, error) {
	pairings, err := cached(t.base, &t.read.kinds[2], &t.read.pairings, t.base.Pairings, Lender.LendPairings, Pairing.clone)
	if err != nil {
		return nil, err
	}
	return overlay(pairings, t.writes, func(p Pairing) chain.Ref { return p.Source }, chain.CompareRefs,
		func(w Write) (Pairing, chain.Ref, bool) {
			if w.Kind == PairingRemove {
				return Pairing{}, w.Ref, false
			}
			return w.Pairing.clone(), w.Pairing.Source, true
		}, PairingPut, PairingRemove), nil
}

func (t *txn) PutPairing(p Pairing) error {
	c := p.clone()
	t.write(Write{Kind: PairingPut, Pairing: &c})
	return nil
}

func (t *txn) RemovePairing(source chain.Ref) error {
	return holdRemove(t, PairingRemove, source, t.Pairings, func(p Pairing) bool { return p.Source == source })
}

func (t *txn) Nodes() ([]Node, error) {
	nodes, err := cached(t.base, &t.read.kinds[3], &t.read.nodes, t.base.Nodes, Lender.LendNodes, func(n Node) Node { return n })
	if err != nil {
		return nil, err
	}
	return overlay(nodes, t.writes, func(n Node) string { return n.Name }, cmp.Compare[string],
		func(w Write) (Node, string, bool) { return *w.Node, w.Node.Name, true }, NodePut, 0), nil
}

func (t *txn) PutNode(n Node) error {
	t.write(Write{Kind: NodePut, Node: &n})
	return nil
}

// overlay applies the writes of kinds put and remove to records, keeping
// them sorted by key. With no such write the records are returned as read.
func overlay[R any, K comparable](records []R, writes []Write, key func(R) K, compare func(a, b K) int,
	apply func(Write) (R, K, bool), put, remove WriteKind) []R {
	touched := false
	for _, w := range writes {
		touched = touched || w.Kind == put || (remove != 0 && w.Kind == remove)
	}
	if !touched {
		return records
	}
	for _, w := range writes {
		if w.Kind != put && (remove == 0 || w.Kind != remove) {
			continue
		}
		record, k, keep := apply(w)
		i, found := slices.BinarySearchFunc(records, k, func(r R, k K) int { return compare(key(r), k) })
		switch {
		case keep && found:
			records[i] = record
		case keep:
			records = slices.Insert(records, i, record)
		case found:
			records = slices.Delete(records, i, i+1)
		}
	}
	return records
}
