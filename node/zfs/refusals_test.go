package zfs

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/storage/backend"
)

// testdata/refusals-2.1.11.txt is what zfs 2.1.11 printed in a vmtest guest
// for a script of refused commands (ci/vmtest runs such a script by hand:
// "## <command>", zfs's stderr, "## rc=<exit code>").
type capture struct {
	command string
	stderr  string
	failed  bool
}

func readCaptures(t *testing.T) map[string]capture {
	t.Helper()
	data, err := os.ReadFile("testdata/refusals-2.1.11.txt")
	if err != nil {
		t.Fatal(err)
	}
	captures := map[string]capture{}
	var current *capture
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "## rc="):
			current.failed = line != "## rc=0"
			captures[current.command] = *current
			current = nil
		case strings.HasPrefix(line, "## "):
			current = &capture{command: strings.TrimPrefix(line, "## ")}
		case current != nil:
			current.stderr += line + "\n"
		}
	}
	return captures
}

// Every refusal zfs printed maps to the kind the backend contract gives it,
// and keeps zfs's words.
func TestRefusalsOfRealZfs(t *testing.T) {
	captures := readCaptures(t)
	for command, want := range map[string]error{
		"zfs create -s -V 32M msgs/v":                                        backend.ErrExists,
		"zfs create -V 10G msgs/huge":                                        backend.ErrPoolFull,
		"zfs create -s -V 0 msgs/zero":                                       backend.ErrInvalid,
		"zfs list -H msgs/missing":                                           backend.ErrNotFound,
		"zfs snapshot msgs/v@s":                                              backend.ErrExists,
		"zfs snapshot msgs/missing@s":                                        backend.ErrNotFound,
		"zfs clone msgs/v@s msgs/c":                                          backend.ErrExists,
		"zfs clone msgs/v@missing msgs/c3":                                   backend.ErrNotFound,
		"zfs destroy msgs/v@s":                                               backend.ErrBusy,
		"zfs destroy -r msgs/v":                                              backend.ErrBusy,
		"zfs destroy msgs/v@missing":                                         backend.ErrNotFound,
		"zfs destroy msgs/missing@s":                                         backend.ErrNotFound,
		"zfs rollback msgs/v@s":                                              backend.ErrBusy,
		"zfs rollback msgs/v@missing":                                        backend.ErrNotFound,
		"zfs send -n -P -i msgs/v@t msgs/v@s":                                backend.ErrInvalid,
		"zfs send -n -P -i msgs/c@x msgs/v@t":                                backend.ErrNotFound,
		"zfs send -n -P msgs/missing@a":                                      backend.ErrNotFound,
		"sh -c zfs send msgs/v@s | zfs receive -u msgs/c":                    backend.ErrExists,
		"sh -c zfs send -i msgs/v@s msgs/v@t | zfs receive -u msgs/other":    backend.ErrNoBase,
		"sh -c zfs send msgs/v@s | head -c 1000 | zfs receive -u msgs/trunc": backend.ErrInvalid,
		"sh -c head -c 4096 /dev/urandom | zfs receive -u msgs/garbage":      backend.ErrInvalid,
		"sh -c zfs receive -u msgs/empty < /dev/null":                        backend.ErrInvalid,
		"sh -c zfs send -i msgs/v@s msgs/v@t | zfs receive -u msgs/c":        backend.ErrNoBase,
		"zfs set volsize=10G msgs/thick":                                     backend.ErrPoolFull,
		"zfs set readonly=on msgs/missing":                                   backend.ErrNotFound,
	} {
		c, ok := captures[command]
		if !ok || !c.failed {
			t.Errorf("no refusal captured for %q", command)
			continue
		}
		err := classify(&exec.RunError{Command: strings.Fields(command), ExitCode: 1, Stderr: []byte(c.stderr), Err: errors.New("exit status 1")})
		var toolErr *backend.ToolError
		if !errors.Is(err, want) || !errors.As(err, &toolErr) || toolErr.Tool != "zfs" {
			t.Errorf("%q printed %q: classified %v, want %v", command, c.stderr, err, want)
			continue
		}
		if first := strings.TrimSpace(strings.Split(c.stderr, "\n")[0]); !strings.Contains(toolErr.Message, first) {
			t.Errorf("%q: the refusal %q lost zfs's words %q", command, toolErr.Message, first)
		}
	}
}

func TestUnknownFailuresStayRunErrors(t *testing.T) {
	run := &exec.RunError{Command: []string{"zfs", "list"}, ExitCode: 1, Stderr: []byte("internal error: out of memory\n"), Err: errors.New("exit status 1")}
	err := classify(run)
	var toolErr *backend.ToolError
	if errors.As(err, &toolErr) || err != error(run) {
		t.Fatalf("an unknown failure became %v", err)
	}
}
