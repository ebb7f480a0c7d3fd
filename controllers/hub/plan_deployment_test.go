package hub

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	workv1 "open-cluster-management.io/api/work/v1"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

func draftWith(approved bool, phase v1.ClusterDeploymentConfigPhase, sets ...v1.NodeSet) *v1.ClusterDeploymentConfig {
	d := &v1.ClusterDeploymentConfig{Spec: v1.ClusterDeploymentConfigSpec{NodeSets: sets, Sizing: sizingFor(siteA), Approved: approved},
		Status: v1.ClusterDeploymentConfigStatus{Phase: phase}}
	d.Name = "draft"
	return d
}

func TestApprovedCondition(t *testing.T) {
	discovered := metav1.Condition{Status: metav1.ConditionTrue, Reason: v1.StorageSiteDeploymentNodesFoundReason}
	noNodes := metav1.Condition{Status: metav1.ConditionFalse, Reason: v1.StorageSiteDeploymentNoNodesReason}
	running := metav1.Condition{Status: metav1.ConditionFalse, Reason: v1.StorageSiteDeploymentDiscoveringReason}
	rejected := manifestReport{reported: true, applied: false, message: "refused"}
	applied := manifestReport{reported: true, applied: true}
	for _, tc := range []struct {
		name          string
		approved      bool
		draft         *v1.ClusterDeploymentConfig
		discovered    metav1.Condition
		report        manifestReport
		sizingApplied bool
		status        metav1.ConditionStatus
		reason        string
	}{
		{"the site's draft is approved", false, draftWith(true, ""), discovered, applied, true, metav1.ConditionTrue, v1.StorageSiteDeploymentApprovedReason},
		{"a rejected sizing comes first", true, draftWith(false, ""), discovered, rejected, false, metav1.ConditionFalse, v1.StorageSiteDeploymentSizingRejectedReason},
		{"a request not approved", false, draftWith(false, ""), discovered, applied, true, metav1.ConditionFalse, v1.StorageSiteDeploymentAwaitingApprovalReason},
		{"a draft without nodes", true, draftWith(false, ""), noNodes, manifestReport{}, false, metav1.ConditionFalse, v1.StorageSiteDeploymentDraftHasNoNodesReason},
		{"no draft yet", true, nil, running, manifestReport{}, false, metav1.ConditionFalse, v1.StorageSiteDeploymentDiscoveringReason},
		{"the sizing has not landed", true, draftWith(false, ""), discovered, applied, false, metav1.ConditionFalse, v1.StorageSiteDeploymentSizingPendingReason},
		{"the approval is on its way", true, draftWith(false, ""), discovered, applied, true, metav1.ConditionFalse, v1.StorageSiteDeploymentApprovalDeliveringReason},
	} {
		t.Run(tc.name, func(t *testing.T) {
			request := newRequest("r", siteA, tc.approved)
			c := approvedCondition(request, tc.draft, tc.discovered, tc.report, tc.sizingApplied)
			if c.Type != v1.StorageSiteDeploymentApprovedCondition || c.Status != tc.status || c.Reason != tc.reason || c.Message == "" {
				t.Errorf("got %+v, want %s/%s with a message", c, tc.status, tc.reason)
			}
		})
	}
}

func TestReadyCondition(t *testing.T) {
	readyCluster := &v1.StorageCluster{Status: v1.StorageClusterStatus{Phase: v1.StorageClusterReady,
		Conditions: []metav1.Condition{{Type: v1.StorageClusterReadyCondition, Status: metav1.ConditionTrue}}}}
	deploying := &v1.StorageCluster{Status: v1.StorageClusterStatus{Phase: v1.StorageClusterDeploying,
		Conditions: []metav1.Condition{{Type: v1.StorageClusterReadyCondition, Status: metav1.ConditionFalse, Message: "1 of 3 nodes"}}}}
	failed := draftWith(true, v1.ClusterDeploymentConfigFailed)
	failed.Status.Reason = "node-2 has no /dev/sdb"
	for _, tc := range []struct {
		name    string
		draft   *v1.ClusterDeploymentConfig
		cluster viewed[v1.StorageCluster]
		status  metav1.ConditionStatus
		reason  string
		failure string
	}{
		{"a failed draft carries the site's reason", failed, viewed[v1.StorageCluster]{}, metav1.ConditionFalse, v1.StorageSiteDeploymentDeployFailedReason, "node-2 has no /dev/sdb"},
		{"no draft", nil, viewed[v1.StorageCluster]{}, metav1.ConditionFalse, v1.StorageSiteDeploymentNotDeployedReason, ""},
		{"a draft not approved", draftWith(false, v1.ClusterDeploymentConfigDrafted), viewed[v1.StorageCluster]{}, metav1.ConditionFalse, v1.StorageSiteDeploymentNotDeployedReason, ""},
		{"the cluster not projected", draftWith(true, v1.ClusterDeploymentConfigDeploying), viewed[v1.StorageCluster]{state: viewWaiting}, metav1.ConditionFalse, v1.StorageSiteDeploymentDeployingReason, ""},
		{"the cluster not ready", draftWith(true, v1.ClusterDeploymentConfigDeploying), viewed[v1.StorageCluster]{state: viewFound, object: deploying}, metav1.ConditionFalse, v1.StorageSiteDeploymentDeployingReason, ""},
		{"the cluster ready", draftWith(true, v1.ClusterDeploymentConfigDeployed), viewed[v1.StorageCluster]{state: viewFound, object: readyCluster}, metav1.ConditionTrue, v1.StorageSiteDeploymentOnlineReason, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, failure := readyCondition(tc.draft, tc.cluster)
			if c.Status != tc.status || c.Reason != tc.reason || failure != tc.failure {
				t.Errorf("got %+v (failure %q), want %s/%s (failure %q)", c, failure, tc.status, tc.reason, tc.failure)
			}
		})
	}
}

func TestDiscoveredCondition(t *testing.T) {
	report := func(values ...string) manifestReport {
		r := manifestReport{reported: true, applied: true, feedback: map[string]string{}}
		for i := 0; i+1 < len(values); i += 2 {
			r.feedback[values[i]] = values[i+1]
		}
		return r
	}
	found := func(d *v1.ClusterDeploymentConfig) viewed[v1.ClusterDeploymentConfig] {
		return viewed[v1.ClusterDeploymentConfig]{state: viewFound, object: d}
	}
	other := draftWith(false, "", threeNodes)
	other.Name = "an-older-draft"
	for _, tc := range []struct {
		name    string
		report  manifestReport
		draft   viewed[v1.ClusterDeploymentConfig]
		status  metav1.ConditionStatus
		reason  string
		failure bool
	}{
		{"not applied yet", manifestReport{}, viewed[v1.ClusterDeploymentConfig]{}, metav1.ConditionFalse, v1.StorageSiteDeploymentDiscoveringReason, false},
		{"running, no draft", report(feedbackPhase, "Running"), viewed[v1.ClusterDeploymentConfig]{}, metav1.ConditionFalse, v1.StorageSiteDeploymentDiscoveringReason, false},
		{"failed", report(feedbackPhase, "Failed", feedbackMessage, "lsblk failed"), viewed[v1.ClusterDeploymentConfig]{}, metav1.ConditionFalse, v1.StorageSiteDeploymentDiscoveryFailedReason, true},
		{"the view shows another draft", report(feedbackPhase, "Completed", feedbackDraft, "draft"), found(other), metav1.ConditionFalse, v1.StorageSiteDeploymentDiscoveringReason, false},
		{"the draft is not found", report(feedbackPhase, "Completed", feedbackDraft, "draft"), viewed[v1.ClusterDeploymentConfig]{state: viewNotFound, message: "not found"}, metav1.ConditionFalse, v1.StorageSiteDeploymentDiscoveringReason, false},
		{"the run still runs over an old draft", report(feedbackPhase, "Running", feedbackDraft, "draft"), found(draftWith(false, "", threeNodes)), metav1.ConditionFalse, v1.StorageSiteDeploymentDiscoveringReason, false},
		{"no nodes", report(feedbackPhase, "Completed", feedbackDraft, "draft"), found(draftWith(false, "")), metav1.ConditionFalse, v1.StorageSiteDeploymentNoNodesReason, false},
		{"nodes", report(feedbackPhase, "Completed", feedbackDraft, "draft"), found(draftWith(false, "", threeNodes)), metav1.ConditionTrue, v1.StorageSiteDeploymentNodesFoundReason, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, failure := discoveredCondition(tc.report, tc.report.feedback[feedbackDraft], tc.draft)
			if c.Status != tc.status || c.Reason != tc.reason || (failure != "") != tc.failure || c.Message == "" {
				t.Errorf("got %+v (failure %q), want %s/%s", c, failure, tc.status, tc.reason)
			}
		})
	}
}

func TestDeploymentPhase(t *testing.T) {
	yes := metav1.Condition{Status: metav1.ConditionTrue}
	no := metav1.Condition{Status: metav1.ConditionFalse}
	for _, tc := range []struct {
		name       string
		failed     bool
		discovered metav1.Condition
		draft      *v1.ClusterDeploymentConfig
		ready      metav1.Condition
		wasOnline  bool
		want       v1.StorageSiteDeploymentPhase
	}{
		{"failed wins over ready", true, yes, draftWith(true, ""), yes, false, v1.StorageSiteDeploymentFailed},
		{"ready", false, yes, draftWith(true, ""), yes, false, v1.StorageSiteDeploymentOnline},
		{"approved", false, yes, draftWith(true, ""), no, false, v1.StorageSiteDeploymentDeploying},
		{"Online stays Online when the cluster loses Ready", false, yes, draftWith(true, ""), no, true, v1.StorageSiteDeploymentOnline},
		{"failed wins over Online", true, yes, draftWith(true, ""), no, true, v1.StorageSiteDeploymentFailed},
		{"discovered", false, yes, draftWith(false, ""), no, false, v1.StorageSiteDeploymentDrafted},
		{"nothing yet", false, no, nil, no, false, v1.StorageSiteDeploymentDiscovering},
	} {
		if got := deploymentPhase(tc.failed, tc.discovered, tc.draft, tc.ready, tc.wasOnline); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestDerivedNames checks that every name the hub derives is a valid DNS
// subdomain, stays unique across namespaces, and that a run's name follows
// its discovery.
func TestDerivedNames(t *testing.T) {
	long := strings.Repeat("a-", 120) + "z"
	for _, name := range []string{"site-a", long, "a.b-", strings.Repeat("x", 253)} {
		work := deploymentWorkName(hubNS, name)
		for _, derived := range []string{work, testFailoverWorkName(hubNS, name), siteTestFailoverName(hubNS, name),
			runName(hubNS, name, "{}"), draftViewName(work), clusterViewName(work), nodeViewName(work, strings.Repeat("n", 253)), drillViewName(work)} {
			if problems := validation.IsDNS1123Subdomain(derived); len(problems) > 0 {
				t.Errorf("%q: %v", derived, problems)
			}
		}
	}
	if deploymentWorkName("a", "b-c") == deploymentWorkName("a-b", "c") {
		t.Error("two requests share a work name")
	}
	if runName(hubNS, "r", `{"nodeNames":["a"]}`) == runName(hubNS, "r", `{"nodeNames":["b"]}`) {
		t.Error("a changed discovery kept its run name")
	}
	if got, want := runName(hubNS, "r", "{}"), "hub-r-"+hashOf(8, hubNS, "r", "{}"); got != want {
		t.Errorf("run name %q, want %q: the name must depend on the request and its discovery alone", got, want)
	}
}

// FuzzProject feeds the view decoder what a site could return: a result is
// outside input, and a malformed one must read as "no object", never panic
// or pass for the object the scope names.
func FuzzProject(f *testing.F) {
	good, _ := json.Marshal(map[string]any{"apiVersion": "storage.baton.dev/v1alpha1", "kind": "ClusterDeploymentConfig",
		"metadata": map[string]any{"name": "draft", "namespace": siteNS}, "spec": map[string]any{"approved": true}})
	f.Add(good, true)
	f.Add([]byte(`{"kind":"ClusterDeploymentConfig","metadata":{"name":"other","namespace":"baton-system"}}`), true)
	f.Add([]byte(`{"spec":{"nodeSets":"not a list"}}`), true)
	f.Add([]byte(`null`), false)
	f.Add([]byte(`[`), true)
	f.Fuzz(func(t *testing.T, raw []byte, processing bool) {
		view := &viewv1beta1.ManagedClusterView{Spec: viewv1beta1.ViewSpec{Scope: siteScope("ClusterDeploymentConfig", draftResource, "draft", siteNS)}}
		status := metav1.ConditionFalse
		if processing {
			status = metav1.ConditionTrue
		}
		view.Status.Conditions = []metav1.Condition{{Type: viewv1beta1.ConditionViewProcessing, Status: status}}
		view.Status.Result = runtime.RawExtension{Raw: raw}
		got := project[v1.ClusterDeploymentConfig](view)
		if got.state == viewFound {
			if !processing || got.object == nil || got.object.Name != "draft" || got.object.Namespace != siteNS {
				t.Fatalf("%s read as the draft: %+v", raw, got)
			}
		} else if got.object != nil {
			t.Fatalf("state %s with an object", got.state)
		}
	})
}

// BenchmarkPlanDeployment measures one planning pass of an Online request
// with three nodes: the pure half of every reconcile.
func BenchmarkPlanDeployment(b *testing.B) {
	request := newRequest("site-a", siteA, true)
	run, err := requestRun(request)
	if err != nil {
		b.Fatal(err)
	}
	draft := draftWith(true, v1.ClusterDeploymentConfigDeployed, threeNodes)
	draft.Name = "site-a"
	phase, name := string(v1.OperatorOpsCompleted), "site-a"
	work := &workv1.ManifestWork{Status: workv1.ManifestWorkStatus{ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{{
		ResourceMeta:    workv1.ManifestResourceMeta{Kind: "OperatorOps", Name: run, Namespace: siteNS},
		StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{{Name: feedbackPhase, Value: workv1.FieldValue{String: &phase}}, {Name: feedbackDraft, Value: workv1.FieldValue{String: &name}}}},
	}}}}}
	cluster := &v1.StorageCluster{Spec: v1.StorageClusterSpec{ClusterID: clusterID}, Status: v1.StorageClusterStatus{
		Conditions: []metav1.Condition{{Type: v1.StorageClusterReadyCondition, Status: metav1.ConditionTrue}}}}
	nodes := map[string]viewed[v1.StorageNode]{}
	for _, node := range threeNodes.Nodes {
		nodes[node] = viewed[v1.StorageNode]{state: viewFound, object: &v1.StorageNode{Spec: v1.StorageNodeSpec{NodeName: node}}}
	}
	obs := deploymentObservation{site: siteReady, work: work, draft: viewed[v1.ClusterDeploymentConfig]{state: viewFound, object: draft},
		cluster: viewed[v1.StorageCluster]{state: viewFound, object: cluster}, nodes: nodes}
	b.ReportAllocs()
	for b.Loop() {
		plan, err := planDeployment(request, obs)
		if err != nil || plan.status.Phase != v1.StorageSiteDeploymentOnline {
			b.Fatalf("%v %s", err, plan.status.Phase)
		}
	}
}

// TestAViewTheAgentFailedToReadKeepsThePhase: chaos seed 30029 of hub/deploy
// (API errors on the site) -- the view agent answered the draft's view with a
// failed read (the site's API server said 503), the pass projected no draft
// and the Online request went back to Discovering on its run. The phase stays;
// the conditions say what the pass waits for.
func TestAViewTheAgentFailedToReadKeepsThePhase(t *testing.T) {
	request := newRequest("site-a", siteA, true)
	run, err := requestRun(request)
	if err != nil {
		t.Fatal(err)
	}
	phase, name := string(v1.OperatorOpsCompleted), "site-a"
	work := &workv1.ManifestWork{Status: workv1.ManifestWorkStatus{ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{{
		ResourceMeta:    workv1.ManifestResourceMeta{Kind: "OperatorOps", Name: run, Namespace: siteNS},
		StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{{Name: feedbackPhase, Value: workv1.FieldValue{String: &phase}}, {Name: feedbackDraft, Value: workv1.FieldValue{String: &name}}}},
	}}}}}
	unread := "failed to get resource with err: the server is currently unable to handle the request"
	obs := deploymentObservation{site: siteReady, work: work,
		draft:   viewed[v1.ClusterDeploymentConfig]{state: viewNotFound, message: unread},
		cluster: viewed[v1.StorageCluster]{state: viewNotFound, message: unread}}
	for _, recorded := range []v1.StorageSiteDeploymentPhase{v1.StorageSiteDeploymentOnline, v1.StorageSiteDeploymentDeploying,
		v1.StorageSiteDeploymentDrafted} {
		request.Status.Run, request.Status.Phase = run, recorded
		plan, err := planDeployment(request, obs)
		if err != nil {
			t.Fatal(err)
		}
		if plan.status.Phase != recorded {
			t.Errorf("a %s request whose views failed to read went to %s", recorded, plan.status.Phase)
		}
	}
	// A new run starts over.
	request.Status.Run, request.Status.Phase = "an-earlier-run", v1.StorageSiteDeploymentOnline
	plan, err := planDeployment(request, obs)
	if err != nil {
		t.Fatal(err)
	}
	if plan.status.Phase != v1.StorageSiteDeploymentDiscovering {
		t.Errorf("a new run whose draft is not seen yet is %s, want Discovering", plan.status.Phase)
	}
}
