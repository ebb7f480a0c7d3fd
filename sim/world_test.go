package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/panictest"
	"github.com/baton-dr/baton/storage/backend"
)

// The world is the clock the storage core reads in the simulation.
var _ backend.Clock = (*World)(nil)

// randomRun drives a world through a schedule that only its seed decides:
// twenty actors reschedule themselves at coarse delays (so many fall due at the
// same instant), cancel and restart each other's timers, and log what they draw.
func randomRun(seed uint64) (hash, trace string) {
	var buf bytes.Buffer
	w := NewWorld(seed, WithTrace(&buf))
	r := w.Rand("actors")
	timers := make([]Timer, 20)
	var act func(i int) func()
	act = func(i int) func() {
		return func() {
			w.Logf("actor", "%d draws %d", i, r.IntN(1000))
			victim := r.IntN(len(timers))
			if r.IntN(4) == 0 && timers[victim].Cancel() {
				w.Logf("actor", "%d restarts %d", i, victim)
				timers[victim] = w.Schedule(time.Duration(r.IntN(20))*time.Second, fmt.Sprintf("actor-%d", victim), act(victim))
			}
			timers[i] = w.Schedule(time.Duration(r.IntN(50))*100*time.Millisecond, fmt.Sprintf("actor-%d", i), act(i))
		}
	}
	for i := range timers {
		timers[i] = w.Schedule(time.Duration(r.IntN(10))*time.Second, fmt.Sprintf("actor-%d", i), act(i))
	}
	w.RunFor(10 * time.Minute)
	return w.Hash(), buf.String()
}

func TestSameSeedReplaysByteForByte(t *testing.T) {
	hash1, trace1 := randomRun(42)
	hash2, trace2 := randomRun(42)
	if hash1 != hash2 || trace1 != trace2 {
		t.Fatalf("seed 42 ran twice gave hashes %s and %s", hash1, hash2)
	}
	if lines := strings.Count(trace1, "\n"); lines < 5000 {
		t.Fatalf("the schedule is too small to prove anything: %d lines", lines)
	}
	sum := sha256.Sum256([]byte(trace1))
	if got := hex.EncodeToString(sum[:]); got != hash1 {
		t.Fatalf("Hash() = %s, but the trace's sha256 is %s", hash1, got)
	}
}

func TestDifferentSeedsRunDifferently(t *testing.T) {
	hash1, trace1 := randomRun(1)
	hash2, trace2 := randomRun(2)
	if hash1 == hash2 {
		t.Fatal("seeds 1 and 2 gave the same hash")
	}
	// The first line names the seed; the runs must differ after it too.
	_, rest1, _ := strings.Cut(trace1, "\n")
	_, rest2, _ := strings.Cut(trace2, "\n")
	if rest1 == rest2 {
		t.Fatal("seeds 1 and 2 ran the same schedule")
	}
}

func TestNowStartsAtTheEpochAndMovesOnlyWithEvents(t *testing.T) {
	w := NewWorld(1)
	if want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); !w.Now().Equal(want) {
		t.Fatalf("Now() = %s, want %s", w.Now(), want)
	}
	w.After(3*time.Second, "tick", func() {})
	if w.Elapsed() != 0 {
		t.Fatalf("scheduling moved the clock to +%s", w.Elapsed())
	}
	w.Step()
	if w.Elapsed() != 3*time.Second {
		t.Fatalf("after the event the clock reads +%s, want +3s", w.Elapsed())
	}
	epoch := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	if got := NewWorld(1, WithEpoch(epoch)).Now(); !got.Equal(epoch) {
		t.Fatalf("WithEpoch: Now() = %s, want %s", got, epoch)
	}
}

func TestDescribeListsSeedAndEveryKnob(t *testing.T) {
	w := NewWorld(42, WithScenario("wordpress/failover"), WithEventBudget(500), WithTrace(&bytes.Buffer{}))
	want := "seed=42\nscenario=wordpress/failover\nepoch=2026-01-01T00:00:00Z\nevent-budget=500\n" +
		"trace=*bytes.Buffer\nhash=sha256\nreplay=batonctl sim run --scenario wordpress/failover --seed 42\n"
	if got := w.Describe(); got != want {
		t.Fatalf("Describe() =\n%s\nwant\n%s", got, want)
	}
}

func TestReplayCommand(t *testing.T) {
	got := ReplayCommand("wordpress/failover", 42)
	if want := "batonctl sim run --scenario wordpress/failover --seed 42"; got != want {
		t.Fatalf("ReplayCommand = %q, want %q", got, want)
	}
}

func TestLogLinesAreFixedFormat(t *testing.T) {
	var buf bytes.Buffer
	w := NewWorld(7, WithTrace(&buf))
	w.After(1500*time.Millisecond, "tick", func() { w.Logf("disk.write", "vol=%s\nbytes=%d", "pvc-1", 4096) })
	w.After(2*time.Hour+1, "late", func() {})
	w.RunFor(3 * time.Hour)
	want := "0.000000000 world seed=7 epoch=2026-01-01T00:00:00Z\n" +
		"1.500000000 event tick\n" +
		"1.500000000 disk.write vol=pvc-1\\nbytes=4096\n" +
		"7200.000000001 event late\n"
	if buf.String() != want {
		t.Fatalf("trace =\n%s\nwant\n%s", buf.String(), want)
	}
	if w.TraceErr() != nil {
		t.Fatal(w.TraceErr())
	}
}

type failingWriter struct{ writes int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.writes++
	return 0, fmt.Errorf("disk full")
}

func TestTraceFailureKeepsTheHash(t *testing.T) {
	broken := &failingWriter{}
	w := NewWorld(7, WithTrace(broken))
	w.Logf("x", "one")
	w.Logf("x", "two")
	if w.TraceErr() == nil || !strings.Contains(w.TraceErr().Error(), "disk full") {
		t.Fatalf("TraceErr() = %v", w.TraceErr())
	}
	if broken.writes != 1 {
		t.Fatalf("the world kept writing to a broken trace: %d writes", broken.writes)
	}
	plain := NewWorld(7)
	plain.Logf("x", "one")
	plain.Logf("x", "two")
	if w.Hash() != plain.Hash() {
		t.Fatal("a failed trace changed the hash")
	}
}

func TestLogKindMustBeOneWord(t *testing.T) {
	for _, kind := range []string{"", "two words", "new\nline"} {
		t.Run(fmt.Sprintf("%q", kind), func(t *testing.T) {
			panictest.Containing(t, "one word", func() { NewWorld(1).Logf(kind, "x") })
		})
	}
}

func TestInvariantViolationPanicsWithReplay(t *testing.T) {
	w := NewWorld(9, WithScenario("gitea/relocate"))
	count := 0
	w.AddInvariant("count below 3", func() error {
		if count >= 3 {
			return fmt.Errorf("count is %d", count)
		}
		return nil
	})
	for i := range 5 {
		w.After(time.Duration(i)*time.Second, fmt.Sprintf("inc-%d", i), func() { count++ })
	}
	f := mustFail(t, func() { w.RunFor(time.Minute) })
	if f.Event != "inc-2" || f.At != 2*time.Second || f.Seed != 9 {
		t.Fatalf("failure names event %q at +%s seed %d, want inc-2 at +2s seed 9", f.Event, f.At, f.Seed)
	}
	for _, want := range []string{`invariant "count below 3" violated: count is 3`, "seed 9",
		"batonctl sim run --scenario gitea/relocate --seed 9"} {
		if !strings.Contains(f.Error(), want) {
			t.Errorf("failure %q lacks %q", f.Error(), want)
		}
	}
}

func TestInvariantMustNotSchedule(t *testing.T) {
	w := NewWorld(1)
	w.AddInvariant("meddler", func() error { w.After(0, "x", func() {}); return nil })
	w.After(0, "first", func() {})
	panictest.Containing(t, "checks must only read", func() { w.Step() })
}

// mustFail runs f and returns the *Failure it panics with.
func mustFail(t *testing.T, f func()) (failure *Failure) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		var ok bool
		if failure, ok = r.(*Failure); !ok {
			t.Fatalf("panicked with %T %v, want *Failure", r, r)
		}
	}()
	f()
	return nil
}
