package csi_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"

	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

// TestSanity runs csi-sanity against the real gRPC server of site A's driver
// with every capability it advertises: controller (volumes, snapshots,
// clones, expansion, capacity) and node (stage, publish, stats, expansion)
// on loop devices with real mounts. The sites tick in the background, so
// snapshots become ready and deleted volumes go, as their nodes report.
//
// Devices come formatted with XFS, a restored volume's filesystem: sanity
// names no fsType, so the node mounts what the device carries (rule 7), and
// XFS grows online where this sandbox refuses ext4's online resize.
func TestSanity(t *testing.T) {
	if inOwnProcess(t) {
		return
	}
	w := newWorld(t)
	w.NodeBytes = 1 << 50 // sanity creates far more than two 100 GiB nodes hold
	runSanity(t, w)
}

// runSanity runs csi-sanity against site A's driver in w, with 1 GiB volumes
// of two replicas and every idempotent call repeated ten times, and returns
// the driver.
func runSanity(t *testing.T, w *world) *driver {
	devices := newLoopDevices(t)
	devices.format = "xfs"
	w.run(time.Second)
	config, err := storageapi.ClustersFromSecrets(w.secret(clusterA))
	w.must(err)
	d := w.newDriverWith(clusterA, "a1", nil, devices, csi.OSMounter{})
	d.services.Controller.Clusters.Default = &config // requests carry no secrets: the mounted clusters file

	stop := make(chan struct{})
	stopped := make(chan error, 1)
	go func() {
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				stopped <- nil
				return
			case <-ticker.C:
				if err := w.Step(); err != nil {
					stopped <- err
					return
				}
			}
		}
	}()
	defer func() {
		close(stop)
		if err := <-stopped; err != nil {
			t.Errorf("the world's background ticks failed: %v", err)
		}
	}()

	paths := scratch(t)
	cfg := sanity.NewTestConfig()
	cfg.Address = "unix://" + d.csiSocket
	cfg.TargetPath = filepath.Join(paths, "target")
	cfg.StagingPath = filepath.Join(paths, "staging")
	cfg.TestVolumeSize = 1 << 30
	cfg.IdempotentCount = 10
	cfg.TestVolumeParameters = map[string]string{csi.ParameterPlaceCount: "2"}
	cfg.IDGen = &handles{}
	cfg.CreateTargetDir = func(path string) (string, error) { return path, os.MkdirAll(path, 0o750) }
	cfg.CreateStagingDir = cfg.CreateTargetDir
	cfg.CheckPath = checkPath
	sanity.Test(t, cfg)
	return d
}

// handles generates volume IDs in the driver's handle form.
type handles struct{ n atomic.Int64 }

func (h *handles) GenerateUniqueValidVolumeID() string {
	return chain.Ref{Cluster: clusterA, Volume: chain.VolumeID(fmt.Sprintf("aaaaaaaa-ffff-4000-8000-%012d", h.n.Add(1)))}.String()
}
func (h *handles) GenerateInvalidVolumeID() string { return "not-a-volume-handle" }
func (h *handles) GenerateUniqueValidNodeID() string {
	return fmt.Sprintf("node-%d", h.n.Add(1))
}
func (h *handles) GenerateInvalidNodeID() string { return "no-such-node" }

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

// sanityChild names the test a child process of the test binary runs.
const sanityChild = "BATON_SANITY_TEST"

// inOwnProcess runs t alone in a child process of the test binary and tells
// whether it did (t's body is then done): Ginkgo runs one suite per process,
// and the package runs csi-sanity twice, on the memory site and on the
// operator. In the child it returns false, and t runs.
func inOwnProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(sanityChild) == t.Name() {
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
	cmd.Env = append(os.Environ(), sanityChild+"="+t.Name())
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("%s in its own process: %v (its output is above)", t.Name(), err)
	}
	return true
}
