package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/core"
)

// The store-fault class: a site's record store -- the API server in
// production -- fails writes. Each write of a failing store fails with the
// fault's rate, drawn from the site's own stream ("store-faults/<site>"), so a
// seed replays the same failures; half of them after the write took effect,
// as an API server answering 500 after etcd committed does. FailStoreWrite
// fails one chosen write instead: the k-th from now. The fault sits where the
// site's operator commits an operation's writes (storageapi.WithCommit): an
// operation whose write k failed returns the error, writes k+1.. are not
// made, and the caller's retry must complete the change
// (storage/core/effects.go). Reads never fail here (the API-errors fault
// fails them).

// ErrStoreFault is the failure the store-fault class injects.
var ErrStoreFault = errors.New("injected store failure")

// storeFault is a site's store-fault state.
type storeFault struct {
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

// StoreWritePending tells whether the write FailStoreWrite chose is still to
// come: the operations since made fewer writes.
func (w *World) StoreWritePending(site string) bool { return w.Site(site).store.countdown > 0 }

// fails decides whether this write fails, and whether after taking effect.
func (f *storeFault) fails() (failed, after bool) {
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

// commit makes an operation's writes through the fault, as core.Commit does.
func (f *storeFault) commit(store core.Store, writes []core.Write) error {
	if f.rate == 0 && f.countdown == 0 {
		return core.Commit(store, writes)
	}
	for i, w := range writes {
		failed, after := f.fails()
		if !failed {
			if err := w.Apply(store); err != nil {
				return fmt.Errorf("failed to %s (write %d of %d): %w", w, i+1, len(writes), err)
			}
			continue
		}
		if after {
			if err := w.Apply(store); err != nil {
				return err
			}
		}
		f.w.Sim.Logf("store-fault", "%s %s (write %d of %d, took effect: %v)", f.site, w, i+1, len(writes), after)
		return fmt.Errorf("%s (write %d of %d): %w", w, i+1, len(writes), ErrStoreFault)
	}
	return nil
}
