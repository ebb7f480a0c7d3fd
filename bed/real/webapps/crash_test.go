package webapps

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/poll"
)

// crashFigures are what one crash cycle measured, for the test's log.
type crashFigures struct {
	acknowledged, unacknowledged int
	outage                       time.Duration // from the kill to the first acknowledgement after the restart
	restart                      time.Duration // how long the restart command took
	recovery                     time.Duration // from the restart command's return to that acknowledgement
}

func (f crashFigures) String() string {
	return fmt.Sprintf("%d acknowledged, %d not; outage %s (restart command %s, then %s to the first acknowledgement)",
		f.acknowledged, f.unacknowledged, f.outage.Round(time.Millisecond), f.restart.Round(time.Millisecond),
		f.recovery.Round(time.Millisecond))
}

// retryPause paces the writer after an operation that was not
// acknowledged, as a client backing off would; it bounds the journal's
// growth while a server is down, and asserts nothing.
const retryPause = 200 * time.Millisecond

// writeUntil performs operations until n are acknowledged, failing the test
// if it takes more than bound operations.
func writeUntil(t *testing.T, ctx context.Context, app App, n, bound int) {
	t.Helper()
	acked := 0
	for i := 0; acked < n; i++ {
		if i >= bound {
			t.Fatalf("%s: %d of %d operations acknowledged after %d", app.Name(), acked, n, bound)
		}
		w, err := app.Step(ctx)
		if w.Outcome == Acknowledged {
			acked++
		} else if err != nil {
			t.Logf("%s #%d %s: %s: %v", app.Name(), w.Seq, w.Operation, w.Outcome, err)
		}
	}
}

// writer keeps an application writing from one goroutine -- the only one
// touching it -- and hands each finished operation to the test.
type writer struct {
	results chan Write
	stop    chan struct{}
	timeout <-chan time.Time
	t       *testing.T
	app     App
}

func startWriter(t *testing.T, ctx context.Context, app App) *writer {
	w := &writer{results: make(chan Write), stop: make(chan struct{}), timeout: time.After(10 * time.Minute), t: t, app: app}
	go func() {
		defer close(w.results)
		for {
			select {
			case <-w.stop:
				return
			default:
			}
			op, _ := app.Step(ctx)
			select {
			case w.results <- op:
			case <-w.stop:
				return
			}
			if op.Outcome != Acknowledged {
				_ = poll.Pause(ctx, retryPause)
			}
		}
	}()
	return w
}

// next is the next finished operation.
func (w *writer) next() Write {
	w.t.Helper()
	select {
	case op := <-w.results:
		return op
	case <-w.timeout:
		w.finish()
		w.t.Fatalf("%s: the crash test did not finish within 10 minutes", w.app.Name())
	}
	return Write{}
}

// finish stops the writer and waits for its last operation.
func (w *writer) finish() {
	close(w.stop)
	for range w.results {
	}
}

// crashMidWrites kills the server(s) after `before` acknowledged operations
// (so an operation is in flight or about to be), lets at least two
// operations fail against the dead server, restarts, and stops the writer
// once `after` operations were acknowledged after the restart.
func crashMidWrites(t *testing.T, ctx context.Context, app App, before, after int, kill, restart func()) crashFigures {
	t.Helper()
	w := startWriter(t, ctx, app)
	defer w.finish()
	var f crashFigures
	var killed, restarted time.Time
	failedWhileDown, ackedAfter := 0, 0
	for ackedAfter < after {
		op := w.next()
		if op.Outcome == Acknowledged {
			f.acknowledged++
		} else {
			f.unacknowledged++
		}
		switch {
		case killed.IsZero() && f.acknowledged >= before:
			kill()
			killed = time.Now()
		case !killed.IsZero() && restarted.IsZero() && op.Outcome != Acknowledged && op.Issued.After(killed):
			if failedWhileDown++; failedWhileDown >= 2 {
				begun := time.Now()
				restart()
				restarted = time.Now()
				f.restart = restarted.Sub(begun)
			}
		case !restarted.IsZero() && op.Outcome == Acknowledged && op.Issued.After(restarted):
			if ackedAfter == 0 {
				f.outage, f.recovery = op.Answered.Sub(killed), op.Answered.Sub(restarted)
			}
			ackedAfter++
		}
	}
	return f
}

// failover is one unplanned fail-over the test made.
type failover struct {
	recoveryPoint time.Time     // just before the copy began: everything acknowledged before it must survive
	copied        time.Time     // the copy's end: nothing acknowledged after it can be in the copy
	copyTook      time.Duration // how long the snapshot took
	ackedAfter    []Write       // acknowledged after the copy, before the old site died: lost, by construction
}

// failoverMidWrites copies the volumes (snapshot) after `before`
// acknowledged operations while the writer keeps going, lets `after` more
// operations be acknowledged by the old site, then kills it (the site is
// lost) and stops the writer.
func failoverMidWrites(t *testing.T, ctx context.Context, app App, before, after int, snapshot func(), kill func()) failover {
	t.Helper()
	w := startWriter(t, ctx, app)
	defer w.finish()
	var f failover
	acked := 0
	for {
		op := w.next()
		if op.Outcome != Acknowledged {
			continue
		}
		acked++
		switch {
		case f.copied.IsZero() && acked >= before:
			f.recoveryPoint = time.Now()
			snapshot()
			f.copied = time.Now()
			f.copyTook = f.copied.Sub(f.recoveryPoint)
		case !f.copied.IsZero() && op.Issued.After(f.copied):
			if f.ackedAfter = append(f.ackedAfter, op); len(f.ackedAfter) >= after {
				kill()
				return f
			}
		}
	}
}

// failOverTo copies the pool's site-a into site-b mid-writes
// (failoverMidWrites), kills the old site, starts the application on the
// copy (startB returns its URL) and reads back: nothing acknowledged before
// the recovery point may be lost, everything acknowledged after the copy
// must be, and the loss window is then positive. It returns the verdict.
func failOverTo(t *testing.T, ctx context.Context, app App, p *pool, killA func(), startB func() string) Verdict {
	t.Helper()
	f := failoverMidWrites(t, ctx, app, 8, 3, func() { p.snapshot("site-a", "site-b") }, killA)
	started := time.Now()
	if err := app.Retarget(startB()); err != nil {
		t.Fatal(err)
	}
	v, err := app.ReadBack(ctx, f.recoveryPoint, 5*time.Minute)
	if err != nil {
		t.Fatalf("%s did not come back on the copy: %v", app.Name(), err)
	}
	t.Logf("snapshot took %s; site b answered %s after its containers were started\n%s",
		f.copyTook.Round(time.Millisecond), time.Since(started).Round(time.Millisecond), v)
	if failures := v.Failures(false); len(failures) > 0 {
		t.Fatalf("the fail-over lost or changed writes acknowledged before the recovery point:\n%s", strings.Join(failures, "\n"))
	}
	lost := map[string]bool{}
	for _, vol := range v.Volumes {
		for _, l := range vol.Lost {
			lost[l.Key] = true
		}
	}
	for _, op := range f.ackedAfter {
		if !lost[op.Key] {
			t.Errorf("%s, acknowledged by the old site after the copy, reads back on the new one: the copy is no copy", op.Key)
		}
	}
	if v.LossWindow <= 0 {
		t.Errorf("loss window %s after losing %d acknowledged writes", v.LossWindow, v.LostAcknowledged())
	}
	return v
}

// goOn continues the application on the copy after the fail-over verdict v:
// the journal resumes from it, six more writes are acknowledged, and a
// read-back must find every write it still expects.
func goOn(t *testing.T, ctx context.Context, app App, v Verdict) {
	t.Helper()
	if err := app.Journal().Resume(v); err != nil {
		t.Fatal(err)
	}
	writeUntil(t, ctx, app, 6, 6)
	after, err := app.ReadBack(ctx, time.Time{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if failures := after.Failures(true); len(failures) > 0 {
		t.Fatalf("%s on the copy lost writes:\n%s", app.Name(), strings.Join(failures, "\n"))
	}
	t.Logf("going on on the copy:\n%s", after)
}
