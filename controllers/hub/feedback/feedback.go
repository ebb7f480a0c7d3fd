// Package feedback evaluates a ManifestWork's JSONPath feedback rules as Open
// Cluster Management's work agent does. The work agent's doubles (bed/sim's
// klusterlet, the hub's envtest agent) report through it, so both give the
// hub the values the real agent would.
package feedback

import (
	"fmt"

	"k8s.io/client-go/util/jsonpath"
	workv1 "open-cluster-management.io/api/work/v1"
)

// Values are the feedback values the rules read from the live object, in the
// rules' order; a path that reads nothing, or more than one string, reports
// no value.
func Values(rules []workv1.FeedbackRule, live map[string]any) []workv1.FeedbackValue {
	var values []workv1.FeedbackValue
	for _, rule := range rules {
		for _, path := range rule.JsonPaths {
			if value, ok := evaluate(live, path.Path); ok {
				values = append(values, workv1.FeedbackValue{Name: path.Name, Value: workv1.FieldValue{Type: workv1.String, String: &value}})
			}
		}
	}
	return values
}

// evaluate reads a JSONPath as the work agent does: one string value, or
// nothing (a missing field reports no value).
func evaluate(object map[string]any, path string) (string, bool) {
	parser := jsonpath.New("feedback").AllowMissingKeys(true)
	if err := parser.Parse(fmt.Sprintf("{%s}", path)); err != nil {
		return "", false
	}
	results, err := parser.FindResults(object)
	if err != nil || len(results) != 1 || len(results[0]) != 1 {
		return "", false
	}
	value, ok := results[0][0].Interface().(string)
	return value, ok
}
