package csi_test

import (
	"fmt"
	"os"
	"path/filepath"
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
	devices := newLoopDevices(t)
	devices.format = "xfs"
	w := newWorld(t)
	w.NodeBytes = 1 << 50 // sanity creates far more than two 100 GiB nodes hold
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
	cfg.TestVolumeParameters = map[string]string{csi.ParameterPlaceCount: "2"}
	cfg.IDGen = &handles{}
	cfg.CreateTargetDir = func(path string) (string, error) { return path, os.MkdirAll(path, 0o750) }
	cfg.CreateStagingDir = cfg.CreateTargetDir
	sanity.Test(t, cfg)
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
