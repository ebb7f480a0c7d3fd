//go:build !baton_bugs

package sweep_test

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
)

// TestAMatrixOfADefaultBuildRunsNothing: the default build carries no bug,
// and a matrix of one is refused before any run, naming the bug.
func TestAMatrixOfADefaultBuildRunsNothing(t *testing.T) {
	ran := false
	_, err := sweep.Matrix(context.Background(), sweep.MatrixOptions{Bed: "sim", Bugs: bugs.Catalogue()[:1], Seeds: 1,
		Run: func([]scenarios.Scenario, uint64, int) []reports.Result { ran = true; return nil }})
	if err == nil || !strings.Contains(err.Error(), string(bugs.Catalogue()[0].Name)) || ran {
		t.Fatalf("a matrix in a default build: %v (ran %v)", err, ran)
	}
}
