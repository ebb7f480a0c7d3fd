package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// The store-fault class: a site's record store -- the API server in
// production -- fails writes. Each write of a failing store fails with the
// fault's rate, drawn from the site's own stream ("store-faults/<site>"), so a
// seed replays the same failures; half of them after the write took effect,
// as an API server answering 500 after etcd committed does. FailStoreWrite
// fails one chosen write instead: the k-th from now. Reads never fail here
// (the API-errors fault fails them). An operation whose write k failed
// returns the error, writes k+1.. are not made, and the caller's retry must
// complete the change (storage/core/effects.go).

// ErrStoreFault is the failure the store-fault class injects.
var ErrStoreFault = errors.New("injected store failure")

// faultyStore is a site's store with the fault in front of it.
type faultyStore struct {
	core.Store
	w    *World
	site string
	// rate and rng are FailStore's; countdown and after FailStoreWrite's
	// (countdown 0: none armed).
	rate      float64
	rng       *rand.Rand
	countdown int
	after     bool
}

// FailStore makes a site's store fail a share of its writes until HealStore.
func (w *World) FailStore(site string, rate float64) {
	f := w.Site(site).store
	w.event(site, reports.EventFault, "%s's record store fails %.0f%% of its writes (half after they took effect)", site, 100*rate)
	f.rate, f.rng = rate, w.Sim.Rand("store-faults/"+site)
}

// HealStore ends a site's store failures.
func (w *World) HealStore(site string) {
	f := w.Site(site).store
	if f.rate == 0 && f.countdown == 0 {
		return
	}
	w.event(site, reports.EventFault, "%s's record store writes again", site)
	f.rate, f.countdown = 0, 0
}

// FailStoreWrite makes the k-th write of a site's store from now fail, after
// it took effect if after is set.
func (w *World) FailStoreWrite(site string, k int, after bool) {
	if k < 1 {
		panic(fmt.Sprintf("bed/sim: FailStoreWrite(%s, %d): writes count from 1", site, k))
	}
	w.Site(site).store.countdown, w.Site(site).store.after = k, after
}

// fails decides whether this write fails, and whether after taking effect.
func (f *faultyStore) fails() (failed, after bool) {
	if f.countdown > 0 {
		if f.countdown--; f.countdown == 0 {
			return true, f.after
		}
	}
	if f.rate > 0 && f.rng.Float64() < f.rate {
		return true, f.rng.IntN(2) == 0
	}
	return false, false
}

func (f *faultyStore) write(what string, apply func() error) error {
	failed, after := f.fails()
	if !failed {
		return apply()
	}
	if after {
		if err := apply(); err != nil {
			return err
		}
	}
	f.w.Sim.Logf("store-fault", "%s %s (took effect: %v)", f.site, what, after)
	return fmt.Errorf("%s: %w", what, ErrStoreFault)
}

func (f *faultyStore) PutVolume(v core.Volume) error {
	return f.write("put volume "+v.Ref.String(), func() error { return f.Store.PutVolume(v) })
}

func (f *faultyStore) RemoveVolume(ref chain.Ref) error {
	return f.write("remove volume "+ref.String(), func() error { return f.Store.RemoveVolume(ref) })
}

func (f *faultyStore) PutReplica(r core.Replica) error {
	return f.write("put replica of "+r.Source.String(), func() error { return f.Store.PutReplica(r) })
}

func (f *faultyStore) RemoveReplica(source chain.Ref) error {
	return f.write("remove replica of "+source.String(), func() error { return f.Store.RemoveReplica(source) })
}

func (f *faultyStore) PutPairing(p core.Pairing) error {
	return f.write("put pairing of "+p.Source.String(), func() error { return f.Store.PutPairing(p) })
}

func (f *faultyStore) RemovePairing(source chain.Ref) error {
	return f.write("remove pairing of "+source.String(), func() error { return f.Store.RemovePairing(source) })
}

func (f *faultyStore) PutNode(n core.Node) error {
	return f.write("put node "+n.Name, func() error { return f.Store.PutNode(n) })
}

// StoreWritePending tells whether the write FailStoreWrite chose is still to
// come: the operations since made fewer writes.
func (w *World) StoreWritePending(site string) bool { return w.Site(site).store.countdown > 0 }
