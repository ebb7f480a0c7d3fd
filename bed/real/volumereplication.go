package real

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/csi-addons/spec/lib/go/replication"
	"google.golang.org/protobuf/types/known/timestamppb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/bed/ramen"
)

// A VolumeReplication is csi-addons' object (replication.storage.openshift.io
// v1alpha1, the CRDs the chart installs): the hub -- the bed, playing
// Ramen's VRG -- writes what it wants of a claim's replication, and the
// site's csi-addons controller manager calls the driver through its sidecar
// (enable, promote, force on FailedPrecondition, demote, resync) and
// reports in the object's status. The bed's objects carry no more than
// Ramen's do; they are read with unstructured objects, so that baton's
// module needs no csi-addons API package.
var volumeReplicationKind = schema.GroupVersionKind{Group: "replication.storage.openshift.io", Version: "v1alpha1",
	Kind: "VolumeReplication"}

// replicationClass is the chart's VolumeReplicationClass.
const replicationClass = "baton"

// The status conditions csi-addons sets (its api/replication.storage/v1alpha1).
const (
	conditionCompleted = "Completed"
	conditionDegraded  = "Degraded"
	conditionResyncing = "Resyncing"
)

// vrObject is the VolumeReplication of one volume on one site: named
// after the volume's claim, in the run's namespace.
type vrObject struct {
	key    client.ObjectKey
	claim  string
	state  string // "primary" or "secondary"
	resync bool
}

func (b *Bed) vrObjectOf(vr *ramen.VR) (vrObject, error) {
	for _, a := range b.apps.All() {
		for _, v := range a.Volumes {
			if v.Handle == vr.Handle {
				o := vrObject{key: client.ObjectKey{Namespace: b.namespace(), Name: v.Name}, claim: v.Name,
					resync: vr.AutoResync}
				switch vr.Wants {
				case ramen.Primary:
					o.state = "primary"
				case ramen.Secondary:
					o.state = "secondary"
				}
				return o, nil
			}
		}
	}
	return vrObject{}, fmt.Errorf("no volume of the run has the handle %s", vr.Handle)
}

// reconcileObject is one pass of the hub over a VR: it writes what the VR
// wants into the site's VolumeReplication (made, changed or deleted) and
// reads back what the site's csi-addons controller reports. A site the
// hub does not reach is neither written nor read: what the bed knows of it
// stays as last seen. It says when to look again.
//
// The object and whether the hub reaches the site are the caller's to
// find (the bed's state, read where it is changed); this runs beside the
// other VRs' passes.
func (b *Bed) reconcileObject(ctx context.Context, s *site, vr *ramen.VR, o vrObject, reached bool) time.Duration {
	if !reached {
		return ramen.InfoInterval
	}
	before := vr.LastError
	defer func() {
		if vr.LastError != before && vr.LastError != "" {
			b.logf(s.Site, "%s", vr.LastError)
		}
	}()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(volumeReplicationKind)
	err := s.objects.Get(ctx, o.key, obj)
	failed := func(what string, err error) time.Duration {
		vr.LastError = fmt.Sprintf("%s the VolumeReplication %s of %s on %s: %v", what, o.key.Name, vr.Handle, vr.Site, err)
		return ramen.RetryInterval
	}
	if vr.Wants == ramen.Deleted {
		switch {
		case apierrors.IsNotFound(err):
			vr.Disabled, vr.LastError = true, ""
		case err != nil:
			return failed("read", err)
		case obj.GetDeletionTimestamp() == nil:
			vr.Calls = append(vr.Calls, "delete")
			if err := s.objects.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				return failed("delete", err)
			}
		}
		return 0
	}
	if apierrors.IsNotFound(err) {
		vr.Calls = append(vr.Calls, "create "+o.state)
		if err := s.objects.Create(ctx, newVRObject(o)); err != nil {
			return failed("create", err)
		}
		vr.Enabled = true
		b.phases.asked(vr)
		return 0
	}
	if err != nil {
		return failed("read", err)
	}
	state, _, _ := unstructured.NestedString(obj.Object, "spec", "replicationState")
	resync, _, _ := unstructured.NestedBool(obj.Object, "spec", "autoResync")
	if state != o.state || resync != o.resync {
		vr.Calls = append(vr.Calls, "set "+o.state)
		patch := fmt.Sprintf(`{"spec":{"replicationState":%q,"autoResync":%v}}`, o.state, o.resync)
		if err := s.objects.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
			return failed("change", err)
		}
		b.phases.asked(vr)
		return 0
	}
	vr.Enabled = true
	observe(vr, obj)
	b.phases.observed(s.Site, vr, obj)
	return 0
}

// phaseLog notes, of each VR, when the bed wrote its wish, when the site's
// csi-addons controller first reported the state wished (status.state:
// promoted or demoted), and once the VR reached its wish how long that took
// and where the time went; for a secondary, when its Resyncing condition last
// changed (the resync done). After a long cut that says whether a demote and
// resync took as long as the data they shipped or as the controller's
// requeues (issue 40). The VRs' passes run concurrently; the timeline is the
// pump's (take).
type phaseLog struct {
	mu    sync.Mutex
	ways  map[*ramen.VR]*way
	lines []phaseLine
}

// way is one VR's way to its wish: when it was asked, when its state was
// first seen as wished.
type way struct{ asked, state time.Time }

type phaseLine struct{ site, detail string }

func (l *phaseLog) asked(vr *ramen.VR) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ways == nil {
		l.ways = map[*ramen.VR]*way{}
	}
	l.ways[vr] = &way{asked: time.Now()}
}

// observed notes what a pass read of a VR asked for (observe ran on obj).
func (l *phaseLog) observed(site string, vr *ramen.VR, obj *unstructured.Unstructured) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, ok := l.ways[vr]
	if !ok {
		return
	}
	wished := vr.Promoted || vr.Demoted
	if wished && w.state.IsZero() {
		w.state = time.Now()
	}
	if !vr.Done() {
		return
	}
	delete(l.ways, vr)
	after := func(t time.Time) string { return max(t.Sub(w.asked), 0).Round(time.Second).String() }
	took := time.Since(w.asked).Round(100 * time.Millisecond)
	var detail string
	switch vr.Wants {
	case ramen.Primary:
		detail = fmt.Sprintf("VolumeReplication %s primary %s after it was asked (state Primary seen after %s)",
			vr.Handle, took, after(w.state))
	case ramen.Secondary:
		resynced := "?"
		// The object's times are whole seconds: one before asked is the same.
		if _, _, changed := condition(obj, conditionResyncing); !changed.Before(w.asked.Truncate(time.Second)) {
			resynced = after(changed)
		}
		detail = fmt.Sprintf("VolumeReplication %s secondary %s after it was asked (state Secondary seen after %s; Resyncing false after %s)",
			vr.Handle, took, after(w.state), resynced)
	default:
		return
	}
	l.lines = append(l.lines, phaseLine{site, detail})
}

// take returns the lines noted since the last take.
func (l *phaseLog) take() []phaseLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.lines
	l.lines = nil
	return lines
}

func newVRObject(o vrObject) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"volumeReplicationClass": replicationClass,
		"replicationState":       o.state,
		"autoResync":             o.resync,
		"dataSource":             map[string]any{"apiGroup": "", "kind": "PersistentVolumeClaim", "name": o.claim},
	}}}
	obj.SetGroupVersionKind(volumeReplicationKind)
	obj.SetNamespace(o.key.Namespace)
	obj.SetName(o.key.Name)
	return obj
}

// observe reads the object's status as Ramen's VRG does: a primary is
// promoted once the controller completed the spec's generation in state
// Primary; a secondary is demoted then, and its data protected (Ready)
// once it is neither degraded nor resyncing; the last sync time is the
// primary's protection.
func observe(vr *ramen.VR, obj *unstructured.Unstructured) {
	state, _, _ := unstructured.NestedString(obj.Object, "status", "state")
	completed, message, _ := condition(obj, conditionCompleted)
	degraded, degradedMessage, _ := condition(obj, conditionDegraded)
	resyncing, _, _ := condition(obj, conditionResyncing)
	done := completed == "True"
	switch vr.Wants {
	case ramen.Primary:
		vr.Promoted = done && state == "Primary"
	case ramen.Secondary:
		vr.Demoted = done && state == "Secondary"
		vr.Ready = vr.Demoted && degraded == "False" && resyncing == "False"
	}
	if synced, ok, _ := unstructured.NestedString(obj.Object, "status", "lastSyncTime"); ok {
		if t, err := time.Parse(time.RFC3339, synced); err == nil {
			vr.Info = &replication.GetVolumeReplicationInfoResponse{LastSyncTime: timestamppb.New(t)}
		}
	}
	switch {
	case completed == "False":
		vr.LastError = fmt.Sprintf("%s on %s: %s (%s)", vr.Handle, vr.Site, message, degradedMessage)
	case done:
		vr.LastError = ""
	}
}

// condition is the object's condition of a kind for its current spec (its
// observedGeneration the object's generation): status, message and when it
// last changed; all zero when there is none.
func condition(obj *unstructured.Unstructured, kind string) (status, message string, changed time.Time) {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		observed, _, _ := unstructured.NestedInt64(m, "observedGeneration")
		if m["type"] == kind && observed == obj.GetGeneration() {
			status, _ = m["status"].(string)
			message, _ = m["message"].(string)
			if at, ok := m["lastTransitionTime"].(string); ok {
				changed, _ = time.Parse(time.RFC3339, at)
			}
			return status, message, changed
		}
	}
	return "", "", time.Time{}
}
