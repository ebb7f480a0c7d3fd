package mutants

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// block is one statement block of a coverage profile.
type block struct {
	startLine, startColumn, endLine, endColumn int
	count                                      int
}

func (b block) holds(line, column int) bool {
	after := line > b.startLine || (line == b.startLine && column >= b.startColumn)
	before := line < b.endLine || (line == b.endLine && column <= b.endColumn)
	return after && before
}

// Reach is which statements of the mutated packages the sweep runs, read
// from the coverage of the unmutated tree's sweep.
type Reach struct {
	// blocks by file from the module's root.
	blocks map[string][]block
}

// Reached says whether any run of the sweep evaluates line:column of file.
// A place no block holds (a package-level initialiser, which coverage does
// not count) is taken as reached: only a place coverage saw go unrun may
// skip the sweep.
func (r Reach) Reached(file string, line, column int) bool {
	seen := false
	for _, b := range r.blocks[file] {
		if !b.holds(line, column) {
			continue
		}
		if b.count > 0 {
			return true
		}
		seen = true
	}
	return !seen
}

// holds says some block of the profile holds line:column of file, whether it
// ran or not.
func (r Reach) holds(file string, line, column int) bool {
	for _, b := range r.blocks[file] {
		if b.holds(line, column) {
			return true
		}
	}
	return false
}

// parseProfile reads a text coverage profile (go tool covdata textfmt) whose
// files are named by import path under module.
func parseProfile(text, module string) (Reach, error) {
	r := Reach{blocks: map[string][]block{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "mode:") {
			continue
		}
		// github.com/x/y/file.go:12.34,15.2 3 1
		name, rest, ok := strings.Cut(line, ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) != 3 {
			return Reach{}, fmt.Errorf("coverage profile: unreadable line %q", line)
		}
		var b block
		if _, err := fmt.Sscanf(fields[0], "%d.%d,%d.%d", &b.startLine, &b.startColumn, &b.endLine, &b.endColumn); err != nil {
			return Reach{}, fmt.Errorf("coverage profile: line %q: %w", line, err)
		}
		count, err := strconv.Atoi(fields[2])
		if err != nil {
			return Reach{}, fmt.Errorf("coverage profile: line %q: %w", line, err)
		}
		b.count = count
		file := strings.TrimPrefix(name, module+"/")
		r.blocks[file] = append(r.blocks[file], b)
	}
	return r, sc.Err()
}

// sweepReach runs the sweep once on the unmutated tree with batonctl built for
// coverage of pkgs, and reads what it ran. The sweep must pass: every mutant
// is judged against it, and a failing one would kill them all.
func (r *Runner) sweepReach(ctx context.Context, module string, pkgs []string, plan SweepPlan, b Bounds) (Reach, string, error) {
	tmp, err := os.MkdirTemp("", "mutants-reach-")
	if err != nil {
		return Reach{}, "", err
	}
	defer os.RemoveAll(tmp)
	batonctl, covdir, profile := filepath.Join(tmp, "batonctl"), filepath.Join(tmp, "cover"), filepath.Join(tmp, "profile.txt")
	if err := os.Mkdir(covdir, 0o755); err != nil {
		return Reach{}, "", err
	}
	buildCtx, cancel := context.WithTimeout(ctx, b.Build)
	defer cancel()
	// The main package is among those covered: a binary whose main is not
	// writes no coverage at all (go1.26), and every mutant would look reached.
	coverpkg := "-coverpkg=" + strings.Join(append([]string{module + "/cmd/batonctl"}, pkgs...), ",")
	if out, err := r.run(buildCtx, nil, "go", "build", "-cover", coverpkg, "-ldflags=-s -w", "-o", batonctl, "./cmd/batonctl"); err != nil {
		return Reach{}, "", fmt.Errorf("building batonctl for coverage: %w\n%s", err, lastLines(out, 20))
	}
	sweepCtx, cancelSweep := context.WithTimeout(ctx, 4*b.Sweep)
	defer cancelSweep()
	out, err := r.run(sweepCtx, []string{"GOCOVERDIR=" + covdir}, batonctl, plan.args()...)
	if ctx.Err() != nil {
		return Reach{}, "", ctx.Err()
	}
	if err != nil {
		return Reach{}, "", fmt.Errorf("the unmutated tree's sweep (%s) fails, so no mutant can be judged by it: %w\n%s", plan, err, lastLines(out, 10))
	}
	if _, err := r.output(ctx, "go", "tool", "covdata", "textfmt", "-i", covdir, "-o", profile); err != nil {
		return Reach{}, "", err
	}
	text, err := os.ReadFile(profile)
	if err != nil {
		return Reach{}, "", err
	}
	reach, err := parseProfile(string(text), module)
	if err != nil {
		return Reach{}, "", err
	}
	for _, p := range pkgs {
		if !reach.covers(strings.TrimPrefix(p, module+"/")) {
			return Reach{}, "", fmt.Errorf("the sweep's coverage records nothing of %s: its reach is unknown", p)
		}
	}
	return reach, string(text), nil
}

// covers says the profile counted some statement of the package in dir.
func (r Reach) covers(dir string) bool {
	for file := range r.blocks {
		if path.Dir(file) == dir {
			return true
		}
	}
	return false
}
