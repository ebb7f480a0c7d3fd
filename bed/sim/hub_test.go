package sim_test

import (
	"testing"
	"time"

	"github.com/baton-dr/baton/bed"
	bedsim "github.com/baton-dr/baton/bed/sim"
)

func newHubWorld(t *testing.T, seed uint64) *bedsim.World {
	t.Helper()
	w, err := bedsim.New(bedsim.Options{Seed: seed, Scenario: "test/hub", Records: bedsim.CRDRecords, Undeployed: true})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

