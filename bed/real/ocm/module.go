package ocm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Module and Version are the OCM release the bed runs: its manifests here,
// its binaries in the image ci/realbed/ocm-image.sh builds (ocm.go.mod pins
// the same version; a test keeps them together).
const (
	Module  = "open-cluster-management.io/ocm"
	Version = "v1.0.0"
)

// ModuleDir is the directory of the OCM module in the Go module cache,
// downloaded through the module proxy when it is not there yet. Its
// manifests/ are what Install and Join render.
func ModuleDir(ctx context.Context) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", Module+"@"+Version)
	// Outside any module: the download must not touch baton's go.mod.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", Module, Version, err, strings.TrimSpace(stderr.String()+stdout.String()))
	}
	var module struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &module); err != nil {
		return "", fmt.Errorf("go mod download %s@%s answered %q: %w", Module, Version, stdout.String(), err)
	}
	if module.Error != "" || module.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", Module, Version, module.Error)
	}
	if _, err := os.Stat(filepath.Join(module.Dir, "manifests", "cluster-manager")); err != nil {
		return "", fmt.Errorf("the OCM module at %s has no manifests: %w", module.Dir, err)
	}
	return module.Dir, nil
}

// repositoryRoot is found from this file's path, as bed/real does: the hub's
// RBAC and CRDs are read from the tree.
func repositoryRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}
