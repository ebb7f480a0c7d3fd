// Package browsertest drives a headless Chromium from Go tests through the
// DevTools protocol over a pipe (--remote-debugging-pipe): no WebDriver, no
// WebSocket, no module beyond the standard library. A test opens a page,
// reads back the script exceptions, console errors, dialogs and network
// requests the page caused, evaluates expressions against its DOM, and takes
// PNG screenshots.
//
// The browser runs in its own process group; Close ends that group, so a test
// leaves no Chromium process behind (Leftovers checks).
package browsertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNoChromium is returned by Find when no Chromium binary is installed.
var ErrNoChromium = errors.New("browsertest: no chromium binary (apt-get install -y chromium)")

// candidates are the binaries Find tries, Debian's first.
var candidates = []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "headless_shell"}

// flags start Chromium headless on a machine without internet: without the
// background-networking flags it keeps dialling Google's hosts and logs the
// refusals; --no-sandbox because tests run as root here.
var flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-extensions", "--disable-default-apps", "--disable-breakpad",
	"--disable-dev-shm-usage", "--no-default-browser-check", "--mute-audio",
	"--hide-scrollbars", "--remote-debugging-pipe",
}

// closeGrace is how long Close waits for the browser to exit after
// Browser.close before it kills the process group.
const closeGrace = 10 * time.Second

// Find returns the path of an installed Chromium.
func Find() (string, error) {
	for _, name := range candidates {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", ErrNoChromium
}

// Browser is one running headless Chromium.
type Browser struct {
	cmd       *exec.Cmd
	conn      *conn
	pages     map[string]*Page // by DevTools session id
	exited    chan struct{}
	stderr    *tailBuffer
	closed    bool
	processID int
}

// Start launches Chromium at path with a profile in userDataDir (which should
// be a fresh, empty directory) and connects to it.
func Start(path, userDataDir string) (*Browser, error) {
	if path == "" || userDataDir == "" {
		panic("browsertest: Start needs a binary and a user data directory")
	}
	commandsRead, commandsWrite, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("failed to create the command pipe: %w", err)
	}
	messagesRead, messagesWrite, err := os.Pipe()
	if err != nil {
		_ = commandsRead.Close()
		_ = commandsWrite.Close()
		return nil, fmt.Errorf("failed to create the message pipe: %w", err)
	}
	args := append(append([]string{}, flags...), "--user-data-dir="+userDataDir, "about:blank")
	cmd := exec.Command(path, args...)
	cmd.ExtraFiles = []*os.File{commandsRead, messagesWrite} // fd 3 and fd 4
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &tailBuffer{limit: 64 << 10}
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	startErr := cmd.Start()
	// The browser holds its own copies of its ends now (or never will).
	_ = commandsRead.Close()
	_ = messagesWrite.Close()
	if startErr != nil {
		_ = commandsWrite.Close()
		_ = messagesRead.Close()
		return nil, fmt.Errorf("failed to start %s: %w", path, startErr)
	}
	b := &Browser{cmd: cmd, pages: map[string]*Page{}, exited: make(chan struct{}), stderr: stderr,
		processID: cmd.Process.Pid}
	b.conn = newConn(commandsWrite, messagesRead, b.dispatch)
	go func() {
		_ = cmd.Wait()
		close(b.exited)
	}()
	var version struct {
		Product string `json:"product"`
	}
	if err := b.conn.call(time.Now().Add(30*time.Second), "", "Browser.getVersion", nil, &version); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("chromium did not answer on its DevTools pipe: %w; its output: %s", err, stderr.String())
	}
	return b, nil
}

// dispatch hands an event to the page whose session it belongs to.
func (b *Browser) dispatch(event message) {
	if page, ok := b.pages[event.SessionID]; ok {
		page.record(event)
	}
}

// Close asks the browser to quit, waits a little for it, then kills its whole
// process group (renderers and helpers included). It is safe to call twice.
func (b *Browser) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	// Best effort: a browser that already died cannot answer.
	_ = b.conn.call(time.Now().Add(closeGrace), "", "Browser.close", nil, nil)
	select {
	case <-b.exited:
	case <-time.After(closeGrace):
	}
	// The main process may be gone while a renderer lingers; the group kill
	// takes both. ESRCH (nothing left) is the common, good case.
	if err := syscall.Kill(-b.processID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("failed to kill chromium's process group %d: %w", b.processID, err)
	}
	<-b.exited
	_ = b.conn.toBrowser.Close()
	_ = b.conn.fromBrowser.Close()
	return b.awaitGroupGone(time.Now().Add(closeGrace))
}

// awaitGroupGone waits until no process of the browser's group exists. The
// helpers the browser forked are not our children: once killed, they stay
// visible until the kernel has torn them down and init has reaped them, which
// nothing can wait on but /proc; hence the short, bounded polling.
func (b *Browser) awaitGroupGone(deadline time.Time) error {
	for {
		members, err := processGroupMembers(b.processID)
		if err != nil || len(members) == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chromium processes %v outlived a SIGKILL of their group %d", members, b.processID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ProcessGroup is the id of the browser's process group (its main process's
// id).
func (b *Browser) ProcessGroup() int { return b.processID }

// Output is the tail of what the browser printed, for failure messages.
func (b *Browser) Output() string { return b.stderr.String() }

// Leftovers lists the live processes still in the browser's process group;
// after Close it must be empty. Zombies do not count: they are dead, and the
// helpers the browser forked were re-parented to init, which reaps them in
// its own time (seconds, on this machine's init).
func (b *Browser) Leftovers() ([]int, error) {
	return processGroupMembers(b.processID)
}

// processGroupMembers scans /proc for the live (not zombie) processes whose
// process group is pgid.
func processGroupMembers(pgid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("failed to list /proc: %w", err)
	}
	var members []int
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", entry.Name(), "stat"))
		if err != nil {
			continue // gone since the listing
		}
		if state, group, ok := parseStat(string(stat)); ok && group == pgid && state != "Z" {
			members = append(members, pid)
		}
	}
	return members, nil
}

// parseStat reads the state and pgrp fields of a /proc/<pid>/stat line:
// "pid (comm) state ppid pgrp ...", where comm may itself hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStat(stat string) (state string, group int, ok bool) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return "", 0, false
	}
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 3 {
		return "", 0, false
	}
	group, err := strconv.Atoi(fields[2])
	if err != nil {
		return "", 0, false
	}
	return fields[0], group, true
}
