package exec

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestLocalRunsWithStdinAndStdout(t *testing.T) {
	var out bytes.Buffer
	err := Local{}.Command(context.Background(), "sh", "-c", "tr a-z A-Z").
		SetStdin(strings.NewReader("hello")).SetStdout(&out).Run()
	if err != nil || out.String() != "HELLO" {
		t.Fatalf("got %q, %v; want HELLO", out.String(), err)
	}
}

func TestLocalFailureIsRunErrorWithStderrAndExitCode(t *testing.T) {
	out, err := Output(Local{}.Command(context.Background(), "sh", "-c", "echo partial; echo 'ERROR: it broke' >&2; echo second >&2; exit 3"))
	var run *RunError
	if !errors.As(err, &run) {
		t.Fatalf("got %T %v, want a *RunError", err, err)
	}
	if run.ExitCode != 3 || run.Words() != "ERROR: it broke; second" || string(out) != "partial\n" {
		t.Fatalf("got exit %d, words %q, stdout %q", run.ExitCode, run.Words(), out)
	}
	if run.Command[0] != "sh" || !strings.Contains(run.Error(), "ERROR: it broke") {
		t.Fatalf("the error %q does not name the command and the tool's words", run.Error())
	}
}

func TestLocalMissingProgramAndKilledCommandHaveNoExitCode(t *testing.T) {
	err := Local{}.Command(context.Background(), "/nonexistent/tool").Run()
	var run *RunError
	if !errors.As(err, &run) || run.ExitCode != -1 {
		t.Fatalf("a missing program: %v, want a RunError with exit code -1", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = Local{}.Command(ctx, "sleep", "10").Run()
	if !errors.As(err, &run) || run.ExitCode != -1 {
		t.Fatalf("a cancelled command: %v, want a RunError with exit code -1", err)
	}
}

func TestLocalRedactsSecrets(t *testing.T) {
	secrets := []string{"s3cr3t", "s3cr3t-longer", ""}
	err := Local{Secrets: secrets}.Command(context.Background(), "sh", "-c",
		"echo token=s3cr3t-longer and s3cr3t >&2; exit 1", "--token=s3cr3t").Run()
	var run *RunError
	if !errors.As(err, &run) {
		t.Fatalf("got %v", err)
	}
	for _, text := range []string{run.Error(), string(run.Stderr), strings.Join(run.Command, " ")} {
		if strings.Contains(text, "s3cr3t") {
			t.Fatalf("a secret leaked: %q", text)
		}
	}
	if got := string(run.Stderr); got != "token=<redacted> and <redacted>\n" {
		t.Fatalf("stderr %q: the longer secret must be replaced whole", got)
	}
}

func TestStderrKeepsItsTailWithinTheBound(t *testing.T) {
	script := "head -c 200000 /dev/zero | tr '\\0' x >&2; echo ' the verdict' >&2; exit 1"
	err := Local{}.Command(context.Background(), "sh", "-c", script).Run()
	var run *RunError
	if !errors.As(err, &run) {
		t.Fatalf("got %v", err)
	}
	if len(run.Stderr) != maxStderrBytes || !strings.HasSuffix(string(run.Stderr), "the verdict\n") {
		t.Fatalf("kept %d bytes ending %q, want the last %d", len(run.Stderr), run.Stderr[len(run.Stderr)-20:], maxStderrBytes)
	}
}

func TestRedactReplacesLongestFirst(t *testing.T) {
	for _, c := range []struct {
		in, want string
		secrets  []string
	}{
		{"a-b", "a-b", nil},
		{"key=abc", "key=<redacted>", []string{"abc"}},
		{"abcdef abc", "<redacted> <redacted>", []string{"abc", "abcdef"}},
		{"nothing", "nothing", []string{""}},
	} {
		if got := redact(c.in, c.secrets); got != c.want {
			t.Errorf("redact(%q, %q) = %q, want %q", c.in, c.secrets, got, c.want)
		}
	}
}

// A sentence a tool breaks over two lines (libzfs does) reads whole.
func TestSentenceJoinsBrokenLines(t *testing.T) {
	run := &RunError{Stderr: []byte("cannot receive incremental stream: most recent snapshot of msgs/c does not\nmatch incremental source\n")}
	if got := run.Sentence(); got != "cannot receive incremental stream: most recent snapshot of msgs/c does not match incremental source" {
		t.Fatalf("Sentence = %q", got)
	}
}
