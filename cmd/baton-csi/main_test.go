package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
