//go:build !baton_bugs

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/bugs"
)

// TestADefaultBatonctlRefusesEveryBug: a bug asked of a build without the
// tag is an error naming it, whether by the matrix or by BATON_BUG.
func TestADefaultBatonctlRefusesEveryBug(t *testing.T) {
	_, err := runBatonctl(t, time.Now(), "bugs", "matrix", "--bugs", "walk-8")
	if err == nil || !strings.Contains(err.Error(), "bug walk-8: this batonctl was built without -tags baton_bugs") {
		t.Errorf("bugs matrix in a default build: %v", err)
	}
	t.Setenv(bugs.Env, "demote-end")
	_, err = runBatonctl(t, time.Now(), "sim", "list")
	if err == nil || !strings.Contains(err.Error(), "BATON_BUG=demote-end") {
		t.Errorf("sim list with BATON_BUG in a default build: %v", err)
	}
}
