package poll

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheCheckHolds(t *testing.T) {
	calls := 0
	if err := Until(context.Background(), time.Minute, func() (bool, string) { calls++; return calls == 2, "not yet" }); err != nil || calls != 2 {
		t.Fatalf("Until: %v after %d checks, want nil after 2", err, calls)
	}
}

func TestUntilSaysWhatTheCheckLastSaw(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Until(ctx, time.Minute, func() (bool, string) { return false, "pod Pending" })
	if err == nil || !strings.Contains(err.Error(), "pod Pending") {
		t.Fatalf("Until on an ended context: %v, want the check's last word", err)
	}
}

func TestPauseEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Pause(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Pause on an ended context: %v, want context.Canceled", err)
	}
	if err := Pause(context.Background(), 0); err != nil {
		t.Fatalf("Pause of nothing: %v", err)
	}
}
