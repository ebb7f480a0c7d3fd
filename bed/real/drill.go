package real

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/bed/real/webapps"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
	"github.com/baton-dr/baton/workload"
)

// A drill on the real bed runs as a DR engineer runs one, and as the
// simulation's does (bed/sim/drill.go): a TestFailover per volume on the DR
// site's API server, which the baton operator running there answers with a
// bubble clone of the newest replica snapshot, exposed as a static PV and a
// claim of the source's volumeMode and fsType. The application's copy starts
// on the bubbles' claims, in a namespace and on a NodePort of its own, and is
// read back through its HTTP API against the journal as it stood, judged as
// a fail-over's read-back is: only writes acknowledged after a bubble's
// snapshot was ordered may be missing. The copy stops, the TestFailovers are
// deleted, and the operator removes claims, PVs and bubbles: nothing may be
// left. Production goes on writing and replicating throughout.

var _ bed.Driller = (*Bed)(nil)

// operatorNamespace is where baton's operator runs and reads TestFailovers.
const operatorNamespace = "baton-system"

// drillLook is how often a drill's waits read the site's objects.
const drillLook = time.Second

// drill is one application's drill on a site while it is under way: what
// Close ends should the drill not get to end itself.
type drill struct {
	site      *site
	namespace string                  // the copy's: the bubbles' claims, its Secret, Deployments and Services
	keys      []client.ObjectKey      // the TestFailovers, in the application's volume order
	bubbles   []v1.TestFailoverStatus // once Ready
}

// drillObjects are the TestFailovers of the application's volumes: each
// volume's chain by its handle (the DR site has no claim of it before a
// move), its bubble's claim named as the application's claim, in namespace.
func drillObjects(run, app, namespace string, volumes []apps.Volume) []*v1.TestFailover {
	var out []*v1.TestFailover
	for _, v := range volumes {
		out = append(out, &v1.TestFailover{
			ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "drill-" + run + "-" + app + "-" + v.Name,
				Labels: map[string]string{"baton.dev/scenario-run": run}},
			Spec: v1.TestFailoverSpec{Source: v.Handle, TargetNamespace: namespace, PVCName: v.Name}})
	}
	return out
}

// drillNamespace is the copy's namespace: the run's, so that no namespace
// of an earlier run's drill still terminating is in its way.
func (b *Bed) drillNamespace(app string) string { return "drill-" + app + "-" + b.run }

// Drill runs a test fail-over of the application on site (bed.Driller).
func (b *Bed) Drill(name, on string) (workload.Verdict, error) {
	a, err := b.apps.App(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	s, err := b.site(on)
	if err != nil {
		return workload.Verdict{}, err
	}
	w := b.app(name).web
	switch {
	case w == nil:
		return workload.Verdict{}, fmt.Errorf("drill %s on %s: the real bed drills applications run as themselves "+
			"(the application images); a workload model has no copy to start on the bubbles", name, on)
	case a.Site == on || a.Site == "":
		return workload.Verdict{}, fmt.Errorf("drill %s on %s: a drill runs on the DR site, and %s runs on %q", name, on, name, a.Site)
	}
	started := time.Now()
	b.event(on, reports.EventAction, "drill %s on %s", name, on)
	d := &drill{site: s, namespace: b.drillNamespace(name)}
	b.drills = append(b.drills, d)
	if err := b.requestDrills(d, a); err != nil {
		return workload.Verdict{}, err
	}
	verdict, err := b.verifyBubbles(d, a, w)
	if err != nil {
		return verdict, err
	}
	if err := b.endDrill(d); err != nil {
		return verdict, err
	}
	b.productionWent(a, w, started)
	var lossAge time.Duration
	for _, v := range verdict.Volumes {
		lossAge = max(lossAge, v.Lost.Age)
	}
	b.event(on, reports.EventAction, "drill %s on %s: %d acknowledged writes behind, loss age %s, in %s", name, on,
		verdict.LostAcknowledged(), lossAge.Round(time.Millisecond), time.Since(started).Round(time.Second))
	return verdict, nil
}

// requestDrills makes the copy's namespace and the TestFailovers, and waits
// until the operator made every bubble Ready.
func (b *Bed) requestDrills(d *drill, a *apps.App) error {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: d.namespace, Labels: map[string]string{"baton.dev/scenario-run": b.run}}}
	if _, err := d.site.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%s: the drill's namespace %s: %w", d.site.Name, d.namespace, err)
	}
	for _, tf := range drillObjects(b.run, a.Spec.Name, d.namespace, a.Volumes) {
		if err := d.site.objects.Create(ctx, tf); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: create TestFailover %s: %w", d.site.Name, tf.Name, err)
		}
		d.keys = append(d.keys, client.ObjectKeyFromObject(tf))
	}
	d.bubbles = make([]v1.TestFailoverStatus, len(d.keys))
	var last string
	ready := b.pump(every(drillLook, func() bool {
		for i, key := range d.keys {
			tf, err := b.readDrill(d.site, key)
			if err != nil {
				last = fmt.Sprintf("%s: %v", key.Name, err)
				return false
			}
			if tf.Status.Phase != v1.TestFailoverReady || tf.Status.Snapshot == nil {
				last = key.Name + ": " + sitecontroller.DrillProgress(tf)
				return false
			}
			d.bubbles[i] = tf.Status
		}
		return true
	}), b.options.ActionLimit)
	if !ready {
		return fmt.Errorf("drill %s on %s: not ready within %s: %s", a.Spec.Name, d.site.Site, b.options.ActionLimit, last)
	}
	for i, v := range a.Volumes {
		bubble := d.bubbles[i]
		b.event(d.site.Site, reports.EventAction, "%s's %s: bubble %s (PVC %s/%s, %s), a clone of snapshot %s",
			a.Spec.Name, v.Name, bubble.BubbleVolume, d.namespace, bubble.PVCName, bubble.SourceVolumeMode, bubble.Snapshot.Name)
	}
	return nil
}

func (b *Bed) readDrill(s *site, key client.ObjectKey) (*v1.TestFailover, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callLimit)
	defer cancel()
	var tf v1.TestFailover
	err := s.objects.Get(ctx, key, &tf)
	return &tf, err
}

// verifyBubbles starts the application's copy on the bubbles' claims,
// reads it back and stops it. Its losses are judged as a fail-over's
// (bed.MoveLosses): each volume against when its bubble's snapshot was
// ordered.
func (b *Bed) verifyBubbles(d *drill, a *apps.App, w *webApp) (workload.Verdict, error) {
	ctx := context.Background()
	taken := map[string]time.Time{}
	takenErr := map[string]error{}
	var recoveryPoint time.Time // the oldest bubble's: what the copy as a whole must hold
	for i, v := range a.Volumes {
		t, err := apps.SnapshotTakenAt(v.Handle, d.bubbles[i].Snapshot.GUID, b.records()...)
		taken[v.Name], takenErr[v.Name] = t, err
		if err == nil && (recoveryPoint.IsZero() || t.Before(recoveryPoint)) {
			recoveryPoint = t
		}
	}
	port, err := b.freeNodePort(ctx)
	if err != nil {
		return workload.Verdict{}, err
	}
	w.mu.Lock() // between two of production's operations
	copied, err := webapps.Copy(w.client, fmt.Sprintf("http://%s:%d", d.site.nodeIP, port))
	w.mu.Unlock()
	if err != nil {
		return workload.Verdict{}, err
	}
	c := &webApp{bed: b, name: w.name, images: w.images, objects: w.objects.Placed(d.namespace, port), nodePort: port,
		client: copied, loaded: w.loaded}
	if err := b.deployWeb(ctx, c, d.site); err != nil {
		return workload.Verdict{}, errors.Join(fmt.Errorf("drill %s on %s: the copy does not start: %w", a.Spec.Name, d.site.Site, err),
			b.undeployWeb(ctx, c, d.site))
	}
	found, readErr := c.readBack(ctx, recoveryPoint)
	b.event(d.site.Site, reports.EventAction, "%s's copy read back through its API in the bubbles: %s", a.Spec.Name, strings.TrimSpace(found.String()))
	stopErr := b.undeployWeb(ctx, c, d.site)
	verdict := found.Workload(copied.Volumes())
	origin := func(i int) (time.Time, error) {
		name := verdict.Volumes[i].Volume
		if err := takenErr[name]; err != nil {
			return time.Time{}, fmt.Errorf("the snapshot of %s's bubble: %w", name, err)
		}
		return taken[name], nil
	}
	for _, v := range bed.MoveLosses(a.Spec.Name, verdict, false, origin, b.platform().At) {
		b.violate(v.Invariant, v.Message)
	}
	if readErr != nil {
		readErr = fmt.Errorf("drill %s on %s: %w", a.Spec.Name, d.site.Site, readErr)
	}
	return verdict, errors.Join(readErr, stopErr)
}

// endDrill deletes the TestFailovers, waits until the operator removed
// what they made, then deletes the copy's namespace; what is left after the
// action limit breaks the drill's invariant.
func (b *Bed) endDrill(d *drill) error {
	ctx := context.Background()
	if err := deleteDrills(ctx, d); err != nil {
		return err
	}
	var bubbles []string
	for _, bubble := range d.bubbles {
		if bubble.BubbleVolume != "" {
			bubbles = append(bubbles, string(bubble.BubbleVolume))
		}
	}
	var left []string
	gone := b.pump(every(drillLook, func() bool {
		look, cancel := context.WithTimeout(ctx, callLimit)
		defer cancel()
		left = sitecontroller.DrillLeftovers(look, d.site.objects, d.keys, d.namespace, d.site.store, bubbles)
		return len(left) == 0
	}), b.options.ActionLimit)
	if err := d.site.client.CoreV1().Namespaces().Delete(ctx, d.namespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: delete the drill's namespace %s: %w", d.site.Name, d.namespace, err)
	}
	b.drills = slices.DeleteFunc(b.drills, func(x *drill) bool { return x == d })
	if !gone {
		b.violate(InvariantDrillLeftBehind, fmt.Sprintf("the drill on %s left, %s after its TestFailovers were deleted: %s",
			d.site.Site, b.options.ActionLimit, strings.Join(left, ", ")))
		return nil
	}
	b.event(d.site.Site, reports.EventAction, "the drill's TestFailovers, claims, PVs and bubbles are gone")
	return nil
}

// InvariantDrillLeftBehind: a drill's cleanup left something of it.
const InvariantDrillLeftBehind = "drill: left behind"

// deleteDrills deletes the drill's TestFailovers; the operator's finalizer
// holds each until its bubble is gone.
func deleteDrills(ctx context.Context, d *drill) error {
	for _, key := range d.keys {
		tf := &v1.TestFailover{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		if err := d.site.objects.Delete(ctx, tf); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: delete TestFailover %s: %w", d.site.Name, key.Name, err)
		}
	}
	return nil
}

// endDrillsLeft deletes, at Close, what a drill that did not end left: its
// TestFailovers (the operator removes the bubbles) and its namespace. It
// does not wait.
func (b *Bed) endDrillsLeft() error {
	ctx, cancel := context.WithTimeout(context.Background(), b.options.ActionLimit)
	defer cancel()
	var errs []error
	for _, d := range b.drills {
		errs = append(errs, deleteDrills(ctx, d))
		if err := d.site.client.CoreV1().Namespaces().Delete(ctx, d.namespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	b.drills = nil
	return errors.Join(errs...)
}

// Invariants of production during a drill.
const (
	InvariantDrillStoppedWrites      = "drill: production stopped writing"
	InvariantDrillStoppedReplicating = "drill: production stopped replicating"
)

// productionWent checks that production went on through the drill: its
// application acknowledged writes, and every volume shipped a snapshot
// to the DR site after the drill began (waiting, up to the action limit,
// for a shipment due).
func (b *Bed) productionWent(a *apps.App, w *webApp, since time.Time) {
	acknowledged := w.acknowledgedSince(since)
	if acknowledged == 0 {
		b.violate(InvariantDrillStoppedWrites, fmt.Sprintf("%s on %s acknowledged no write during the drill (since %s)",
			a.Spec.Name, a.Site, b.platform().At(since)))
	}
	var waiting []string
	shipped := b.pump(every(drillLook, func() bool {
		waiting = b.notShippedSince(a, since)
		return len(waiting) == 0
	}), b.options.ActionLimit)
	if !shipped {
		b.violate(InvariantDrillStoppedReplicating, fmt.Sprintf("%s on %s: %s shipped nothing since the drill began (%s); %s",
			a.Spec.Name, a.Site, strings.Join(waiting, ", "), b.platform().At(since), b.pairingsOf(a, waiting)))
		return
	}
	b.event(a.Site, reports.EventAction, "%s went on through the drill: %d acknowledged operations, every volume shipped",
		a.Spec.Name, acknowledged)
}

// notShippedSince are the application's volumes no member of whose chain
// shipped a snapshot from the application's site after since.
func (b *Bed) notShippedSince(a *apps.App, since time.Time) []string {
	records, err := b.recorded().Records()
	if err != nil {
		return []string{err.Error()}
	}
	return unshipped(a, records, b.Syncs(), since)
}

// pairingsOf says where the pairings of the named volumes of a stand: the
// violation a stalled shipment raises names its phase and last failure, not
// only that nothing arrived.
func (b *Bed) pairingsOf(a *apps.App, names []string) string {
	s, err := b.site(a.Site)
	if err != nil {
		return err.Error()
	}
	records, err := b.recorded().Records()
	if err != nil {
		return err.Error()
	}
	pairings, err := s.store.Pairings()
	if err != nil {
		return "the pairings cannot be read: " + err.Error()
	}
	return describePairings(a, names, records, pairings, b.Now())
}

// describePairings tells, for each named volume of a, the state of the
// pairings whose source is a member of its chain.
func describePairings(a *apps.App, names []string, records bed.Records, pairings []core.Pairing, now time.Time) string {
	var out []string
	for _, v := range a.Volumes {
		if !slices.Contains(names, v.Name) {
			continue
		}
		root, err := chain.ParseRef(v.Handle)
		if err != nil {
			continue // unshipped named it with its error already
		}
		var states []string
		for _, m := range records[root] {
			for _, p := range pairings {
				if p.Source != m.Ref {
					continue
				}
				state := fmt.Sprintf("%s→%s %s, %d snapshots, last shipped %s", p.Source.Volume, p.Target, p.Phase, len(p.Snapshots), p.Last.Snapshot)
				if p.Phase == replication.Shipping && len(p.Snapshots) > 0 {
					state += ", shipping " + p.Snapshots[len(p.Snapshots)-1].Name
				}
				if !p.Due.IsZero() {
					state += fmt.Sprintf(", next due in %s", p.Due.Sub(now).Round(time.Second))
				}
				if p.Failures > 0 {
					state += fmt.Sprintf(", %d failures, the last: %s", p.Failures, p.LastError)
				}
				states = append(states, state)
			}
		}
		if len(states) == 0 {
			states = []string{"no pairing"}
		}
		out = append(out, v.Name+": "+strings.Join(states, "; "))
	}
	return strings.Join(out, "; ")
}

// unshipped are the volumes of a no sync from a.Site of a member of their
// chain (records) completed after since.
func unshipped(a *apps.App, records bed.Records, syncs []reports.Sync, since time.Time) []string {
	var out []string
	for _, v := range a.Volumes {
		root, err := chain.ParseRef(v.Handle)
		if err != nil {
			out = append(out, v.Name+": "+err.Error())
			continue
		}
		members := map[string]bool{}
		for _, m := range records[root] {
			members[string(m.Ref.Volume)] = true
		}
		if !slices.ContainsFunc(syncs, func(s reports.Sync) bool {
			return s.From == a.Site && members[s.Volume] && s.At.After(since)
		}) {
			out = append(out, v.Name)
		}
	}
	return out
}

// acknowledgedSince counts the scenario's client's operations acknowledged
// after t.
func (w *webApp) acknowledgedSince(t time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, op := range w.client.Journal().Writes() {
		if op.Outcome == webapps.Acknowledged && op.Answered.After(t) {
			n++
		}
	}
	return n
}

// records are both sites' records, as apps reads them.
func (b *Bed) records() []apps.Records {
	out := make([]apps.Records, 0, len(b.sites))
	for _, s := range b.sites {
		out = append(out, s.store)
	}
	return out
}

// every asks look at most once a period and answers false in between: a
// wait through the pump looks again every few milliseconds, an API server
// need not be asked that often.
func every(period time.Duration, look func() bool) func() bool {
	var last time.Time
	return func() bool {
		if time.Since(last) < period {
			return false
		}
		last = time.Now()
		return look()
	}
}
