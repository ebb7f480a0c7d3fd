package local

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// stopLimit is how long a process has to exit after SIGTERM before it is
// killed.
const stopLimit = 30 * time.Second

// process is one of the bed's binaries, running in a site's network
// namespace (entered with nsenter --net only: the process shares the host's
// mount namespace, so the loop devices, btrfs mounts and bind mounts it makes
// are the host's, where the bed reads and removes them).
type process struct {
	name   string
	log    string // the file its stdout and stderr go to
	netns  string
	argv   []string // the binary and its arguments
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // set once exited is closed
}

// startProcess runs binary with args inside the namespace at netns.
func startProcess(name, netns, logFile, binary string, args ...string) (*process, error) {
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	p := &process{name: name, log: logFile, netns: netns, argv: append([]string{binary}, args...), exited: make(chan struct{})}
	p.cmd = exec.Command("nsenter", append([]string{"--net=" + netns, "--"}, p.argv...)...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	// Its own process group: a terminal's ^C reaches the bed, which stops
	// the processes in order, not every process at once.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// running reports whether the process has not exited.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and waits; past stopLimit the process is killed. A
// process that had exited already reports how.
func (p *process) stop() error {
	if p == nil {
		return nil
	}
	if !p.running() {
		return p.exitError()
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.exitError()
	case <-time.After(stopLimit):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("%s did not stop within %s of SIGTERM and was killed; its log: %s", p.name, stopLimit, p.log)
	}
}

func (p *process) exitError() error {
	var exit *exec.ExitError
	if p.err != nil && !(errors.As(p.err, &exit) && exit.Success()) {
		return fmt.Errorf("%s exited with %v; its log: %s", p.name, p.err, p.log)
	}
	return nil
}

// tail is the end of the process's log, for errors.
func (p *process) tail() string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-8):], "\n")
}

// kill ends the process with SIGKILL, as a crash would: it cleans nothing up.
func (p *process) kill() {
	if p.running() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// again starts the same binary with the same arguments, in the same
// namespace, appending to the same log.
func (p *process) again() (*process, error) {
	return startProcess(p.name, p.netns, p.log, p.argv[0], p.argv[1:]...)
}
