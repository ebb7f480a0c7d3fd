package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// volumeModel is one volume of an application: its history and the
// application's own reading of what the device holds.
type volumeModel interface {
	spec() VolumeSpec
	hist() *history
	// check reads the application's structures from the device, as the
	// application's recovery would, reports what breaks its invariant given
	// the prefix the device holds, and returns the state it recovered.
	check(dev backend.Device, cut int, r *reporter) any
	// resume continues from a recovered state; the history is already cut.
	resume(recovered any)
}

// base is what WordPress and Gitea share: a name, a random source, volumes,
// and the stop that follows a failed write.
type base struct {
	name    string
	rng     *rand.Rand
	models  []volumeModel
	stopped error     // the error that stopped the model; nil while it runs
	last    time.Time // the last step's time: steps never go back in time
}

// Name is the instance's name.
func (b *base) Name() string { return b.name }

// Volumes lists the volumes in their fixed order.
func (b *base) Volumes() []VolumeSpec {
	specs := make([]VolumeSpec, 0, len(b.models))
	for _, m := range b.models {
		specs = append(specs, m.spec())
	}
	return specs
}

// begin refuses a step while the model is stopped or a device is missing.
func (b *base) begin(devices Devices) error {
	if b.stopped != nil {
		return fmt.Errorf("%w (stopped by: %v)", ErrStopped, b.stopped)
	}
	for _, m := range b.models {
		if devices[m.spec().Name] == nil {
			return fmt.Errorf("%w %s", ErrNoDevice, m.spec().Name)
		}
	}
	return nil
}

// fail stops the model after a failed write or Sync. ErrVolumeFull wrote
// nothing and does not stop it.
func (b *base) fail(err error) error {
	if err != nil && !errors.Is(err, ErrVolumeFull) {
		b.stopped = err
	}
	return err
}

// Verify checks every volume.
func (b *base) Verify(devices Devices, now time.Time) Verdict {
	v := Verdict{Workload: b.name, At: now, owner: b}
	for _, m := range b.models {
		v.Volumes = append(v.Volumes, verifyVolume(m, devices[m.spec().Name], now))
	}
	return v
}

func verifyVolume(m volumeModel, dev backend.Device, now time.Time) VolumeVerdict {
	h := m.hist()
	r := &reporter{volume: h.volumeName}
	vv := VolumeVerdict{Volume: h.volumeName, BytesWritten: h.bytesWritten, historyLen: len(h.writes), resumes: h.resumes}
	if dev == nil {
		r.add(Unreadable, 0, "a device for the volume", "none")
		vv.Violations = r.violations
		return vv
	}
	c := h.checkPrefix(dev, now, r)
	vv.cut, vv.Prefix, vv.Lost = c.cut, c.prefix, c.lost
	vv.recovered = m.check(dev, c.cut, r)
	vv.Violations, vv.Suppressed = r.violations, r.suppressed
	return vv
}

// Resume continues from what a consistent verdict of this model found.
func (b *base) Resume(v Verdict) error {
	if v.owner != b || len(v.Volumes) != len(b.models) {
		return fmt.Errorf("%w: the verdict is of another workload than %s", ErrStaleVerdict, b.name)
	}
	for i, m := range b.models {
		vv, h := v.Volumes[i], m.hist()
		if vv.historyLen != len(h.writes) || vv.resumes != h.resumes {
			return fmt.Errorf("%w: volume %s was written or resumed after the verdict", ErrStaleVerdict, vv.Volume)
		}
		if !vv.Consistent() {
			return fmt.Errorf("%w: volume %s: %d violations", ErrInconsistent, vv.Volume, len(vv.Violations)+vv.Suppressed)
		}
	}
	for i, m := range b.models {
		m.hist().truncate(v.Volumes[i].cut)
		m.resume(v.Volumes[i].recovered)
	}
	b.stopped = nil
	return nil
}

// Changes counts a volume's writes after a point of its current history.
func (b *base) Changes(volume string, afterSeq uint64) (ChangeStats, error) {
	for _, m := range b.models {
		if m.spec().Name == volume {
			return m.hist().changes(afterSeq), nil
		}
	}
	return ChangeStats{}, fmt.Errorf("%w %s", ErrUnknownVolume, volume)
}

// ChangesBetween implements Workload.
func (b *base) ChangesBetween(volume string, after, until time.Time) (ChangeStats, error) {
	for _, m := range b.models {
		if m.spec().Name == volume {
			return m.hist().changesBetween(after.UnixNano(), until.UnixNano()), nil
		}
	}
	return ChangeStats{}, fmt.Errorf("%w %s", ErrUnknownVolume, volume)
}

// step runs one operation and measures it from the histories: the writes and
// Syncs it issued, and whether it was acknowledged.
func (b *base) step(now time.Time, devices Devices, operation func() (string, error)) (StepResult, error) {
	if now.Before(b.last) {
		panic(fmt.Sprintf("workload: %s stepped at %s, before its last step at %s", b.name, now, b.last))
	}
	b.last = now
	if err := b.begin(devices); err != nil {
		return StepResult{}, err
	}
	writesBefore, syncsBefore := b.counters()
	name, err := operation()
	writesAfter, syncsAfter := b.counters()
	if writesAfter < writesBefore || syncsAfter < syncsBefore {
		panic("workload: a step shrank the history")
	}
	result := StepResult{
		Operation:    name,
		Writes:       writesAfter - writesBefore,
		Bytes:        uint64(writesAfter-writesBefore) * BlockSizeBytes,
		Syncs:        syncsAfter - syncsBefore,
		Acknowledged: err == nil,
	}
	return result, b.fail(err)
}

func (b *base) counters() (writes, syncs int) {
	for _, m := range b.models {
		writes += len(m.hist().writes)
		syncs += m.hist().syncs
	}
	return writes, syncs
}

// roundUpToMiB sizes a volume: blocks rounded up to whole mebibytes, as a
// PersistentVolumeClaim would ask.
func roundUpToMiB(blocks uint64) uint64 {
	const mib = 1 << 20
	return (blocks*BlockSizeBytes + mib - 1) / mib * mib
}
