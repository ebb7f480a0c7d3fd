package conditions_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/baton-dr/baton/controllers/conditions"
)

var now = time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC)

func ready(status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: reason}
}

// Setting the same conditions later keeps their transition time; a changed
// status takes the new instant, in whole seconds.
func TestATransitionTimeMovesOnlyWithTheStatus(t *testing.T) {
	var stored []metav1.Condition
	first := []metav1.Condition{ready(metav1.ConditionTrue, "Up")}
	if !conditions.Set(&stored, first, 1, now) {
		t.Fatal("a new condition did not count as a change")
	}
	if conditions.Set(&stored, first, 1, now.Add(time.Minute)) {
		t.Fatal("the same condition later counted as a change")
	}
	if got := stored[0].LastTransitionTime.Time; !got.Equal(now) {
		t.Fatalf("transition time moved to %s without a status change", got)
	}
	conditions.Set(&stored, []metav1.Condition{ready(metav1.ConditionFalse, "Down")}, 2, now.Add(90*time.Second+time.Millisecond))
	if got := stored[0]; !got.LastTransitionTime.Time.Equal(now.Add(90*time.Second)) || got.ObservedGeneration != 2 {
		t.Fatalf("after the change: %+v", got)
	}
}

// Merged drops the owned types a pass did not compute, keeps the others,
// and leaves the stored conditions alone.
func TestMergedDropsTheOwnedTypesAPassDidNotCompute(t *testing.T) {
	stored := []metav1.Condition{ready(metav1.ConditionTrue, "Up"),
		{Type: "Delivered", Status: metav1.ConditionTrue, Reason: "Applied"},
		{Type: "Foreign", Status: metav1.ConditionTrue, Reason: "Someone"}}
	merged := conditions.Merged(stored, []metav1.Condition{ready(metav1.ConditionFalse, "Down")}, 3, now,
		[]string{"Ready", "Delivered"})
	if len(merged) != 2 || merged[0].Type != "Ready" || merged[0].Reason != "Down" || merged[1].Type != "Foreign" {
		t.Fatalf("merged %+v, want Ready=Down and the foreign condition", merged)
	}
	if len(stored) != 3 || stored[0].Reason != "Up" {
		t.Fatalf("Merged changed the stored conditions: %+v", stored)
	}
}
