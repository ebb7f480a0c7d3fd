package v1alpha1_test

import (
	"testing"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// TestTypedClientMeetsTheRules replays the rules through the typed client, the
// way reconcilers write: Go drops a false or nil field marked omitempty, so
// "initialized false" and "no DRBD port" reach the server as a removed field,
// and "approved false" (not omitempty) as an explicit false. Both must be
// refused like the JSON patches of TestRefusals.
func TestTypedClientMeetsTheRules(t *testing.T) {
	c := apiServer(t)
	ns := newNamespace(t, c, "typed")
	ctx := testContext(t)

	t.Run("the draft's approval flow", func(t *testing.T) {
		draft := fixtureOf("ClusterDeploymentConfig").object().(*v1.ClusterDeploymentConfig)
		draft.Name, draft.Namespace = "site-a", ns
		nodeSets := draft.Spec.NodeSets
		draft.Spec.NodeSets = nil // sized, not yet discovered
		if err := c.Create(ctx, draft); err != nil {
			t.Fatal(err)
		}

		draft.Spec.Approved = true
		checkRefusal(t, c.Update(ctx, draft), refusal{field: "spec.approved", rule: noNodeSets})

		draft = readBack(t, c, draft).(*v1.ClusterDeploymentConfig)
		draft.Spec.NodeSets = nodeSets // discovery wrote the node sets
		if err := c.Update(ctx, draft); err != nil {
			t.Fatalf("discovery's write: %v", err)
		}
		draft.Spec.Approved = true
		if err := c.Update(ctx, draft); err != nil {
			t.Fatalf("approval false -> true refused: %v", err)
		}

		draft.Spec.Approved = false
		checkRefusal(t, c.Update(ctx, draft), refusal{field: "spec.approved", rule: approvalOneWay})
		if got := readBack(t, c, draft).(*v1.ClusterDeploymentConfig); !got.Spec.Approved {
			t.Error("the stored draft is no longer approved")
		}
	})

	t.Run("a volume's port and initialized flag", func(t *testing.T) {
		volume := fixtureOf("Volume").object().(*v1.Volume)
		volume.Name, volume.Namespace = "b-v2", ns
		if err := c.Create(ctx, volume); err != nil {
			t.Fatal(err)
		}
		volume.Status.DRBDPort, volume.Status.Initialized = int32Pointer(7000), true
		if err := c.Status().Update(ctx, volume); err != nil {
			t.Fatalf("first status: %v", err)
		}
		stored := readBack(t, c, volume).(*v1.Volume)

		forgetful := stored.DeepCopy() // a reconciler that lost what it knew
		forgetful.Status.DRBDPort, forgetful.Status.Initialized = nil, false
		err := c.Status().Update(ctx, forgetful)
		checkRefusal(t, err, refusal{field: "status.drbdPort", rule: portFixed})
		checkRefusal(t, err, refusal{field: "status.initialized", rule: initializedStays})

		got := readBack(t, c, volume).(*v1.Volume)
		if got.Status.DRBDPort == nil || *got.Status.DRBDPort != 7000 || !got.Status.Initialized {
			t.Errorf("stored status %+v, want port 7000 and initialized", got.Status)
		}
		if got.ResourceVersion != stored.ResourceVersion {
			t.Errorf("resourceVersion moved from %s to %s on a refused update", stored.ResourceVersion, got.ResourceVersion)
		}
	})
}
