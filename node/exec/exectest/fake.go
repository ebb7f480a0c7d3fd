// Package exectest holds test doubles of the exec package.
package exectest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/baton-dr/baton/node/exec"
)

// Reply is what FakeCmder answers to one command: the output a real tool
// printed, captured on a machine, and its exit code.
type Reply struct {
	Stdout   string
	Stderr   string
	ExitCode int
}

// FakeCmder is a test double of exec.Cmder. It runs nothing: it records each
// command line and answers from Replies, keyed by the command line joined
// with spaces ("btrfs subvolume delete /p"), or by its longest key that is a
// prefix of the line. A command with no reply fails as a missing program
// would, so a test notices commands it did not expect.
type FakeCmder struct {
	Replies map[string]Reply

	mu    sync.Mutex
	calls []string
	stdin map[string][]byte
}

var _ exec.Cmder = (*FakeCmder)(nil)

// Command records nothing until the command runs.
func (f *FakeCmder) Command(_ context.Context, name string, args ...string) exec.Cmd {
	return &fakeCmd{fake: f, words: append([]string{name}, args...)}
}

// Calls lists the command lines run so far, in order.
func (f *FakeCmder) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// Stdin returns what the last run of a command line read from its stdin.
func (f *FakeCmder) Stdin(line string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stdin[line]
}

func (f *FakeCmder) reply(line string) (Reply, bool) {
	if r, ok := f.Replies[line]; ok {
		return r, true
	}
	best, found := "", false
	for key := range f.Replies {
		if strings.HasPrefix(line, key) && len(key) > len(best) {
			best, found = key, true
		}
	}
	return f.Replies[best], found
}

type fakeCmd struct {
	fake   *FakeCmder
	words  []string
	stdin  io.Reader
	stdout io.Writer
}

func (c *fakeCmd) SetStdin(r io.Reader) exec.Cmd  { c.stdin = r; return c }
func (c *fakeCmd) SetStdout(w io.Writer) exec.Cmd { c.stdout = w; return c }

func (c *fakeCmd) Run() error {
	line := strings.Join(c.words, " ")
	var input []byte
	if c.stdin != nil {
		var err error
		if input, err = io.ReadAll(c.stdin); err != nil {
			return &exec.RunError{Command: c.words, ExitCode: 1, Err: fmt.Errorf("reading stdin: %w", err)}
		}
	}
	c.fake.mu.Lock()
	c.fake.calls = append(c.fake.calls, line)
	if c.fake.stdin == nil {
		c.fake.stdin = map[string][]byte{}
	}
	c.fake.stdin[line] = input
	reply, ok := c.fake.reply(line)
	c.fake.mu.Unlock()
	if !ok {
		return &exec.RunError{Command: c.words, ExitCode: -1, Err: fmt.Errorf("exec: %q: no reply scripted", c.words[0])}
	}
	if c.stdout != nil {
		if _, err := io.WriteString(c.stdout, reply.Stdout); err != nil {
			return &exec.RunError{Command: c.words, ExitCode: -1, Err: err}
		}
	}
	if reply.ExitCode != 0 {
		return &exec.RunError{Command: c.words, ExitCode: reply.ExitCode, Stderr: []byte(reply.Stderr),
			Err: fmt.Errorf("exit status %d", reply.ExitCode)}
	}
	return nil
}
