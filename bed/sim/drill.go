package sim

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/apps"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/workload"
)

// A drill runs as a DR engineer runs one on a Kubernetes site: a
// TestFailover per volume on the DR site's API server, which the site
// operator's own reconciler (controllers/site's TestFailoverReconciler,
// woken by its watch while the operator runs) answers with a bubble clone
// of the newest replica snapshot, exposed as a static PV and a claim of
// the source's volumeMode and fsType. The application's copy starts on the
// bubble's claims as its pod holds them (claims.go's kubelet), reads its
// data back, and stops; the TestFailovers are deleted and the operator
// removes claims, PVs and bubbles. Nothing may be left behind.

// drillEngineer is the user who creates and deletes the TestFailovers.
const drillEngineer = "dr-engineer"

// newDrills starts the site operator's TestFailover controller on the
// site's API server (worlds with claims).
func (s *Site) newDrills() {
	w := s.world
	s.drills = newController(w, s.Name+" testfailover", &sitecontroller.TestFailoverReconciler{Client: s.objects, Clock: w.Sim,
		Local: s.API}, func() bool { return s.ControllerUp })
	s.api.watch(func(e watchEvent) {
		if e.Kind == "TestFailover" {
			s.drills.enqueue(e.Key, watchDelay)
		}
	})
}

// restartDrills is the operator's manager coming back: its informer lists
// the TestFailovers, and the controller sees them all.
func (s *Site) restartDrills() {
	var list v1.TestFailoverList
	if err := s.objects.List(context.Background(), &list, client.InNamespace(siteNamespace)); err != nil {
		if !transientAPIError(err) {
			s.world.violate("operator: a controller cannot list", err.Error())
			return
		}
		s.world.Sim.After(time.Second, s.Name+" operator lists drills again", s.restartDrills)
		return
	}
	var keys []types.NamespacedName
	for i := range list.Items {
		keys = append(keys, client.ObjectKeyFromObject(&list.Items[i]))
	}
	s.drills.resync(keys)
}

// Drill runs a test fail-over of the application on site: each volume's
// newest replica snapshot cloned into a bubble, the application's data
// verified in the bubbles (a prefix of its writes, the newest ones missing:
// what a fail-over would lose now), the bubbles removed -- replication is
// never touched.
func (w *World) Drill(name, on string) (workload.Verdict, error) {
	a, err := w.apps.App(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	s := w.Site(on)
	if s.drills == nil {
		return workload.Verdict{}, fmt.Errorf("drill %s on %s: the simulation's drills run the site operator's TestFailover "+
			"on the site's API server: the scenario needs claims (bed.Needs.Claims)", name, on)
	}
	w.event(on, reports.EventAction, "drill %s on %s", name, on)
	namespace := "drill-" + name
	bubbles, err := w.requestDrills(s, a, namespace)
	if err != nil {
		return workload.Verdict{}, err
	}
	verdict, err := w.verifyBubbles(s, a, namespace, bubbles)
	if err != nil {
		return verdict, err
	}
	if err := w.endDrills(s, a, namespace, bubbles); err != nil {
		return verdict, err
	}
	// The line feeds the run's event-log hash, so it keeps the words it was
	// written with: its "RPO" is the loss age at the bubbles' read-back.
	w.event(on, reports.EventAction, "drill %s on %s: %d acknowledged writes behind, RPO %s", name, on,
		verdict.LostAcknowledged(), worstLossAge(verdict))
	return verdict, nil
}

func drillName(app string, v apps.Volume) string { return "drill-" + app + "-" + v.Name }

// requestDrills creates a TestFailover per volume and waits until each is
// Ready; it returns the bubbles as the copy's volumes.
func (w *World) requestDrills(s *Site, a *apps.App, namespace string) ([]apps.Volume, error) {
	ctx := context.Background()
	c := s.api.client(drillEngineer)
	for _, v := range a.Volumes {
		drill := &v1.TestFailover{ObjectMeta: metav1.ObjectMeta{Namespace: siteNamespace, Name: drillName(a.Spec.Name, v)},
			Spec: v1.TestFailoverSpec{Source: v.Handle, TargetNamespace: namespace, PVCName: v.Name}}
		if err := w.engineer(func() error { return c.Create(ctx, drill) }); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("drill %s: %w", v.Name, err)
		}
	}
	bubbles := make([]apps.Volume, len(a.Volumes))
	var last string
	ready := w.RunUntil(func() bool {
		for i, v := range a.Volumes {
			drill, err := w.readDrill(s, drillName(a.Spec.Name, v))
			if err != nil || drill.Status.Phase != v1.TestFailoverReady {
				last = drillState(v.Name, drill, err)
				return false
			}
			bubbles[i] = apps.Volume{Name: v.Name, Handle: string(drill.Status.BubbleVolume), SizeBytes: v.SizeBytes, Files: v.Files}
		}
		return true
	}, actionLimit)
	if !ready {
		return nil, fmt.Errorf("drill %s on %s: not ready within %s: %s", a.Spec.Name, s.Name, actionLimit, last)
	}
	return bubbles, nil
}

// engineer runs the engineer's call, as kubectl is run again after an
// answer the API server failed: the bed's own doing, never faulted.
func (w *World) engineer(call func() error) error {
	defer w.unfaulted()()
	return call()
}

func (w *World) readDrill(s *Site, name string) (*v1.TestFailover, error) {
	var drill v1.TestFailover
	err := w.engineer(func() error {
		return s.api.client(drillEngineer).Get(context.Background(), client.ObjectKey{Namespace: siteNamespace, Name: name}, &drill)
	})
	return &drill, err
}

// drillState says where a drill that is not Ready stands.
func drillState(volume string, drill *v1.TestFailover, err error) string {
	if err != nil {
		return fmt.Sprintf("%s: %v", volume, err)
	}
	return volume + ": " + sitecontroller.DrillProgress(drill)
}

// verifyBubbles starts the application's copy on the bubbles' claims, on
// the node of the first bubble's primary, and reads its data back.
func (w *World) verifyBubbles(s *Site, a *apps.App, namespace string, bubbles []apps.Volume) (workload.Verdict, error) {
	node, err := w.bubbleNode(s, bubbles[0])
	if err != nil {
		return workload.Verdict{}, err
	}
	devices, err := w.stage(node, namespace, bubbles, true)
	if err != nil {
		return workload.Verdict{}, fmt.Errorf("drill %s on %s: the copy does not start: %w", a.Spec.Name, s.Name, err)
	}
	verdict := a.Model.Verify(devices, w.Sim.Now())
	apps.CloseDevices(devices)
	w.unstage(node, bubbles)
	return verdict, nil
}

func (w *World) bubbleNode(s *Site, bubble apps.Volume) (*Node, error) {
	defer w.unfaulted()()
	ref, err := chain.ParseRef(bubble.Handle)
	if err != nil {
		return nil, err
	}
	v, err := s.Control.Volume(ref)
	if err != nil {
		return nil, err
	}
	if v.Primary == "" {
		return nil, fmt.Errorf("the bubble %s has no primary", ref)
	}
	return s.Node(v.Primary), nil
}

// endDrills deletes the TestFailovers, waits until the operator let them
// go, and finds nothing of them left: no bubble, no PV, no claim.
func (w *World) endDrills(s *Site, a *apps.App, namespace string, bubbles []apps.Volume) error {
	ctx := context.Background()
	c := s.api.client(drillEngineer)
	for _, v := range a.Volumes {
		drill := &v1.TestFailover{ObjectMeta: metav1.ObjectMeta{Namespace: siteNamespace, Name: drillName(a.Spec.Name, v)}}
		if err := w.engineer(func() error { return c.Delete(ctx, drill) }); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("drill cleanup of %s: %w", v.Name, err)
		}
	}
	var left []string
	gone := w.RunUntil(func() bool {
		left = w.drillLeftovers(s, a, namespace, bubbles)
		return len(left) == 0
	}, actionLimit)
	if !gone {
		return fmt.Errorf("drill %s on %s: left behind after %s: %v", a.Spec.Name, s.Name, actionLimit, left)
	}
	return nil
}

// drillLeftovers lists what the application's drills left on the site.
func (w *World) drillLeftovers(s *Site, a *apps.App, namespace string, bubbles []apps.Volume) []string {
	defer w.unfaulted()()
	var drills []client.ObjectKey
	for _, v := range a.Volumes {
		drills = append(drills, client.ObjectKey{Namespace: siteNamespace, Name: drillName(a.Spec.Name, v)})
	}
	var handles []string
	for _, b := range bubbles {
		handles = append(handles, b.Handle)
	}
	return sitecontroller.DrillLeftovers(context.Background(), s.api.client(drillEngineer), drills, namespace, s.Store, handles)
}

// worstLossAge is the age of the oldest write any volume lost, at the
// verdict's time.
func worstLossAge(v workload.Verdict) time.Duration {
	var worst time.Duration
	for _, vol := range v.Volumes {
		worst = max(worst, vol.Lost.Age)
	}
	return worst
}
