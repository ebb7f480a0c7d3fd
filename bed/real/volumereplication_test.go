package real

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/baton-dr/baton/bed/ramen"
)

// vrWithConditions is a VolumeReplication as the csi-addons controller
// leaves it: conditions of its current generation, each with the whole
// second it last changed.
func vrWithConditions(generation int64, conditions map[string]time.Time, status map[string]string) *unstructured.Unstructured {
	var list []any
	for kind, at := range conditions {
		list = append(list, map[string]any{"type": kind, "status": status[kind], "observedGeneration": generation,
			"lastTransitionTime": at.UTC().Format(time.RFC3339)})
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"state": "Secondary", "conditions": list}}}
	obj.SetGeneration(generation)
	return obj
}

// TestAVRsPhasesSayWhereItsTimeWent: a demote and resync after a long cut
// is put on the timeline with the time each condition changed after the
// bed asked, so that a resync bounded by a requeue shows as one.
func TestAVRsPhasesSayWhereItsTimeWent(t *testing.T) {
	asked := time.Now().Add(-time.Minute).Truncate(time.Second)
	vr := &ramen.VR{Handle: "c:v", Site: "site-a", Wants: ramen.Secondary}
	var l phaseLog
	l.asked(vr)
	l.since[vr] = asked
	obj := vrWithConditions(3,
		map[string]time.Time{conditionCompleted: asked.Add(5 * time.Second), conditionResyncing: asked.Add(47 * time.Second),
			conditionDegraded: asked.Add(47 * time.Second)},
		map[string]string{conditionCompleted: "True", conditionResyncing: "False", conditionDegraded: "False"})
	observe(vr, obj)
	if !vr.Done() {
		t.Fatal("the VR's conditions do not make it secondary and resynced")
	}
	l.reached("site-a", vr, obj)
	lines := l.take()
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1: %v", len(lines), lines)
	}
	for _, want := range []string{"c:v secondary", "Completed after 5s", "Resyncing false after 47s"} {
		if !strings.Contains(lines[0].detail, want) {
			t.Errorf("%q does not say %q", lines[0].detail, want)
		}
	}
	l.reached("site-a", vr, obj)
	if lines := l.take(); len(lines) != 0 {
		t.Errorf("a VR that reached its wish is put on the timeline again: %v", lines)
	}

	// A condition of the object's former generation says nothing of this wish.
	stale := &ramen.VR{Handle: "c:w", Site: "site-a", Wants: ramen.Secondary}
	l.asked(stale)
	obj = vrWithConditions(3, map[string]time.Time{conditionCompleted: asked}, map[string]string{conditionCompleted: "True"})
	obj.SetGeneration(4)
	l.reached("site-a", stale, obj)
	if lines := l.take(); len(lines) != 1 || !strings.Contains(lines[0].detail, "Completed after ?") {
		t.Errorf("a condition of another generation was taken for this wish's: %v", lines)
	}
}
