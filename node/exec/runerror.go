package exec

import (
	"fmt"
	"strings"
)

// RunError is a command that failed: what ran, how it ended, and what it
// printed on stderr, with the secrets the Cmder knows of replaced.
type RunError struct {
	Command []string // the program and its arguments
	// ExitCode is the process's exit status, or -1 when it did not exit on
	// its own (it could not start, or a signal ended it).
	ExitCode int
	Stderr   []byte // what the tool printed, at most maxStderrBytes (the tail)
	Err      error  // the underlying error from the operating system
}

func (e *RunError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "command %q failed: %v", strings.Join(e.Command, " "), e.Err)
	if words := e.Words(); words != "" {
		fmt.Fprintf(&b, ": %s", words)
	}
	return b.String()
}

// Unwrap exposes the operating system's error (an *exec.ExitError, or why
// the command could not start).
func (e *RunError) Unwrap() error { return e.Err }

// Words is what the tool said: its stderr with surrounding blank space
// removed and lines joined by "; ".
func (e *RunError) Words() string { return strings.Join(e.Lines(), "; ") }

// Sentence is what the tool said with its lines joined by a space, so that
// a sentence the tool broke over two lines reads whole (the refusal tables
// match on it).
func (e *RunError) Sentence() string { return strings.Join(e.Lines(), " ") }

// Lines are the non-empty lines of the tool's stderr, trimmed.
func (e *RunError) Lines() []string {
	var lines []string
	for _, line := range strings.Split(string(e.Stderr), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// redacted replaces a secret wherever it appears.
const redacted = "<redacted>"

// redact replaces every secret in s. Empty secrets are ignored, longer ones
// first, so that a secret containing another is replaced whole.
func redact(s string, secrets []string) string {
	for _, secret := range bySizeDescending(secrets) {
		s = strings.ReplaceAll(s, secret, redacted)
	}
	return s
}

func bySizeDescending(secrets []string) []string {
	var kept []string
	for _, s := range secrets {
		if s != "" {
			kept = append(kept, s)
		}
	}
	// Insertion sort: a Cmder knows a handful of secrets.
	for i := 1; i < len(kept); i++ {
		for j := i; j > 0 && len(kept[j]) > len(kept[j-1]); j-- {
			kept[j], kept[j-1] = kept[j-1], kept[j]
		}
	}
	return kept
}
