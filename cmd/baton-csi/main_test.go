package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHelpSaysWhatTheDriverDoes(t *testing.T) {
	var out bytes.Buffer
	if _, err := parse([]string{"--help"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"CSI driver", "csi-addons", "--endpoint", "--csi-addons-address", "--node-id", "--site", "--clusters-file", "--mode"} {
		if !strings.Contains(out.String(), strings.TrimPrefix(want, "-")) {
			t.Errorf("--help does not mention %s:\n%s", want, out.String())
		}
	}
}

func TestFlagsAreChecked(t *testing.T) {
	for _, args := range [][]string{
		{"--mode", "both"}, {"--mode", "node"}, {"--devices", "links", "--node-id", "n"}, {"extra"},
	} {
		if _, err := parse(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v was accepted", args)
		}
	}
	if _, err := parse([]string{"--mode", "controller"}, &bytes.Buffer{}); err != nil {
		t.Errorf("controller mode without a node: %v", err)
	}
}

func TestBuildRefusesABrokenClustersFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "clusters")
	if err := os.WriteFile(file, []byte(`{"clusters":[{"cluster_secret":"hunter2"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parse([]string{"--clusters-file", file, "--node-id", "n1"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = build(o)
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "cluster_id") {
		t.Fatalf("a broken clusters file: %v", err)
	}
	o.clustersFile = ""
	s, err := build(o)
	if err != nil || s.Node == nil || s.Controller == nil || s.Replication == nil {
		t.Fatalf("all mode built %+v, %v", s, err)
	}
}

// TestTheSyncWaitEndsBeforeItsCaller: ResyncVolume's wait must answer before
// the csi-addons manager and sidecar give up on the call (3 minutes in
// v0.12.0), or the wait would turn a slow resync into a failed one. The
// call also does its own storage API calls (at most a few call timeouts).
func TestTheSyncWaitEndsBeforeItsCaller(t *testing.T) {
	const csiAddonsDeadline = 3 * time.Minute
	o, err := parse([]string{"--node-id=n1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if slack := csiAddonsDeadline - o.syncPatience; slack < 3*o.callTimeout {
		t.Errorf("--sync-patience %s leaves %s of csi-addons' %s deadline, less than three storage API calls (%s each)",
			o.syncPatience, slack, csiAddonsDeadline, o.callTimeout)
	}
	if o.syncPatience <= 30*time.Second {
		t.Errorf("--sync-patience %s: a not-ready resync waits csi-addons' 30 s requeue unseen", o.syncPatience)
	}
}
