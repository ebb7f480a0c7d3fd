package controlplane_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-dr/baton/bed/controlplane"
)

// An API server that exits before it serves fails Start with its own last
// words -- on a loaded machine the local bed's start failed five times with
// only envtest's "stopped unexpectedly" -- and, envtest stopping it, leaves
// no etcd behind.
func TestAnAPIServerThatDiesSaysWhyAndLeavesNoEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd; skipped under -short")
	}
	assets, err := controlplane.Assets()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"etcd", "kubectl"} {
		if err := os.Symlink(filepath.Join(assets, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// envtest asks the binary for its flags (--help) before it runs it.
	dies := "#!/bin/sh\nfor a; do [ \"$a\" = -h ] || [ \"$a\" = --help ] && exit 0; done\n" +
		"echo 'E1207 failed to listen: bind: address already in use (a test double of kube-apiserver)' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "kube-apiserver"), []byte(dies), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBEBUILDER_ASSETS", dir)
	cp, err := controlplane.Start(controlplane.Options{})
	if err == nil {
		cp.Stop()
		t.Fatal("a control plane whose API server exits at once started")
	}
	if !strings.Contains(err.Error(), "bind: address already in use (a test double of kube-apiserver)") {
		t.Errorf("the error does not carry the API server's last words: %v", err)
	}
	if left := childrenNamed(t, "etcd"); len(left) > 0 {
		t.Errorf("etcd left running: pids %v", left)
	}
}

// childrenNamed lists the live child processes of this test whose command
// is name.
func childrenNamed(t *testing.T, name string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue // gone meanwhile
		}
		fields := map[string]string{}
		for _, line := range strings.Split(string(status), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				fields[k] = strings.TrimSpace(v)
			}
		}
		if fields["Name"] == name && fields["PPid"] == strconv.Itoa(os.Getpid()) && !strings.HasPrefix(fields["State"], "Z") {
			found = append(found, pid)
		}
	}
	return found
}
