package core

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/baton-dr/baton/storage/chain"
)

// ErrStoreNotFound is what a Store returns for a record it does not hold.
var ErrStoreNotFound = errors.New("record not found")

// Store keeps the site's records. The site operator keeps them in CRDs; the
// simulation and the tests in memory. Lists are sorted (volumes and replicas by
// ref, pairings by source, nodes by name) so that everything built from them is
// deterministic. A Put replaces the whole record.
type Store interface {
	Volumes() ([]Volume, error)
	PutVolume(Volume) error
	RemoveVolume(chain.Ref) error

	Replicas() ([]Replica, error)
	PutReplica(Replica) error
	RemoveReplica(source chain.Ref) error

	Pairings() ([]Pairing, error)
	PutPairing(Pairing) error
	RemovePairing(source chain.Ref) error

	Nodes() ([]Node, error)
	PutNode(Node) error
}

// findRecord returns the first of records that matches, and whether there was
// one; records and err are what a Store's list returned.
func findRecord[T any](records []T, err error, matches func(T) bool) (T, bool, error) {
	var none T
	if err != nil {
		return none, false, err
	}
	i := slices.IndexFunc(records, matches)
	if i < 0 {
		return none, false, nil
	}
	return records[i], true, nil
}

// Lender is a Store that also lends its records to readers that only read
// them, without the copy a list makes. A lent slice is sorted as the lists
// are, and shared: by every reader, and with the store. A reader changes
// neither the slice nor anything its records hold (slices, maps); one that
// changes what it reads lists a copy instead. A write never changes a slice
// lent before it, so a reader keeps the snapshot it was lent for as long as
// it holds it.
type Lender interface {
	Store
	LendVolumes() []Volume
	LendReplicas() []Replica
	LendPairings() []Pairing
	LendNodes() []Node
}

// lendOrList reads one kind of record for a reader that changes nothing of
// it: lent by a Lender, else listed (a copy).
func lendOrList[R any](store Store, lend func(Lender) []R, list func() ([]R, error)) ([]R, error) {
	if l, ok := store.(Lender); ok {
		return lend(l), nil
	}
	return list()
}

// MemoryStore is a Store in memory, safe for concurrent use. Records are
// copied in, and copied out by the lists, so a caller of those never aliases
// what is stored; the Lend methods share them instead (see Lender).
type MemoryStore struct {
	mu       sync.Mutex
	volumes  records[chain.Ref, Volume]
	replicas records[chain.Ref, Replica]
	pairings records[chain.Ref, Pairing]
	nodes    records[string, Node]
}

var _ Lender = (*MemoryStore)(nil)

// records is one kind of a MemoryStore's records, by key, with the sorted
// slice it lends. A write drops the slice rather than change it (readers may
// hold it); the next read sorts a new one. Stored records are the store's own
// copies and are replaced whole, never changed, so the lent slice's records
// may share their slices and maps with them.
type records[K comparable, V any] struct {
	byKey   map[K]V
	compare func(a, b K) int
	sorted  []V
	fresh   bool // sorted holds byKey's records: no write since it was sorted
}

func newRecords[K comparable, V any](compare func(a, b K) int) records[K, V] {
	return records[K, V]{byKey: map[K]V{}, compare: compare}
}

// lend returns the records sorted by key, shared.
func (r *records[K, V]) lend() []V {
	if !r.fresh {
		r.sorted, r.fresh = sortedValues(r.byKey, r.compare), true
	}
	if len(r.sorted) != len(r.byKey) {
		panic(fmt.Sprintf("core: the store lends %d records of %d", len(r.sorted), len(r.byKey)))
	}
	return r.sorted
}

// copies returns the records sorted by key, each a copy of its own.
func (r *records[K, V]) copies(clone func(V) V) []V {
	lent := r.lend()
	out := make([]V, len(lent))
	for i, v := range lent {
		out[i] = clone(v)
	}
	return out
}

func (r *records[K, V]) put(k K, v V) {
	r.byKey[k] = v
	r.sorted, r.fresh = nil, false
}

func (r *records[K, V]) remove(k K) error {
	if _, ok := r.byKey[k]; !ok {
		return ErrStoreNotFound
	}
	delete(r.byKey, k)
	r.sorted, r.fresh = nil, false
	return nil
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{volumes: newRecords[chain.Ref, Volume](chain.CompareRefs),
		replicas: newRecords[chain.Ref, Replica](chain.CompareRefs),
		pairings: newRecords[chain.Ref, Pairing](chain.CompareRefs), nodes: newRecords[string, Node](cmp.Compare[string])}
}

func (s *MemoryStore) Volumes() ([]Volume, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.volumes.copies(Volume.clone), nil
}
func (s *MemoryStore) LendVolumes() []Volume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.volumes.lend()
}
func (s *MemoryStore) PutVolume(v Volume) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.volumes.put(v.Ref, v.clone())
	return nil
}
func (s *MemoryStore) RemoveVolume(r chain.Ref) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.volumes.remove(r)
}

func (s *MemoryStore) Replicas() ([]Replica, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replicas.copies(Replica.clone), nil
}
func (s *MemoryStore) LendReplicas() []Replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replicas.lend()
}
func (s *MemoryStore) PutReplica(r Replica) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replicas.put(r.Source, r.clone())
	return nil
}
func (s *MemoryStore) RemoveReplica(source chain.Ref) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replicas.remove(source)
}

func (s *MemoryStore) Pairings() ([]Pairing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pairings.copies(Pairing.clone), nil
}
func (s *MemoryStore) LendPairings() []Pairing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pairings.lend()
}
func (s *MemoryStore) PutPairing(p Pairing) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pairings.put(p.Source, p.clone())
	return nil
}
func (s *MemoryStore) RemovePairing(source chain.Ref) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pairings.remove(source)
}

func (s *MemoryStore) Nodes() ([]Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodes.copies(func(n Node) Node { return n }), nil
}
func (s *MemoryStore) LendNodes() []Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodes.lend()
}
func (s *MemoryStore) PutNode(n Node) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes.put(n.Name, n)
	return nil
}

// sortedValues is m's values in the order of their keys.
func sortedValues[K comparable, V any](m map[K]V, compare func(a, b K) int) []V {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	out := make([]V, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

func (v Volume) clone() Volume {
	v.Snapshots = slices.Clone(v.Snapshots)
	v.Destroyed = slices.Clone(v.Destroyed)
	v.Present = slices.Clone(v.Present)
	v.StandAlone = slices.Clone(v.StandAlone)
	v.UserSnapshots = slices.Clone(v.UserSnapshots)
	v.Allocation.Replicas = slices.Clone(v.Allocation.Replicas)
	return v
}

func (r Replica) clone() Replica {
	r.Nodes = slices.Clone(r.Nodes)
	received := make(map[string][]SnapshotInfo, len(r.Received))
	for node, snaps := range r.Received {
		received[node] = slices.Clone(snaps)
	}
	r.Received = received
	return r
}

func (p Pairing) clone() Pairing {
	p.Snapshots = slices.Clone(p.Snapshots)
	p.Receivers = slices.Clone(p.Receivers)
	return p
}
