package real

import (
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
)

// A move to the site the application runs on is refused before it touches
// a cluster, as on the other beds (apps.MoveRefused): a fail-over there
// used to go ahead, restoring claims, promoting the site's own end and
// starting a tail beside the application.
func TestAMoveToTheSiteItRunsOnIsRefused(t *testing.T) {
	b := bedWithAppOn(chain.Ref{}, SiteA.Site)
	if _, err := b.Failover("wordpress", SiteA.Site); err == nil || !strings.Contains(err.Error(), "runs on "+SiteA.Site+" already") {
		t.Fatalf("fail-over to its own site: %v", err)
	}
	if _, err := b.Relocate("wordpress", SiteA.Site); err == nil || !strings.Contains(err.Error(), "runs on "+SiteA.Site+" already") {
		t.Fatalf("relocation to its own site: %v", err)
	}
	stopped := bedWithAppOn(chain.Ref{}, "")
	if _, err := stopped.Relocate("wordpress", SiteB.Site); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("relocation of a stopped application: %v", err)
	}
	if a := b.apps["wordpress"]; a.site != SiteA.Site || a.ramen != nil {
		t.Fatalf("a refused move changed the application: %+v", a)
	}
}
