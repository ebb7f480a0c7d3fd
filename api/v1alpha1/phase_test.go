package v1alpha1_test

import (
	"testing"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// TestStorageSiteDeploymentPhasesRankInRunOrder: the phases rank in the order
// a run goes through them, Failed last, and a phase not yet written (or one
// this version does not know) ranks before Pending.
func TestStorageSiteDeploymentPhasesRankInRunOrder(t *testing.T) {
	order := []v1.StorageSiteDeploymentPhase{"", v1.StorageSiteDeploymentPending, v1.StorageSiteDeploymentDiscovering,
		v1.StorageSiteDeploymentDrafted, v1.StorageSiteDeploymentDeploying, v1.StorageSiteDeploymentOnline,
		v1.StorageSiteDeploymentFailed}
	for i, phase := range order {
		if phase.Rank() != i {
			t.Errorf("%q ranks %d, want %d", phase, phase.Rank(), i)
		}
	}
	if unknown := v1.StorageSiteDeploymentPhase("Retired"); unknown.Rank() != 0 {
		t.Errorf("an unknown phase ranks %d, want 0", unknown.Rank())
	}
}
