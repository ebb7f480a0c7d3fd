package reportstest

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The check that startChromium's cleanup runs must fail while a process of
// the group lives, name it, and pass once it is dead -- even before its
// parent reaps it.
func TestAwaitGroupGoneNamesALiveMember(t *testing.T) {
	sleep := exec.Command("sleep", "600")
	sleep.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	group := sleep.Process.Pid
	reaped := false
	t.Cleanup(func() {
		_ = syscall.Kill(-group, syscall.SIGKILL)
		if !reaped {
			_ = sleep.Wait()
		}
	})
	err := awaitGroupGone(group, time.Time{}) // look once
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(group)+" sleep") {
		t.Fatalf("awaitGroupGone with a live sleep in the group = %v; want an error naming it", err)
	}
	if err := killGroup(group); err != nil {
		t.Fatal(err)
	}
	// Killed but not yet reaped, the sleep is a zombie, as the helpers a
	// killed browser leaves to init are for a while: it does not count.
	if err := awaitGroupGone(group, time.Now().Add(stopBound)); err != nil {
		t.Errorf("awaitGroupGone after the kill, before the reaping: %v", err)
	}
	_ = sleep.Wait()
	reaped = true
	if err := awaitGroupGone(group, time.Time{}); err != nil {
		t.Errorf("awaitGroupGone after the reaping: %v", err)
	}
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		stat        string
		name, state string
		group       int
		ok          bool
	}{
		{"123 (chromium) S 1 123 123 0", "chromium", "S", 123, true},
		{"124 (a b) c) (d) Z 123 77 77 0", "a b) c) (d", "Z", 77, true},
		{"125 (x) S 1", "", "", 0, false},
		{"no parenthesis", "", "", 0, false},
		{"1 ) ( S 1 2", "", "", 0, false},
		{"126 (x) S 1 notanumber", "", "", 0, false},
	} {
		name, state, group, ok := parseStat(tc.stat)
		if name != tc.name || state != tc.state || group != tc.group || ok != tc.ok {
			t.Errorf("parseStat(%q) = %q, %q, %d, %v; want %q, %q, %d, %v",
				tc.stat, name, state, group, ok, tc.name, tc.state, tc.group, tc.ok)
		}
	}
}

// FuzzParseStat: /proc/<pid>/stat carries a command name the process chose,
// parentheses and spaces included; parsing it must never panic, and a
// parsed line must say the fields that follow the last ')'.
func FuzzParseStat(f *testing.F) {
	f.Add("123 (chromium) S 1 123 123 0")
	f.Add("1 ()) ) Z 0 -1")
	f.Fuzz(func(t *testing.T, stat string) {
		name, state, group, ok := parseStat(stat)
		if !ok {
			return
		}
		end := strings.LastIndexByte(stat, ')')
		fields := strings.Fields(stat[end+1:])
		if n, err := strconv.Atoi(fields[2]); err != nil || n != group || fields[0] != state ||
			!strings.HasSuffix(stat[:end], name) {
			t.Errorf("parseStat(%q) = %q, %q, %d", stat, name, state, group)
		}
	})
}
