// Package panictest checks that code panics, for the tests of invariants
// that crash on a programmer's error (broken invariants panic; expected
// outcomes are errors).
package panictest

import (
	"fmt"
	"strings"
	"testing"
)

// Containing runs f and fails the test unless f panics with a message that
// contains want.
func Containing(t testing.TB, want string, f func()) {
	t.Helper()
	if msg, panicked := recovered(f); !panicked {
		t.Fatalf("no panic; want one containing %q", want)
	} else if !strings.Contains(msg, want) {
		t.Fatalf("panic %q lacks %q", msg, want)
	}
}

// recovered runs f and says whether it panicked, and with what.
func recovered(f func()) (msg string, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, panicked = fmt.Sprint(r), true
		}
	}()
	f()
	return "", false
}
