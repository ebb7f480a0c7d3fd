package hub

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	storagev1alpha1 "github.com/baton-dr/baton/api/v1alpha1"
)

// The resources the hub's works name on a site, as a ManifestWork's
// resourceIdentifier spells them (group and plural resource).
const (
	operatorOpsResource  = "operatorops"
	draftResource        = "clusterdeploymentconfigs"
	storageClusterRes    = "storageclusters"
	storageNodeResource  = "storagenodes"
	testFailoverResource = "testfailovers"
)

// Names of the status feedback the work agent reports for the run.
const (
	feedbackPhase   = "phase"
	feedbackDraft   = "draft"
	feedbackMessage = "message"
)

// draftPatch is what the hub applies onto the site's draft: the sizing, and
// the approval once the draft shows that sizing. NodeSets are discovery's and
// are never part of it.
type draftPatch struct {
	name    string
	sizing  storagev1alpha1.Sizing
	approve bool
}

// manifestOf renders an object as a work manifest: without the fields only a
// server writes (creationTimestamp, status), which an apply must not carry.
func manifestOf(object runtime.Object) (workv1.Manifest, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(object)
	if err != nil {
		return workv1.Manifest{}, fmt.Errorf("failed to convert %T: %w", object, err)
	}
	delete(content, "status")
	if metadata, ok := content["metadata"].(map[string]any); ok {
		delete(metadata, "creationTimestamp")
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return workv1.Manifest{}, fmt.Errorf("failed to encode %T: %w", object, err)
	}
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}, nil
}

// runManifest is the OperatorOps of the current discovery.
func runManifest(name, namespace string, discovery storagev1alpha1.OperatorOpsSpec) (workv1.Manifest, error) {
	ops := &storagev1alpha1.OperatorOps{Spec: discovery}
	ops.APIVersion, ops.Kind = storagev1alpha1.GroupVersion.String(), "OperatorOps"
	ops.Name, ops.Namespace = name, namespace
	ops.Labels = map[string]string{ManagedByLabel: ManagedByValue}
	return manifestOf(ops)
}

// draftManifest is the apply configuration of the draft: identity, sizing
// and (once due) approved. It is built as a map, not from the Go type,
// because a typed draft would carry "approved": false and an empty nodeSets
// owner claim; an apply configuration holds exactly the fields it owns.
func draftManifest(namespace string, patch draftPatch) (workv1.Manifest, error) {
	sizing, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&patch.sizing)
	if err != nil {
		return workv1.Manifest{}, fmt.Errorf("failed to convert the sizing: %w", err)
	}
	spec := map[string]any{"sizing": sizing}
	if patch.approve {
		spec["approved"] = true
	}
	content := map[string]any{
		"apiVersion": storagev1alpha1.GroupVersion.String(),
		"kind":       "ClusterDeploymentConfig",
		"metadata":   map[string]any{"name": patch.name, "namespace": namespace},
		"spec":       spec,
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return workv1.Manifest{}, fmt.Errorf("failed to encode the draft patch: %w", err)
	}
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}, nil
}

// runConfig asks the work agent for the run's phase, the draft it wrote, and
// the message of its Discovered condition (a failed discovery's reason).
func runConfig(name, namespace string) workv1.ManifestConfigOption {
	return workv1.ManifestConfigOption{
		ResourceIdentifier: workv1.ResourceIdentifier{
			Group: storagev1alpha1.GroupVersion.Group, Resource: operatorOpsResource, Name: name, Namespace: namespace,
		},
		FeedbackRules: []workv1.FeedbackRule{{
			Type: workv1.JSONPathsType,
			JsonPaths: []workv1.JsonPath{
				{Name: feedbackPhase, Path: ".status.phase"},
				{Name: feedbackDraft, Path: ".status.draft"},
				{Name: feedbackMessage, Path: `.status.conditions[?(@.type=="Discovered")].message`},
			},
		}},
	}
}

// draftConfig makes the work agent server-side apply the draft patch as
// FieldManager. The sizing goes without force: a conflict with a reviewer on
// the site (who sized the draft there) is reported as the site's answer,
// never overridden. The approval goes with force, because the site operator
// owns spec.approved from the moment it writes the draft ("approved": false
// is a written field, and its default), so an unforced approval always
// conflicts. By then the draft shows exactly the requested sizing, so the
// force takes over fields whose values it does not change; approving is the
// hub's decision to make.
func draftConfig(name, namespace string, approve bool) workv1.ManifestConfigOption {
	return workv1.ManifestConfigOption{
		ResourceIdentifier: workv1.ResourceIdentifier{
			Group: storagev1alpha1.GroupVersion.Group, Resource: draftResource, Name: name, Namespace: namespace,
		},
		UpdateStrategy: &workv1.UpdateStrategy{
			Type:            workv1.UpdateStrategyTypeServerSideApply,
			ServerSideApply: &workv1.ServerSideApplyConfig{FieldManager: FieldManager, Force: approve},
		},
	}
}

// deploymentWorkSpec is the whole work of a StorageSiteDeployment: the run,
// and the draft patch once there is one. Its delete option orphans every
// resource, both when the work is deleted and when a manifest leaves it (an
// earlier run), so withdrawing a request never deletes storage.
func deploymentWorkSpec(siteNamespace, run string, discovery storagev1alpha1.OperatorOpsSpec, patch *draftPatch) (workv1.ManifestWorkSpec, error) {
	ops, err := runManifest(run, siteNamespace, discovery)
	if err != nil {
		return workv1.ManifestWorkSpec{}, err
	}
	spec := workv1.ManifestWorkSpec{
		Workload:        workv1.ManifestsTemplate{Manifests: []workv1.Manifest{ops}},
		DeleteOption:    &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan},
		ManifestConfigs: []workv1.ManifestConfigOption{runConfig(run, siteNamespace)},
	}
	if patch == nil {
		return spec, nil
	}
	draft, err := draftManifest(siteNamespace, *patch)
	if err != nil {
		return workv1.ManifestWorkSpec{}, err
	}
	spec.Workload.Manifests = append(spec.Workload.Manifests, draft)
	spec.ManifestConfigs = append(spec.ManifestConfigs, draftConfig(patch.name, siteNamespace, patch.approve))
	return spec, nil
}

// testFailoverWorkSpec is the work of a SiteTestFailover: the drill alone.
// Foreground deletion (the default): deleting the request deletes the drill,
// whose own finalizer removes the bubble.
func testFailoverWorkSpec(name, siteNamespace string, drill storagev1alpha1.TestFailoverSpec) (workv1.ManifestWorkSpec, error) {
	tf := &storagev1alpha1.TestFailover{Spec: drill}
	tf.APIVersion, tf.Kind = storagev1alpha1.GroupVersion.String(), "TestFailover"
	tf.Name, tf.Namespace = name, siteNamespace
	tf.Labels = map[string]string{ManagedByLabel: ManagedByValue}
	manifest, err := manifestOf(tf)
	if err != nil {
		return workv1.ManifestWorkSpec{}, err
	}
	return workv1.ManifestWorkSpec{
		Workload:     workv1.ManifestsTemplate{Manifests: []workv1.Manifest{manifest}},
		DeleteOption: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeForeground},
	}, nil
}
