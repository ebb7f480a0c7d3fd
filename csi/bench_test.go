package csi_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	csiapi "github.com/container-storage-interface/spec/lib/go/csi"
)

// The benchmarks time whole RPCs through gRPC on unix sockets, each
// resolving its chain over the storage API on HTTPS; the node's mounter is
// the in-memory double (mkfs and mount would be the OS's time, not ours).
// Besides ns/op they report the p50 and p99 of the iterations.

func reportLatencies(b *testing.B, latencies []time.Duration) {
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	at := func(percent int) float64 {
		return float64(latencies[min(len(latencies)-1, len(latencies)*percent/100)].Microseconds())
	}
	b.ReportMetric(at(50), "p50-us")
	b.ReportMetric(at(99), "p99-us")
}

// timed runs op b.N times, recording each latency.
func timed(b *testing.B, op func(i int) error) {
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		started := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		latencies = append(latencies, time.Since(started))
	}
	b.StopTimer()
	reportLatencies(b, latencies)
}

func BenchmarkCreateVolumeToNodePublish(b *testing.B) {
	w := newWorld(b)
	w.NodeBytes = 1 << 50
	w.run(time.Second)
	a := w.newDriver(clusterA, "a1", w.secret(clusterA))
	timed(b, func(i int) error {
		created, err := a.controller.CreateVolume(ctx, &csiapi.CreateVolumeRequest{Name: fmt.Sprintf("bench-%d", i),
			CapacityRange: &csiapi.CapacityRange{RequiredBytes: 1 << 30}, VolumeCapabilities: []*csiapi.VolumeCapability{mountCapability("")},
			Parameters: map[string]string{"placeCount": "2"}, Secrets: a.secrets})
		if err != nil {
			return err
		}
		handle := created.GetVolume().GetVolumeId()
		staging, target := "/staging/"+handle, "/target/"+handle
		if _, err := a.node.NodeStageVolume(ctx, &csiapi.NodeStageVolumeRequest{VolumeId: handle, StagingTargetPath: staging,
			VolumeCapability: mountCapability(""), Secrets: a.secrets}); err != nil {
			return err
		}
		_, err = a.node.NodePublishVolume(ctx, &csiapi.NodePublishVolumeRequest{VolumeId: handle, StagingTargetPath: staging,
			TargetPath: target, VolumeCapability: mountCapability("")})
		return err
	})
}

// BenchmarkReplication times each replication RPC in its steady state after
// an unplanned fail-over A->B: the calls Ramen repeats.
func BenchmarkReplication(b *testing.B) {
	w, a, b2, handle, _ := failedOver(b)
	w.resyncUntilReady(a, handle)
	for _, bench := range []struct {
		name string
		call func() error
	}{
		{"Enable", func() error { return b2.enable(handle) }},
		{"Promote", func() error { return b2.promote(handle, false) }},
		{"Demote", func() error { return a.demote(handle) }},
		{"Resync", func() error { _, err := a.resync(handle); return err }},
		{"GetVolumeReplicationInfo", func() error { _, err := a.info(handle); return err }},
		{"Disable", func() error { return a.disable(handle) }},
	} {
		b.Run(bench.name, func(b *testing.B) { timed(b, func(int) error { return bench.call() }) })
	}
}
