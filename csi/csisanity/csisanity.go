// Package csisanity is the csi-sanity configuration baton's driver is held
// to, one for every bed that runs it: csi/'s tests against the driver over
// a site in memory and over the site operator, and bed/local's against the
// driver a site of the local bed runs, as a new user would meet it.
//
// It is strict: csi-sanity's own made-up volume and node IDs
// ("fake-vol-id-...", which are no baton handles), 1 GiB volumes, and every
// idempotent call repeated 20 times. What the driver advertises decides the
// rest: snapshots, clones and expansion are on because it serves them.
package csisanity

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
)

// Strictness of the configuration.
const (
	// VolumeBytes is the size of sanity's volumes.
	VolumeBytes = 1 << 30
	// IdempotentCount is how many times sanity repeats each idempotent call.
	IdempotentCount = 20
)

// Config is the configuration against the driver serving CSI at address
// ("unix:///path"), its staging and target paths under paths (a directory
// the caller removes, and unmounts what is left there).
func Config(address, paths string) sanity.TestConfig {
	cfg := sanity.NewTestConfig()
	cfg.Address = address
	cfg.TargetPath = filepath.Join(paths, "target")
	cfg.StagingPath = filepath.Join(paths, "staging")
	cfg.TestVolumeSize = VolumeBytes
	cfg.IdempotentCount = IdempotentCount
	cfg.IDGen = &sanity.DefaultIDGenerator{}
	cfg.CreateTargetDir = func(path string) (string, error) { return path, os.MkdirAll(path, 0o750) }
	cfg.CreateStagingDir = cfg.CreateTargetDir
	cfg.CheckPath = checkPath
	return cfg
}

// checkPath says what is at path, for sanity's checks that unpublishing
// removes the target.
func checkPath(path string) (sanity.PathKind, error) {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return sanity.PathIsNotFound, nil
	case err != nil:
		return "", err
	case info.Mode().IsRegular():
		return sanity.PathIsFile, nil
	case info.IsDir():
		return sanity.PathIsDir, nil
	}
	return sanity.PathIsOther, nil
}

// childEnv names the test a child process of the test binary runs.
const childEnv = "BATON_SANITY_TEST"

// InOwnProcess runs t alone in a child process of the test binary and tells
// whether it did (t's body is then done). Ginkgo runs one suite per process:
// a package that runs csi-sanity in two tests, or one test under -count=N,
// would run a second suite in the same process. In the child it returns
// false, and t runs.
func InOwnProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		return false
	}
	args := []string{"-test.run=^" + t.Name() + "$", "-test.count=1", "-test.v"}
	if deadline, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(deadline).Round(time.Second).String())
	}
	for _, arg := range os.Args[1:] {
		if strings.HasPrefix(arg, "-ginkgo.") {
			args = append(args, arg)
		}
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("%s in its own process: %v (its output is above)", t.Name(), err)
	}
	return true
}
