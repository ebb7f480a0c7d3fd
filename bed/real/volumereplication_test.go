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
// is put on the timeline with when its state was seen and when its resync
// ended, after the bed asked, so that a resync bounded by a requeue shows
// as one.
func TestAVRsPhasesSayWhereItsTimeWent(t *testing.T) {
	asked := time.Now().Add(-time.Minute).Truncate(time.Second)
	vr := &ramen.VR{Handle: "c:v", Site: "site-a", Wants: ramen.Secondary}
	var l phaseLog
	l.asked(vr)
	l.ways[vr].asked = asked

	degraded := vrWithConditions(3,
		map[string]time.Time{conditionCompleted: asked.Add(-time.Hour), conditionDegraded: asked.Add(5 * time.Second)},
		map[string]string{conditionCompleted: "True", conditionDegraded: "True"})
	observe(vr, degraded)
	l.observed("site-a", vr, degraded)
	if lines := l.take(); len(lines) != 0 {
		t.Fatalf("a VR demoted but not resynced is on the timeline as there: %v", lines)
	}

	resynced := vrWithConditions(3,
		map[string]time.Time{conditionCompleted: asked.Add(-time.Hour), conditionResyncing: asked.Add(47 * time.Second),
			conditionDegraded: asked.Add(47 * time.Second)},
		map[string]string{conditionCompleted: "True", conditionResyncing: "False", conditionDegraded: "False"})
	observe(vr, resynced)
	if !vr.Done() {
		t.Fatal("the VR's conditions do not make it secondary and resynced")
	}
	l.observed("site-a", vr, resynced)
	lines := l.take()
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1: %v", len(lines), lines)
	}
	for _, want := range []string{"c:v secondary 1m", "state Secondary seen after 1m", "Resyncing false after 47s"} {
		if !strings.Contains(lines[0].detail, want) {
			t.Errorf("%q does not say %q", lines[0].detail, want)
		}
	}
	l.observed("site-a", vr, resynced)
	if lines := l.take(); len(lines) != 0 {
		t.Errorf("a VR that reached its wish is put on the timeline again: %v", lines)
	}

	// A Resyncing condition that last changed before the wish says nothing
	// of this resync.
	again := &ramen.VR{Handle: "c:w", Site: "site-a", Wants: ramen.Secondary}
	l.asked(again)
	old := vrWithConditions(3,
		map[string]time.Time{conditionCompleted: asked, conditionResyncing: asked, conditionDegraded: asked},
		map[string]string{conditionCompleted: "True", conditionResyncing: "False", conditionDegraded: "False"})
	observe(again, old)
	l.observed("site-a", again, old)
	if lines := l.take(); len(lines) != 1 || !strings.Contains(lines[0].detail, "Resyncing false after ?") {
		t.Errorf("a resync that ended before the wish was taken for its: %v", lines)
	}
}
