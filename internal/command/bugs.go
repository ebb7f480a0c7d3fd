package command

import (
	"fmt"
	"io"

	"github.com/baton-dr/baton/internal/bugs"
)

// SeededBugs checks the seeded bugs the environment selects (BATON_BUG):
// a name the catalogue lacks, or any bug asked of a build without -tags
// baton_bugs, is an error -- the binary must not run believing a bug is on.
// The bugs switched on are said on w, so that the logs of a bed's run name
// them.
func SeededBugs(name string, w io.Writer) error {
	selected, err := bugs.FromEnv()
	if err != nil {
		return err
	}
	if len(selected) > 0 {
		fmt.Fprintf(w, "%s: seeded bugs switched on: %v\n", name, selected)
	}
	return nil
}
