package mutants

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestReachSaysWhatTheSweepRan(t *testing.T) {
	profile := `mode: set
example.com/m/p/f.go:3.30,4.12 1 1
example.com/m/p/f.go:4.12,6.3 1 0
example.com/m/p/f.go:7.2,7.10 1 1
`
	reach, err := parseProfile(profile, "example.com/m")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file         string
		line, column int
		want         bool
	}{
		{"p/f.go", 4, 5, true},    // in a block that ran
		{"p/f.go", 5, 3, false},   // only in a block that never ran
		{"p/f.go", 4, 12, true},   // on the edge of both: one ran
		{"p/f.go", 9, 1, true},    // in no block (a package-level initialiser): taken as reached
		{"p/g.go", 1, 1, true},    // a file coverage never saw: taken as reached
		{"p/f.go", 7, 11, true},   // past the last block
		{"p/f.go", 6, 4, true},    // just past the unrun block, in none
		{"p/f.go", 6, 3, false},   // the unrun block's last column
		{"p/f.go", 3, 29, true},   // just before the first block, in none
		{"p/f.go", 3, 30, true},   // the first block's first column
		{"p/f.go", 7, 2, true},    // the last block's first column
		{"p/f.go", 5, 100, false}, // a long line inside the unrun block
	} {
		if got := reach.Reached(c.file, c.line, c.column); got != c.want {
			t.Errorf("Reached(%s:%d:%d) = %v, want %v", c.file, c.line, c.column, got, c.want)
		}
	}
	if !reach.covers("p") || reach.covers("q") {
		t.Error("covers does not say which package the profile counted")
	}
	if _, err := parseProfile("example.com/m/p/f.go:3.30,4.12 1\n", "example.com/m"); err == nil {
		t.Error("a line with a field missing was read")
	}
}

// A kill is kept whatever else changes; a survival only while the rest of
// the tree is what it was judged against, since a new story may kill it.
func TestTheCacheKeepsKillsAndRejudgesSurvivals(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	killed := cacheKey("sweep", "plan", "p/f.go", []byte("mutated one"))
	survived := cacheKey("sweep", "plan", "p/f.go", []byte("mutated two"))
	if killed == survived || killed == cacheKey("unit", "plan", "p/f.go", []byte("mutated one")) {
		t.Fatal("the key does not tell mutated files or judges apart")
	}
	if err := c.Put(killed, "rest-1", Judgement{Verdict: Killed, Detail: "FAILED x seed 1"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(survived, "rest-1", Judgement{Verdict: Survived}); err != nil {
		t.Fatal(err)
	}
	for _, rest := range []string{"rest-1", "rest-2"} {
		if j, ok := c.Get(killed, rest); !ok || j.Verdict != Killed || !j.Cached || j.Detail == "" {
			t.Errorf("the kill under %s: %+v, %v", rest, j, ok)
		}
	}
	if j, ok := c.Get(survived, "rest-1"); !ok || j.Verdict != Survived {
		t.Errorf("the survival against the same tree: %+v, %v", j, ok)
	}
	if j, ok := c.Get(survived, "rest-2"); ok {
		t.Errorf("the survival against a changed tree was kept: %+v", j)
	}
	if _, ok := (Cache{}).Get(killed, "rest-1"); ok {
		t.Error("no cache directory, yet a verdict")
	}
}

func TestTreeWithoutLeavesOutOnlyTheFile(t *testing.T) {
	tree := Tree{files: map[string]string{"a.go": "1", "b.go": "2"}, paths: []string{"a.go", "b.go"}}
	changed := Tree{files: map[string]string{"a.go": "9", "b.go": "2"}, paths: []string{"a.go", "b.go"}}
	if tree.Without("a.go") != changed.Without("a.go") {
		t.Error("a change to the mutated file itself changed the rest")
	}
	if tree.Without("b.go") == changed.Without("b.go") {
		t.Error("a change to another file left the rest as it was")
	}
}

func TestParseEquivalents(t *testing.T) {
	doc := "# Mutants\n\n- `storage/chain/ref.go:42:10 CONDITIONALS_BOUNDARY`: both sides are\n  the same slice.\n- not an entry\n"
	got, err := ParseEquivalents(doc)
	if err != nil || len(got) != 1 || !strings.HasPrefix(got["storage/chain/ref.go:42:10 CONDITIONALS_BOUNDARY"], "both sides") {
		t.Fatalf("ParseEquivalents = %v, %v", got, err)
	}
	if _, err := ParseEquivalents("- `a/b.go:1:2 ARITHMETIC_BASE`:\n"); err == nil {
		t.Error("an entry without a reason was accepted")
	}
	if _, err := ParseEquivalents("- `a/b.go:1:2 ARITHMETIC_BASE`: x\n- `a/b.go:1:2 ARITHMETIC_BASE`: y\n"); err == nil {
		t.Error("an entry listed twice was accepted")
	}
}

// The list of equivalent mutants the repository carries parses, and each
// entry names a mutant of a file that exists.
func TestTheRepositorysEquivalentsParse(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "mutants.md"))
	if err != nil {
		t.Fatal(err)
	}
	excused, err := ParseEquivalents(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	for id := range excused {
		file, _, _ := strings.Cut(id, ":")
		if _, err := os.Stat(filepath.Join(root, file)); err != nil {
			t.Errorf("docs/mutants.md excuses %s: %v", id, err)
		}
	}
}

func TestTallyCountsEachJudgeAndTheSurvivors(t *testing.T) {
	r := func(unit, sweep Verdict) Result {
		return Result{Unit: Judgement{Verdict: unit}, Sweep: Judgement{Verdict: sweep}}
	}
	results := []Result{
		r(Killed, Killed),
		r(Killed, Survived),
		r(NotCovered, TimedOut),
		r(Survived, NotReached), // survives both
		r(NotViable, NotViable),
		r(Survived, NotJudged), // left for a rerun: no survivor yet
		{Equivalent: "same value either way"},
	}
	got := tally(results)
	want := Tally{Mutants: 7, NotViable: 1, NotJudged: 1, Equivalent: 1, KilledByUnit: 2, KilledBySweep: 2, Survived: 1, UnitScore: 0.5, SweepScore: 0.5}
	if got != want {
		t.Errorf("tally = %+v\nwant    %+v", got, want)
	}
}

// The unit judge on a real module: a mutant the test notices is killed, one
// it does not survives, and one that does not compile is not viable.
func TestTheUnitJudgeRunsThePackagesTests(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("p.go", "package p\n\nfunc Less(a, b int) bool { return a < b }\n\nfunc Join(a, b string) string { return a + b }\n")
	write("p_test.go", "package p\n\nimport \"testing\"\n\nfunc TestLess(t *testing.T) {\n\tif !Less(1, 2) || Less(2, 1) {\n\t\tt.Fatal(\"Less is wrong\")\n\t}\n}\n")
	r := &Runner{Root: root, Env: []string{"GOFLAGS=-mod=mod", "GOWORK=off"}}
	bounds := Bounds{Test: time.Minute, Build: 2 * time.Minute}
	src, err := os.ReadFile(filepath.Join(root, "p.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m    Mutant
		want Verdict
	}{
		{Mutant{File: "p.go", Line: 3, Column: 37, Type: "CONDITIONALS_NEGATION"}, Killed},   // a >= b
		{Mutant{File: "p.go", Line: 3, Column: 37, Type: "CONDITIONALS_BOUNDARY"}, Survived}, // a <= b: no test has a == b
		{Mutant{File: "p.go", Line: 5, Column: 42, Type: "ARITHMETIC_BASE"}, NotViable},      // a - b on strings
	} {
		mutated, m, err := Apply(src, c.m)
		if err != nil {
			t.Fatal(err)
		}
		overlay, err := writeOverlay(t.TempDir(), filepath.Join(root, "p.go"), mutated)
		if err != nil {
			t.Fatal(err)
		}
		j := r.judgeUnit(context.Background(), ".", overlay, bounds)
		if j.Verdict != c.want {
			t.Errorf("%s: %s (%s), want %s", m, j.Verdict, j.Detail, c.want)
		}
		if c.want == Killed && !strings.Contains(j.Detail, "TestLess") {
			t.Errorf("%s: the detail %q does not name the failing test", m, j.Detail)
		}
	}
}

// Gremlins calls a mutant of a switch's case expression not covered, since
// no coverage block holds it; Enumerate has the tests judge it. A mutant in
// a block no test runs stays not covered.
func TestEnumerateJudgesCaseExpressionsByTheTests(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	src := "package p\n\nfunc Sign(a int) int {\n\tswitch {\n\tcase a < 0:\n\t\treturn -1\n\t}\n\treturn 1\n}\n\nfunc Less(a, b int) bool { return a < b }\n"
	write("go.mod", "module example.com/m\n\ngo 1.22\n", 0o644)
	write("p.go", src, 0o644)
	write("p_test.go", "package p\n\nimport \"testing\"\n\nfunc TestSign(t *testing.T) {\n\tif Sign(-2) != -1 || Sign(2) != 1 {\n\t\tt.Fatal(\"Sign is wrong\")\n\t}\n}\n", 0o644)
	// Both as gremlins' dry run reports them: not covered.
	caseColumn := strings.Index(strings.Split(src, "\n")[4], "<") + 1
	lessColumn := strings.Index(strings.Split(src, "\n")[10], "<") + 1
	report := fmt.Sprintf(`{"files":[{"file_name":"p.go","mutations":[`+
		`{"type":"CONDITIONALS_BOUNDARY","status":"NOT COVERED","line":5,"column":%d},`+
		`{"type":"CONDITIONALS_BOUNDARY","status":"NOT COVERED","line":11,"column":%d}]}]}`, caseColumn, lessColumn)
	gremlins := filepath.Join(t.TempDir(), "gremlins")
	script := "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --output ] && out=$2; shift; done\ncat >\"$out\" <<'EOF'\n" + report + "\nEOF\n"
	if err := os.WriteFile(gremlins, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Root: root, Env: []string{"GOFLAGS=-mod=mod", "GOWORK=off"}}
	mutants, err := Enumerate(context.Background(), r, gremlins, Target{Dir: "."})
	if err != nil {
		t.Fatal(err)
	}
	if len(mutants) != 2 {
		t.Fatalf("Enumerate = %v, want the two mutants", mutants)
	}
	if !mutants[0].Covered || mutants[0].Line != 5 {
		t.Errorf("%s: the case expression's mutant is not covered, so no test judges it", mutants[0])
	}
	if mutants[1].Covered || mutants[1].Line != 11 {
		t.Errorf("%s: a mutant in a block no test runs is covered", mutants[1])
	}
}

// --unit-only judges by the package's tests alone: the sweep is not run (no
// batonctl is built -- this module has none, so a build would say "not
// viable"), and what the tests miss survives.
func TestUnitOnlyLeavesTheSweepOut(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("p.go", "package p\n\nfunc Less(a, b int) bool { return a < b }\n")
	write("p_test.go", "package p\n\nimport \"testing\"\n\nfunc TestLess(t *testing.T) {\n\tif !Less(1, 2) || Less(2, 1) {\n\t\tt.Fatal(\"Less is wrong\")\n\t}\n}\n")
	r := &Runner{Root: root, Env: []string{"GOFLAGS=-mod=mod", "GOWORK=off"}}
	o := Options{UnitOnly: true, Bounds: Bounds{Test: time.Minute, Build: 2 * time.Minute, Sweep: time.Minute}}
	var results []Result
	for _, m := range []Mutant{
		{File: "p.go", Line: 3, Column: 37, Type: "CONDITIONALS_NEGATION", Covered: true}, // a >= b
		{File: "p.go", Line: 3, Column: 37, Type: "CONDITIONALS_BOUNDARY", Covered: true}, // a <= b
	} {
		res, err := judgeOne(context.Background(), r, o, Tree{}, Reach{}, m)
		if err != nil {
			t.Fatal(err)
		}
		if res.Sweep.Verdict != NotRun {
			t.Errorf("%s: the sweep's verdict is %s (%s), want %s", m, res.Sweep.Verdict, res.Sweep.Detail, NotRun)
		}
		results = append(results, res)
	}
	if results[0].Unit.Verdict != Killed || results[0].Survived() {
		t.Errorf("the mutant the test notices: %+v", results[0])
	}
	if results[1].Unit.Verdict != Survived || !results[1].Survived() {
		t.Errorf("the mutant the test misses: %+v", results[1])
	}
	if got := tally(results); got.KilledByUnit != 1 || got.KilledBySweep != 0 || got.Survived != 1 {
		t.Errorf("tally = %+v", got)
	}
}
