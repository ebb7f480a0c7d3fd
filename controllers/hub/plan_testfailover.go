package hub

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// testFailoverObservation is what one pass of a SiteTestFailover read.
type testFailoverObservation struct {
	site  siteAnswer
	work  *workv1.ManifestWork
	drill viewed[v1.TestFailover]
}

// testFailoverPlan is what one pass of a SiteTestFailover writes.
type testFailoverPlan struct {
	delivery
	status  v1.SiteTestFailoverStatus
	requeue time.Duration
}

// planTestFailover decides one pass of a drill requested from the hub. It
// shares the deployment's Delivered reasons: the transport is the same.
func planTestFailover(request *v1.SiteTestFailover, obs testFailoverObservation) (testFailoverPlan, error) {
	namespace := siteNamespaceOf(request.Spec.SiteNamespace)
	work := testFailoverWorkName(request.Namespace, request.Name)
	drill := siteTestFailoverName(request.Namespace, request.Name)
	plan := testFailoverPlan{requeue: RequeueInProgress, status: v1.SiteTestFailoverStatus{ObservedGeneration: request.Generation}}
	if obs.site != siteReady {
		plan.status.Conditions = []metav1.Condition{siteCondition(obs.site, "", request.Spec.Site)}
		return plan, nil
	}
	var err error
	if plan.workSpec, err = testFailoverWorkSpec(drill, namespace, request.Spec.Drill); err != nil {
		return testFailoverPlan{}, err
	}
	if plan.specHash, err = specHash(plan.workSpec); err != nil {
		return testFailoverPlan{}, err
	}
	plan.deliver, plan.syncViews, plan.status.Work = true, true, work
	plan.views = []viewWant{{name: drillViewName(work), scope: siteScope("TestFailover", testFailoverResource, drill, namespace)}}

	delivered := deliveredCondition(obs.work, plan.specHash, manifestStatus(obs.work, "TestFailover", drill, namespace))
	delivered.Type = v1.SiteTestFailoverDeliveredCondition
	ready := drillReady(obs.drill)
	plan.status.Conditions = []metav1.Condition{delivered, ready}
	if obs.drill.state == viewFound {
		plan.status.Drill = obs.drill.object.Status
	}
	if ready.Status == metav1.ConditionTrue || plan.status.Drill.Phase == v1.TestFailoverFailed {
		plan.requeue = RequeueSettled
	}
	return plan, nil
}

// drillReady mirrors the site TestFailover's Ready condition.
func drillReady(drill viewed[v1.TestFailover]) metav1.Condition {
	c := metav1.Condition{Type: v1.SiteTestFailoverReadyCondition, Status: metav1.ConditionFalse, Reason: v1.SiteTestFailoverProjectingReason}
	if drill.state != viewFound {
		c.Message = fmt.Sprintf("the drill is not projected yet (%s) %s", drill.state, drill.message)
		return c
	}
	site := meta.FindStatusCondition(drill.object.Status.Conditions, v1.TestFailoverReadyCondition)
	if site == nil {
		c.Message = fmt.Sprintf("the site's drill is %q and reports no Ready condition yet", drill.object.Status.Phase)
		return c
	}
	c.Status, c.Reason, c.Message = site.Status, site.Reason, site.Message
	return c
}
