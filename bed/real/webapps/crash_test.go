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

// crashMidWrites keeps app writing from one goroutine while it kills the
// server(s) after `before` acknowledged operations (so an operation is in
// flight or about to be), lets at least two operations fail against the
// dead server, restarts, and stops the writer once `after` operations were
// acknowledged after the restart.
func crashMidWrites(t *testing.T, ctx context.Context, app App, before, after int, kill, restart func()) crashFigures {
	t.Helper()
	results := make(chan Write)
	stop := make(chan struct{})
	go func() {
		defer close(results)
		for {
			w, _ := app.Step(ctx)
			select {
			case results <- w:
			case <-stop:
				return
			}
			if w.Outcome != Acknowledged {
				_ = pause(ctx, retryPause)
			}
		}
	}()
	var f crashFigures
	var killed, restarted time.Time
	failedWhileDown, ackedAfter := 0, 0
	deadline := time.After(10 * time.Minute)
	for ackedAfter < after {
		var w Write
		select {
		case w = <-results:
		case <-deadline:
			close(stop)
			t.Fatalf("%s: no %d acknowledgements within 10 minutes of the crash (%d acknowledged after the restart)", app.Name(), after, ackedAfter)
		}
		if w.Outcome == Acknowledged {
			f.acknowledged++
		} else {
			f.unacknowledged++
		}
		switch {
		case killed.IsZero() && f.acknowledged >= before:
			kill()
			killed = time.Now()
		case !killed.IsZero() && restarted.IsZero() && w.Outcome != Acknowledged && w.Issued.After(killed):
			if failedWhileDown++; failedWhileDown >= 2 {
				begun := time.Now()
				restart()
				restarted = time.Now()
				f.restart = restarted.Sub(begun)
			}
		case !restarted.IsZero() && w.Outcome == Acknowledged && w.Issued.After(restarted):
			if ackedAfter == 0 {
				f.outage, f.recovery = w.Answered.Sub(killed), w.Answered.Sub(restarted)
			}
			ackedAfter++
		}
	}
	close(stop)
	for range results { // the writer's last operation
	}
	return f
}
