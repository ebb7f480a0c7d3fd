package storageapi

import (
	"testing"
	"time"
)

func TestASilentClusterIsAskedBrieflyForAWindowThenFullyAgain(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	s := &silence{brief: 2 * time.Second, window: 30 * time.Second, now: func() time.Time { return now }}
	full := 10 * time.Second
	want := func(what string, timeout time.Duration, brief bool) {
		t.Helper()
		if got, gotBrief := s.timeout(full); got != timeout || gotBrief != brief {
			t.Fatalf("%s: timeout %s (brief %v), want %s (brief %v)", what, got, gotBrief, timeout, brief)
		}
	}
	want("a cluster never silent", full, false)
	s.missed(false)
	want("right after a full call's silence", 2*time.Second, true)
	now = now.Add(29 * time.Second)
	s.missed(true) // a brief call's silence does not prolong the window
	want("within the window", 2*time.Second, true)
	now = now.Add(time.Second)
	want("once the window ended", full, false)
	if began := s.began(); !began.Equal(now.Add(-30 * time.Second)) {
		t.Fatalf("the silence began %s, want when the first call went unanswered", began)
	}
	s.missed(false)
	want("a new window after the full call's silence", 2*time.Second, true)
	s.heard()
	want("after an answer", full, false)
	if !s.began().IsZero() {
		t.Fatal("an answer must end the silence")
	}
}

func TestABriefTimeoutNoShorterThanTheCallsIsNoBriefOne(t *testing.T) {
	s := &silence{brief: 20 * time.Second, window: time.Minute, now: time.Now}
	s.missed(false)
	if got, brief := s.timeout(10 * time.Second); got != 10*time.Second || brief {
		t.Fatalf("timeout %s (brief %v), want the call's own 10s", got, brief)
	}
	off := &silence{brief: -1, window: time.Minute, now: time.Now}
	off.missed(false)
	if got, brief := off.timeout(10 * time.Second); got != 10*time.Second || brief {
		t.Fatalf("a negative brief timeout: %s (brief %v), want every call at its full timeout", got, brief)
	}
}
