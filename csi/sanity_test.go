package csi_test

import (
	"testing"
	"time"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"

	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/csi/csisanity"
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
	if csisanity.InOwnProcess(t) {
		return
	}
	w := newWorld(t)
	w.NodeBytes = 1 << 50 // sanity creates far more than two 100 GiB nodes hold
	runSanity(t, w)
}

// runSanity runs csi-sanity, configured as on every bed (csisanity), against
// site A's driver in w with volumes of two replicas, and returns the driver.
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

	cfg := csisanity.Config("unix://"+d.csiSocket, scratch(t))
	cfg.TestVolumeParameters = map[string]string{csi.ParameterPlaceCount: "2"}
	sanity.Test(t, cfg)
	return d
}
