package real

import (
	"strings"
	"testing"
)

func TestSupportedStoriesAndTheLackingOnes(t *testing.T) {
	for _, name := range []string{"wordpress/failover", "gitea/relocate", "gitea/protect"} {
		if err := Supports(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := Supports("gitea/drill"); err == nil || !strings.Contains(err.Error(), "not supported on the real bed") {
		t.Errorf("drill: %v", err)
	}
}
