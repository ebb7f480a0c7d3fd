package sim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/replication"

	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/storage/chain"
)

// TestAPromotionWhoseWriteKFailsEndsWithOneSuccessor is the store-fault
// class's property through the whole stack: with site-a cut off, site-b's
// store fails the k-th write of a forced PromoteVolume -- before or after it
// took effect -- and Ramen promotes again until it answers OK. For every k,
// site-b ends with exactly one successor of the volume, its replica closed
// into it, its pairing shipping back to site-a, and, once the sites meet
// again, no chain invariant broken.
func TestAPromotionWhoseWriteKFailsEndsWithOneSuccessor(t *testing.T) {
	for name, records := range map[string]bedsim.Records{"memory": bedsim.MemoryRecords, "CRD": bedsim.CRDRecords} {
		for _, after := range []bool{false, true} {
			for k := 1; ; k++ {
				pending := false
				t.Run(fmt.Sprintf("%s records, write %d fails, after it took effect %v", name, k, after), func(t *testing.T) {
					pending = promoteWithWriteFailing(t, records, k, after)
				})
				if pending || t.Failed() {
					break // the promotion makes fewer than k writes
				}
			}
		}
	}
}

func promoteWithWriteFailing(t *testing.T, records bedsim.Records, k int, after bool) (pending bool) {
	w, err := bedsim.New(bedsim.Options{Seed: 17, Scenario: "test/store-faults", Records: records})
	if err != nil {
		t.Fatal(err)
	}
	handle := protected(t, w, 1)[0]
	source, err := chain.ParseRef(handle)
	if err != nil {
		t.Fatal(err)
	}
	w.Partition("site-a", "site-b", true)
	w.Run(5 * time.Second)
	b := w.Site("site-b")
	w.FailStoreWrite("site-b", k, after)
	promote := &replication.PromoteVolumeRequest{ReplicationSource: replicationSource(handle), Force: true}
	_, err = b.CSIReplication.PromoteVolume(context.Background(), promote)
	pending = w.StoreWritePending("site-b")
	w.HealStore("site-b")
	for attempt := 0; err != nil; attempt++ {
		if attempt == 3 {
			t.Fatalf("the promotion still fails on its third retry: %v", err)
		}
		w.Run(10 * time.Second)
		_, err = b.CSIReplication.PromoteVolume(context.Background(), promote)
	}
	w.Run(10 * time.Second)
	volumes, err := b.Store.Volumes()
	if err != nil {
		t.Fatal(err)
	}
	var successors []chain.Ref
	for _, v := range volumes {
		if v.Predecessor == source {
			successors = append(successors, v.Ref)
		}
	}
	if len(successors) != 1 {
		t.Fatalf("%s has %d successors on site-b: %v", source, len(successors), successors)
	}
	replicas, err := b.Store.Replicas()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range replicas {
		if r.Source == source && r.ClonedInto != successors[0] {
			t.Fatalf("site-b's replica of %s is closed into %q, want %s", source, r.ClonedInto, successors[0])
		}
	}
	if p, found, err := b.Control.Pairing(successors[0]); err != nil || !found || p.Target != w.Site("site-a").Cluster {
		t.Fatalf("the successor's pairing: %+v, found %v (%v); want one shipping back to site-a", p, found, err)
	}
	w.HealAll()
	w.Run(2 * time.Minute)
	if violations := w.Violations(); len(violations) > 0 {
		t.Fatalf("%d invariant violations, first: %s", len(violations), violations[0].Message)
	}
	return pending
}
