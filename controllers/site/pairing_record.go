package site

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
)

// renderPairing writes a pairing's record onto its Replication object: the
// spec, the cycle, and the summary fields that follow from the record alone.
// The phase and the conditions depend on the time of reading; the status
// reconciler writes them.
func renderPairing(o *v1.Replication, p core.Pairing) error {
	// Zero would be omitted and defaulted by the API server (5m, 3): the
	// record would read back as something it was not.
	if p.Interval <= 0 || p.Retention < replication.MinRetention {
		return fmt.Errorf("%w: pairing of %s with interval %s and retention %d", ErrUnrepresentable, p.Source, p.Interval, p.Retention)
	}
	retention, err := toInt32("retention", int64(p.Retention))
	if err != nil {
		return err
	}
	o.Spec.SourceVolume = v1.VolumeHandle(p.Source.String())
	o.Spec.TargetCluster = v1.UUID(p.Target)
	o.Spec.Interval = metav1.Duration{Duration: p.Interval}
	o.Spec.Retention = retention
	o.Spec.Enabled = p.Phase != replication.Paused
	o.Spec.FailbackSource = ""
	if !p.ReaimedAt.IsZero() {
		o.Spec.FailbackSource = v1.UUID(p.Target)
	}
	cycle, err := pairingCycle(p)
	if err != nil {
		return err
	}
	o.Status.Cycle = cycle
	summarise(&o.Status, p)
	return nil
}

func pairingCycle(p core.Pairing) (*v1.ReplicationCycle, error) {
	phase, err := cyclePhases.name(p.Phase)
	if err != nil {
		return nil, err
	}
	sequence, err := toInt64("sequence", p.Sequence)
	if err != nil {
		return nil, err
	}
	bytes, err := toInt64("lastSync.bytes", p.Last.Bytes)
	if err != nil {
		return nil, err
	}
	c := &v1.ReplicationCycle{
		Phase: phase, Sequence: sequence,
		Base:    v1.CycleBase{Dataset: p.Base.Volume, Snapshot: p.Base.Snapshot, GUID: p.Base.GUID},
		Due:     v1.NewTimestamp(p.Due),
		RetryAt: v1.NewTimestamp(p.RetryAt),
		LastSync: v1.CycleSync{At: v1.NewTimestamp(p.Last.At), Duration: metav1.Duration{Duration: p.Last.Duration},
			Bytes: bytes, Snapshot: p.Last.Snapshot},
		Failures: int64(p.Failures), LastError: p.LastError, ReaimedAt: v1.NewTimestamp(p.ReaimedAt),
	}
	for _, s := range p.Snapshots {
		c.Snapshots = append(c.Snapshots, v1.CycleSnapshot{SnapshotRef: v1.SnapshotRef{Name: s.Name, GUID: s.GUID},
			OrderedAt: v1.NewTimestamp(s.OrderedAt), TakenAt: v1.NewTimestamp(s.TakenAt), ShippedAt: v1.NewTimestamp(s.ShippedAt)})
	}
	for _, r := range p.Receivers {
		c.Receivers = append(c.Receivers, v1.CycleReceiver{Node: r.Node, Address: r.Address, Token: r.Token})
	}
	return c, nil
}

// summarise fills the fields people read that follow from the record alone.
// lastSyncTime is the recovery point: when the shipped snapshot was taken.
func summarise(s *v1.ReplicationStatus, p core.Pairing) {
	s.LastSyncTime, s.LastSyncDuration, s.LastSyncBytes = nil, nil, 0
	if !p.Last.At.IsZero() {
		taken := p.Last.At
		for _, snap := range p.Snapshots {
			if snap.Name == p.Last.Snapshot && snap.Taken() {
				taken = snap.TakenAt
			}
		}
		s.LastSyncTime = &metav1.Time{Time: taken.UTC().Truncate(time.Second)}
		s.LastSyncDuration = &metav1.Duration{Duration: p.Last.Duration}
		s.LastSyncBytes = int64(min(p.Last.Bytes, 1<<63-1))
	}
	s.LastSnapshot, s.CommonSnapshot = nil, nil
	if newest, ok := p.NewestShipped(); ok {
		s.LastSnapshot = &v1.SnapshotRef{Name: newest.Name, GUID: newest.GUID}
	}
	if p.Base.Snapshot != "" {
		s.CommonSnapshot = &v1.SnapshotRef{Name: p.Base.Snapshot, GUID: p.Base.GUID}
	}
}

// pairingRecord reads a pairing back from its Replication object.
func pairingRecord(o *v1.Replication) (core.Pairing, error) {
	p, err := readPairing(o)
	if err != nil {
		return core.Pairing{}, fmt.Errorf("replication %s: %w", o.Name, err)
	}
	return p, nil
}

func readPairing(o *v1.Replication) (core.Pairing, error) {
	source, err := chain.ParseRef(string(o.Spec.SourceVolume))
	if err != nil {
		return core.Pairing{}, err
	}
	c := o.Status.Cycle
	if c == nil {
		return core.Pairing{}, fmt.Errorf("no cycle recorded")
	}
	phase, err := cyclePhases.value(c.Phase)
	if err != nil {
		return core.Pairing{}, err
	}
	sequence, err := toUint64("sequence", c.Sequence)
	if err != nil {
		return core.Pairing{}, err
	}
	bytes, err := toUint64("lastSync.bytes", c.LastSync.Bytes)
	if err != nil {
		return core.Pairing{}, err
	}
	p := core.Pairing{Pairing: replication.Pairing{
		Source: source, Target: chain.ClusterID(o.Spec.TargetCluster), Interval: o.Spec.Interval.Duration,
		Retention: int(o.Spec.Retention), Phase: phase, Sequence: sequence,
		Base:     replication.Base{Volume: c.Base.Dataset, Snapshot: c.Base.Snapshot, GUID: c.Base.GUID},
		Last:     replication.Sync{Duration: c.LastSync.Duration.Duration, Bytes: bytes, Snapshot: c.LastSync.Snapshot},
		Failures: int(c.Failures), LastError: c.LastError,
	}}
	for _, r := range c.Receivers {
		p.Receivers = append(p.Receivers, core.Receiver{Node: r.Node, Address: r.Address, Token: r.Token})
	}
	return p, readCycleTimes(&p, c)
}

func readCycleTimes(p *core.Pairing, c *v1.ReplicationCycle) error {
	times := []struct {
		into  *time.Time
		stamp v1.Timestamp
	}{{&p.Due, c.Due}, {&p.RetryAt, c.RetryAt}, {&p.Last.At, c.LastSync.At}, {&p.ReaimedAt, c.ReaimedAt}}
	for _, t := range times {
		var err error
		if *t.into, err = t.stamp.Time(); err != nil {
			return err
		}
	}
	for _, s := range c.Snapshots {
		ordered, err := s.OrderedAt.Time()
		if err != nil {
			return err
		}
		taken, err := s.TakenAt.Time()
		if err != nil {
			return err
		}
		shipped, err := s.ShippedAt.Time()
		if err != nil {
			return err
		}
		p.Snapshots = append(p.Snapshots, replication.Snapshot{Name: s.Name, GUID: s.GUID, OrderedAt: ordered, TakenAt: taken,
			ShippedAt: shipped})
	}
	return nil
}

// cyclePhases are the names of a pairing's cycle phases.
var cyclePhases = apiNames[replication.Phase, v1.CyclePhase]{what: "cycle phase", pairs: []apiName[replication.Phase, v1.CyclePhase]{
	{replication.Idle, v1.CycleIdle},
	{replication.Snapshotting, v1.CycleSnapshotting},
	{replication.Shipping, v1.CycleShipping},
	{replication.Paused, v1.CyclePaused},
}}

// ReadPairing reads the pairing record a Replication object holds.
func ReadPairing(o *v1.Replication) (core.Pairing, error) { return pairingRecord(o) }
