package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/csi"
)

// csiLatencies times the CSI controller's RPCs through real gRPC on a unix
// socket, the driver serving site-a of a simulated world (its storage API
// and records in memory). Calls are made one at a time while the world stands
// still, so the world's single goroutine is never shared.
func csiLatencies(rounds int) (map[string][]time.Duration, error) {
	w, err := bedsim.New(bedsim.Options{Seed: 1})
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "batonctl-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "csi.sock")
	listener, err := net.Listen("unix", socket)
	if err != nil {
		return nil, err
	}
	site := w.Site("site-a")
	server := csi.NewCSIServer(csi.Services{Identity: &csi.Identity{Version: "bench", Controller: true},
		Controller: site.CSIController}, logr.Discard())
	go server.Serve(listener)
	defer server.Stop()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	controller, identity := csispec.NewControllerClient(conn), csispec.NewIdentityClient(conn)
	ctx := context.Background()
	capability := &csispec.VolumeCapability{
		AccessType: &csispec.VolumeCapability_Block{Block: &csispec.VolumeCapability_BlockVolume{}},
		AccessMode: &csispec.VolumeCapability_AccessMode{Mode: csispec.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	out := map[string][]time.Duration{}
	timed := func(name string, call func() error) error {
		start := time.Now()
		err := call()
		out[name] = append(out[name], time.Since(start))
		return err
	}
	for i := range rounds {
		var handle string
		steps := []struct {
			name string
			call func() error
		}{
			{"Probe", func() error { _, err := identity.Probe(ctx, &csispec.ProbeRequest{}); return err }},
			{"CreateVolume", func() error {
				resp, err := controller.CreateVolume(ctx, &csispec.CreateVolumeRequest{Name: fmt.Sprintf("bench-%d", i),
					CapacityRange:      &csispec.CapacityRange{RequiredBytes: 64 << 20},
					VolumeCapabilities: []*csispec.VolumeCapability{capability}, Parameters: map[string]string{"placeCount": "2"}})
				handle = resp.GetVolume().GetVolumeId()
				return err
			}},
			{"ValidateVolumeCapabilities", func() error {
				_, err := controller.ValidateVolumeCapabilities(ctx, &csispec.ValidateVolumeCapabilitiesRequest{VolumeId: handle,
					VolumeCapabilities: []*csispec.VolumeCapability{capability}})
				return err
			}},
			{"GetCapacity", func() error { _, err := controller.GetCapacity(ctx, &csispec.GetCapacityRequest{}); return err }},
			{"DeleteVolume", func() error {
				_, err := controller.DeleteVolume(ctx, &csispec.DeleteVolumeRequest{VolumeId: handle})
				return err
			}},
		}
		for _, step := range steps {
			if err := timed(step.name, step.call); err != nil {
				return nil, fmt.Errorf("%s: %w", step.name, err)
			}
		}
	}
	return out, nil
}

// percentile is the q-th quantile of durations (q in 0..1).
func percentile(durations []time.Duration, q float64) time.Duration {
	sorted := slices.Clone(durations)
	slices.Sort(sorted)
	i := min(len(sorted)-1, int(q*float64(len(sorted))))
	return sorted[i]
}
