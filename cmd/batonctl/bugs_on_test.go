//go:build baton_bugs

package main

import (
	"strings"
	"testing"
	"time"
)

// TestALocalMatrixRefusesABugWhoseStoriesItLacks: the local bed does not
// tell the twelve moves, so walk-8 asked of it is an error naming them.
func TestALocalMatrixRefusesABugWhoseStoriesItLacks(t *testing.T) {
	_, err := runBatonctl(t, time.Now(), "bugs", "matrix", "--bed", "local", "--bugs", "walk-8")
	if err == nil || !strings.Contains(err.Error(), "bug walk-8: the local bed tells none of its stories: gitea/moves") {
		t.Errorf("bugs matrix --bed local --bugs walk-8: %v", err)
	}
}
