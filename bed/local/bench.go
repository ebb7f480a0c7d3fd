package local

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/csi-addons/spec/lib/go/replication"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// PartitionedCalls are the wall times of calls on the surviving site while
// the sites' packets are dropped, and the calls that failed: through its CSI
// driver (which resolves a promoted volume's chain on every site first), and
// straight to its storage API (the site's own answer).
type PartitionedCalls struct {
	Create, Promote []time.Duration
	// PromoteAgain is each promotion repeated: the volume is promoted here
	// already, so the driver resolves the chain and calls no site's Failover.
	PromoteAgain             []time.Duration
	SiteCreate, SiteFailover []time.Duration
	Errors                   []string
}

// benchCallLimit bounds each timed call: well past the storage API's 10 s
// per-call deadline, so a call that waits for it shows it.
const benchCallLimit = time.Minute

// BenchPartitioned times calls on the surviving site of a partition: 2 x
// volumes volumes are created on site-a and replicated to site-b until each
// shipped a first snapshot; then both sites blackhole each other's address
// (every packet between them dropped) and site-b is asked, one after the
// other, for a new volume and for a forced fail-over of one of site-a's --
// Ramen's unplanned fail-over: volumes times straight through its storage
// API, then volumes times through its CSI driver. The partition is healed
// before it returns.
func (b *Bed) BenchPartitioned(volumes int, sizeBytes uint64) (PartitionedCalls, error) {
	a, err := b.site(SiteNames[0])
	if err != nil {
		return PartitionedCalls{}, err
	}
	survivor, err := b.site(SiteNames[1])
	if err != nil {
		return PartitionedCalls{}, err
	}
	handles, err := b.protectedVolumes(a, 2*volumes, sizeBytes)
	if err != nil {
		return PartitionedCalls{}, err
	}
	api, err := storageapi.NewClient(storageapi.ClientConfig{ID: survivor.local.ID, Endpoint: survivor.local.Endpoint,
		Secret: survivor.local.Secret, TLS: &tls.Config{RootCAs: b.ca.ca.Pool(), MinVersion: tls.VersionTLS12}, CallTimeout: benchCallLimit})
	if err != nil {
		return PartitionedCalls{}, err
	}
	if err := b.partitions.Cut(SiteNames[0], SiteNames[1], true); err != nil {
		return PartitionedCalls{}, err
	}
	defer b.HealAll()
	var calls PartitionedCalls
	for i, handle := range handles[volumes:] {
		ref, err := chain.ParseRef(handle)
		if err != nil {
			return PartitionedCalls{}, err
		}
		calls.record(&calls.SiteCreate, fmt.Sprintf("storage API create %d", i), func(ctx context.Context) error {
			_, err := api.CreateVolume(ctx, core.CreateRequest{Name: fmt.Sprintf("bench-site-%d", i),
				Shape: core.Shape{SizeBytes: sizeBytes, PlaceCount: 1, VolumeMode: core.Block}})
			return err
		})
		calls.record(&calls.SiteFailover, fmt.Sprintf("storage API fail-over of %s", ref), func(ctx context.Context) error {
			_, err := api.Failover(ctx, ref, true)
			return err
		})
	}
	for i, handle := range handles[:volumes] {
		calls.record(&calls.Create, fmt.Sprintf("create %d", i), func(ctx context.Context) error {
			_, err := survivor.csiController.CreateVolume(ctx, &csispec.CreateVolumeRequest{
				Name:               fmt.Sprintf("bench-new-%d", i),
				CapacityRange:      &csispec.CapacityRange{RequiredBytes: int64(sizeBytes)},
				VolumeCapabilities: []*csispec.VolumeCapability{blockCapability()},
				Parameters:         map[string]string{"placeCount": "1"},
			})
			return err
		})
		promote := func(ctx context.Context) error {
			_, err := survivor.replication.PromoteVolume(ctx, &replication.PromoteVolumeRequest{
				ReplicationSource: volumeSource(handle), Force: true})
			return err
		}
		calls.record(&calls.Promote, "promote "+handle, promote)
		calls.record(&calls.PromoteAgain, "promote "+handle+" again", promote)
	}
	return calls, nil
}

// protectedVolumes creates volumes on s and enables their replication to the
// other site, and waits until each shipped its first snapshot.
func (b *Bed) protectedVolumes(s *site, volumes int, sizeBytes uint64) ([]string, error) {
	var handles []string
	for i := range volumes {
		var handle string
		err := retried(b.options.ActionLimit, func(ctx context.Context) error {
			resp, err := s.csiController.CreateVolume(ctx, &csispec.CreateVolumeRequest{
				Name:               fmt.Sprintf("bench-src-%d", i),
				CapacityRange:      &csispec.CapacityRange{RequiredBytes: int64(sizeBytes)},
				VolumeCapabilities: []*csispec.VolumeCapability{blockCapability()},
				Parameters:         map[string]string{"placeCount": "1"},
			})
			if err != nil {
				return err
			}
			handle = resp.GetVolume().GetVolumeId()
			_, err = s.replication.EnableVolumeReplication(ctx, &replication.EnableVolumeReplicationRequest{
				ReplicationSource: volumeSource(handle)})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("protect bench volume %d on %s: %w", i, s.name, err)
		}
		handles = append(handles, handle)
	}
	for _, handle := range handles {
		if err := awaitFirstSync(s, handle, b.options.ActionLimit); err != nil {
			return nil, err
		}
	}
	return handles, nil
}

// awaitFirstSync polls the volume's replication info until it reports a
// first sync, or limit passes.
func awaitFirstSync(s *site, handle string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), benchCallLimit)
		info, err := s.replication.GetVolumeReplicationInfo(ctx, &replication.GetVolumeReplicationInfoRequest{
			ReplicationSource: volumeSource(handle)})
		cancel()
		if err == nil && info.GetLastSyncTime() != nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench volume %s shipped nothing within %s: %v", handle, limit, err)
		}
		time.Sleep(readinessPolling)
	}
}

func volumeSource(handle string) *replication.ReplicationSource {
	return &replication.ReplicationSource{Type: &replication.ReplicationSource_Volume{
		Volume: &replication.ReplicationSource_VolumeSource{VolumeId: handle}}}
}

// retried calls call until it succeeds or limit passes: the setup's calls
// are idempotent, and a loaded machine times some of them out.
func retried(limit time.Duration, call func(ctx context.Context) error) error {
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), benchCallLimit)
		err := call(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(readinessPolling)
	}
}

// timed runs call under benchCallLimit and returns its wall time.
func timed(call func(ctx context.Context) error) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), benchCallLimit)
	defer cancel()
	start := time.Now()
	err := call(ctx)
	return time.Since(start), err
}

// record times call and appends its wall time to durations; a call that
// failed goes on Errors too, named what, with how long it took to fail.
func (c *PartitionedCalls) record(durations *[]time.Duration, what string, call func(ctx context.Context) error) {
	d, err := timed(call)
	*durations = append(*durations, d)
	if err != nil {
		c.Errors = append(c.Errors, fmt.Sprintf("%s after %s: %v", what, d, err))
	}
}
