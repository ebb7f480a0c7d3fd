package bed_test

import (
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
)

// TestSyncLogRecordsEachShipmentOnce reads the same pairings three times, a
// new shipment appearing between the second and third look: each shipment
// is recorded once, its stream's bytes split over the nodes that received
// a copy, its bytes changed from the bed's measure.
func TestSyncLogRecordsEachShipmentOnce(t *testing.T) {
	source := chain.Ref{Cluster: "0000000a-0000-4000-8000-00000000000a", Volume: "11111111-1111-4111-8111-111111111111"}
	at := time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)
	pairing := func(snapshot string, bytes uint64, receivers int) core.Pairing {
		p := core.Pairing{Pairing: replication.Pairing{Source: source, Target: "0000000b-0000-4000-8000-00000000000b",
			Last: replication.Sync{At: at, Duration: time.Second, Bytes: bytes, Snapshot: snapshot}}}
		for range receivers {
			p.Receivers = append(p.Receivers, core.Receiver{Node: "n"})
		}
		return p
	}
	never := core.Pairing{Pairing: replication.Pairing{Source: source}} // nothing shipped yet
	to := func(core.Pairing) string { return "site-b" }
	measured := 0
	changed := func(p core.Pairing, s *reports.Sync) { measured++; s.BytesChanged = 1000 }

	var log bed.SyncLog
	first := log.Record("site-a", []core.Pairing{never, pairing("s1", 8000, 2)}, to, changed)
	again := log.Record("site-a", []core.Pairing{pairing("s1", 8000, 2)}, to, changed)
	next := log.Record("site-a", []core.Pairing{pairing("s2", 3000, 1)}, to, changed)
	if len(first) != 1 || len(again) != 0 || len(next) != 1 || measured != 2 {
		t.Fatalf("events %d, %d, %d and %d measures, want 1, 0, 1 and 2", len(first), len(again), len(next), measured)
	}
	syncs := log.Syncs()
	want := []reports.Sync{
		{Volume: string(source.Volume), From: "site-a", To: "site-b", At: at, BytesShipped: 4000, Receivers: 2, BytesChanged: 1000},
		{Volume: string(source.Volume), From: "site-a", To: "site-b", At: at, BytesShipped: 3000, Receivers: 1, BytesChanged: 1000},
	}
	if len(syncs) != len(want) {
		t.Fatalf("syncs %+v, want %+v", syncs, want)
	}
	for i := range want {
		if syncs[i] != want[i] {
			t.Errorf("sync %d: %+v, want %+v", i, syncs[i], want[i])
		}
	}
	if d := first[0].Detail; first[0].Kind != reports.EventSync || !strings.Contains(d, "4000 bytes (to 2 nodes) for 1000 bytes changed") {
		t.Errorf("event %v %q", first[0].Kind, d)
	}
}
