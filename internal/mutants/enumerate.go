package mutants

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Target is a package to mutate, or some of its files: "csi:resolve.go,replication.go"
// mutates only csi's resolution and its replication service.
type Target struct {
	// Dir is the package's directory from the module's root, e.g. storage/core.
	Dir string
	// Files, when set, limits the mutants to these files of Dir.
	Files []string
}

// ParseTarget reads "dir" or "dir:file,file".
func ParseTarget(s string) (Target, error) {
	dir, files, some := strings.Cut(strings.TrimSpace(s), ":")
	dir = strings.TrimSuffix(strings.TrimPrefix(dir, "./"), "/")
	if dir == "" || strings.Contains(dir, "...") || path.IsAbs(dir) || (some && files == "") {
		return Target{}, fmt.Errorf("target %q: want a package directory from the module's root, e.g. storage/core or csi:resolve.go", s)
	}
	t := Target{Dir: dir}
	if some {
		for _, f := range strings.Split(files, ",") {
			if f = strings.TrimSpace(f); f == "" || strings.Contains(f, "/") {
				return Target{}, fmt.Errorf("target %q: %q is not a file name of %s", s, f, dir)
			}
			t.Files = append(t.Files, f)
		}
	}
	return t, nil
}

// String is the target as ParseTarget reads it.
func (t Target) String() string {
	if len(t.Files) == 0 {
		return t.Dir
	}
	return t.Dir + ":" + strings.Join(t.Files, ",")
}

// Kinds are the mutations asked of gremlins beyond its defaults (arithmetic,
// conditionals negated and boundaries moved, increments, negatives): && and
// || swapped, and break and continue, are the slips a DR condition is most
// exposed to.
var extraKinds = []string{"--invert-logical", "--invert-loopctrl"}

// gremlinsOutput is the part of gremlins' --output file read here.
type gremlinsOutput struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// Enumerate lists t's mutants: gremlins' dry run over the package, kept to
// the files the default build compiles (gremlins also reads files behind
// build tags, such as the seeded bugs' bugs_on.go, that the judged build
// never contains), each checked against the source and given its operators.
func Enumerate(ctx context.Context, r *Runner, gremlins string, t Target) ([]Mutant, error) {
	compiled, err := r.output(ctx, "go", "list", "-f", `{{join .GoFiles "\n"}}`, "./"+t.Dir)
	if err != nil {
		return nil, fmt.Errorf("listing %s's files: %w", t.Dir, err)
	}
	files := strings.Fields(compiled)
	for _, f := range t.Files {
		if !slices.Contains(files, f) {
			return nil, fmt.Errorf("target %s: %s is no file of the package's default build (%s)", t, f, strings.Join(files, " "))
		}
	}
	if len(t.Files) > 0 {
		files = t.Files
	}
	tmp, err := os.MkdirTemp("", "mutants-enumerate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	report := filepath.Join(tmp, "gremlins.json")
	args := append([]string{"unleash", "--dry-run", "--output", report}, extraKinds...)
	if _, err := r.output(ctx, gremlins, append(args, "./"+t.Dir)...); err != nil {
		return nil, fmt.Errorf("gremlins' dry run of %s: %w", t.Dir, err)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		return nil, err
	}
	var out gremlinsOutput
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("gremlins' report of %s: %w", t.Dir, err)
	}
	var blocks Reach
	if strings.Contains(string(data), `"NOT COVERED"`) {
		if blocks, err = r.unitBlocks(ctx, t.Dir); err != nil {
			return nil, err
		}
	}
	var mutants []Mutant
	for _, f := range out.Files {
		if !slices.Contains(files, f.Name) {
			continue
		}
		name := path.Join(t.Dir, f.Name)
		src, err := os.ReadFile(filepath.Join(r.Root, name))
		if err != nil {
			return nil, err
		}
		for _, g := range f.Mutations {
			// Gremlins calls a place no coverage block holds (a switch's
			// case expression) not covered; the tests may well evaluate
			// it, so they judge it, as the sweep's reach check does.
			covered := g.Status != "NOT COVERED" || !blocks.holds(name, g.Line, g.Column)
			m := Mutant{File: name, Line: g.Line, Column: g.Column, Type: g.Type, Covered: covered}
			if _, m, err = Apply(src, m); err != nil {
				return nil, fmt.Errorf("gremlins' mutant %s: %w", m.ID(), err)
			}
			mutants = append(mutants, m)
		}
	}
	slices.SortFunc(mutants, compareMutants)
	return mutants, nil
}

func compareMutants(a, b Mutant) int {
	if c := strings.Compare(a.File, b.File); c != 0 {
		return c
	}
	if a.Line != b.Line {
		return a.Line - b.Line
	}
	if a.Column != b.Column {
		return a.Column - b.Column
	}
	return strings.Compare(a.Type, b.Type)
}

// unitBlocks is where coverage can see in the package at dir: its statement
// blocks, from a coverage build of its tests that runs none of them (the
// counts are all zero; gremlins' dry run has already said which ran).
func (r *Runner) unitBlocks(ctx context.Context, dir string) (Reach, error) {
	module, err := r.output(ctx, "go", "list", "-m")
	if err != nil {
		return Reach{}, err
	}
	tmp, err := os.MkdirTemp("", "mutants-blocks-")
	if err != nil {
		return Reach{}, err
	}
	defer os.RemoveAll(tmp)
	profile := filepath.Join(tmp, "cover.out")
	if _, err := r.output(ctx, "go", "test", "-count=1", "-vet=off", "-run", "^$", "-coverprofile", profile, "./"+dir); err != nil {
		return Reach{}, fmt.Errorf("coverage blocks of %s: %w", dir, err)
	}
	text, err := os.ReadFile(profile)
	if err != nil {
		return Reach{}, err
	}
	return parseProfile(string(text), strings.TrimSpace(module))
}
