package replicatortest

import (
	"regexp"
	"testing"
)

func TestResourceNamesAreDistinctAndValid(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9-]{1,40}$`)
	seen := map[string]string{}
	for _, test := range []string{
		"TestConformance/FreshReplicasSkipTheInitialSync/2",
		"TestConformance/FreshReplicasSkipTheInitialSync/3",
		"TestConformance/PartitionResyncsOnlyChangedBlocks/2",
		"TestConformance/PartitionResyncsOnlyChangedBlocks/3",
		"TestGuestPair/SplitBrainIsReportedNotResolved",
	} {
		name := resourceName(test)
		if !valid.MatchString(name) {
			t.Errorf("resourceName(%q) = %q, not a short DRBD resource name", test, name)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("%q and %q share the resource name %q", test, other, name)
		}
		seen[name] = test
	}
}
