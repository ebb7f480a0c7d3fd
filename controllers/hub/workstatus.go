package hub

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
)

// manifestReport is what a work's status says about one of its manifests.
type manifestReport struct {
	// reported is false until the agent wrote a condition for the manifest.
	reported bool
	// applied is the manifest's Applied condition; message explains a False.
	applied bool
	message string
	// feedback are the status feedback values, by name (strings only).
	feedback map[string]string
}

// manifestStatus finds the work agent's report on the manifest of the given
// kind, name and namespace. Reports are matched by identity, not ordinal, so
// the report of an earlier run's manifest is never read as this run's.
func manifestStatus(work *workv1.ManifestWork, kind, name, namespace string) manifestReport {
	if work == nil {
		return manifestReport{}
	}
	for _, m := range work.Status.ResourceStatus.Manifests {
		id := m.ResourceMeta
		if id.Kind != kind || id.Name != name || id.Namespace != namespace {
			continue
		}
		report := manifestReport{reported: true, feedback: map[string]string{}}
		if applied := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied); applied != nil {
			report.applied = applied.Status == metav1.ConditionTrue
			report.message = applied.Message
		}
		for _, value := range m.StatusFeedbacks.Values {
			if value.Value.String != nil {
				report.feedback[value.Name] = *value.Value.String
			}
		}
		return report
	}
	return manifestReport{}
}

// workApplied says whether the agent applied the work as last written: its
// Applied condition is True for the work's current generation.
func workApplied(work *workv1.ManifestWork) (applied bool, message string) {
	if work == nil {
		return false, ""
	}
	condition := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied)
	if condition == nil {
		return false, ""
	}
	current := condition.ObservedGeneration == 0 || condition.ObservedGeneration == work.Generation
	return current && condition.Status == metav1.ConditionTrue, condition.Message
}
