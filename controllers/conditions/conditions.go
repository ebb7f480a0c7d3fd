// Package conditions merges the conditions a reconciler computes into the
// ones an object's status stores, one way for the site operator's and the
// hub's controllers: a condition keeps its transition time for as long as
// its status stays, and every condition records the generation it observed.
package conditions

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Set sets want onto existing; a condition whose status changes takes now
// as its transition time (whole seconds, as metav1.Time keeps it), one whose
// status stays keeps its time. It reports whether anything changed.
func Set(existing *[]metav1.Condition, want []metav1.Condition, generation int64, now time.Time) bool {
	changed := false
	for _, c := range want {
		c.ObservedGeneration = generation
		c.LastTransitionTime = metav1.NewTime(now.UTC().Truncate(time.Second))
		if meta.SetStatusCondition(existing, c) {
			changed = true
		}
	}
	return changed
}

// Merged is stored with want set onto it (Set) and the conditions of the
// owned types that want lacks removed: for a reconciler whose passes compute
// different sets of the types it owns. stored is left as it was.
func Merged(stored, want []metav1.Condition, generation int64, now time.Time, owned []string) []metav1.Condition {
	merged := slices.Clone(stored)
	Set(&merged, want, generation, now)
	for _, conditionType := range owned {
		if !slices.ContainsFunc(want, func(c metav1.Condition) bool { return c.Type == conditionType }) {
			meta.RemoveStatusCondition(&merged, conditionType)
		}
	}
	return merged
}
