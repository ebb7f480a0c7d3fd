package real

import (
	"errors"
	"testing"

	"github.com/baton-dr/baton/bed"
)

// The real bed offers what it does -- partitions, drills, and the pace a
// fail-over's RPO bound is stated against -- and nothing it does not: a
// scenario asking for the hub's storage requests or a fault beyond
// partitions learns it from bed.Can before it starts, never from a "not
// supported" recorded while it runs.
func TestTheRealBedOffersOnlyWhatItDoes(t *testing.T) {
	var b bed.Bed = (*Bed)(nil)
	if _, err := bed.Can[bed.Paced](b, "the RPO bound"); err != nil {
		t.Errorf("the real bed states its replication interval: %v", err)
	}
	if _, err := bed.Can[bed.Driller](b, "a drill"); err != nil {
		t.Errorf("the real bed runs drills: %v", err)
	}
	lacks := map[string]error{}
	_, lacks["the hub's storage requests"] = bed.Can[bed.StorageHub](b, "the hub's storage requests")
	_, lacks["a degraded link"] = bed.Can[bed.LinkDegrader](b, "a degraded link")
	_, lacks["a node crash"] = bed.Can[bed.NodeCrasher](b, "a node crash")
	_, lacks["an operator crash"] = bed.Can[bed.ControllerCrasher](b, "an operator crash")
	_, lacks["a control plane replaced"] = bed.Can[bed.ControlPlaneReplacer](b, "a control plane replaced")
	_, lacks["a full pool"] = bed.Can[bed.PoolFiller](b, "a full pool")
	_, lacks["API errors"] = bed.Can[bed.APIFailer](b, "API errors")
	_, lacks["store faults"] = bed.Can[bed.StoreFailer](b, "store faults")
	for what, err := range lacks {
		if !errors.Is(err, bed.ErrNotSupported) {
			t.Errorf("%s: %v, want %v: the real bed does not make it", what, err, bed.ErrNotSupported)
		}
	}
}
