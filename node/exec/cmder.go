package exec

import (
	"bytes"
	"context"
	"io"
)

// Cmder makes commands. The context bounds the command's life: cancelling it
// kills the process.
type Cmder interface {
	Command(ctx context.Context, name string, args ...string) Cmd
}

// Cmd is one command, configured and then run once.
type Cmd interface {
	// SetStdin feeds the command's standard input; without it the command reads
	// nothing (an empty input).
	SetStdin(r io.Reader) Cmd
	// SetStdout takes the command's standard output; without it the output is
	// discarded. Standard error is always captured into the *RunError.
	SetStdout(w io.Writer) Cmd
	// Run runs the command to its end. A command that cannot start, exits
	// non-zero or is killed returns a *RunError.
	Run() error
}

// Output runs a command and returns its standard output.
func Output(cmd Cmd) ([]byte, error) {
	var out bytes.Buffer
	err := cmd.SetStdout(&out).Run()
	return out.Bytes(), err
}
