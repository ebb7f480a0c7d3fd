package core

import (
	"cmp"
	"errors"
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

// MemoryStore is a Store in memory, safe for concurrent use. Records are
// copied in and out, so a caller never aliases what is stored.
type MemoryStore struct {
	mu       sync.Mutex
	volumes  map[chain.Ref]Volume
	replicas map[chain.Ref]Replica
	pairings map[chain.Ref]Pairing
	nodes    map[string]Node
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{volumes: map[chain.Ref]Volume{}, replicas: map[chain.Ref]Replica{},
		pairings: map[chain.Ref]Pairing{}, nodes: map[string]Node{}}
}

func (s *MemoryStore) Volumes() ([]Volume, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedValues(s.volumes, func(v Volume) Volume { return v.clone() }, chain.CompareRefs), nil
}
func (s *MemoryStore) PutVolume(v Volume) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.volumes[v.Ref] = v.clone()
	return nil
}
func (s *MemoryStore) RemoveVolume(r chain.Ref) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return remove(s.volumes, r)
}

func (s *MemoryStore) Replicas() ([]Replica, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedValues(s.replicas, func(r Replica) Replica { return r.clone() }, chain.CompareRefs), nil
}
func (s *MemoryStore) PutReplica(r Replica) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replicas[r.Source] = r.clone()
	return nil
}
func (s *MemoryStore) RemoveReplica(source chain.Ref) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return remove(s.replicas, source)
}

func (s *MemoryStore) Pairings() ([]Pairing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedValues(s.pairings, func(p Pairing) Pairing { return p.clone() }, chain.CompareRefs), nil
}
func (s *MemoryStore) PutPairing(p Pairing) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pairings[p.Source] = p.clone()
	return nil
}
func (s *MemoryStore) RemovePairing(source chain.Ref) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return remove(s.pairings, source)
}

func (s *MemoryStore) Nodes() ([]Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedValues(s.nodes, func(n Node) Node { return n }, cmp.Compare[string]), nil
}
func (s *MemoryStore) PutNode(n Node) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes[n.Name] = n
	return nil
}

func remove[K comparable, V any](m map[K]V, k K) error {
	if _, ok := m[k]; !ok {
		return ErrStoreNotFound
	}
	delete(m, k)
	return nil
}

func sortedValues[K comparable, V any](m map[K]V, clone func(V) V, compare func(a, b K) int) []V {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	out := make([]V, 0, len(keys))
	for _, k := range keys {
		out = append(out, clone(m[k]))
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
