package hub

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

const siteB = "site-b"

func newDrill(site string) *v1.SiteTestFailover {
	return &v1.SiteTestFailover{
		ObjectMeta: metav1.ObjectMeta{Name: "wordpress-drill", Namespace: hubNS},
		Spec: v1.SiteTestFailoverSpec{Site: site, SiteNamespace: siteNS,
			Drill: v1.TestFailoverSpec{Source: "pvc-5d2c7a4e", TargetNamespace: "drill", PVCName: "wordpress-bubble"}},
	}
}

func reconcileDrill(t *testing.T, hub client.Client, drill *v1.SiteTestFailover) (ctrl.Result, *v1.SiteTestFailover) {
	t.Helper()
	r := &SiteTestFailoverReconciler{Client: hub}
	result, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(drill)})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	got := &v1.SiteTestFailover{}
	if err := hub.Get(context.Background(), client.ObjectKeyFromObject(drill), got); apierrors.IsNotFound(err) {
		return result, nil
	} else if err != nil {
		t.Fatal(err)
	}
	return result, got
}

func TestADrillIsDeliveredToTheDRSiteAndProjectedBack(t *testing.T) {
	hub := newHub(t, siteB)
	drill := newDrill(siteB)
	if err := hub.Create(context.Background(), drill); err != nil {
		t.Fatal(err)
	}
	site := newFakeSite(t, hub, siteB)
	_, drill = reconcileDrill(t, hub, drill)

	work, err := getWork(context.Background(), hub, siteB, drill.Status.Work)
	if err != nil || work == nil {
		t.Fatalf("no work for the drill (%v)", err)
	}
	if len(work.Spec.Workload.Manifests) != 1 || work.Spec.DeleteOption.PropagationPolicy != workv1.DeletePropagationPolicyTypeForeground {
		t.Fatalf("work spec %+v, want the TestFailover alone, deleted with the request", work.Spec)
	}
	site.sync()
	name := siteTestFailoverName(hubNS, drill.Name)
	if got := site.drills[name]; got == nil || got.Spec != drill.Spec.Drill {
		t.Fatalf("the site's TestFailover %s is %+v, want the request's drill", name, got)
	}
	_, drill = reconcileDrill(t, hub, drill)
	if c := meta.FindStatusCondition(drill.Status.Conditions, v1.SiteTestFailoverDeliveredCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Delivered = %+v, want True", c)
	}

	site.drills[name].Status = v1.TestFailoverStatus{Phase: v1.TestFailoverReady, PVCName: "wordpress-bubble", SourceVolumeMode: "Block",
		Conditions: []metav1.Condition{{Type: v1.TestFailoverReadyCondition, Status: metav1.ConditionTrue, Reason: v1.TestFailoverReadyReason, Message: "the bubble is bound"}}}
	site.sync()
	result, drill := reconcileDrill(t, hub, drill)
	if drill.Status.Drill.Phase != v1.TestFailoverReady || drill.Status.Drill.SourceVolumeMode != "Block" {
		t.Errorf("projected drill %+v, want the site's Ready drill with its volumeMode", drill.Status.Drill)
	}
	if c := meta.FindStatusCondition(drill.Status.Conditions, v1.SiteTestFailoverReadyCondition); c == nil || c.Status != metav1.ConditionTrue || c.Message != "the bubble is bound" {
		t.Errorf("Ready = %+v, want the site's", c)
	}
	if result.RequeueAfter != RequeueSettled {
		t.Errorf("requeue %s once Ready, want %s", result.RequeueAfter, RequeueSettled)
	}

	if err := hub.Delete(context.Background(), drill); err != nil {
		t.Fatal(err)
	}
	if _, gone := reconcileDrill(t, hub, drill); gone != nil {
		t.Errorf("the drill request outlived its release: finalizers %v", gone.Finalizers)
	}
	if work, _ := getWork(context.Background(), hub, siteB, testFailoverWorkName(hubNS, "wordpress-drill")); work != nil {
		t.Error("the drill's work outlived the request")
	}
	var views viewv1beta1.ManagedClusterViewList
	if err := hub.List(context.Background(), &views, client.InNamespace(siteB)); err != nil || len(views.Items) != 0 {
		t.Errorf("views %d (%v), want none", len(views.Items), err)
	}
}

func TestADrillForAnUnknownSiteDeliversNothing(t *testing.T) {
	hub := newHub(t, siteB)
	drill := newDrill("site-z")
	if err := hub.Create(context.Background(), drill); err != nil {
		t.Fatal(err)
	}
	_, drill = reconcileDrill(t, hub, drill)
	c := meta.FindStatusCondition(drill.Status.Conditions, v1.SiteTestFailoverDeliveredCondition)
	if c == nil || c.Reason != v1.StorageSiteDeploymentSiteNotFoundReason {
		t.Errorf("Delivered = %+v, want SiteNotFound", c)
	}
	var works workv1.ManifestWorkList
	if err := hub.List(context.Background(), &works); err != nil || len(works.Items) != 0 {
		t.Errorf("works %d (%v), want none", len(works.Items), err)
	}
}
