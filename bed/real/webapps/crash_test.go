package webapps

import (
	"context"
	"fmt"
	"testing"
	"time"
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
				_ = pause(ctx, retryPause)
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
