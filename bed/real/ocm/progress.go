package ocm

import (
	"fmt"
	"io"
	"time"
)

// Progress prints one line per step with the time since it was made: what a
// bring-up phase of the bed prints.
type Progress struct {
	out     io.Writer
	started time.Time
}

// NewProgress prints to out, counting from now.
func NewProgress(out io.Writer) *Progress { return &Progress{out: out, started: time.Now()} }

// Printf prints one line.
func (p *Progress) Printf(format string, args ...any) {
	fmt.Fprintf(p.out, "ocm: [%6.1f s] %s\n", time.Since(p.started).Seconds(), fmt.Sprintf(format, args...))
}

// Step runs f and prints what it says and how long it took, or how it failed.
func (p *Progress) Step(name string, f func() (string, error)) error {
	start := time.Now()
	what, err := f()
	took := time.Since(start).Seconds()
	if err != nil {
		p.Printf("%s: failed after %.1f s: %v", name, took, err)
		return fmt.Errorf("%s: %w", name, err)
	}
	if what != "" {
		what = ": " + what
	}
	p.Printf("%s%s (%.1f s)", name, what, took)
	return nil
}
