package reportstest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopBound is how long the processes of a killed browser's group may take
// to exit. A SIGKILLed process still has to be scheduled to die, which on
// this machine under load (30 to 90 on 2 cores) can take seconds.
const stopBound = time.Minute

// groupPollPause is how often awaitGroupGone looks at /proc again. The
// helpers Chromium forked are not our children: nothing can wait on their
// end but /proc.
const groupPollPause = 20 * time.Millisecond

// killGroup sends SIGKILL to every process of the group; a group already
// empty is the common, good case.
func killGroup(group int) error {
	if group <= 1 {
		panic("reportstest: killGroup needs a process group of its own")
	}
	if err := syscall.Kill(-group, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("failed to kill process group %d: %w", group, err)
	}
	return nil
}

// awaitGroupGone waits until no live process is in the group, and returns an
// error naming those still alive at deadline. A deadline already passed looks
// once.
func awaitGroupGone(group int, deadline time.Time) error {
	for {
		members, err := groupMembers(group)
		if err != nil {
			return err
		}
		if len(members) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of group %d still alive: %s", group, strings.Join(members, ", "))
		}
		time.Sleep(groupPollPause)
	}
}

// groupMembers names ("pid name --type=...") the live processes whose
// process group is group, from /proc. Zombies do not count: they are dead,
// and init reaps those it inherited in its own time.
func groupMembers(group int) ([]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("failed to list /proc: %w", err)
	}
	var members []string
	for _, entry := range entries {
		if _, err := strconv.Atoi(entry.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", entry.Name(), "stat"))
		if err != nil {
			continue // gone since the listing
		}
		name, state, pgrp, ok := parseStat(string(stat))
		if !ok || pgrp != group || state == "Z" {
			continue
		}
		members = append(members, strings.TrimSpace(entry.Name()+" "+name+" "+processType(entry.Name())))
	}
	return members, nil
}

// processType is the --type= argument of a Chromium helper (zygote,
// renderer, gpu-process, utility), empty for the browser itself or another
// program. A helper rewrites its command line as one string, its arguments
// joined by spaces, not NULs: hence the fields.
func processType(pid string) string {
	cmdline, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	if err != nil {
		return ""
	}
	for _, arg := range strings.Fields(strings.ReplaceAll(string(cmdline), "\x00", " ")) {
		if strings.HasPrefix(arg, "--type=") {
			return arg
		}
	}
	return ""
}

// parseStat reads the name, state and pgrp fields of a /proc/<pid>/stat
// line: "pid (comm) state ppid pgrp ...", where comm may itself hold spaces
// and parentheses, so the fields after it are counted from the last ')'.
func parseStat(stat string) (name, state string, group int, ok bool) {
	start, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if start < 0 || end < start {
		return "", "", 0, false
	}
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 3 {
		return "", "", 0, false
	}
	group, err := strconv.Atoi(fields[2])
	if err != nil {
		return "", "", 0, false
	}
	return stat[start+1 : end], fields[0], group, true
}
