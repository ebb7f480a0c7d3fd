package mutants

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options say what to mutate and how to judge it.
type Options struct {
	// Gremlins is the gremlins binary (ci/mutants/gremlins.sh builds it).
	Gremlins string
	Targets  []Target
	Plan     SweepPlan
	Bounds   Bounds
	// Jobs is how many mutants are judged at once.
	Jobs int
	// UnitOnly leaves the sweep out: no reach run, no batonctl built per
	// mutant; each mutant is judged by its package's tests alone.
	UnitOnly bool
	Cache    Cache
	// Equivalent are the mutants docs/mutants.md excuses, by ID, with why.
	Equivalent map[string]string
	// Log gets a line per mutant judged.
	Log io.Writer
	// Written is called with the report after each package, so an
	// interrupted run leaves what it judged.
	Written func(Report) error
}

// Result is one mutant and both judges' verdicts.
type Result struct {
	Mutant
	Unit  Judgement `json:"unit"`
	Sweep Judgement `json:"sweep"`
	// Equivalent is why docs/mutants.md says the mutant changes no
	// behaviour; such a mutant is not judged.
	Equivalent string `json:"equivalent,omitempty"`
}

// Survived says neither judge noticed a mutant that changes behaviour.
func (r Result) Survived() bool {
	return r.Equivalent == "" && r.Unit.Verdict != NotViable && r.Sweep.Verdict != NotViable &&
		r.Unit.Verdict != NotJudged && r.Sweep.Verdict != NotJudged && !r.Unit.Verdict.Kills() && !r.Sweep.Verdict.Kills()
}

// Package is one target's mutants and their tally.
type Package struct {
	Target  string   `json:"target"`
	Tally   Tally    `json:"tally"`
	Results []Result `json:"results"`
	Seconds float64  `json:"seconds"`
}

// Tally counts a package's mutants by what caught them.
type Tally struct {
	Mutants    int `json:"mutants"`
	NotViable  int `json:"not_viable"`
	Equivalent int `json:"equivalent"`
	// NotJudged are left for a rerun: a judge's build ran past its bound.
	NotJudged int `json:"not_judged"`
	// KilledByUnit and KilledBySweep overlap: each judge's count stands alone.
	KilledByUnit  int `json:"killed_by_unit"`
	KilledBySweep int `json:"killed_by_sweep"`
	// Survived is what neither judge killed.
	Survived int `json:"survived"`
	// UnitScore and SweepScore are each judge's kills over the mutants that
	// compile and change behaviour.
	UnitScore  float64 `json:"unit_score"`
	SweepScore float64 `json:"sweep_score"`
}

func tally(results []Result) Tally {
	t := Tally{Mutants: len(results)}
	for _, r := range results {
		switch {
		case r.Equivalent != "":
			t.Equivalent++
			continue
		case r.Unit.Verdict == NotViable || r.Sweep.Verdict == NotViable:
			t.NotViable++
			continue
		case r.Unit.Verdict == NotJudged || r.Sweep.Verdict == NotJudged:
			t.NotJudged++
			continue
		}
		if r.Unit.Verdict.Kills() {
			t.KilledByUnit++
		}
		if r.Sweep.Verdict.Kills() {
			t.KilledBySweep++
		}
		if r.Survived() {
			t.Survived++
		}
	}
	if judged := t.Mutants - t.Equivalent - t.NotViable - t.NotJudged; judged > 0 {
		t.UnitScore = float64(t.KilledByUnit) / float64(judged)
		t.SweepScore = float64(t.KilledBySweep) / float64(judged)
	}
	return t
}

// Report is a whole run.
type Report struct {
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"`
	Sweep    string    `json:"sweep"`
	Packages []Package `json:"packages"`
	// Stale are docs/mutants.md's entries that name no mutant of the
	// targets: the line moved, or the code is gone.
	Stale []string `json:"stale,omitempty"`
}

// Run enumerates every target's mutants and judges each by the package's
// tests and by the sweep.
func Run(ctx context.Context, r *Runner, o Options) (Report, error) {
	rep := Report{Started: time.Now(), Sweep: "batonctl " + o.Plan.String() + " --stop-after 1"}
	if o.UnitOnly {
		rep.Sweep = "nothing else (--unit-only: the sweep not run)"
	}
	module, err := r.output(ctx, "go", "list", "-m")
	if err != nil {
		return rep, err
	}
	module = strings.TrimSpace(module)
	tree, err := r.readTree(ctx)
	if err != nil {
		return rep, err
	}
	var pkgs []string
	for _, t := range o.Targets {
		pkgs = append(pkgs, path.Join(module, t.Dir))
	}
	var reach Reach
	if !o.UnitOnly {
		fmt.Fprintf(o.Log, "mutants: the sweep's reach on the unmutated tree (%s)\n", o.Plan)
		if reach, err = cachedReach(ctx, r, o, tree, module, pkgs); err != nil {
			return rep, err
		}
	}
	listed := map[string]bool{}
	for _, t := range o.Targets {
		started := time.Now()
		mutants, err := Enumerate(ctx, r, o.Gremlins, t)
		if err != nil {
			return rep, err
		}
		fmt.Fprintf(o.Log, "mutants: %s: %d mutants\n", t, len(mutants))
		for _, m := range mutants {
			listed[m.ID()] = true
		}
		results, err := judgeAll(ctx, r, o, tree, reach, mutants)
		pkg := Package{Target: t.String(), Results: results, Tally: tally(results), Seconds: time.Since(started).Seconds()}
		rep.Packages = append(rep.Packages, pkg)
		rep.Seconds = time.Since(rep.Started).Seconds()
		if o.Written != nil {
			if werr := o.Written(rep); werr != nil {
				return rep, werr
			}
		}
		if err != nil {
			return rep, err
		}
	}
	for id := range o.Equivalent {
		for _, t := range o.Targets {
			if strings.HasPrefix(id, t.Dir+"/") && !listed[id] {
				rep.Stale = append(rep.Stale, id)
			}
		}
	}
	return rep, nil
}

// cachedReach is the sweep's reach for this tree and plan, run once.
func cachedReach(ctx context.Context, r *Runner, o Options, tree Tree, module string, pkgs []string) (Reach, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", tree.Without(""), o.Plan, strings.Join(pkgs, ","))
	key := hex.EncodeToString(h.Sum(nil))
	file := filepath.Join(o.Cache.Dir, "reach", key+".txt")
	if o.Cache.Dir != "" {
		if text, err := os.ReadFile(file); err == nil && len(text) > 0 {
			return parseProfile(string(text), module)
		}
	}
	reach, text, err := r.sweepReach(ctx, module, pkgs, o.Plan, o.Bounds)
	if err != nil || o.Cache.Dir == "" {
		return reach, err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return reach, err
	}
	return reach, os.WriteFile(file, []byte(text), 0o644)
}

// judgeAll judges mutants o.Jobs at a time, in order.
func judgeAll(ctx context.Context, r *Runner, o Options, tree Tree, reach Reach, mutants []Mutant) ([]Result, error) {
	results := make([]Result, len(mutants))
	errs := make([]error, len(mutants))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := max(o.Jobs, 1)
	slots := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	var logMu sync.Mutex
	for i, m := range mutants {
		if ctx.Err() != nil {
			break
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			results[i], errs[i] = judgeOne(ctx, r, o, tree, reach, m)
			if errs[i] != nil {
				cancel()
				return
			}
			logMu.Lock()
			fmt.Fprintf(o.Log, "[%d/%d] %s: %s\n", i+1, len(mutants), m, describe(results[i]))
			logMu.Unlock()
		}()
	}
	wg.Wait()
	var kept []Result
	for i := range results {
		if results[i].File != "" && errs[i] == nil {
			kept = append(kept, results[i])
		}
	}
	return kept, errors.Join(errs...)
}

// judgeOne judges one mutant by both judges, through the cache.
func judgeOne(ctx context.Context, r *Runner, o Options, tree Tree, reach Reach, m Mutant) (Result, error) {
	res := Result{Mutant: m}
	if why, ok := o.Equivalent[m.ID()]; ok {
		res.Equivalent = why
		return res, nil
	}
	src, err := os.ReadFile(filepath.Join(r.Root, m.File))
	if err != nil {
		return res, err
	}
	mutated, _, err := Apply(src, m)
	if err != nil {
		return res, err
	}
	tmp, err := os.MkdirTemp("", "mutant-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	overlay, err := writeOverlay(tmp, filepath.Join(r.Root, m.File), mutated)
	if err != nil {
		return res, err
	}
	rest := tree.Without(m.File)
	unitKey := cacheKey("unit", "", m.File, mutated)
	switch j, ok := o.Cache.Get(unitKey, rest); {
	case !m.Covered:
		res.Unit = Judgement{Verdict: NotCovered}
	case ok:
		res.Unit = j
	default:
		res.Unit = r.judgeUnit(ctx, path.Dir(m.File), overlay, o.Bounds)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if res.Unit.Verdict == NotJudged {
			break
		}
		if err := o.Cache.Put(unitKey, rest, res.Unit); err != nil {
			return res, err
		}
	}
	sweepKey := cacheKey("sweep", o.Plan.String(), m.File, mutated)
	switch j, ok := o.Cache.Get(sweepKey, rest); {
	case o.UnitOnly:
		res.Sweep = Judgement{Verdict: NotRun}
	case res.Unit.Verdict == NotViable:
		res.Sweep = Judgement{Verdict: NotViable, Detail: "see the unit tests' build"}
	case !reach.Reached(m.File, m.Line, m.Column):
		res.Sweep = Judgement{Verdict: NotReached}
	case ok:
		res.Sweep = j
	default:
		if res.Sweep, err = r.judgeSweep(ctx, overlay, o.Plan, o.Bounds); err != nil {
			return res, err
		}
		if res.Sweep.Verdict == NotJudged {
			break
		}
		if err := o.Cache.Put(sweepKey, rest, res.Sweep); err != nil {
			return res, err
		}
	}
	return res, nil
}

// writeOverlay writes the mutated file into dir and a go build -overlay file
// that puts it in place of file.
func writeOverlay(dir, file string, mutated []byte) (string, error) {
	replacement := filepath.Join(dir, filepath.Base(file))
	if err := os.WriteFile(replacement, mutated, 0o644); err != nil {
		return "", err
	}
	data, err := json.Marshal(map[string]map[string]string{"Replace": {file: replacement}})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(dir, "overlay.json")
	return overlay, os.WriteFile(overlay, data, 0o644)
}

func describe(r Result) string {
	if r.Equivalent != "" {
		return "equivalent"
	}
	s := "unit " + verdictText(r.Unit) + ", sweep " + verdictText(r.Sweep)
	if r.Survived() {
		s += "  SURVIVED"
	}
	return s
}

func verdictText(j Judgement) string {
	s := string(j.Verdict)
	if j.Cached {
		s += " (cached)"
	} else if j.Seconds > 0 {
		s += fmt.Sprintf(" in %.0fs", j.Seconds)
	}
	return s
}
