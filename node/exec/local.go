package exec

import (
	"context"
	"errors"
	"io"
	osexec "os/exec"
)

// maxStderrBytes bounds what a RunError keeps of a tool's stderr: the tail,
// where tools print their verdict.
const maxStderrBytes = 64 << 10

// Local runs commands on this machine.
type Local struct {
	// Secrets are strings (tokens, keys) that never leave a RunError: they are
	// replaced in the command line and in stderr.
	Secrets []string
}

var _ Cmder = Local{}

// Command makes a command that runs on this machine.
func (l Local) Command(ctx context.Context, name string, args ...string) Cmd {
	return &localCmd{ctx: ctx, name: name, args: args, secrets: l.Secrets}
}

type localCmd struct {
	ctx     context.Context
	name    string
	args    []string
	secrets []string
	stdin   io.Reader
	stdout  io.Writer
}

func (c *localCmd) SetStdin(r io.Reader) Cmd  { c.stdin = r; return c }
func (c *localCmd) SetStdout(w io.Writer) Cmd { c.stdout = w; return c }

func (c *localCmd) Run() error {
	cmd := osexec.CommandContext(c.ctx, c.name, c.args...)
	cmd.Stdin = c.stdin
	cmd.Stdout = c.stdout
	// The buffer keeps a secret's length more than it reports, so that a
	// secret cut by the buffer's edge is still found whole and replaced.
	longest := 0
	for _, secret := range c.secrets {
		longest = max(longest, len(secret))
	}
	stderr := &tailBuffer{limit: maxStderrBytes + longest}
	cmd.Stderr = stderr
	err := cmd.Run()
	if err == nil {
		return nil
	}
	exitCode := -1
	var exit *osexec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		exitCode = exit.ExitCode()
	}
	command := make([]string, 0, 1+len(c.args))
	for _, word := range append([]string{c.name}, c.args...) {
		command = append(command, redact(word, c.secrets))
	}
	return &RunError{
		Command:  command,
		ExitCode: exitCode,
		Stderr:   tail([]byte(redact(string(stderr.bytes()), c.secrets)), maxStderrBytes),
		Err:      err,
	}
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	limit int
	data  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.data = append(t.data, p...)
	if over := len(t.data) - t.limit; over > 0 {
		t.data = append(t.data[:0], t.data[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) bytes() []byte { return t.data }

func tail(data []byte, limit int) []byte {
	if len(data) > limit {
		return data[len(data)-limit:]
	}
	return data
}
