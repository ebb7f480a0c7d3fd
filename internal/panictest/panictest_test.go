package panictest

import (
	"errors"
	"fmt"
	"testing"
)

func TestRecoveredTellsWhatPanicked(t *testing.T) {
	for _, c := range []struct {
		name     string
		f        func()
		msg      string
		panicked bool
	}{
		{"no panic", func() {}, "", false},
		{"a string", func() { panic("invariant broken: two primaries") }, "invariant broken: two primaries", true},
		{"an error", func() { panic(errors.New("checks must only read")) }, "checks must only read", true},
	} {
		msg, panicked := recovered(c.f)
		if msg != c.msg || panicked != c.panicked {
			t.Errorf("%s: recovered %q, %t; want %q, %t", c.name, msg, panicked, c.msg, c.panicked)
		}
	}
}

func TestContainingPassesOnThePanicWanted(t *testing.T) {
	Containing(t, "two primaries", func() { panic("invariant broken: two primaries") })
}

// recorder is a testing.TB that records the failure instead of ending the
// test (Containing returns after its Fatalf).
type recorder struct {
	testing.TB
	failure string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
}

func TestContainingFailsOnNoPanicOrAnother(t *testing.T) {
	for _, c := range []struct {
		name, want string
		f          func()
		failure    string
	}{
		{"no panic", "two primaries", func() {}, `no panic; want one containing "two primaries"`},
		{"another panic", "two primaries", func() { panic("index out of range") }, `panic "index out of range" lacks "two primaries"`},
	} {
		r := &recorder{TB: t}
		Containing(r, c.want, c.f)
		if r.failure != c.failure {
			t.Errorf("%s: failed with %q, want %q", c.name, r.failure, c.failure)
		}
	}
}
