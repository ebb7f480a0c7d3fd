package csi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// RunError is a command that failed: the command line and what it printed on
// standard error.
type RunError struct {
	Command  string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *RunError) Error() string {
	return fmt.Sprintf("%s: exit %d: %s", e.Command, e.ExitCode, strings.TrimSpace(e.Stderr))
}

func (e *RunError) Unwrap() error { return e.Err }

// run executes a command and returns its standard output, keeping standard
// error apart for the error.
func run(ctx context.Context, name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		e := &RunError{Command: name + " " + strings.Join(args, " "), ExitCode: -1, Stderr: clipStderr(stderr.String()), Err: err}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			e.ExitCode = exit.ExitCode()
		}
		return stdout.String(), e
	}
	return stdout.String(), nil
}

// clipStderr keeps the end of a long standard error, where tools say what failed.
func clipStderr(s string) string {
	const limitBytes = 1000
	if len(s) <= limitBytes {
		return s
	}
	return "…" + s[len(s)-limitBytes:]
}
