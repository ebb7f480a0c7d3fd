package mutants

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// Print writes the report as a reader wants it: per package the mutants, what
// each judge killed, the equivalent and the survivors; then every survivor
// with where it is and what it swapped.
func Print(w io.Writer, rep Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "package\tmutants\tnot viable\tnot judged\tequivalent\tkilled by unit tests\tkilled by the sweep\tsurvived\tunit score\tsweep score\ttime\t")
	for _, p := range rep.Packages {
		t := p.Tally
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f%%\t%.0f%%\t%s\t\n", p.Target, t.Mutants, t.NotViable, t.NotJudged, t.Equivalent,
			t.KilledByUnit, t.KilledBySweep, t.Survived, 100*t.UnitScore, 100*t.SweepScore,
			(time.Duration(p.Seconds) * time.Second).String())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "judged by the packages' tests and by: %s (%s in all)\n", rep.Sweep, (time.Duration(rep.Seconds) * time.Second).String())
	for _, p := range rep.Packages {
		var survivors []string
		for _, r := range p.Results {
			if r.Survived() {
				survivors = append(survivors, fmt.Sprintf("  %s  [unit %s, sweep %s]", r.Mutant, r.Unit.Verdict, r.Sweep.Verdict))
			}
		}
		if len(survivors) > 0 {
			fmt.Fprintf(w, "\nsurvivors of %s (%d):\n%s\n", p.Target, len(survivors), strings.Join(survivors, "\n"))
		}
	}
	for _, id := range rep.Stale {
		fmt.Fprintf(w, "docs/mutants.md lists %s as equivalent, which is no mutant now: update the entry\n", id)
	}
	return nil
}

// Write puts results.json and report.txt into dir.
func Write(dir string, rep Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "report.txt"))
	if err != nil {
		return err
	}
	if err := Print(f, rep); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
