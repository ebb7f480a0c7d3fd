package local

import (
	"strings"
	"testing"

	"github.com/baton-dr/baton/scenarios"
)

// TestEveryScenarioIsSupportedOrSaysWhatIsMissing: every scenario of the
// catalogue is either run by the local bed or named, with a reason, in the
// line make localbed ends with -- a new story cannot slip past both.
func TestEveryScenarioIsSupportedOrSaysWhatIsMissing(t *testing.T) {
	var names []string
	for _, sc := range scenarios.Catalogue() {
		names = append(names, sc.Name)
	}
	lacking := Lacking(names)
	for _, name := range names {
		err := Supports(name)
		_, story, _ := strings.Cut(name, "/")
		switch {
		case err == nil && strings.Contains(lacking, "/"+story+" "):
			t.Errorf("%s runs on the local bed, yet the lacking line names it: %s", name, lacking)
		case err != nil && !strings.Contains(lacking, "/"+story+" ("):
			t.Errorf("%s does not run on the local bed (%v), yet the lacking line does not name it: %s", name, err, lacking)
		case err != nil && strings.Contains(err.Error(), "does not know"):
			t.Errorf("%s: the local bed does not know its story: add it to stories", name)
		}
	}
	for _, name := range []string{"wordpress/relocate", "gitea/protect", "wordpress/failover"} {
		if err := Supports(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := Supports("wordpress/no-such-story"); err == nil {
		t.Error("an unknown story is supported")
	}
}
