package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Status reads a pairing's health as GetVolumeReplicationInfo shows it: in
// sync while the last shipment is at most three intervals old, degraded past
// that, after a failed shipment, and while the pairing is paused.
func TestStatusSaysHowThePairingFares(t *testing.T) {
	w := newWorld(t)
	v := createProtected(w)
	a := w.sites[clusterA]
	status := func(when string, want core.Health, message string) {
		t.Helper()
		st, err := a.Status(v.Ref)
		w.must(err)
		if st.Health != want || !strings.Contains(st.Message, message) || st.Target != clusterB {
			t.Errorf("%s: %s %q toward %s, want %s %q toward %s", when, st.Health, st.Message, st.Target, want, message, clusterB)
		}
	}
	status("after the first shipments", core.Healthy, "in sync")

	// The clock alone moves on: no tick ships anything meanwhile.
	p := pairingOf(t, a, v.Ref)
	w.Clock.Advance(p.Last.At.Add(3 * p.Interval).Sub(w.Clock.Now()))
	status("three intervals after the last shipment", core.Healthy, "in sync")
	w.Clock.Advance(time.Second)
	status("past three intervals", core.Degraded, "last sync")

	w.cut[clusterB] = true
	w.run(2 * time.Minute)
	status("B cut off", core.Degraded, "failed shipments")
	w.cut[clusterB] = false
	w.run(2 * time.Minute)
	status("B back", core.Healthy, "in sync")

	// A successor on B stops A's pairing for good.
	w.must(a.LearnSuccessor(v.Ref, chain.Ref{Cluster: clusterB, Volume: "b0000000-0000-4000-8000-000000000901"}))
	status("superseded", core.Degraded, "replication paused")
}
