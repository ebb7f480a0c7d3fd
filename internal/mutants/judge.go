package mutants

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Verdict is what one judge made of one mutant.
type Verdict string

const (
	// Killed: the judge failed on the mutant.
	Killed Verdict = "killed"
	// TimedOut: the judge ran past its bound on the mutant (a mutant that
	// makes the logic spin or wait forever); it counts as killed.
	TimedOut Verdict = "timed out"
	// Survived: the judge passed on the mutant.
	Survived Verdict = "survived"
	// NotCovered: no unit test runs the mutated line, so the tests pass on
	// it without being run; a survival.
	NotCovered Verdict = "not covered"
	// NotReached: no run of the sweep evaluates the mutated line (its
	// coverage on the unmutated tree), and a run is deterministic in its
	// seed, so the mutant's runs are the unmutated ones; a survival.
	NotReached Verdict = "not reached"
	// NotViable: the mutated tree does not compile (say, a string "+" made
	// "-"); no judge can run it and it counts nowhere.
	NotViable Verdict = "not viable"
	// NotJudged: the judge could not run (a build ran past its bound on a
	// loaded machine); the mutant counts nowhere until a rerun judges it.
	NotJudged Verdict = "not judged"
	// NotRun: the judge was not asked (--unit-only: the sweep is left out);
	// the mutant stands or falls by the other judge alone.
	NotRun Verdict = "not run"
)

// Kills says the verdict counts as the judge noticing the mutant.
func (v Verdict) Kills() bool { return v == Killed || v == TimedOut }

// final says a later run with the same mutated file would give the same
// verdict whatever else changed in the tree the judges run from -- as far as
// the cache trusts it: a kill or a failed build.
func (v Verdict) final() bool { return v.Kills() || v == NotViable }

// Judgement is one judge's verdict on one mutant and what it saw.
type Judgement struct {
	Verdict Verdict `json:"verdict"`
	// Detail is what noticed the mutant: the first failing test, or the
	// sweep's first failure and its replay command.
	Detail  string  `json:"detail,omitempty"`
	Seconds float64 `json:"seconds"`
	// Cached says the verdict was read from the cache, not judged now.
	Cached bool `json:"cached,omitempty"`
}

// Runner runs the go tool and the judges in the module at Root.
type Runner struct {
	Root string
	// Env is added to the environment of everything run.
	Env []string
}

// run runs name in r.Root; on ctx's end it kills the whole process group,
// because go test and go build leave their children (the test binary, the
// compiler) running when only the go command is killed.
func (r *Runner) run(ctx context.Context, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = r.Root
	cmd.Env = append(append(os.Environ(), r.Env...), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	return out.Bytes(), err
}

// output runs name and returns its output, or an error that carries it.
func (r *Runner) output(ctx context.Context, name string, args ...string) (string, error) {
	out, err := r.run(ctx, nil, name, args...)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, lastLines(out, 20))
	}
	return string(out), nil
}

// Bounds are how long each judge may take on one mutant.
type Bounds struct {
	// Test bounds the package's tests (go test -timeout); their build gets
	// Build more.
	Test time.Duration
	// Build bounds building batonctl from the mutated tree.
	Build time.Duration
	// Sweep bounds the sweep's run.
	Sweep time.Duration
}

// SweepPlan is the sweep every mutant is judged by.
type SweepPlan struct {
	Scenarios string
	Seeds     int
	Chaos     bool
	// Workers are the sweep's parallel runs (its --workers).
	Workers int
}

func (p SweepPlan) args() []string {
	args := []string{"sim", "sweep", "--scenarios", p.Scenarios, "--seeds", strconv.Itoa(p.Seeds)}
	if p.Chaos {
		args = append(args, "--chaos")
	}
	if p.Workers > 0 {
		args = append(args, "--workers", strconv.Itoa(p.Workers))
	}
	return args
}

// String is the plan as the cache keys it.
func (p SweepPlan) String() string { return strings.Join(p.args(), " ") }

// judgeUnit runs the mutated package's own tests on the mutant.
func (r *Runner) judgeUnit(ctx context.Context, dir, overlay string, b Bounds) Judgement {
	started := time.Now()
	ctx, cancel := context.WithTimeout(ctx, b.Test+b.Build)
	defer cancel()
	// -vet=off: a mutant go vet dislikes is judged by the tests, not vet.
	out, err := r.run(ctx, nil, "go", "test", "-count=1", "-vet=off", "-failfast", "-overlay", overlay,
		"-timeout", b.Test.String(), "./"+dir)
	j := Judgement{Seconds: time.Since(started).Seconds()}
	switch {
	case ctx.Err() != nil:
		// Past go test's own -timeout (which would have failed the test)
		// and its build's allowance: the machine, not the mutant.
		j.Verdict, j.Detail = NotJudged, fmt.Sprintf("go test ran past %s", b.Test+b.Build)
	case err == nil:
		j.Verdict = Survived
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		j.Verdict, j.Detail = NotViable, firstLine(out)
	case bytes.Contains(out, []byte("panic: test timed out")):
		j.Verdict, j.Detail = TimedOut, fmt.Sprintf("go test -timeout %s", b.Test)
	default:
		j.Verdict, j.Detail = Killed, firstFailure(out)
	}
	return j
}

// judgeSweep builds batonctl from the mutated tree and runs the sweep with it,
// stopping at the first failure: one is enough to kill.
func (r *Runner) judgeSweep(ctx context.Context, overlay string, plan SweepPlan, b Bounds) (Judgement, error) {
	started := time.Now()
	tmp, err := os.MkdirTemp("", "mutants-sweep-")
	if err != nil {
		return Judgement{}, err
	}
	defer os.RemoveAll(tmp)
	batonctl := filepath.Join(tmp, "batonctl")
	buildCtx, cancelBuild := context.WithTimeout(ctx, b.Build)
	// -s -w: no symbol table or DWARF, which only slow the link down.
	out, err := r.run(buildCtx, nil, "go", "build", "-overlay", overlay, "-ldflags=-s -w", "-o", batonctl, "./cmd/batonctl")
	cancelBuild()
	if err != nil {
		// A build that ran out of time says nothing of the mutant (a
		// loaded machine): it is left unjudged, and not cached.
		if buildCtx.Err() != nil {
			return Judgement{Verdict: NotJudged, Detail: fmt.Sprintf("building batonctl ran past %s", b.Build)}, ctx.Err()
		}
		return Judgement{Verdict: NotViable, Detail: firstLine(out), Seconds: time.Since(started).Seconds()}, nil
	}
	sweepCtx, cancelSweep := context.WithTimeout(ctx, b.Sweep)
	defer cancelSweep()
	out, err = r.run(sweepCtx, nil, batonctl, append(plan.args(), "--stop-after", "1")...)
	j := Judgement{Seconds: time.Since(started).Seconds()}
	switch {
	case sweepCtx.Err() != nil && ctx.Err() == nil:
		j.Verdict, j.Detail = TimedOut, fmt.Sprintf("the sweep ran past %s", b.Sweep)
	case err == nil:
		j.Verdict = Survived
	default:
		j.Verdict, j.Detail = Killed, sweepFailure(out)
	}
	return j, ctx.Err()
}

// firstFailure is the first line of go test's output that names what failed.
func firstFailure(out []byte) string {
	for _, line := range strings.Split(string(out), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "panic:") {
			return t
		}
	}
	return lastLines(out, 1)
}

// sweepFailure is the sweep's first FAILED line and its replay command, or
// the last line it wrote (a crash).
func sweepFailure(out []byte) string {
	lines := strings.Split(string(out), "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "FAILED ") {
			if i+1 < len(lines) && strings.Contains(lines[i+1], "replay:") {
				return line + "; " + strings.TrimSpace(lines[i+1])
			}
			return line
		}
	}
	return lastLines(out, 1)
}

func firstLine(out []byte) string {
	for _, line := range strings.Split(string(out), "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			return t
		}
	}
	return ""
}

func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
