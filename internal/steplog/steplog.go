// Package steplog prints the steps of a long bring-up, one line each with
// the time since it started: what the real bed's infrastructure and its OCM
// install print while an operator waits.
package steplog

import (
	"fmt"
	"io"
	"time"
)

// Log prints to one writer, each line after a prefix that names who
// prints it and the seconds since the Log was made.
type Log struct {
	out     io.Writer
	prefix  string
	started time.Time
}

// New prints to out after prefix ("realbed"), counting from now.
func New(out io.Writer, prefix string) *Log {
	if out == nil || prefix == "" {
		panic(fmt.Sprintf("steplog: a Log needs a writer and a prefix (got %v, %q)", out, prefix))
	}
	return &Log{out: out, prefix: prefix, started: time.Now()}
}

// Printf prints one line.
func (l *Log) Printf(format string, args ...any) {
	fmt.Fprintf(l.out, "%s: [%6.1f s] %s\n", l.prefix, time.Since(l.started).Seconds(), fmt.Sprintf(format, args...))
}

// Step runs f and prints what it says and how long it took, or how it
// failed; the error returned names the step.
func (l *Log) Step(name string, f func() (string, error)) error {
	start := time.Now()
	what, err := f()
	took := time.Since(start).Seconds()
	if err != nil {
		l.Printf("%s: failed after %.1f s: %v", name, took, err)
		return fmt.Errorf("%s: %w", name, err)
	}
	if what != "" {
		what = ": " + what
	}
	l.Printf("%s%s (%.1f s)", name, what, took)
	return nil
}
