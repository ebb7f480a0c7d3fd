package core_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// errInjected is the store failure faultyStore injects.
var errInjected = errors.New("injected store failure")

// faultyStore is a test double of a record store that fails one write: the
// k-th write after failWrite(k), before it took effect, or -- as an API
// server answering 500 after etcd committed -- after.
type faultyStore struct {
	core.Store
	armed  bool
	k, n   int
	after  bool
	failed bool // the armed failure happened
}

// failWrite arms the failure of the k-th write from now.
func (f *faultyStore) failWrite(k int, after bool) {
	f.armed, f.k, f.n, f.after, f.failed = true, k, 0, after, false
}

func (f *faultyStore) write(apply func() error) error {
	if !f.armed {
		return apply()
	}
	f.n++
	if f.n != f.k {
		return apply()
	}
	f.armed, f.failed = false, true
	if f.after {
		if err := apply(); err != nil {
			return err
		}
	}
	return errInjected
}

func (f *faultyStore) PutVolume(v core.Volume) error {
	return f.write(func() error { return f.Store.PutVolume(v) })
}
func (f *faultyStore) RemoveVolume(r chain.Ref) error {
	return f.write(func() error { return f.Store.RemoveVolume(r) })
}
func (f *faultyStore) PutReplica(r core.Replica) error {
	return f.write(func() error { return f.Store.PutReplica(r) })
}
func (f *faultyStore) RemoveReplica(r chain.Ref) error {
	return f.write(func() error { return f.Store.RemoveReplica(r) })
}
func (f *faultyStore) PutPairing(p core.Pairing) error {
	return f.write(func() error { return f.Store.PutPairing(p) })
}
func (f *faultyStore) RemovePairing(r chain.Ref) error {
	return f.write(func() error { return f.Store.RemovePairing(r) })
}
func (f *faultyStore) PutNode(n core.Node) error {
	return f.write(func() error { return f.Store.PutNode(n) })
}

// TestAFailoverWhoseWriteKFailsEndsWithOneSuccessorOnRetry fails each write of
// a forced fail-over in turn -- before and after it took effect -- and retries
// until the promotion answers OK, in both ways a retry comes: the same call
// again (a client retrying its request), or Ramen's next promotion through
// the CSI driver, which resolves the chain first. Whatever write failed, the
// source ends with exactly one successor, the replica is closed to it, the
// successor ships back to the source's site, and once the sites reach each
// other again the chain is valid on both.
func TestAFailoverWhoseWriteKFailsEndsWithOneSuccessorOnRetry(t *testing.T) {
	retries := map[string]func(w *world, source chain.Ref) (core.Volume, error){
		"the same call": func(w *world, source chain.Ref) (core.Volume, error) {
			return w.sites[clusterB].Failover(source, true)
		},
		"Ramen's promotion": retryPromote,
	}
	for name, retry := range retries {
		for _, after := range []bool{false, true} {
			for k := 1; ; k++ {
				failed := false
				t.Run(fmt.Sprintf("%s, write %d fails, after it took effect %v", name, k, after), func(t *testing.T) {
					failoverWithWriteFailing(t, k, after, retry, &failed)
				})
				if !failed {
					break // the fail-over makes fewer than k writes: every one was failed
				}
			}
		}
	}
}

// failoverWithWriteFailing runs one case; failed tells whether the armed
// failure happened.
func failoverWithWriteFailing(t *testing.T, k int, after bool, retry func(*world, chain.Ref) (core.Volume, error), failed *bool) {
	w := newWorld(t)
	v := createProtected(w)
	a, b := w.sites[clusterA], w.sites[clusterB]
	w.cut[clusterA] = true
	w.stores[clusterB].failWrite(k, after)
	clone, err := b.Failover(v.Ref, true)
	*failed = w.stores[clusterB].failed
	w.stores[clusterB].armed = false // the fail-over made fewer than k writes: no later operation's
	for attempt := 0; err != nil; attempt++ {
		if attempt == 3 {
			t.Fatalf("the fail-over still fails on its third retry: %v", err)
		}
		clone, err = retry(w, v.Ref)
	}
	w.run(30 * time.Second)
	var successors []chain.Ref
	volumes, err := w.stores[clusterB].Volumes()
	w.must(err)
	for _, m := range volumes {
		if m.Predecessor == v.Ref {
			successors = append(successors, m.Ref)
		}
	}
	if len(successors) != 1 || successors[0] != clone.Ref {
		t.Fatalf("%s has successors %v on B, want exactly the clone %s", v.Ref, successors, clone.Ref)
	}
	replicas, err := w.stores[clusterB].Replicas()
	w.must(err)
	for _, r := range replicas {
		if r.Source == v.Ref && r.ClonedInto != clone.Ref {
			t.Fatalf("B's replica of %s is closed into %q, want %s", v.Ref, r.ClonedInto, clone.Ref)
		}
	}
	if p, found, err := b.Pairing(clone.Ref); err != nil || !found || p.Target != clusterA {
		t.Fatalf("the clone's pairing: %+v found %v (%v); want one shipping back to A", p, found, err)
	}
	w.cut[clusterA] = false
	w.run(2 * time.Minute)
	checker := chain.NewChecker()
	var members []chain.Member
	for _, s := range []*core.Site{a, b} {
		m, err := s.Members(v.Root)
		w.must(err)
		members = append(members, m...)
	}
	if problems := checker.Check(v.Root, members); len(problems) > 0 {
		t.Fatalf("after the sites meet again: %v", problems)
	}
	if end := w.resolve(v.Root).End(); end.Ref != clone.Ref || end.State != chain.Active {
		t.Fatalf("the chain ends at %s (%s), want the clone %s Active", end.Ref, end.State, clone.Ref)
	}
}

// retryPromote is what the CSI driver does on Ramen's retry: resolve the
// chain, and fail its end over unless this site holds it Active already.
func retryPromote(w *world, root chain.Ref) (core.Volume, error) {
	w.t.Helper()
	end := w.resolve(root).End()
	if end.Ref.Cluster == clusterB && end.State == chain.Active {
		return w.sites[clusterB].Volume(end.Ref)
	}
	return w.sites[clusterB].Failover(end.Ref, true)
}

// TestAnAbandonedFailoverDoesNotPinALaterOnesOrigin: a forced fail-over whose
// first write (the successor's pairing) landed and was answered with an
// error is abandoned -- the source's site comes back and keeps its primary.
// A planned relocation later must clone the source's final snapshot, not the
// snapshot the abandoned attempt had chosen.
func TestAnAbandonedFailoverDoesNotPinALaterOnesOrigin(t *testing.T) {
	w := newWorld(t)
	v := createProtected(w)
	a, b := w.sites[clusterA], w.sites[clusterB]
	w.cut[clusterA] = true
	w.stores[clusterB].failWrite(1, true)
	if _, err := b.Failover(v.Ref, true); !errors.Is(err, errInjected) {
		t.Fatalf("the fail-over whose first write failed: %v, want the injected failure", err)
	}
	w.cut[clusterA] = false
	w.run(3 * time.Minute) // the source keeps shipping
	_, err := a.Demote(v.Ref)
	w.must(err)
	w.run(10 * time.Second)
	w.relocate(v)
}
