package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestHelpNamesEveryFlagAndExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--help exited %d: %s", code, stderr.String())
	}
	for _, want := range []string{"-hub-kubeconfig", "-cluster-name", "-kubeconfig", "-metrics-bind-address",
		"-health-probe-bind-address", "KUBECONFIG", "ManagedClusterView", "work-manager"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help does not mention %s", want)
		}
	}
}

func TestBadFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--hub-kubeconfig", "/hub"},
		{"--cluster-name", "site-a"},
		{"--hub-kubeconfig", "/hub", "--cluster-name", "site-a", "extra"},
		{"--no-such-flag"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%v exited %d, want 2 (%s)", args, code, stderr.String())
		}
	}
}

func TestAHubKubeconfigThatIsNotThereFails(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--hub-kubeconfig", t.TempDir() + "/none", "--cluster-name", "site-a"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "hub kubeconfig") {
		t.Errorf("exit %d, log %s", code, stderr.String())
	}
}
