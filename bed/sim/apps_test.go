package sim_test

import (
	"strings"
	"testing"
	"time"

	bedsim "github.com/baton-dr/baton/bed/sim"
)

// A move to the site the application runs on is refused before anything
// happens, the unplanned one as the planned one: no Ramen wish changes, the
// application keeps writing where it is, and no tail is left behind (the
// simulation's Failover used to take it, leave a tail writing next to the
// application and start it a second time on the same site).
func TestAMoveToTheSiteTheApplicationRunsOnIsRefused(t *testing.T) {
	w := protectedApp(t, bedsim.Options{Seed: 3, Scenario: "test/same-site"})
	events := len(w.Timeline())
	if _, err := w.Failover("wp", "site-a"); err == nil || !strings.Contains(err.Error(), "runs on site-a already") {
		t.Fatalf("fail over to the site it runs on: %v, want a refusal", err)
	}
	if _, err := w.Relocate("wp", "site-a"); err == nil || !strings.Contains(err.Error(), "runs on site-a already") {
		t.Fatalf("relocate to the site it runs on: %v, want a refusal", err)
	}
	if _, err := w.Failover("wp", "site-c"); err == nil || !strings.Contains(err.Error(), `no site "site-c"`) {
		t.Fatalf("fail over to a site the bed lacks: %v, want a refusal", err)
	}
	if got := w.Timeline()[events:]; len(got) != 0 {
		t.Errorf("the refused moves put %d events on the timeline, the first %+v", len(got), got[0])
	}
	if err := w.Run(time.Minute); err != nil {
		t.Fatal(err)
	}
	if where, err := w.Where("wp"); err != nil || where != "site-a" {
		t.Fatalf("the application runs on %q (%v) after the refused moves, want site-a", where, err)
	}
	v, err := w.Verify("wp")
	if err != nil || !v.Consistent() || v.LostAcknowledged() != 0 {
		t.Fatalf("after the refused moves: %v, %v", v, err)
	}
	if violations := w.Violations(); len(violations) > 0 {
		t.Fatalf("%d violations, the first: %s", len(violations), violations[0].Message)
	}
}
